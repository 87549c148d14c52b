"""Arrow variable-width arrays as numpy views for the JSON kernels, and the row-at-a-time
conversion through the pure-Python reference (layer L2, private to
:mod:`lance_semantic.codecs.json`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ..types.families import is_large

__all__ = ["Buffers", "Piece", "reference_range", "valid_rows"]

#: a converted range: offsets relative to the range, data, bytes of data used
Piece = tuple[np.ndarray, np.ndarray, int]


class Buffers:
    """offsets (int64, one per row + 1), data (uint8) and validity bitmap of a variable-width
    array, as numpy views (offsets are copied only when 32-bit)."""

    __slots__ = ("arr", "n", "offsets", "data", "validity", "vbit0", "has_validity", "nulls")

    def __init__(self, arr: pa.Array) -> None:
        self.arr = arr
        self.n = n = len(arr)
        bufs = arr.buffers()
        large = is_large(arr.type)
        width = np.int64 if large else np.int32
        if bufs[1] is None or n == 0:
            self.offsets: np.ndarray = np.zeros(n + 1, dtype=np.int64)
        else:
            offs = np.frombuffer(bufs[1], dtype=width)[arr.offset : arr.offset + n + 1]
            self.offsets = offs if large else offs.astype(np.int64)
        self.data = (
            np.frombuffer(bufs[2], dtype=np.uint8)
            if bufs[2] is not None and bufs[2].size
            else np.zeros(1, dtype=np.uint8)
        )
        self.nulls = arr.null_count
        self.has_validity = bufs[0] is not None and self.nulls > 0
        self.validity = (
            np.frombuffer(bufs[0], dtype=np.uint8) if self.has_validity else np.zeros(1, np.uint8)
        )
        self.vbit0 = arr.offset
        # read-only views: Arrow buffers come writable or read-only depending on where they
        # were made, and numba compiles a kernel once per combination
        for a in (self.offsets, self.data, self.validity):
            a.flags.writeable = False

    def row_bytes(self, row: int) -> bytes:
        return self.data[self.offsets[row] : self.offsets[row + 1]].tobytes()

    def nbytes(self, lo: int = 0, hi: int | None = None) -> int:
        return int(self.offsets[self.n if hi is None else hi] - self.offsets[lo])

    def validity_buffer(self) -> pa.Buffer | None:
        """A validity bitmap starting at bit 0 for the output array (or None: no nulls)."""
        if not self.has_validity:
            return None
        if self.arr.offset == 0:
            return self.arr.buffers()[0]
        return self.arr.is_valid().buffers()[1]


def valid_rows(b: Buffers, lo: int, hi: int) -> np.ndarray:
    """Whether each row of [lo, hi) is valid (not null)."""
    if not b.has_validity:
        return np.ones(hi - lo, dtype=bool)
    first, end = b.vbit0 + lo, b.vbit0 + hi
    bits = np.unpackbits(b.validity[first >> 3 : (end + 7) >> 3], bitorder="little")
    skip = first & 7
    return bits[skip : skip + hi - lo].astype(bool)


def reference_range(b: Buffers, lo: int, hi: int, convert: Callable[[int, bytes], bytes]) -> Piece:
    """Rows [lo, hi) of ``b`` converted one at a time by ``convert(row, bytes)`` (the
    pure-Python reference); null rows stay empty."""
    offs = np.zeros(hi - lo + 1, dtype=np.int64)
    values, pos = [], 0
    for i, ok in enumerate(valid_rows(b, lo, hi).tolist()):
        if ok:
            value = convert(lo + i, b.row_bytes(lo + i))
            values.append(value)
            pos += len(value)
        offs[i + 1] = pos
    return offs, np.frombuffer(b"".join(values) or b"\0", dtype=np.uint8), pos
