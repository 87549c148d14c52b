"""Sorting index keys as pylance 14 orders them (layer L3): nulls first, then ascending,
floating-point values in IEEE total order (``-0.0`` before ``0.0``, NaN last), stable (rows
of equal keys keep their order, which is row-address order when they come from a scan).

Numbers, dates, times, durations and booleans sort as numpy integers (a stable radix
sort); strings and binaries of up to 64 bytes by their first 8 bytes as an integer, ties
ordered by the rest (byte-wise, shorter first: Arrow's and pylance's order); longer ones,
decimals and fixed-size binaries through Arrow's stable ``sort_indices``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["sort_order", "run_starts"]

Order = npt.NDArray[np.int64]

#: float type -> (the integer type of its bits, every bit but the sign)
_FLOAT_BITS: dict[pa.DataType, tuple[type[np.signedinteger[Any]], int]] = {
    pa.float16(): (np.int16, (1 << 15) - 1),
    pa.float32(): (np.int32, (1 << 31) - 1),
    pa.float64(): (np.int64, (1 << 63) - 1),
}


def _numbers(arr: pa.Array) -> np.ndarray | None:
    """``arr``'s values as numpy integers that order as pylance orders the values (nulls
    as 0), or None for a type that is not a number, date, time, duration or boolean."""
    t = arr.type
    if t in _FLOAT_BITS:
        width, flip = _FLOAT_BITS[t]
        raw = arr.fill_null(pa.scalar(0, t)) if arr.null_count else arr
        bits = np.asarray(raw.to_numpy(zero_copy_only=False)).view(width)
        # IEEE total order as signed integers: flip every bit but the sign of negatives
        mask = np.array(flip, dtype=width)
        return np.where(bits < 0, bits ^ mask, bits)
    if pa.types.is_boolean(t):
        target: pa.DataType = pa.uint8()
        arr = arr.cast(pa.uint8())
    elif pa.types.is_integer(t):
        target = t
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        target = pa.int32()
    elif pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t):
        target = pa.int64()
    elif pa.types.is_duration(t):
        target = pa.int64()
    else:
        return None
    got = arr.cast(target) if target != arr.type else arr
    if got.null_count:
        got = got.fill_null(pa.scalar(0, target))
    return np.asarray(got.to_numpy(zero_copy_only=False))


_BYTES_TYPES = {
    pa.string(): np.int32,
    pa.binary(): np.int32,
    pa.large_string(): np.int64,
    pa.large_binary(): np.int64,
}
#: the longest values sorted through 8-byte prefixes here (longer: Arrow's sort)
_PREFIX_BYTES_MAX = 64


def _byte_columns(
    arr: pa.Array,
) -> tuple[list[npt.NDArray[np.uint64]], npt.NDArray[np.int64]] | None:
    """``arr``'s (strings or binaries) bytes as big-endian 8-byte words, zero padded (one
    array per word), and each value's length; None for other types or long values."""
    width = _BYTES_TYPES.get(arr.type)
    if width is None or len(arr) == 0:
        return None
    n = len(arr)
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], width)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(1, np.uint8)
    if not len(data):
        data = np.zeros(1, np.uint8)
    lengths = np.diff(offsets)
    longest = int(lengths.max())
    if longest > _PREFIX_BYTES_MAX:
        return None
    starts = offsets[:-1]
    words = []
    for w in range(max(1, -(-longest // 8))):
        word = np.zeros(n, np.uint64)
        for b in range(8):
            j = w * 8 + b
            inside = lengths > j
            byte = data[np.minimum(starts + j, len(data) - 1)].astype(np.uint64)
            word |= np.where(inside, byte, 0).astype(np.uint64) << np.uint64(8 * (7 - b))
        words.append(word)
    return words, lengths


def _bytes_order(arr: pa.Array) -> tuple[Order, np.ndarray | None] | None:
    """The stable order of ``arr``'s (non-null) strings or binaries, byte-wise as Arrow and
    pylance compare them, and for values of up to 7 bytes their packed keys (the bytes,
    then the length in the low byte: equal keys, equal values); None: not sorted here."""
    got = _byte_columns(arr)
    if got is None:
        return None
    words, lengths = got
    if int(lengths.max()) <= 7:
        packed = words[0] | lengths.astype(np.uint64)
        order = np.argsort(packed, kind="stable").astype(np.int64)
        return order, packed[order]
    order = np.argsort(words[0], kind="stable").astype(np.int64)
    first = words[0][order]
    tied = np.zeros(len(order), bool)
    same = first[1:] == first[:-1]
    tied[1:] |= same
    tied[:-1] |= same
    if tied.any():  # values sharing their first 8 bytes: ordered by the rest, stably
        at = np.flatnonzero(tied)
        group = np.cumsum(np.concatenate([[True], ~same]))[at]
        rows = order[at]
        keys = [lengths[rows], *[w[rows] for w in reversed(words[1:])], group]
        order[at] = rows[np.lexsort(keys)]
    return order, None


def _sorted_valid(
    values: pa.Array, sort: Callable[[pa.Array], tuple[Order, np.ndarray | None] | None]
) -> tuple[Order, np.ndarray | None] | None:
    """``sort`` applied to the non-null values, the nulls put first (their keys 0)."""
    if not values.null_count:
        return sort(values)
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    rest = np.flatnonzero(valid)
    got = sort(values.filter(pa.array(valid)))
    if got is None:
        return None
    order, keys = got
    full = np.concatenate([np.flatnonzero(~valid), rest[order]]).astype(np.int64)
    if keys is None:
        return full, None
    return full, np.concatenate([np.zeros(len(full) - len(rest), keys.dtype), keys])


def sort_order(values: pa.Array) -> tuple[Order, np.ndarray | None]:
    """The positions that sort ``values`` (nulls first, stable) and, for numbers and short
    strings, the sort keys in that order (equal keys: equal values; None otherwise)."""
    numbers = _numbers(values)
    if numbers is None:
        by_bytes = _sorted_valid(values, _bytes_order)
        if by_bytes is not None:
            return by_bytes
        options = pc.SortOptions(sort_keys=[("", "ascending", "at_start")])
        order = pc.sort_indices(values, options=options).to_numpy()
        return order.astype(np.int64, copy=False), None
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        nulls = np.flatnonzero(~valid)
        rest = np.flatnonzero(valid)
        rest = rest[np.argsort(numbers[rest], kind="stable")]
        order = np.concatenate([nulls, rest])
    else:
        order = np.argsort(numbers, kind="stable")
    return order.astype(np.int64, copy=False), numbers[order]


def run_starts(sorted_values: pa.Array, numbers: np.ndarray | None) -> npt.NDArray[np.int64]:
    """The first position of each run of equal keys in ``sorted_values`` (sorted by
    :func:`sort_order`; ``numbers`` its sort keys, or None); the nulls (at the start) are
    one run."""
    n = len(sorted_values)
    if n == 0:
        return np.empty(0, np.int64)
    nulls = sorted_values.null_count
    if numbers is not None:
        keys = numbers[nulls:]
        change = keys[1:] != keys[:-1]
    else:
        rest = sorted_values.slice(nulls)
        if len(rest) > 1:
            ne = pc.not_equal(rest.slice(1), rest.slice(0, len(rest) - 1))
            change = ne.to_numpy(zero_copy_only=False).astype(bool)
        else:
            change = np.zeros(0, bool)
    starts = np.flatnonzero(change) + 1 + nulls
    head = [0] if nulls else []
    first = [nulls] if nulls < n else []
    return np.concatenate([np.asarray(head + first, np.int64), starts.astype(np.int64)])
