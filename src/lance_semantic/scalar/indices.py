"""Opening the scalar index of a manifest entry (layer L3), kept per index location."""

from __future__ import annotations

import threading
from typing import Final

from ..manifest import IndexEntry, index_entries
from ..storage import ObjectStore
from .bitmaps import BitmapIndex, LabelListIndex
from .btree import BTreeIndex
from .files import KEPT_INDICES, Kept

__all__ = ["SCALAR_DETAILS", "open_scalar_index", "clear_kept_indices", "single_field_entries"]

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


#: the index entries of one field of the index sections seen last, by section (its bytes:
#: a new index, a remap or a drop writes another section), bounded
_ENTRIES: dict[bytes, dict[int, tuple[IndexEntry, ...]]] = {}
_ENTRIES_KEPT = 64
_ENTRIES_LOCK = threading.Lock()


def single_field_entries(section: bytes) -> dict[int, tuple[IndexEntry, ...]]:
    """The entries of ``section`` that index one field, by field id, in section order
    (decoded once per section: decoding cost about 0.1 ms per entry and query)."""
    found = _ENTRIES.get(section)
    if found is not None:
        return found
    made: dict[int, list[IndexEntry]] = {}
    for entry in index_entries(section):
        if len(entry.fields) == 1:
            made.setdefault(entry.fields[0], []).append(entry)
    out = {f: tuple(entries) for f, entries in made.items()}
    with _ENTRIES_LOCK:
        if len(_ENTRIES) >= _ENTRIES_KEPT:
            del _ENTRIES[next(iter(_ENTRIES))]
        _ENTRIES[section] = out
    return out


def clear_kept_indices() -> None:
    """Forget every opened scalar index (their cached lookups, pages and bitmaps) and the
    index sections decoded."""
    _KEPT.clear()
    with _ENTRIES_LOCK:
        _ENTRIES.clear()
