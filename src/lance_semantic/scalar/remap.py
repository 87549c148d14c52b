"""BTREE, BITMAP and LABEL_LIST indices remapped after a compaction (layer L3), as
pylance 14's ``compact_files`` rewrites them: the same keys, each row at its new address,
rows the compaction dropped (deleted ones) left out, in a new index folder.

The index is read whole (a BTREE's ``page_data``; a BITMAP's keys and bitmaps expanded to
one (key, address) per row), its addresses mapped, and the files written again by the
writers of this package, so a remapped index is laid out as a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import CorruptTableError
from ..manifest import IndexEntry, IndexFile
from ..storage import ObjectStore
from .bitmap_write import BITMAP_FILE, write_bitmap
from .bitmaps import decode_row_id_tree_map
from .btree_write import write_btree
from .files import IndexFile as IndexFileReader

__all__ = ["REMAPPED_TYPES", "mapped_addresses", "remap_scalar_index", "SCALAR_INDEX_FILES"]

#: the new address of a row a compaction dropped
_REMOVED: Final = np.uint64(0xFFFF_FFFF_FFFF_FFFF)

#: index details type -> (index_version) of the indices remapped here
REMAPPED_TYPES: Final[dict[str, int]] = {
    "/lance.table.BTreeIndexDetails": 0,
    "/lance.table.BitmapIndexDetails": 0,
    "/lance.table.LabelListIndexDetails": 1,
}
#: index details type -> the files of its folder
SCALAR_INDEX_FILES: Final[dict[str, tuple[str, ...]]] = {
    "/lance.table.BTreeIndexDetails": ("page_data.lance", "page_lookup.lance"),
    "/lance.table.BitmapIndexDetails": (BITMAP_FILE,),
    "/lance.table.LabelListIndexDetails": (BITMAP_FILE,),
}

Addresses = npt.NDArray[np.uint64]


def mapped_addresses(
    addresses: Addresses, mapping: Mapping[int, Addresses]
) -> tuple[Addresses, npt.NDArray[np.bool_]]:
    """The new addresses of ``addresses`` (those outside ``mapping``'s fragments stay) and
    which rows stay."""
    out = np.asarray(addresses, np.uint64).copy()
    frags = out >> np.uint64(32)
    for fid, table in mapping.items():
        hit = frags == np.uint64(fid)
        if hit.any():
            offsets = (out[hit] & np.uint64(0xFFFF_FFFF)).astype(np.int64)
            if int(offsets.max()) >= len(table):
                raise ValueError(f"row offset {int(offsets.max())} past the end of fragment {fid}")
            out[hit] = np.asarray(table, np.uint64)[offsets]
    return out, out != _REMOVED


def _expanded(data: bytes | None, where: str) -> Addresses:
    try:
        tree = decode_row_id_tree_map(data or b"")
    except ValueError as e:
        raise CorruptTableError(where, str(e)) from e
    parts = []
    for fid, rows in tree.items():
        if rows is None:  # a whole fragment (never written by a build here)
            raise CorruptTableError(where, "a whole-fragment bitmap cannot be remapped")
        parts.append((np.uint64(fid) << np.uint64(32)) + np.asarray(rows.to_array(), np.uint64))
    return np.concatenate(parts) if parts else np.empty(0, np.uint64)


def _sorted_by_address(values: pa.Array, ids: Addresses) -> tuple[pa.Array, Addresses]:
    order = np.argsort(ids, kind="stable")
    return values.take(pa.array(order)), ids[order]


def remap_scalar_index(
    store: ObjectStore, entry: IndexEntry, mapping: Mapping[int, Addresses], new_uuid: str
) -> list[IndexFile] | None:
    """Write the remapped files of the scalar index ``entry`` into
    ``_indices/<new_uuid>/``; the files written, or None for an index not remapped here
    (another type or version; nothing written). ``mapping``: old fragment id -> the new
    address of each of its row offsets (``0xFFFF_FFFF_FFFF_FFFF``: dropped)."""
    if REMAPPED_TYPES.get(entry.type_url) != entry.index_version or entry.base_id is not None:
        return None
    old = f"_indices/{entry.uuid}"
    folder = f"_indices/{new_uuid}"
    if entry.type_url == "/lance.table.BTreeIndexDetails":
        table = IndexFileReader(store, f"{old}/page_data.lance").read_all()
        values = table.column("values").combine_chunks()
        ids, keep = mapped_addresses(table.column("ids").to_numpy(), mapping)
        values, ids = _sorted_by_address(values.filter(pa.array(keep)), ids[keep])
        return write_btree(store, folder, values, ids)
    rel = f"{old}/{BITMAP_FILE}"
    reader = IndexFileReader(store, rel)
    table = reader.read_all()
    keys = table.column("keys").combine_chunks()
    expanded = [_expanded(b, store.uri(rel)) for b in table.column("bitmaps").to_pylist()]
    counts = np.asarray([len(e) for e in expanded], np.int64)
    flat = np.concatenate(expanded) if expanded else np.empty(0, np.uint64)
    repeated = keys.take(pa.array(np.repeat(np.arange(len(keys)), counts)))
    ids, keep = mapped_addresses(flat, mapping)
    values, ids = _sorted_by_address(repeated.filter(pa.array(keep)), ids[keep])
    if entry.type_url == "/lance.table.BitmapIndexDetails":
        return write_bitmap(store, folder, values, ids)
    meta = reader.schema_metadata()
    position = int(meta.get(b"lance:label_list_nulls", b"1"))
    nulls, kept = mapped_addresses(
        _expanded(reader.global_buffer(position), store.uri(rel)), mapping
    )
    return write_bitmap(store, folder, values, ids, null_lists=np.sort(nulls[kept]))
