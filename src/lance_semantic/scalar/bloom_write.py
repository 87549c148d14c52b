"""pylance 14's BLOOMFILTER scalar index, written (layer L3).

One Lance 2.2 file, ``bloomfilter.lance`` (measured on pylance 14.0.3; the filter is the
Parquet split-block bloom filter that Lance's format page describes): one row per zone of
8192 live rows of a fragment, zoned as the ZONEMAP is (``fragment_id``, ``zone_start``,
``zone_length``: all ``uint64 not null``), ``has_null: bool not null`` and
``bloom_filter_data: binary not null``; schema metadata ``bloomfilter_item`` = ``"8192"``,
``bloomfilter_probability`` = ``"0.00057"``, ``null_bitmap`` = ``"1"`` (global buffer 1:
the null rows as a RowIdTreeMap, as the ZONEMAP's); the entry's ``BloomFilterIndexDetails`` is an
empty message.

Each zone's filter is sized for 8192 distinct values at that probability (``-8 n /
ln(1 - p^(1/8))`` bits, as bytes rounded up to a power of two: 32 KiB), blocks of eight
little-endian ``u32`` words. A value is hashed with XXH64 (seed 0) of its little-endian
bytes (strings and binaries: their bytes); the hash's high 32 bits pick the block
(``(h >> 32) * blocks >> 32``), its low 32 bits set one bit in each word: bit
``(low * SALT[i] mod 2^32) >> 27`` of word ``i``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..manifest import IndexFile
from ..storage import DataFileWriter, ObjectStore
from .bitmap_write import encode_row_id_tree_map
from .btree_write import INDEX_FILE_VERSION
from .zonemap_write import live_zones

__all__ = ["BLOOM_FILE", "bloom_key_type_ok", "write_bloomfilter", "xxh64"]

BLOOM_FILE = "bloomfilter.lance"
_ITEMS = 8192
_PROBABILITY = "0.00057"

U64 = npt.NDArray[np.uint64]

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_SALT = np.array(
    [
        0x47B6137B,
        0x44974D91,
        0x8824AD5B,
        0xA2B7289D,
        0x705495C7,
        0x2DF1424B,
        0x9EFC4947,
        0x5C6BFB31,
    ],
    np.uint64,
)


def bloom_key_type_ok(t: pa.DataType) -> bool:
    """Whether pylance 14 builds a BLOOMFILTER over keys of ``t``."""
    return (
        (pa.types.is_integer(t))
        or t in (pa.float32(), pa.float64())
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_timestamp(t)
    )


def _rotl(x: U64, r: int) -> U64:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _round(acc: U64, lane: U64) -> U64:
    return _rotl(acc + lane * _P2, 31) * _P1


def _lanes(rows: npt.NDArray[np.uint8], at: int, width: int) -> U64:
    """The little-endian integers of ``width`` (8 or 4) bytes at byte ``at`` of each row."""
    part = np.ascontiguousarray(rows[:, at : at + width])
    return part.view("<u8" if width == 8 else "<u4").reshape(len(rows)).astype(np.uint64)


def _xxh64_rows(rows: npt.NDArray[np.uint8]) -> U64:
    """XXH64 (seed 0) of each row of ``rows`` (values of one length, one per row)."""
    n, length = rows.shape
    at = 0
    with np.errstate(over="ignore"):
        if length >= 32:
            v1 = np.full(n, _P1 + _P2, np.uint64)
            v2 = np.full(n, _P2, np.uint64)
            v3 = np.zeros(n, np.uint64)
            v4 = np.full(n, np.uint64(0) - _P1, np.uint64)
            while at + 32 <= length:
                v1 = _round(v1, _lanes(rows, at, 8))
                v2 = _round(v2, _lanes(rows, at + 8, 8))
                v3 = _round(v3, _lanes(rows, at + 16, 8))
                v4 = _round(v4, _lanes(rows, at + 24, 8))
                at += 32
            h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
            for v in (v1, v2, v3, v4):
                h = (h ^ _round(np.zeros(n, np.uint64), v)) * _P1 + _P4
        else:
            h = np.full(n, _P5, np.uint64)
        h = h + np.uint64(length)
        while at + 8 <= length:
            h = h ^ _round(np.zeros(n, np.uint64), _lanes(rows, at, 8))
            h = _rotl(h, 27) * _P1 + _P4
            at += 8
        if at + 4 <= length:
            h = h ^ (_lanes(rows, at, 4) * _P1)
            h = _rotl(h, 23) * _P2 + _P3
            at += 4
        while at < length:
            h = h ^ (rows[:, at].astype(np.uint64) * _P5)
            h = _rotl(h, 11) * _P1
            at += 1
        h = h ^ (h >> np.uint64(33))
        h = h * _P2
        h = h ^ (h >> np.uint64(29))
        h = h * _P3
        h = h ^ (h >> np.uint64(32))
    return h


def xxh64(values: list[bytes]) -> U64:
    """XXH64 (seed 0) of each of ``values``.

    >>> int(xxh64([b""])[0])
    17241709254077376921
    """
    return _hash_column(pa.array(values, pa.binary()))


def _bytes_rows(arr: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8], U64]:
    """A string / binary array's value starts, its data bytes and lengths."""
    n = len(arr)
    width = (
        np.int64
        if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
        else np.int32
    )
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], width)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets[:-1], data, np.diff(offsets).astype(np.uint64)


def _hash_column(values: pa.Array) -> U64:
    """The XXH64 hash of each of ``values`` (0 for a null), of its little-endian bytes."""
    n = len(values)
    out = np.zeros(n, np.uint64)
    if not n:
        return out
    t = values.type
    valid = values.is_valid().to_numpy(zero_copy_only=False) if values.null_count else None
    if (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or (pa.types.is_large_binary(t))
    ):
        starts, data, lengths = _bytes_rows(values)
        if valid is not None:
            lengths = np.where(valid, lengths, 0).astype(np.uint64)
        for length in np.unique(lengths).tolist():
            at = np.flatnonzero(lengths == length)
            if length:
                rows = data[starts[at][:, None] + np.arange(length)[None, :]]
            else:
                rows = np.zeros((len(at), 0), np.uint8)
            out[at] = _xxh64_rows(rows)
    else:
        width = t.bit_width // 8
        raw = values.view(pa.from_numpy_dtype(np.dtype(f"u{width}")))
        filled = raw.fill_null(0) if values.null_count else raw
        numbers = np.asarray(filled.to_numpy(zero_copy_only=False)).astype(f"<u{width}")
        out = _xxh64_rows(numbers.view(np.uint8).reshape(n, width))
    if valid is not None:
        out[~valid] = 0
    return out


def _num_blocks() -> int:
    bits = int(-8.0 * _ITEMS / math.log(1.0 - float(_PROBABILITY) ** (1.0 / 8.0)))
    size = min(max(bits // 8, 32), 128 * 1024 * 1024)
    return (1 << (size - 1).bit_length()) // 32


def _filter(hashes: U64, blocks: int) -> bytes:
    """The split-block bloom filter of ``hashes`` (``blocks`` blocks), serialised."""
    flags = np.zeros((blocks, 8, 32), bool)
    if len(hashes):
        with np.errstate(over="ignore"):
            block = ((hashes >> np.uint64(32)) * np.uint64(blocks)) >> np.uint64(32)
            low = hashes & np.uint64(0xFFFF_FFFF)
            bits = ((low[:, None] * _SALT[None, :]) & np.uint64(0xFFFF_FFFF)) >> np.uint64(27)
        word = np.broadcast_to(np.arange(8), bits.shape)
        flags[block.astype(np.int64)[:, None], word, bits.astype(np.int64)] = True
    packed = np.packbits(flags, axis=2, bitorder="little")  # (blocks, 8, 4) bytes: u32 LE
    return packed.tobytes()


def write_bloomfilter(
    store: ObjectStore,
    folder: str,
    values: pa.Array,
    addresses: U64,
) -> list[IndexFile]:
    """Write the BLOOMFILTER index of ``values`` (one per live row, the rows at
    ``addresses``, ascending) into ``folder``; the files written."""
    blocks = _num_blocks()
    hashes = _hash_column(values)
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    fids, starts, lengths, has_null, data = [], [], [], [], []
    for a, b, fid, start, length in live_zones(addresses):
        fids.append(fid)
        starts.append(start)
        lengths.append(length)
        has_null.append(not bool(valid[a:b].all()))
        data.append(_filter(hashes[a:b][valid[a:b]], blocks))
    schema = pa.schema(
        [
            pa.field("fragment_id", pa.uint64(), False),
            pa.field("zone_start", pa.uint64(), False),
            pa.field("zone_length", pa.uint64(), False),
            pa.field("has_null", pa.bool_(), False),
            pa.field("bloom_filter_data", pa.binary(), False),
        ]
    )
    writer = DataFileWriter(store, BLOOM_FILE, schema, INDEX_FILE_VERSION, folder=folder)
    writer.add_schema_metadata("bloomfilter_item", str(_ITEMS))
    writer.add_schema_metadata("bloomfilter_probability", _PROBABILITY)
    null_rows = addresses[values.is_null().to_numpy(zero_copy_only=False)]
    position = writer.add_global_buffer(encode_row_id_tree_map(null_rows))
    writer.add_schema_metadata("null_bitmap", str(position))
    if fids:
        writer.write(
            pa.record_batch(
                [
                    pa.array(fids, pa.uint64()),
                    pa.array(starts, pa.uint64()),
                    pa.array(lengths, pa.uint64()),
                    pa.array(has_null, pa.bool_()),
                    pa.array(data, pa.binary()),
                ],
                schema=schema,
            )
        )
    written = writer.close()
    return [IndexFile(BLOOM_FILE, written.size_bytes)]
