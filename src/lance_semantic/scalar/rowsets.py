"""Row selections of scalar indices (layer L3): per fragment, the physical row offsets an
index says may match a predicate, and whether they are exactly the matching rows.

A :class:`RowSelection` covers some fragments (its keys): for a covered fragment, only the
rows in its bitmap can match; fragments it does not cover are not answered (they are
scanned). Selections combine as the predicates do: ``AND`` intersects where both sides
cover a fragment (and keeps the one side elsewhere: a superset), ``OR`` unites over the
fragments both sides cover, ``NOT`` complements an exact selection within the covered
fragments' rows (a superset: the rows where the inner predicate is null come back, so the
filter is evaluated again on them).

>>> from pyroaring import BitMap
>>> a = RowSelection({0: BitMap([1, 2, 3]), 1: BitMap([0])}, exact=True)
>>> b = RowSelection({0: BitMap([2, 3, 4])}, exact=True)
>>> sorted(a.intersect(b).rows[0]), a.intersect(b).exact
([2, 3], False)
>>> sorted(a.union(b).rows), sorted(a.union(b).rows[0])
([0], [1, 2, 3, 4])
>>> sorted(b.complement({0: 6}).rows[0])
[0, 1, 5]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

__all__ = ["RowSelection", "from_addresses", "key_value", "whole_fragment"]


@dataclass(frozen=True)
class RowSelection:
    """Per covered fragment id, the physical offsets of the rows that may match.

    ``exact``: in every covered fragment the rows are exactly those where the predicate is
    true (deleted rows included: readers drop them). ``indices``: the names of the indices
    that answered."""

    rows: Mapping[int, BitMap]
    exact: bool
    indices: tuple[str, ...] = field(default=())

    def selected(self) -> int:
        """How many rows the selection holds (deleted ones included)."""
        return sum(len(b) for b in self.rows.values())

    def intersect(self, other: RowSelection) -> RowSelection:
        """The selection of ``self AND other``."""
        rows: dict[int, BitMap] = {}
        for fid in self.rows.keys() | other.rows.keys():
            mine, theirs = self.rows.get(fid), other.rows.get(fid)
            if mine is not None and theirs is not None:
                rows[fid] = mine & theirs
            else:
                rows[fid] = mine if mine is not None else theirs  # type: ignore[assignment]
        same = self.rows.keys() == other.rows.keys()
        return RowSelection(
            rows, self.exact and other.exact and same, _names(self.indices, other.indices)
        )

    def union(self, other: RowSelection) -> RowSelection:
        """The selection of ``self OR other``, over the fragments both cover."""
        rows = {
            fid: self.rows[fid] | other.rows[fid] for fid in self.rows.keys() & other.rows.keys()
        }
        return RowSelection(rows, self.exact and other.exact, _names(self.indices, other.indices))

    def complement(self, physical: Mapping[int, int]) -> RowSelection:
        """The selection of ``NOT self`` (``self`` exact): every other row of the covered
        fragments (``physical``: each fragment's physical row count), a superset."""
        rows = {fid: whole_fragment(physical[fid]) - b for fid, b in self.rows.items()}
        return RowSelection(rows, False, self.indices)

    def offsets(self, fid: int) -> np.ndarray:
        """The selected physical offsets of fragment ``fid`` (sorted int64)."""
        b = self.rows.get(fid)
        if b is None or not len(b):
            return np.empty(0, dtype=np.int64)
        return np.frombuffer(b.to_array(), dtype=np.uint32).astype(np.int64)


def _names(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(n for n in b if n not in a)


def whole_fragment(physical_rows: int) -> BitMap:
    """Every physical offset of a fragment of ``physical_rows`` rows."""
    return BitMap(range(physical_rows))


def from_addresses(addresses: np.ndarray, fragments: frozenset[int]) -> dict[int, BitMap]:
    """Row ``addresses`` (``fragment id << 32 | offset``) as bitmaps of offsets for each of
    ``fragments`` (empty for a fragment without any; addresses of others are dropped)."""
    out = {fid: BitMap() for fid in fragments}
    if not len(addresses):
        return out
    addresses = np.sort(np.asarray(addresses, dtype=np.uint64))
    frag = (addresses >> np.uint64(32)).astype(np.int64)
    offsets = (addresses & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    starts = [0, *(np.flatnonzero(np.diff(frag)) + 1).tolist()]
    ends = [*starts[1:], len(frag)]
    for a, b in zip(starts, ends, strict=True):
        fid = int(frag[a])
        if fid in out:
            out[fid] = BitMap(offsets[a:b])
    return out


def key_value(value: pa.Scalar, key_type: pa.DataType) -> pa.Scalar | None:
    """A filter's literal in an index's key type, or None when it does not hold it exactly
    (the index then does not answer). A string meeting a date or a timestamp without a time
    zone is parsed (``date '2020-01-31'`` reaches the planner as a cast of its text).

    >>> key_value(pa.scalar(5, pa.int32()), pa.int64())
    <pyarrow.Int64Scalar: 5>
    >>> key_value(pa.scalar(300), pa.int8()) is None, key_value(pa.scalar(2.5), pa.int64())
    (True, None)
    >>> key_value(pa.scalar("2020-01-31"), pa.date32())
    <pyarrow.Date32Scalar: datetime.date(2020, 1, 31)>
    """
    if value.type == key_type:
        return value
    try:
        got = value.cast(key_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if pa.types.is_floating(key_type):
        return got
    if pa.types.is_string(value.type) or pa.types.is_large_string(value.type):
        if pa.types.is_date(key_type):
            return got
        if pa.types.is_timestamp(key_type) and key_type.tz is None:
            return got
    try:
        same = got.cast(value.type) == value
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return got if same else None
