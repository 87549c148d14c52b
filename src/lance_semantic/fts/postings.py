"""Decoding pylance 14's posting lists and positions (``part_<n>_invert.lance``), with numpy
(layer L3).

One row of the invert file per token id holds its posting list: ``_posting``, a list of
blocks of 128 documents (ascending document ids). Each block starts with its best score (an
f32, little-endian). A *full* block then holds the first document id (u32), a bit width
(u8) and the 128 id deltas (the first delta 0) BitPacker4x-packed, then a bit width and the
128 frequencies packed the same way. The *last* block, when it holds fewer than 128
documents, holds instead varints: the ids as deltas (the first one absolute), then the
frequencies.

BitPacker4x packs 128 values of ``b`` bits in ``16 b`` bytes: value ``i`` belongs to lane
``i % 4``, each lane is a stream of 32-bit words packed LSB first, and word ``w`` of lane
``j`` is the u32 number ``4 w + j``.

With positions, ``_compressed_position`` is one byte stream per token and
``_position_block_offset`` the offset in it of each posting block's positions: the block's
documents' positions, each document's as deltas (its first one absolute), concatenated,
in groups of 128 packed as above (``[u8 width][16 width bytes]``) and a varint tail
(``packed_delta_v1``).

Everything is decoded for a whole posting list at once: the blocks of one bit width are
unpacked together, varints by a running reduction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["Postings", "decode_postings", "decode_positions", "unpack4x", "varints", "BLOCK"]

#: documents per posting block (``posting_block_size``)
BLOCK = 128

_K = np.arange(32, dtype=np.int64)


@dataclass(frozen=True, slots=True, eq=False)
class Postings:
    """A token's posting list: ``docs`` (uint32 document ids, ascending), ``freqs`` (uint32,
    how often the token occurs in each); ``positions`` (uint32, every occurrence's position,
    document by document) when read with positions, ``starts`` (int64, where each document's
    positions start in it, one more entry at the end)."""

    docs: np.ndarray
    freqs: np.ndarray
    positions: np.ndarray | None = None
    starts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.docs)


def unpack4x(data: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The 128 values of each BitPacker4x group of ``width`` bits starting at byte
    ``starts[g]`` of ``data`` (uint8), as a ``(groups, 128)`` uint32 array.

    >>> words = np.zeros(4, "<u4")  # width 1: one word per lane
    >>> words[1] = 0b101  # lane 1: values 1 and 9
    >>> unpack4x(words.view(np.uint8), np.array([0]), 1)[0].nonzero()[0].tolist()
    [1, 9]
    """
    groups = len(starts)
    if width == 0 or groups == 0:
        return np.zeros((groups, BLOCK), np.uint32)
    nbytes = 16 * width
    raw = data[starts.astype(np.int64)[:, None] + np.arange(nbytes)]
    words = raw.view("<u4").reshape(groups, width, 4).astype(np.uint64)
    bit = _K * width
    lo_word = bit >> 5
    hi_word = np.minimum(lo_word + 1, width - 1)
    shift = (bit & 31).astype(np.uint64)
    both = words[:, lo_word, :] | (words[:, hi_word, :] << np.uint64(32))
    mask = np.uint64((1 << width) - 1)
    values = (both >> shift[None, :, None]) & mask
    return values.reshape(groups, BLOCK).astype(np.uint32)


def varints(data: np.ndarray, start: int, count: int) -> tuple[np.ndarray, int]:
    """``count`` LEB128 varints of ``data`` (uint8) from byte ``start``, as uint64, and the
    byte after the last one.

    >>> varints(np.array([5, 0x80 | 1, 2, 7], np.uint8), 0, 3)
    (array([  5, 257,   7], dtype=uint64), 4)
    """
    if count == 0:
        return np.empty(0, np.uint64), start
    tail = data[start:]
    ends = np.flatnonzero(tail < 0x80)
    if len(ends) < count:
        raise ValueError(f"a truncated varint stream: {len(ends)} of {count} values")
    ends = ends[:count]
    stop = int(ends[-1]) + 1
    firsts = np.empty(count, np.int64)
    firsts[0] = 0
    firsts[1:] = ends[:-1] + 1
    lengths = ends + 1 - firsts
    within = np.arange(stop) - np.repeat(firsts, lengths)
    parts = (tail[:stop].astype(np.uint64) & np.uint64(0x7F)) << (7 * within).astype(np.uint64)
    return np.bitwise_or.reduceat(parts, firsts), start + stop


def _decode_stream(raw: np.ndarray) -> np.ndarray:
    """Every varint of ``raw`` (uint8 bytes holding whole varints only), as uint64."""
    ends = np.flatnonzero(raw < 0x80)
    if not len(ends):
        return np.empty(0, np.uint64)
    firsts = np.empty(len(ends), np.int64)
    firsts[0] = 0
    firsts[1:] = ends[:-1] + 1
    lengths = ends + 1 - firsts
    within = np.arange(len(raw)) - np.repeat(firsts, lengths)
    parts = (raw.astype(np.uint64) & np.uint64(0x7F)) << (7 * within).astype(np.uint64)
    return np.bitwise_or.reduceat(parts, firsts)


def _tails(data: np.ndarray, tails: list[tuple[int, int, int]], out: np.ndarray) -> None:
    """Decode the varint tails ``(byte, count, output index)`` of ``data`` into ``out``, all
    at once: each tail ends at the ``count``-th varint end from its first byte."""
    tails = [t for t in tails if t[1]]
    if not tails:
        return
    at = np.asarray([t[0] for t in tails], np.int64)
    count = np.asarray([t[1] for t in tails], np.int64)
    to = np.asarray([t[2] for t in tails], np.int64)
    ends = np.flatnonzero(data < 0x80)
    first = np.searchsorted(ends, at)
    if (first + count > len(ends)).any():
        raise ValueError("a truncated varint tail in a position stream")
    stop = ends[first + count - 1] + 1
    size = stop - at
    gather = np.repeat(at - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    values = _decode_stream(data[gather])
    where = np.repeat(to - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    out[where] = values


def _buffers(blocks: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The bytes and the (count + 1) offsets of a binary / large_binary array."""
    if isinstance(blocks, pa.ChunkedArray):
        blocks = blocks.combine_chunks()
    offsets = np.frombuffer(blocks.buffers()[1], np.int64 if _large(blocks) else np.int32)
    offsets = offsets[blocks.offset : blocks.offset + len(blocks) + 1].astype(np.int64)
    data_buf = blocks.buffers()[2]
    data = np.empty(0, np.uint8) if data_buf is None else np.frombuffer(data_buf, np.uint8)
    return data, offsets


def _large(arr: pa.Array) -> bool:
    return bool(pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type))


def decode_postings(blocks: pa.Array, length: int) -> tuple[np.ndarray, np.ndarray]:
    """The document ids and frequencies (uint32) of a posting list of ``length`` documents
    held in ``blocks`` (its ``_posting`` entry: one binary value per block)."""
    data, offsets = _buffers(blocks)
    nblocks = len(offsets) - 1
    expected = -(-length // BLOCK)
    if nblocks != expected:
        raise ValueError(f"a posting list of {length} documents in {nblocks} blocks")
    full = length // BLOCK
    docs = np.empty(length, np.uint32)
    freqs = np.empty(length, np.uint32)
    if full:
        starts = offsets[:full]
        first = _u32_at(data, starts + 4)
        id_width = data[starts + 8].astype(np.int64)
        freq_at = starts + 9 + 16 * id_width
        freq_width = data[freq_at].astype(np.int64)
        deltas = _unpack_by_width(data, starts + 9, id_width)
        ids = first[:, None].astype(np.uint64) + np.cumsum(deltas, axis=1, dtype=np.uint64)
        docs[: full * BLOCK] = ids.reshape(-1).astype(np.uint32)
        freqs[: full * BLOCK] = _unpack_by_width(data, freq_at + 1, freq_width).reshape(-1)
    rest = length - full * BLOCK
    if rest:
        values = _decode_stream(data[int(offsets[full]) + 4 : int(offsets[full + 1])])
        if len(values) != 2 * rest:
            raise ValueError(f"a last posting block of {len(values)} varints for {rest} documents")
        docs[full * BLOCK :] = np.cumsum(values[:rest]).astype(np.uint32)
        freqs[full * BLOCK :] = values[rest:].astype(np.uint32)
    return docs, freqs


def _u32_at(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    raw = data[at[:, None] + np.arange(4)]
    return raw.view("<u4").reshape(-1)


def _unpack_by_width(data: np.ndarray, starts: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """``unpack4x`` of groups of several widths: ``(groups, 128)`` in the groups' order."""
    out = np.empty((len(starts), BLOCK), np.uint32)
    for w in np.unique(widths):
        which = np.flatnonzero(widths == w)
        out[which] = unpack4x(data, starts[which], int(w))
    return out


def decode_positions(
    stream: bytes | pa.Buffer | np.ndarray, block_offsets: np.ndarray, freqs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A token's positions (uint32, document after document) and where each document's
    start (int64, ``len(freqs) + 1`` entries), from its ``_compressed_position`` stream, the
    ``_position_block_offset`` of each posting block and the frequencies of its documents
    (as :func:`decode_postings` returns them)."""
    data = stream if isinstance(stream, np.ndarray) else np.frombuffer(stream, np.uint8)
    counts = np.add.reduceat(freqs.astype(np.int64), np.arange(0, len(freqs), BLOCK))
    counts = counts if len(freqs) else np.empty(0, np.int64)
    if len(counts) != len(block_offsets):
        raise ValueError(f"{len(block_offsets)} position blocks for {len(counts)} posting blocks")
    total = int(counts.sum())
    deltas = np.empty(total, np.uint64)
    group_starts: list[int] = []
    group_out: list[int] = []
    widths: list[int] = []
    tails: list[tuple[int, int, int]] = []  # (byte, count, output)
    out = 0
    for at, count in zip(block_offsets.tolist(), counts.tolist(), strict=True):
        for _ in range(count // BLOCK):
            width = int(data[at])
            group_starts.append(at + 1)
            group_out.append(out)
            widths.append(width)
            at += 1 + 16 * width
            out += BLOCK
        tails.append((at, count % BLOCK, out))
        out += count % BLOCK
    if group_starts:
        values = _unpack_by_width(data, np.asarray(group_starts), np.asarray(widths))
        where = np.asarray(group_out)[:, None] + np.arange(BLOCK)
        deltas[where.reshape(-1)] = values.reshape(-1)
    _tails(data, tails, deltas)
    starts = np.zeros(len(freqs) + 1, np.int64)
    np.cumsum(freqs, out=starts[1:])
    running = np.cumsum(deltas)
    lengths = np.diff(starts)
    present = lengths > 0
    base = np.zeros(len(freqs), np.uint64)
    firsts = starts[:-1][present]
    base[present] = running[firsts] - deltas[firsts]
    positions = (running - np.repeat(base, lengths)).astype(np.uint32)
    return positions, starts
