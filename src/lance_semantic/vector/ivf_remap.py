"""Remap an IVF index to the row addresses a compaction gave its rows (layer L3).

pylance 14's ``compact_files`` (default options: no deferred remap) rewrites every index
whose fragments it compacts into a new folder ``_indices/<new uuid>/`` and records the swap
in the Rewrite's ``rewritten_indices``. For IVF_FLAT / IVF_PQ / IVF_SQ it does this
(measured, docs/format/index-formats.md "Compaction"):

- ``index.idx`` (the centroids, no rows) is copied byte for byte;
- ``auxiliary.idx`` keeps every partition's rows in their order, each row address of a
  rewritten fragment replaced by the row's new address and the rows deleted before the
  compaction dropped; rows of fragments not rewritten (also those of fragments deleted
  whole) keep their address; the codes / vectors are not re-encoded (PQ codes stay
  transposed per partition); the schema, schema metadata and global buffers are kept, but
  for buffer 1's partition ``offsets`` / ``lengths``.

:func:`remap_ivf_index` writes those files; a partition at a time is in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import CorruptTableError
from ..manifest import IndexEntry
from ..storage import DataFileWriter, ObjectStore, first_line, is_read_error, open_reader
from .ivf_files import INDEX_DIR, open_ivf_index
from .ivf_proto import decode_ivf, encode_ivf
from .ivf_write import INDEX_FILE_VERSION, IndexFileWritten

__all__ = ["RowAddressMap", "REMOVED_ROW", "row_address_map", "remap_ivf_index"]

#: the new address of a row a compaction dropped (it was deleted)
REMOVED_ROW: Final = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
#: old fragment id -> new row address of each of its row offsets (``REMOVED_ROW``: dropped)
RowAddressMap = Mapping[int, npt.NDArray[np.uint64]]

_AUX: Final = "auxiliary.idx"
_INDEX: Final = "index.idx"
_ROW_ID: Final = "_rowid"


def row_address_map(
    old: list[tuple[int, int, npt.NDArray[np.uint32] | None]],
    new: list[tuple[int, int]],
) -> dict[int, npt.NDArray[np.uint64]]:
    """The address map of one rewrite group: ``old`` = (fragment id, physical rows, sorted
    deleted offsets or None) in the order the rows were written, ``new`` = (fragment id,
    rows) of the fragments written.

    >>> m = row_address_map([(3, 3, np.array([1], np.uint32))], [(7, 2)])
    >>> [hex(int(a)) for a in m[3]]
    ['0x700000000', '0xffffffffffffffff', '0x700000001']
    """
    targets = [
        (np.uint64(fid) << np.uint64(32)) + np.arange(rows, dtype=np.uint64) for fid, rows in new
    ]
    flat = np.concatenate(targets) if targets else np.empty(0, np.uint64)
    out: dict[int, npt.NDArray[np.uint64]] = {}
    start = 0
    for fid, physical, deleted in old:
        addresses = np.full(physical, REMOVED_ROW, dtype=np.uint64)
        live = np.ones(physical, dtype=bool)
        if deleted is not None and len(deleted):
            live[np.asarray(deleted, dtype=np.int64)] = False
        count = int(live.sum())
        if start + count > len(flat):
            raise ValueError(f"the new fragments hold {len(flat)} rows, fewer than the old ones")
        addresses[live] = flat[start : start + count]
        start += count
        out[fid] = addresses
    if start != len(flat):
        raise ValueError(f"the new fragments hold {len(flat)} rows, the old ones {start}")
    return out


class _Remapper:
    """``mapping`` as one lookup: the sorted old fragment ids, where each one's table
    starts in one concatenated array, and its length."""

    def __init__(self, mapping: RowAddressMap) -> None:
        ids = sorted(mapping)
        self.fragments = np.asarray(ids, dtype=np.int64)
        sizes = np.asarray([len(mapping[f]) for f in ids], dtype=np.int64)
        self.sizes = sizes
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        tables = [np.asarray(mapping[f], dtype=np.uint64) for f in ids]
        self.table = np.concatenate(tables) if tables else np.empty(0, np.uint64)

    def __call__(
        self, addresses: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """The new addresses of ``addresses`` and which rows stay."""
        out = addresses.copy()
        if not len(self.fragments):
            return out, np.ones(len(out), dtype=bool)
        frags = (addresses >> np.uint64(32)).astype(np.int64)
        offsets = (addresses & np.uint64(0xFFFF_FFFF)).astype(np.int64)
        pos = np.minimum(np.searchsorted(self.fragments, frags), len(self.fragments) - 1)
        hit = self.fragments[pos] == frags
        at, slot = offsets[hit], pos[hit]
        past = at >= self.sizes[slot]
        if past.any():
            k = int(np.argmax(past))
            raise ValueError(
                f"row offset {int(at[k])} past the end of fragment {int(self.fragments[slot[k]])}"
            )
        out[hit] = self.table[self.starts[slot] + at]
        return out, out != REMOVED_ROW


def _payload(column: pa.ChunkedArray | pa.Array) -> pa.FixedSizeListArray:
    array = pa.concat_arrays(column.chunks) if isinstance(column, pa.ChunkedArray) else column
    assert isinstance(array, pa.FixedSizeListArray)
    return array


def _kept(values: pa.FixedSizeListArray, keep: npt.NDArray[np.bool_], transposed: bool) -> pa.Array:
    """``values`` (one partition's codes) without the dropped rows. Transposed PQ codes are
    ``[m][n]`` in a column of n rows of width m."""
    if not transposed:
        return values.filter(pa.array(keep))
    n, m = len(values), values.type.list_size
    flat = values.flatten().to_numpy(zero_copy_only=False).reshape(m, n)
    kept = np.ascontiguousarray(flat[:, keep]).reshape(-1)
    return pa.FixedSizeListArray.from_arrays(pa.array(kept, values.type.value_type), m)


def remap_ivf_index(
    store: ObjectStore, entry: IndexEntry, mapping: RowAddressMap, new_uuid: str
) -> list[IndexFileWritten] | None:
    """Write the remapped files of the IVF index ``entry`` into ``_indices/<new_uuid>/``
    (see the module doc); the files written, or ``None`` when the index is not an IVF_FLAT /
    IVF_PQ / IVF_SQ index known here (nothing written). ``mapping``: the new address of
    each row of the rewritten fragments (:func:`row_address_map`)."""
    index = open_ivf_index(store, entry)
    if index is None:
        return None
    old = f"{INDEX_DIR}/{entry.uuid}"
    folder = f"{INDEX_DIR}/{new_uuid}"
    aux_rel = f"{old}/{_AUX}"
    reader = open_reader(store, aux_rel, what="index file")
    try:
        meta = reader.metadata()
        schema = meta.schema
        buffers = [bytes(reader.read_global_buffer(i)) for i in range(1, len(meta.global_buffers))]
    except BaseException as e:
        if not is_read_error(e):
            raise
        raise CorruptTableError(store.uri(aux_rel), f"cannot read: {first_line(e)}") from e
    transposed = index.kind == "IVF_PQ"
    column = schema.field(1).name
    writer = DataFileWriter(
        store, _AUX, pa.schema(list(schema), metadata=None), INDEX_FILE_VERSION, folder=folder
    )
    lengths: list[int] = []
    remap = _Remapper(mapping)
    for start, length in zip(index.offsets.tolist(), index.lengths.tolist(), strict=True):
        if not length:
            lengths.append(0)
            continue
        try:
            part = reader.read_range(start, length, batch_size=length).to_table()
        except BaseException as e:
            if not is_read_error(e):
                raise
            raise CorruptTableError(store.uri(aux_rel), f"cannot read: {first_line(e)}") from e
        addresses = part.column(_ROW_ID).to_numpy().astype(np.uint64, copy=False)
        try:
            moved, keep = remap(addresses)
        except ValueError as e:
            raise CorruptTableError(store.uri(aux_rel), str(e)) from e
        values = _kept(_payload(part.column(column)), keep, transposed)
        lengths.append(int(keep.sum()))
        if lengths[-1]:
            batch = pa.record_batch(
                [pa.array(moved[keep], pa.uint64()), values], schema=writer.schema
            )
            writer.write(batch)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64).tolist()
    table = replace(decode_ivf(buffers[0]), offsets=tuple(offsets), lengths=tuple(lengths))
    buffers[0] = encode_ivf(table)
    for data in buffers:
        writer.add_global_buffer(data)
    for key, value in (schema.metadata or {}).items():
        writer.add_schema_metadata(key.decode(), value.decode())
    aux_file = writer.close()
    index_bytes = store.get(f"{old}/{_INDEX}")
    store.put(f"{folder}/{_INDEX}", index_bytes)
    return [
        IndexFileWritten(_AUX, aux_file.size_bytes),
        IndexFileWritten(_INDEX, len(index_bytes)),
    ]
