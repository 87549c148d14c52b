"""An INVERTED index remapped for a compaction, as pylance 14 remaps it (layer L3).

Each partition is rewritten under the new index folder: its documents whose rows the
compaction moved get their new addresses, those it dropped (deleted rows of rewritten
fragments) leave the partition, every token's posting list loses them and is renumbered,
and the block scores follow the partition's new statistics; a token left without a
document leaves the token map. Rows of fragments the compaction did not touch keep their
addresses (their deleted rows stay counted, as pylance keeps them). The analyzer, the
partition numbers and the ``deleted_fragments`` bitmap stay as they were.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..manifest import IndexEntry, IndexFile
from ..scalar.files import IndexFile as IndexFileReader
from ..scalar.remap import mapped_addresses
from ..storage import ObjectStore
from .inverted_write import (
    DEFAULT_PARAMS,
    EMPTY_BITMAP,
    Postings,
    is_inverted,
    write_metadata,
    write_partition,
)
from .postings import decode_positions, decode_postings
from .token_map import TokenMap

__all__ = ["remap_inverted_index"]

Addresses = npt.NDArray[np.uint64]


def remap_inverted_index(
    store: ObjectStore, entry: IndexEntry, mapping: Mapping[int, Addresses], new_uuid: str
) -> list[IndexFile] | None:
    """Write ``entry``'s INVERTED index remapped into ``_indices/<new_uuid>/``; the files
    written, or None for an index not remapped here (another type or version). ``mapping``:
    old fragment id -> the new address of each of its row offsets (all ones: dropped)."""
    if not is_inverted(entry):
        return None
    old, folder = f"_indices/{entry.uuid}", f"_indices/{new_uuid}"
    reader = IndexFileReader(store, f"{old}/metadata.lance")
    meta = reader.schema_metadata()
    params = {**DEFAULT_PARAMS, **json.loads(meta.get(b"params", b"{}"))}
    partitions = [int(p) for p in json.loads(meta.get(b"partitions", b"[0]"))]
    deleted = reader.read_all().column("deleted_fragments")[0].as_py() or EMPTY_BITMAP
    with_position = b"positions_layout" in meta
    written: list[IndexFile] = []
    kept_partitions = []
    for p in partitions:
        files = _partition(store, old, folder, p, mapping, with_position)
        if files:
            kept_partitions.append(p)
            written += files
    last = write_metadata(store, folder, params, kept_partitions, deleted, with_position)
    return [*written, IndexFile(last.path, last.size_bytes)]


def _partition(
    store: ObjectStore,
    old: str,
    folder: str,
    p: int,
    mapping: Mapping[int, Addresses],
    with_position: bool,
) -> list[IndexFile]:
    docs = IndexFileReader(store, f"{old}/part_{p}_docs.lance").read_all()
    addresses, keep = mapped_addresses(docs.column("_rowid").to_numpy(), mapping)
    if not keep.any():
        return []
    new_id = np.cumsum(keep) - 1
    tokens = TokenMap.from_table(IndexFileReader(store, f"{old}/part_{p}_tokens.lance").read_all())
    by_id = sorted(tokens.items(), key=lambda item: item[1])
    invert = IndexFileReader(store, f"{old}/part_{p}_invert.lance").read_all()
    postings = invert.column("_posting").combine_chunks()
    lengths = invert.column("_length").to_numpy()
    streams = block_offsets = None
    if with_position:
        streams = invert.column("_compressed_position").combine_chunks()
        block_offsets = invert.column("_position_block_offset").combine_chunks()
    names: list[str] = []
    all_docs: list[npt.NDArray[np.uint32]] = []
    all_freqs: list[npt.NDArray[np.uint32]] = []
    all_pos: list[npt.NDArray[np.uint32]] = []
    for token, tid in by_id:
        d, f = decode_postings(postings[tid].values, int(lengths[tid]))
        m = keep[d]
        if not m.any():
            continue  # a token of dropped documents only
        names.append(token)
        all_docs.append(new_id[d[m]].astype(np.uint32))
        all_freqs.append(f[m])
        if streams is not None and block_offsets is not None:
            stream = streams[tid].as_buffer()
            offsets = block_offsets[tid].values.to_numpy().astype(np.int64)
            positions, starts = decode_positions(stream, offsets, f)
            counts = np.diff(starts)
            all_pos.append(positions[np.repeat(m, counts)])
    starts_ = np.zeros(len(names) + 1, np.int64)
    np.cumsum([len(d) for d in all_docs], out=starts_[1:])
    freqs = np.concatenate(all_freqs).astype(np.uint32)
    pos_starts = positions_flat = None
    if with_position:
        positions_flat = np.concatenate(all_pos).astype(np.uint32)
        pos_starts = np.zeros(len(freqs) + 1, np.int64)
        np.cumsum(freqs, out=pos_starts[1:])
    remapped = Postings(
        starts_, np.concatenate(all_docs).astype(np.uint32), freqs, pos_starts, positions_flat
    )
    doc_lens = docs.column("_num_tokens").to_numpy().astype(np.uint32)[keep]
    files = write_partition(
        store, folder, p, remapped, addresses[keep], doc_lens, pa.array(names, pa.string())
    )
    return [IndexFile(f.path, f.size_bytes) for f in files]
