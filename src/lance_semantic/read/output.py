"""The Arrow schema a read returns (layer L4; spec "Output Encoding").

Legacy tables: each ``logical_type`` is one Arrow type, exactly as pylance returns it.
Flagged tables: per field, the request's override, else the field's
``lance-schema:output-encoding`` entry (or the encoding a legacy alias implies), else the
semantic type's default — recursively, each nested child with its own choice.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from ..errors import InvalidOutputEncodingError
from ..schema import (
    Field,
    TableSchema,
    descriptor_field,
    field_output_encoding,
    field_to_arrow,
    is_blob,
    schema_to_arrow,
    semantic_type_of,
    strip_output_metadata,
    value_field,
)
from ..types import JSON, LIST, MAP, STRUCT
from ..types.layouts import output_type_of, validate_output_encoding
from ..types.metadata_keys import (
    EXTENSION_KEY_PREFIX,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    LAYERED_METADATA_KEY,
    LAYERED_NAME_KEY,
)

__all__ = [
    "output_schema",
    "output_field",
    "with_layered_extension",
    "check_override_paths",
    "blob_values_schema",
]

_ARROW_NAME = EXTENSION_NAME_KEY.encode()
_ARROW_META = EXTENSION_METADATA_KEY.encode()
_LAYERED_NAME = LAYERED_NAME_KEY.encode()
_LAYERED_META = LAYERED_METADATA_KEY.encode()
_LAYERED = (_LAYERED_NAME, _LAYERED_META)


def output_schema(
    table: TableSchema, *, flagged: bool, overrides: Mapping[str, str] | None = None
) -> pa.Schema:
    """The schema of the batches a read of ``table`` returns (override paths are checked
    against the whole table by :func:`check_override_paths`)."""
    if not flagged:
        if overrides:
            raise InvalidOutputEncodingError(
                next(iter(overrides)),
                str(next(iter(overrides.values()))),
                "output encodings apply to tables with semantic types only; this is a legacy "
                "table (upgrade it with ls.upgrade)",
            )
        return schema_to_arrow(table)
    by_path = _by_field_path(table, overrides or {})
    fields = [output_field(f, by_path) for f in table.fields]
    return pa.schema(fields, metadata=dict(table.metadata) or None)


def _by_field_path(table: TableSchema, overrides: Mapping[str, str]) -> dict[str, str]:
    """The overrides keyed by each field's ``Field.path``: every spelling
    :meth:`TableSchema.field` takes (``m.value`` for ``m.entries.value``) reaches its field.
    Paths outside ``table`` (a projection of the table) are left out."""
    out: dict[str, str] = {}
    for path, encoding in overrides.items():
        try:
            field = table.field(path)
        except KeyError:
            continue
        field_path = field.path
        if not is_blob(field):  # checked here to name the path as the caller spelled it
            validate_output_encoding(semantic_type_of(field), encoding, path=path)
        if out.get(field_path, encoding) != encoding:
            raise InvalidOutputEncodingError(
                path, str(encoding), f"another encoding is requested for '{field_path}'"
            )
        out[field_path] = encoding
    return out


def check_override_paths(table: TableSchema, overrides: Mapping[str, str]) -> None:
    for path, encoding in overrides.items():
        try:
            table.field(path)
        except KeyError:
            raise InvalidOutputEncodingError(path, str(encoding), "no such field") from None


def with_layered_extension(f: pa.Field) -> pa.Field:
    """Open decision 2 on output: an extension layered under ``lance-schema:extension-name``
    / ``-metadata`` is returned under ``ARROW:extension:name`` / ``-metadata`` when the
    output field has no Arrow extension of its own (json read as ``arrow.json`` or
    ``lance.json`` has one and keeps the Lance keys as they are). A caller-registered
    ``pa.ExtensionType`` of that name is then returned as such, as for any extension.

    Examples
    --------
    >>> f = pa.field("n", pa.int32(), metadata={"lance-schema:extension-name": "example.n"})
    >>> with_layered_extension(f).metadata
    {b'ARROW:extension:name': b'example.n'}
    >>> j = pa.field("j", pa.json_(), metadata={"lance-schema:extension-name": "example.n"})
    >>> with_layered_extension(j).metadata
    {b'lance-schema:extension-name': b'example.n'}
    """
    md = f.metadata or {}
    name = md.get(_LAYERED_NAME)
    if name is None or isinstance(f.type, pa.BaseExtensionType) or _ARROW_NAME in md:
        return f
    mapped = {k: v for k, v in md.items() if k not in (_LAYERED_NAME, _LAYERED_META)}
    mapped[_ARROW_NAME] = name
    if _LAYERED_META in md:
        mapped[_ARROW_META] = md[_LAYERED_META]
    return _materialized(f.with_metadata(mapped))


def _materialized(f: pa.Field) -> pa.Field:
    """``f`` with a caller-registered extension type in place of storage + metadata (as
    pyarrow imports it); unchanged when nothing is registered, for Lance's own extensions
    (their outputs are defined by the contract) and when the registered type refuses this
    storage layout (an output encoding the type does not take)."""
    name = (f.metadata or {}).get(_ARROW_NAME)
    if name is None or isinstance(f.type, pa.BaseExtensionType) or name.startswith(b"lance."):
        return f
    try:
        return pa.ipc.read_schema(pa.py_buffer(pa.schema([f]).serialize())).field(0)
    except Exception:  # the type's own deserializer refused: storage + metadata, like unknown
        return f


def output_field(field: Field, overrides: Mapping[str, str]) -> pa.Field:
    """The Arrow field a read returns for ``field`` of a flagged table."""
    return with_layered_extension(_materialized(_output_field(field, overrides)))


def _output_field(field: Field, overrides: Mapping[str, str]) -> pa.Field:
    if is_blob(field):  # pylance's descriptors; an extension layered over blob (open
        # decision 2, e.g. a media type over blob v2) comes back in the Arrow slot
        layered = {k: v for k, v in field.metadata.items() if k.encode() in _LAYERED}
        return descriptor_field(field, layered)
    st = semantic_type_of(field)
    requested = overrides.get(field.path)
    if requested is not None:
        validate_output_encoding(st, requested, path=field.path)
        encoding: str | None = requested
    else:
        encoding = field_output_encoding(field)
    metadata = strip_output_metadata(field.metadata) or None
    if st is JSON:  # the output type itself names the extension
        metadata = {
            k: v for k, v in (metadata or {}).items() if not k.startswith(EXTENSION_KEY_PREFIX)
        }
        if encoding == "lance.json":  # JSONB: large_binary + lance.json, as stored
            metadata.update({_ARROW_NAME.decode(): b"lance.json", _ARROW_META.decode(): b""})
        metadata = metadata or None
    if st is STRUCT:
        dt: pa.DataType = pa.struct([output_field(c, overrides) for c in field.children])
    elif st is LIST:
        child = output_field(field.children[0], overrides)
        dt = output_type_of(st, encoding or "list", child=child)
    elif st is MAP:
        key, value = field.children[0].children
        dt = pa.map_(
            output_field(key, overrides).with_name("key"),
            output_field(value, overrides).with_name("value"),
        )
    elif encoding is not None:
        dt = output_type_of(st, encoding)
    elif field.logical_type.startswith("fixed_size_list:struct:"):
        size = int(field.logical_type.rpartition(":")[2])
        dt = pa.list_(output_field(field.children[0], overrides), size)
    else:
        return field_to_arrow(field)
    return pa.field(field.name, dt, nullable=field.nullable, metadata=metadata)


def blob_values_schema(table: TableSchema, schema: pa.Schema) -> pa.Schema:
    """``schema`` (of ``table``'s top-level fields) with blob fields as their values."""
    fields = [
        value_field(f) if is_blob(f) else schema.field(f.name)
        for f in table.fields
        if f.name in schema.names
    ]
    return pa.schema(fields, metadata=schema.metadata)
