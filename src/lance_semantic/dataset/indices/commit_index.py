"""One new index committed: the name check, the files, the ``CreateIndex`` (layer L5)."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable

from ...commit import commit
from ...manifest import CreateIndex, IndexEntry, Manifest, encode_index_entry, index_entries
from ...storage import UncommittedFiles
from ..core import Snapshot
from .drop import raw_entries

__all__ = ["commit_new_index"]


def commit_new_index(
    snap: Snapshot,
    name: str,
    replace: bool,
    index_uuid: str | None,
    build: Callable[[UncommittedFiles, str], IndexEntry],
) -> Manifest:
    """Commit the index ``build(files, uuid)`` writes (its files registered in ``files``)
    as one ``CreateIndex`` that removes the segments of the same ``name``; pylance's
    ``RuntimeError`` when the name exists and not ``replace``. On any error nothing is
    committed and the files written are gone."""
    existing = [e for e in index_entries(snap.manifest.index_section) if e.name == name]
    if existing and not replace:
        raise RuntimeError(
            f"Index name '{name}' already exists, please specify a different name or "
            "use replace=True"
        )
    uuid = index_uuid or str(uuidlib.uuid4())
    folder = f"_indices/{uuid}"
    try:
        with UncommittedFiles(snap.store) as files:
            entry = build(files, uuid)
            op = CreateIndex(
                new_indices=(encode_index_entry(entry),),
                removed_indices=tuple(raw_entries(snap.manifest, {e.uuid for e in existing})),
            )
            return commit(snap.store, snap.manifest, op, files=files)
    except BaseException:
        snap.store.remove_empty_dir(folder)  # its files are gone (UncommittedFiles)
        raise
