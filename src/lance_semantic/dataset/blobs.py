"""``Dataset.take_blobs``: blob values as seekable file objects (layer L5;
docs/format/lance-format-facts.md §10)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa

from ..errors import ColumnNotFoundError, ReadError
from ..manifest import Manifest
from ..read import FragmentReader, fragment_blob_files
from ..schema import is_blob
from ..storage import BlobFile, ObjectStore

__all__ = ["take_blobs"]

_Indices: TypeAlias = Sequence[int] | np.ndarray | pa.Array


def _array(values: _Indices) -> np.ndarray:
    raw = values.to_numpy() if isinstance(values, pa.Array) else values
    return np.asarray(raw, dtype=np.int64).reshape(-1)


def take_blobs(
    store: ObjectStore,
    manifest: Manifest,
    column: str,
    *,
    indices: _Indices | None = None,
    addresses: _Indices | None = None,
) -> list[BlobFile | None]:
    """File objects for the blob values of ``column`` at ``indices`` (offsets among the
    live rows) or row ``addresses`` (``fragment_id << 32 | offset``), in the order given;
    None where the value is null."""
    if (indices is None) == (addresses is None):
        raise ValueError("take_blobs needs exactly one of indices and ids/addresses")
    field = next((f for f in manifest.schema.fields if f.name == column), None)
    if field is None:
        raise ColumnNotFoundError(column, [f.name for f in manifest.schema.fields])
    if not is_blob(field):
        raise ReadError(f"column '{column}' is not a blob column ({field.logical_type})")
    fragments = {f.id: f for f in manifest.fragments}
    if indices is not None:
        idx = _array(indices)
        readers = [
            FragmentReader(store, manifest.schema, f, [], _EMPTY) for f in fragments.values()
        ]
        live = np.array([r.live_rows() for r in readers], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(live)])
        if len(idx) and (idx.min() < 0 or idx.max() >= starts[-1]):
            bad = int(idx[(idx < 0) | (idx >= starts[-1])][0])
            raise ReadError(f"take_blobs index {bad} is out of range for {starts[-1]} rows")
        owner = np.searchsorted(starts, idx, side="right") - 1
        frag_ids = np.array([r.fragment.id for r in readers], dtype=np.int64)[owner]
        offsets = np.empty(len(idx), dtype=np.int64)
        for i, reader in enumerate(readers):
            mine = owner == i
            if mine.any():
                offsets[mine] = reader.physical_offsets(idx[mine] - starts[i])
    else:
        addr = _array(addresses)
        frag_ids, offsets = addr >> 32, addr & 0xFFFFFFFF
    out: list[BlobFile | None] = [None] * len(frag_ids)
    for fid in np.unique(frag_ids):
        fragment = fragments.get(int(fid))
        if fragment is None:
            raise ReadError(f"take_blobs: no fragment {int(fid)}")
        where = np.flatnonzero(frag_ids == fid)
        files = fragment_blob_files(store, fragment, field, offsets[where])
        for pos, blob in zip(where.tolist(), files, strict=True):
            out[pos] = blob
    return out


_EMPTY = pa.schema([])
