"""``Dataset.drop_columns``: columns or nested fields dropped in one metadata-only commit
(layer L5; docs/format/lance-format-facts.md §3 "What pylance 14 actually writes per operation").

Data files whose field ids are all dropped leave their fragments; the others keep the dropped
ids, as pylance does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...commit import commit
from ...manifest import Manifest, Project
from ...schema import Field, TableSchema
from ...write import parse_storage_version
from ..core import Snapshot
from .common import SchemaEvolutionError, field_at

__all__ = ["drop_columns"]


def _is_nested(field: Field) -> bool:
    return bool(field.children)


def _exclude(field: Field, dropped: set[str]) -> Field | None:
    """``field`` without the dropped paths; None when nothing of it is left."""
    if field.path in dropped:
        return None
    prefix = field.path + "."
    if not field.children or not any(d.startswith(prefix) for d in dropped):
        return field
    kids = [k for c in field.children if (k := _exclude(c, dropped)) is not None]
    return replace(field, children=tuple(kids)) if kids else None


def drop_columns(snap: Snapshot, columns: Sequence[str]) -> Manifest:
    """Drop top-level columns or nested fields (``"s.x"``) in one metadata-only commit.

    As in pylance, a struct whose every child is dropped goes too; on data storage 2.0 and
    2.1 only struct members can be dropped one by one (dropping a list's item drops the
    list), on 2.2+ also list items' and map entries' members.

    Raises
    ------
    ColumnNotFoundError
        A path names no field of the table.
    SchemaEvolutionError
        Every column would be dropped.
    """
    if isinstance(columns, str):
        columns = [columns]
    schema = snap.semantic_schema
    dropped = {field_at(schema, c).path for c in columns}
    partial_nested = parse_storage_version(snap.data_storage_version) >= (2, 2)
    kept = []
    for top in schema.fields:
        if top.path in dropped:
            continue
        if any(d.startswith(top.path + ".") for d in dropped):
            if top.logical_type != "struct" and not (partial_nested and _is_nested(top)):
                continue  # pylance drops the whole column
            pruned = _exclude(top, dropped)
            if pruned is not None:
                kept.append(pruned)
        else:
            kept.append(top)
    if not kept:
        raise SchemaEvolutionError(", ".join(columns), "cannot drop all columns from a dataset")
    new = TableSchema.of(kept, schema.metadata)
    return commit(snap.store, snap.manifest, Project(schema=new, preserves_nullability=True))
