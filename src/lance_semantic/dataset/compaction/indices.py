"""The indices a compaction remaps (layer L5), as pylance 14's ``compact_files`` does with
its default options (measured; docs/format/index-formats.md "Compaction"):

- an index whose ``fragment_bitmap`` holds none of the rewritten fragments is left as it
  is (same uuid, same files);
- every other index is written anew under a new uuid with the rows' new addresses (rows
  deleted before the compaction dropped) and named in the Rewrite's ``rewritten_indices``;
  its bitmap loses the rewritten fragments and gains the new ones (the planner never
  merges fragments that different indices cover, so a group is covered whole or not at
  all); name, fields, dataset version and creation time stay.

pylance remaps every index type it has. Here IVF_FLAT, IVF_PQ, IVF_SQ, BTREE, BITMAP,
LABEL_LIST (scalar/remap.py) and INVERTED (fts/inverted_remap.py) are remapped; a compaction
that would have to remap another type (ZONEMAP, BLOOMFILTER, HNSW, ...) is refused with
``NotSupportedYetError`` naming the index and its type, before anything is committed. No
fragment-reuse index is written (pylance's ``defer_index_remap``, off by default, is
refused by ``compact_files``).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence

import numpy as np

from ...errors import NotSupportedYetError
from ...fts.inverted_remap import remap_inverted_index
from ...fts.inverted_write import is_inverted
from ...manifest import (
    Fragment,
    IndexEntry,
    IndexFile,
    Manifest,
    RewriteGroup,
    RewrittenIndex,
    encode_rewritten_index,
    index_entries,
)
from ...read import deleted_rows
from ...scalar.remap import REMAPPED_TYPES, SCALAR_INDEX_FILES, remap_scalar_index
from ...storage import ObjectStore, UncommittedFiles
from ...vector import (
    INDEX_DIR,
    IVF_TYPES,
    RowAddressMap,
    open_ivf_index,
    remap_ivf_index,
    row_address_map,
)

__all__ = ["indices_to_remap", "remap_indices", "remove_empty_folders"]


def indices_to_remap(
    store: ObjectStore, manifest: Manifest, old_fragments: Sequence[Fragment]
) -> list[IndexEntry]:
    """The index entries of ``manifest`` that covering any of ``old_fragments`` must be
    remapped; ``NotSupportedYetError`` for one this library cannot remap."""
    ids = {f.id for f in old_fragments}
    out = []
    for entry in index_entries(manifest.index_section):
        if not ids & set(entry.fragment_ids):
            continue
        if _scalar(entry) or is_inverted(entry):
            out.append(entry)
            continue
        if open_ivf_index(store, entry) is None:
            what = entry.index_type
            if what in IVF_TYPES:  # an IVF index of a version or layout not known here
                what = f"{what} (of this version or layout)"
            raise NotSupportedYetError(
                f"compact_files of fragments covered by the {entry.index_type} index "
                f"{entry.name!r} (remapping {what} indices)"
            )
        out.append(entry)
    return out


def _scalar(entry: IndexEntry) -> bool:
    """Whether ``entry`` is a BTREE / BITMAP / LABEL_LIST index remapped here."""
    known = REMAPPED_TYPES.get(entry.type_url)
    return known == entry.index_version and entry.base_id is None


def _address_map(store: ObjectStore, groups: Sequence[RewriteGroup]) -> RowAddressMap:
    mapping: dict[int, np.ndarray] = {}
    for g in groups:
        old = [(f.id, f.physical_rows, deleted_rows(store, f)) for f in g.old_fragments]
        new = [(f.id, f.physical_rows) for f in g.new_fragments]
        mapping.update(row_address_map(old, new))
    return mapping


def remap_indices(
    store: ObjectStore,
    entries: Sequence[IndexEntry],
    groups: Sequence[RewriteGroup],
    files: UncommittedFiles,
    folders: list[str] | None = None,
) -> tuple[bytes, ...]:
    """Write the remapped files of ``entries`` for the numbered ``groups`` (each file
    registered in ``files``, each new index folder appended to ``folders``); the
    serialized ``RewrittenIndex`` messages of the Rewrite."""
    if not entries:
        return ()
    mapping = _address_map(store, groups)
    out = []
    for entry in entries:
        new_uuid = str(uuidlib.uuid4())
        folder = f"{INDEX_DIR}/{new_uuid}"
        if folders is not None:
            folders.append(folder)
        # registered first: a write that fails half way leaves nothing behind
        written: Sequence[IndexFile] | None
        if _scalar(entry):
            for name in SCALAR_INDEX_FILES[entry.type_url]:
                files.add(f"{folder}/{name}")
            written = remap_scalar_index(store, entry, mapping, new_uuid)
        elif is_inverted(entry):
            for f in entry.files:  # the same partitions, the same names (or fewer)
                files.add(f"{folder}/{f.path}")
            files.add(f"{folder}/metadata.lance")
            written = remap_inverted_index(store, entry, mapping, new_uuid)
        else:
            files.add(f"{folder}/auxiliary.idx")
            files.add(f"{folder}/index.idx")
            ivf = remap_ivf_index(store, entry, mapping, new_uuid)
            written = None if ivf is None else [IndexFile(w.path, w.size_bytes) for w in ivf]
        if written is None:  # checked by indices_to_remap
            raise NotSupportedYetError(f"remapping the {entry.index_type} index {entry.name!r}")
        rewritten = RewrittenIndex(
            entry.uuid,
            new_uuid,
            entry.type_url,
            entry.details,
            entry.index_version,
            tuple(IndexFile(w.path, w.size_bytes) for w in written),
        )
        out.append(encode_rewritten_index(rewritten))
    return tuple(out)


def remove_empty_folders(store: ObjectStore, folders: Sequence[str]) -> None:
    """Remove the new index folders a failed compaction emptied (its files were removed
    as uncommitted); a folder still holding files stays."""
    for folder in folders:
        try:
            store.remove_empty_dir(folder)
        except Exception:  # noqa: BLE001 - an empty folder left behind is harmless
            pass
