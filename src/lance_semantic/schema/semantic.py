"""Fields as semantic types: what a table schema's ``logical_type`` means on a table with
``FLAG_SEMANTIC_TYPES`` (layer L2; spec "Semantic Types", "Output Encoding",
"Compatibility and Migration").

On flagged tables the table schema holds canonical names only (``string``, ``list``,
``decimal:10:2`` …). A legacy alias found there (``large_string``) is still read as its
canonical type plus the output encoding it implies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pyarrow as pa

from ..types import JSON, SemanticType, parse_any_logical_type
from ..types.families import is_list_like
from ..types.layouts import (
    default_output_encoding,
    encoding_of_layout,
    is_known_output_encoding,
    validate_output_encoding,
)
from ..types.metadata_keys import EXTENSION_NAME_KEY, OUTPUT_ENCODING_KEY
from .field import ENCODING, Field, TableSchema, freeze_metadata, is_blob, semantic_type_of

__all__ = [
    "OUTPUT_ENCODING_KEY",
    "semantic_type_of",
    "implied_output_encoding",
    "field_output_encoding",
    "canonicalize_created",
    "is_representation_only",
    "strip_output_metadata",
]


def implied_output_encoding(field: Field) -> str | None:
    """The output encoding a legacy alias implies (``large_string`` -> ``large_utf8``)."""
    if is_blob(field) or field.logical_type == "json":
        return None
    return parse_any_logical_type(field.logical_type)[1]


def field_output_encoding(field: Field) -> str | None:
    """The output encoding a read of ``field`` returns without a request override.

    The field's ``lance-schema:output-encoding`` entry when it is one this library can
    produce for the field's type, else the encoding a legacy alias implies, else the type's
    default. An unknown entry is ignored (spec: the output encoding is advisory).
    """
    st = semantic_type_of(field)
    raw = field.metadata.get(OUTPUT_ENCODING_KEY)
    if raw is not None:
        entry = raw.decode("utf-8", "replace")
        if is_known_output_encoding(st, entry):
            return entry
    return implied_output_encoding(field) or default_output_encoding(st)


def is_representation_only(st: SemanticType) -> bool:
    return st.kind == "representation"


def _check_given_entry(field: Field, st: SemanticType) -> None:
    """An output-encoding entry the input field carries is set like ``set_output_encoding``
    sets one: it must be valid for the field's type and parameters (spec "Failure
    Semantics"), whether or not the input layout then takes its place."""
    raw = field.metadata.get(OUTPUT_ENCODING_KEY)
    if raw is not None:
        validate_output_encoding(st, raw.decode("utf-8", "replace"), path=field.path)


def _json_layout(arrow_field: pa.Field) -> str | None:
    """``lance.json`` for a JSONB input (large_binary + ``lance.json``), which reads back as
    JSONB; None for ``arrow.json`` text, the default."""
    dt = arrow_field.type
    if isinstance(dt, pa.BaseExtensionType):
        return None if dt.extension_name == "arrow.json" else dt.extension_name
    raw = (arrow_field.metadata or {}).get(EXTENSION_NAME_KEY.encode())
    return raw.decode() if raw is not None and raw != b"arrow.json" else None


def _canonical_field(field: Field, arrow_field: pa.Field) -> Field:
    st = semantic_type_of(field)
    _check_given_entry(field, st)
    if is_blob(field):  # the Blob specification governs its representation
        for child in field.children:
            _check_given_entry(child, semantic_type_of(child))
        return field
    children_arrow = _arrow_children(arrow_field.type)
    children = tuple(
        _canonical_field(c, a) for c, a in zip(field.children, children_arrow, strict=True)
    )
    if st is JSON:
        layout = _json_layout(arrow_field)
        if layout is None:
            return replace(field, children=children)
        metadata = dict(field.metadata)
        metadata[OUTPUT_ENCODING_KEY] = layout.encode()
        return replace(field, metadata=freeze_metadata(metadata), children=children)
    if not is_representation_only(st):
        return replace(field, children=children)
    metadata = dict(field.metadata)
    layout = encoding_of_layout(st, arrow_field.type, path=field.path)
    if layout is not None and layout != default_output_encoding(st):
        metadata[OUTPUT_ENCODING_KEY] = layout.encode()
    return replace(
        field,
        logical_type=str(st),
        metadata=freeze_metadata(metadata),
        children=children,
        dictionary=None,  # a dictionary is a layout of string / binary values, not a type
        encoding=ENCODING["VAR_BINARY"] if field.dictionary is not None else field.encoding,
    )


def _arrow_children(dt: pa.DataType) -> list[pa.Field]:
    if isinstance(dt, pa.ExtensionType):
        dt = dt.storage_type
    if pa.types.is_struct(dt):
        return [dt.field(i) for i in range(dt.num_fields)]
    if is_list_like(dt, fixed=False) or pa.types.is_list_view(dt):
        return [dt.value_field]
    if pa.types.is_fixed_size_list(dt):
        return [dt.value_field] if pa.types.is_struct(dt.value_type) else []
    if pa.types.is_map(dt):
        return [pa.field("entries", pa.struct([dt.key_field, dt.item_field]), nullable=False)]
    return []


def canonicalize_created(table: TableSchema, arrow_schema: pa.Schema) -> TableSchema:
    """The schema of a new flagged table (or new columns) created from ``arrow_schema``.

    ``table`` is the legacy field tree of the same schema (ids already assigned). Every
    representation-only field gets its canonical ``logical_type``; when the input layout
    differs from the type's default it is recorded as the field's output encoding, so a
    LargeUtf8 input reads back as LargeUtf8 (spec "Output Encoding"); a json column created
    from JSONB (``lance.json``) input records ``lance.json``.

    This is where every created flagged schema (create, overwrite, ``add_columns``,
    ``alter_columns``) gets its output-encoding entries, so it is also where an entry given
    in the input field metadata, at any depth, is validated.

    Raises
    ------
    InvalidOutputEncodingError
        An input field carries an output-encoding entry that is invalid for its semantic
        type or parameters (``decimal128`` on ``decimal:40:1``, anything on an ``int32``).
    """
    fields = tuple(_canonical_field(f, a) for f, a in zip(table.fields, arrow_schema, strict=True))
    return TableSchema.of(fields, table.metadata)


def strip_output_metadata(metadata: Mapping[str, bytes]) -> dict[str, bytes]:
    """Field metadata without the table-level keys that only steer reads."""
    return {k: v for k, v in metadata.items() if k != OUTPUT_ENCODING_KEY}
