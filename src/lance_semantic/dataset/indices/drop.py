"""``Dataset.drop_index``: remove every segment of an index, as pylance 14 does (layer L5).

pylance commits a ``CreateIndex`` transaction with no new indices and the dropped entries as
``removed_indices``; the index files stay until ``cleanup_old_versions`` (older versions still
use them). An unknown name is pylance's ``RuntimeError`` ("Lance index not found: name=...")
and nothing is committed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...commit import commit
from ...manifest import CreateIndex, Manifest, entry_uuid, index_entries
from ...manifest._pb.lance_table_pb2 import IndexSection
from ..core import Snapshot
from .describe import check_index_name

__all__ = ["drop_index", "raw_entries"]


def raw_entries(manifest: Manifest, uuids: set[str]) -> Sequence[bytes]:
    """The serialized entries of ``uuids`` in the manifest's index section, in order."""
    if not manifest.index_section or not uuids:
        return []
    raw = IndexSection.FromString(manifest.index_section).indices
    return [r for r in raw if entry_uuid(r) in uuids]


def drop_index(snap: Snapshot, name: object) -> tuple[Manifest, None]:
    """Commit the removal of index ``name`` (all its segments); the new manifest."""
    index_name = check_index_name(name)
    uuids = {e.uuid for e in index_entries(snap.manifest.index_section) if e.name == index_name}
    if not uuids:
        raise RuntimeError(f"Lance index not found: name={index_name}")
    op = CreateIndex(new_indices=(), removed_indices=tuple(raw_entries(snap.manifest, uuids)))
    return commit(snap.store, snap.manifest, op), None
