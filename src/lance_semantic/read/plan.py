"""Resolve, once per data file, which file column holds which table field (layer L4).

Semantics come from the table schema only: a data file's columns are matched to table
fields through ``DataFile.fields`` (field ids in file column order, facts §4), never by
name, so renamed and dropped columns resolve correctly.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from ..manifest.model import DataFile
from ..schema.field import TableSchema

__all__ = ["FilePlan", "plan_data_file", "id_entries"]


def _is_blob_v2(f: pa.Field) -> bool:
    md = f.metadata or {}
    return md.get(b"ARROW:extension:name") == b"lance.blob.v2" or (
        md.get(b"lance-encoding:blob") == b"true" and pa.types.is_struct(f.type)
    )


def id_entries(f: pa.Field, major: int, minor: int) -> int:
    """How many ``DataFile.fields`` entries the file column ``f`` takes (facts §4)."""
    t = f.type
    if isinstance(t, pa.ExtensionType):
        t = t.storage_type
    every = (major, minor) < (2, 1)
    if pa.types.is_fixed_size_list(t) and pa.types.is_struct(t.value_type):
        if every:
            return 1
        return id_entries(t.value_field, major, minor)
    if _is_blob_v2(f):
        return 1
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            return 1
        inner = sum(id_entries(t.field(i), major, minor) for i in range(t.num_fields))
        return inner + (1 if every else 0)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return id_entries(t.value_field, major, minor) + (1 if every else 0)
    if pa.types.is_map(t):
        entries = id_entries(t.key_field, major, minor) + id_entries(t.item_field, major, minor)
        return entries + (2 if every else 0)
    return 1


@dataclass(frozen=True, slots=True)
class FilePlan:
    """For one data file: table top-level field id -> name of the file column holding it."""

    data_file: DataFile
    columns: dict[int, str]


def plan_data_file(table: TableSchema, data_file: DataFile, file_schema: pa.Schema) -> FilePlan:
    columns: dict[int, str] = {}
    ids = list(data_file.fields)
    pos = 0
    major, minor = data_file.file_major_version, data_file.file_minor_version
    for f in file_schema:
        n = id_entries(f, major, minor)
        owned = ids[pos : pos + n]
        pos += n
        for fid in owned:
            top = table.top_level_of(fid)
            if top is not None:
                columns.setdefault(top.id, f.name)
                break
    return FilePlan(data_file, columns)
