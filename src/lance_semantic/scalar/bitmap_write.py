"""pylance 14's BITMAP and LABEL_LIST scalar indices, written (layer L3).

One Lance 2.2 file, ``bitmap_page_lookup.lance`` (measured on pylance 14, see
``docs/format/index-formats.md``): one row per distinct key, ``keys`` (the key type,
sorted: the null key first, floats in total order so ``-0.0`` and ``0.0`` are two keys)
and ``bitmaps: binary``, the key's rows as a RowIdTreeMap (``u32`` count, then per
fragment in ascending id ``u32`` id, ``u32`` size, portable roaring of the row offsets
without run containers: pyroaring's ``optimize=False``); schema metadata
``lance:index_stats`` = ``{"num_bitmaps":N}``.

LABEL_LIST indexes the lists' items (a null item is the null key; a row is in a key's
bitmap once however often the item repeats) and keeps the rows whose list is null in
global buffer 1 (a RowIdTreeMap, ``00000000`` when there are none), named by
``lance:label_list_nulls`` = ``"1"``.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyroaring import BitMap

from ..manifest import IndexFile
from ..storage import DataFileWriter, ObjectStore
from .btree_write import INDEX_FILE_VERSION
from .key_order import run_starts, sort_order

__all__ = ["BITMAP_FILE", "encode_row_id_tree_map", "write_bitmap"]

BITMAP_FILE = "bitmap_page_lookup.lance"
_HEADER = struct.Struct("<II")


def _tree_map_from_sorted(addresses: npt.NDArray[np.uint64]) -> bytes:
    """The RowIdTreeMap of ``addresses`` (ascending, no duplicates needed)."""
    if not len(addresses):
        return struct.pack("<I", 0)
    frags = (addresses >> np.uint64(32)).astype(np.uint32)
    offsets = (addresses & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    cuts = np.flatnonzero(frags[1:] != frags[:-1]) + 1
    bounds = np.concatenate([[0], cuts, [len(addresses)]])
    parts = [struct.pack("<I", len(bounds) - 1)]
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        raw = BitMap(offsets[a:b], optimize=False).serialize()
        parts.append(_HEADER.pack(int(frags[a]), len(raw)))
        parts.append(raw)
    return b"".join(parts)


def encode_row_id_tree_map(addresses: npt.NDArray[np.uint64]) -> bytes:
    """The RowIdTreeMap (pylance's framing of per-fragment roaring bitmaps) of the rows at
    ``addresses`` (any order, duplicates allowed).

    >>> from lance_semantic.scalar import decode_row_id_tree_map
    >>> import numpy as np
    >>> raw = encode_row_id_tree_map(np.array([(9 << 32) | 2, 5, 1], np.uint64))
    >>> decode_row_id_tree_map(raw)
    {0: BitMap([1, 5]), 9: BitMap([2])}
    """
    return _tree_map_from_sorted(np.unique(np.asarray(addresses, np.uint64)))


def write_bitmap(
    store: ObjectStore,
    folder: str,
    keys: pa.Array,
    addresses: npt.NDArray[np.uint64],
    *,
    null_lists: npt.NDArray[np.uint64] | None = None,
) -> list[IndexFile]:
    """Write the BITMAP index of ``keys`` (one per row, the rows at ``addresses``, which
    ascend) into ``folder``; with ``null_lists`` (the addresses of the rows whose list is
    null, ascending) the LABEL_LIST index whose ``keys`` are the lists' items. The files
    written with their sizes."""
    order, numbers = sort_order(keys)
    sorted_keys = keys.take(pa.array(order)) if len(order) else keys
    ids = addresses[order]
    starts = run_starts(sorted_keys, numbers)
    ends = np.append(starts[1:], len(sorted_keys)).astype(np.int64)[: len(starts)]
    bitmaps = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        run = ids[a:b]
        if null_lists is not None and b - a > 1:  # an item repeated in one list: the row
            run = run[np.concatenate([[True], run[1:] != run[:-1]])]  # once (ids ascend)
        bitmaps.append(_tree_map_from_sorted(run))
    schema = pa.schema([pa.field("keys", keys.type), pa.field("bitmaps", pa.binary())])
    writer = DataFileWriter(store, BITMAP_FILE, schema, INDEX_FILE_VERSION, folder=folder)
    stats = json.dumps({"num_bitmaps": len(bitmaps)}, separators=(",", ":"))
    writer.add_schema_metadata("lance:index_stats", stats)
    if null_lists is not None:
        position = writer.add_global_buffer(_tree_map_from_sorted(null_lists))
        writer.add_schema_metadata("lance:label_list_nulls", str(position))
    if bitmaps:
        writer.write(
            pa.record_batch(
                [sorted_keys.take(pa.array(starts)), pa.array(bitmaps, pa.binary())],
                schema=schema,
            )
        )
    written = writer.close()
    return [IndexFile(BITMAP_FILE, written.size_bytes)]
