"""Sorting index keys as pylance 14 orders them (layer L3): nulls first, then ascending,
floating-point values in IEEE total order (``-0.0`` before ``0.0``, NaN last), stable (rows
of equal keys keep their order, which is row-address order when they come from a scan).

Numbers, dates, times, durations and booleans sort as numpy integers (a stable radix
sort); strings, binaries, decimals and fixed-size binaries through Arrow's stable
``sort_indices``.
"""

from __future__ import annotations

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


def sort_order(values: pa.Array) -> tuple[Order, np.ndarray | None]:
    """The positions that sort ``values`` (nulls first, stable) and, for numbers, the
    sort keys in that order (None for other types)."""
    numbers = _numbers(values)
    if numbers is None:
        order = pc.array_sort_indices(values, null_placement="at_start").to_numpy()
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
