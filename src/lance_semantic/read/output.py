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
from ..schema.arrow import field_to_arrow, schema_to_arrow
from ..schema.field import Field, TableSchema
from ..schema.semantic import field_output_encoding, semantic_type_of, strip_output_metadata
from ..types.layouts import output_type_of, validate_output_encoding
from ..types.semantic import JSON, LIST, MAP, STRUCT

__all__ = ["output_schema", "output_field", "check_override_paths"]


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
    overrides = dict(overrides or {})
    fields = [output_field(f, overrides) for f in table.fields]
    return pa.schema(fields, metadata=dict(table.metadata) or None)


def check_override_paths(table: TableSchema, overrides: Mapping[str, str]) -> None:
    for path, encoding in overrides.items():
        try:
            table.field(path)
        except KeyError:
            raise InvalidOutputEncodingError(path, str(encoding), "no such field") from None


def output_field(field: Field, overrides: Mapping[str, str]) -> pa.Field:
    """The Arrow field a read returns for ``field`` of a flagged table."""
    st = semantic_type_of(field)
    requested = overrides.get(field.path)
    if requested is not None:
        validate_output_encoding(st, requested, path=field.path)
        encoding: str | None = requested
    else:
        encoding = field_output_encoding(field)
    metadata = strip_output_metadata(field.metadata) or None
    if st is JSON and metadata:  # the output type itself names the extension
        metadata = {k: v for k, v in metadata.items() if not k.startswith("ARROW:extension:")}
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
