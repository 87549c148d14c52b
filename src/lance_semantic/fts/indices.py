"""Opening the INVERTED index of a manifest entry (layer L3), kept per index location, as
``scalar.open_scalar_index`` keeps scalar indices."""

from __future__ import annotations

from typing import Final

from ..manifest import IndexEntry
from ..scalar.files import KEPT_INDICES, Kept
from ..storage import ObjectStore
from .inverted import InvertedIndex

__all__ = ["INVERTED_DETAILS", "open_inverted_index", "clear_kept_inverted"]

#: the ``index_details`` type of pylance's INVERTED index and the ``index_version`` read here
INVERTED_DETAILS: Final = "/lance.table.InvertedIndexDetails"
_VERSION: Final = 2

_KEPT = Kept(KEPT_INDICES)


def open_inverted_index(store: ObjectStore, entry: IndexEntry) -> InvertedIndex | None:
    """The reader of the INVERTED index of manifest ``entry`` (one per index location and
    kept: its documents and decoded postings are read once), or None for another type or
    ``index_version``, an index in another base or over several columns."""
    if entry.type_url != INVERTED_DETAILS or entry.index_version != _VERSION:
        return None
    if entry.base_id is not None or len(entry.fields) != 1:
        return None
    base = f"_indices/{entry.uuid}"
    fragments = frozenset(entry.fragment_ids)

    def make() -> InvertedIndex:
        return InvertedIndex(store, base, entry.name, fragments)

    return _KEPT.get((store.uri(base), entry.name, fragments), make)


def clear_kept_inverted() -> None:
    """Forget every opened INVERTED index."""
    _KEPT.clear()
