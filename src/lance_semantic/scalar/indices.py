"""Opening the scalar index of a manifest entry (layer L3), kept per index location."""

from __future__ import annotations

from typing import Final

from ..manifest import IndexEntry
from ..storage import ObjectStore
from .bitmaps import BitmapIndex, LabelListIndex
from .btree import BTreeIndex
from .files import KEPT_INDICES, Kept

__all__ = ["SCALAR_DETAILS", "open_scalar_index", "clear_kept_indices"]

#: where an index's files live in the table: ``_indices/<uuid>/<file>``
_INDEX_DIR: Final = "_indices"

ScalarReader = BTreeIndex | BitmapIndex | LabelListIndex

#: ``index_details`` type -> (the ``index_version`` read here, the reader)
SCALAR_DETAILS: Final[dict[str, tuple[int, type[ScalarReader]]]] = {
    "/lance.table.BTreeIndexDetails": (0, BTreeIndex),
    "/lance.table.BitmapIndexDetails": (0, BitmapIndex),
    "/lance.table.LabelListIndexDetails": (1, LabelListIndex),
}

_KEPT = Kept(KEPT_INDICES)


def open_scalar_index(store: ObjectStore, entry: IndexEntry) -> ScalarReader | None:
    """The reader of the BTREE / BITMAP / LABEL_LIST index of manifest ``entry`` (one
    opened per index location and kept: its lookups are read once), or None for another
    type, an ``index_version`` not read here, an index in another base or of several
    columns. Nothing is read until a query asks."""
    known = SCALAR_DETAILS.get(entry.type_url)
    if known is None or entry.index_version != known[0] or entry.base_id is not None:
        return None
    if len(entry.fields) != 1:
        return None
    base = f"{_INDEX_DIR}/{entry.uuid}"
    reader = known[1]
    fragments = frozenset(entry.fragment_ids)

    def make() -> ScalarReader:
        return reader(store, base, entry.name, fragments)

    key = (store.uri(base), entry.name, fragments)
    return _KEPT.get(key, make)


def clear_kept_indices() -> None:
    """Forget every opened scalar index (their cached lookups, pages and bitmaps)."""
    _KEPT.clear()
