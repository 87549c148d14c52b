"""The columns of a data file as pylance 14's file reader lists them (layer L3): blob v2
columns and the descriptor members it reports after them (docs/format/lance-format-facts.md
on blob v2 files)."""

from __future__ import annotations

import pyarrow as pa

from ..schema import BLOB_V1_KEY, V2_DESCRIPTOR_FIELD
from ..types.arrow_names import child_fields

__all__ = ["data_file_columns", "unprojectable_columns"]


#: the members pylance's file reader lists after a blob v2 column, as if they were columns
_DESCRIPTOR_MEMBERS = tuple(V2_DESCRIPTOR_FIELD.type.field(i).name for i in range(5))


def _is_blob_v2_column(f: pa.Field) -> bool:
    """A blob v2 column as pylance's file reader lists it: a struct marked as a blob (its
    descriptor, one column of the file)."""
    return (f.metadata or {}).get(BLOB_V1_KEY.encode()) == b"true" and pa.types.is_struct(f.type)


def _blobs_in(f: pa.Field) -> int:
    """How many blob v2 columns ``f`` is or holds (a blob v2 field may be a struct member)."""
    if _is_blob_v2_column(f):
        return 1
    return sum(_blobs_in(c) for c in child_fields(f.type))


def data_file_columns(schema: pa.Schema) -> pa.Schema:
    """The columns of a data file whose own schema pylance 14's file reader reports as
    ``schema``: it lists each blob v2 column as an empty struct, and after the top-level
    column that is or holds it the members of its descriptor (``kind``, ``position``,
    ``size``, ``blob_id``, ``blob_uri``) as though they were top-level columns; the file
    stores each descriptor as one column (one entry of ``DataFile.fields`` and
    ``column_indices``), so they are left out."""
    fields = list(schema)
    out: list[pa.Field] = []
    at = 0
    while at < len(fields):
        f = fields[at]
        out.append(f)
        at += 1
        members = _DESCRIPTOR_MEMBERS * _blobs_in(f)
        listed = tuple(g.name for g in fields[at : at + len(members)])
        if members and listed == members:
            at += len(members)
    if len(out) == len(fields):
        return schema
    return pa.schema(out, metadata=schema.metadata)


def unprojectable_columns(schema: pa.Schema) -> frozenset[str]:
    """The columns of ``schema`` (as :func:`data_file_columns` gives them) that pylance 14's
    file reader cannot read: blob v2 columns (and columns holding one), and every column
    after one (its projection counts the descriptor members it lists as columns: "the
    projection specified the column index 6 but there are only 3 columns in the file").
    Its table reader reads them."""
    after = False
    out = set()
    for f in schema:
        after = after or _blobs_in(f) > 0
        if after:
            out.add(f.name)
    return frozenset(out)
