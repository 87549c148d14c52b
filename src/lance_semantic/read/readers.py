"""Fragment readers kept from one scan to the next (layer L4).

Before its first read a :class:`~.scan.FragmentReader` works out what its fragment needs:
the data files holding the selected fields, opened and planned, and the deletion vector.
Fragments, table schemas and data files never change once written (a commit makes new
objects for the fragments it changes and keeps the others), so a reader stays good for as
long as its fragment, table schema and store are the same objects. Scans of the same
fields into the same output schema -- on any handle and any version that share those
objects -- take the readers back, and their per-fragment work is the read call alone.

Readers are kept by *shape* (:class:`Readers`: store, table schema, fields, output schema,
row addresses) and, within one, by fragment identity. About :data:`KEPT` readers are kept
in all; past that the cache starts again empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ..manifest import Fragment
from ..schema import Field, TableSchema
from ..storage import ObjectStore
from .fragment_reader import FragmentReader

__all__ = ["KEPT", "Readers", "clear", "readers"]

#: readers kept across scans, over every shape
KEPT = 32_768
#: shapes kept across scans
_SHAPES_KEPT = 64


class Readers:
    """The fragment readers of one scan shape: a reader per fragment, made once."""

    __slots__ = ("store", "table", "fields", "out_schema", "row_addresses", "plans", "_by_id")

    def __init__(
        self,
        store: ObjectStore,
        table: TableSchema,
        fields: Sequence[Field],
        out_schema: pa.Schema,
        row_addresses: bool = False,
    ) -> None:
        self.store = store
        self.table = table
        self.fields = fields
        self.out_schema = out_schema
        self.row_addresses = row_addresses
        #: the data-file plans of the shape's readers (files alike are planned once)
        self.plans: dict[Any, Any] = {}
        self._by_id: dict[int, FragmentReader] = {}

    def reader(self, fragment: Fragment, like: FragmentReader | None = None) -> FragmentReader:
        """The reader of ``fragment`` (made on first use; ``like``: a reader of the same
        fragment whose deletion vector it shares)."""
        r = self._by_id.get(id(fragment))
        if r is not None and r.fragment is fragment:  # (the reader keeps its fragment alive)
            return r
        r = FragmentReader(
            self.store,
            self.table,
            fragment,
            self.fields,
            self.out_schema,
            self.plans,
            row_addresses=self.row_addresses,
        )
        if like is not None:
            r.share_deletions(like)
        self._by_id[id(fragment)] = r
        _kept[0] += 1
        if _kept[0] > KEPT:
            clear()
        return r


_SHAPES: dict[tuple[Any, ...], Readers] = {}
_kept = [0]  # readers in the shapes kept (approximate under threads: a bound, not a count)


def readers(
    store: ObjectStore,
    table: TableSchema,
    fields: Sequence[Field],
    out_schema: pa.Schema,
    row_addresses: bool = False,
) -> Readers:
    """The kept readers of this shape (a new, empty set on first use)."""
    key = (
        id(store),
        id(table),
        tuple(f.id for f in fields),
        out_schema.serialize().to_pybytes(),  # (names, types, metadata: hashable at once)
        row_addresses,
    )
    shape = _SHAPES.get(key)
    if shape is not None and shape.store is store and shape.table is table:
        return shape
    shape = Readers(store, table, fields, out_schema, row_addresses)
    if len(_SHAPES) >= _SHAPES_KEPT:
        clear()
    _SHAPES[key] = shape
    return shape


def clear() -> None:
    """Forget every kept reader."""
    _SHAPES.clear()
    _kept[0] = 0
