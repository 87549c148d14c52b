"""pylance's BTREE scalar index, read (layer L3).

Files (measured on pylance 14, see ``docs/format/index-formats.md``): ``page_lookup.lance``
holds one row per page (``min``, ``max``, ``null_count``, ``page_idx``; ``batch_size`` rows
per page in its schema metadata, 4096); ``page_data.lance`` holds every indexed row's value
(``values``, sorted, nulls first) and its row address (``ids``), page *i* being rows
``[i * batch_size, (i + 1) * batch_size)``. A page holding nulls has a null ``min``; a
page of nulls only a null ``max`` too. A value may span pages (duplicates at a boundary).

The lookup is read once per index; a query reads only the pages whose ``[min, max]``
meets it (one ``read_range`` per run of consecutive pages, kept in a bounded cache).
Floating-point answers are supersets (never exact): bounds are taken inclusive and NaN
rows always come back, as the engine orders ``-0.0`` below ``0.0`` and NaN above
everything, where Arrow's comparison kernels used here do not.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from ..errors import CorruptTableError
from ..storage import ObjectStore
from .files import IndexFile
from .rowsets import RowSelection, from_addresses, key_value, whole_fragment

__all__ = ["BTreeIndex", "PAGE_BYTES_KEPT"]

#: bytes of BTREE pages kept per index (an int64 page of 4096 rows is 64 KiB: 512 pages,
#: every page of a 2M-row index)
PAGE_BYTES_KEPT = 32 << 20


#: pages read along with a run of wanted ones rather than in a read of their own: a read
#: of a page cost about 0.3 ms, each page more in the same read about 0.08 ms (int64)
_GAP = 2


class _OverBudget(Exception):
    """A query would read more pages than its budget of rows allows."""


@dataclass(frozen=True)
class _Bounds:
    """A lookup's page bounds as numbers (nulls filled), and where they are null."""

    mins: np.ndarray
    maxs: np.ndarray
    min_null: np.ndarray
    max_valid: np.ndarray


def _as_numbers(arr: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """``arr`` as a numpy array of numbers that order as its values do (nulls as 0), or
    None for a type that is not a number, date or time."""
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        target = t
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        target = pa.int32()
    elif pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t):
        target = pa.int64()
    elif pa.types.is_duration(t):
        target = pa.int64()
    else:
        return None
    if pa.types.is_float16(t):
        return None
    got = arr.cast(target) if target != t else arr
    if isinstance(got, pa.ChunkedArray):
        got = got.combine_chunks()
    return np.asarray(got.fill_null(pa.scalar(0, target)).to_numpy(zero_copy_only=False))


_Numbers = tuple[np.ndarray, np.ndarray, np.ndarray, bool]


def _page_numbers(page: pa.Table, keep_order: bool = True) -> Any:
    """A page's non-null, non-NaN values as numbers, their row addresses, the row
    addresses of its NaN values, and whether the values are sorted (as they should be);
    without ``keep_order`` (several pages at once), the positions of the NaN rows instead of
    the order."""
    values = page.column("values")
    numbers = _as_numbers(values)
    assert numbers is not None
    ids = page.column("ids").to_numpy()
    keep = (
        np.ones(len(numbers), dtype=bool)
        if not values.null_count
        else pc.is_valid(values).to_numpy(zero_copy_only=False)
    )
    nan = np.zeros(len(numbers), dtype=bool)
    if numbers.dtype.kind == "f":
        nan = np.isnan(numbers) & keep
        keep &= ~nan
    got = numbers[keep] if values.null_count or nan.any() else numbers
    kept_ids = ids[keep] if got is not numbers else ids
    if not keep_order:
        return got, kept_ids, ids[nan], None, np.flatnonzero(nan)
    ordered = len(got) < 2 or bool(np.all(got[1:] >= got[:-1]))
    return got, kept_ids, ids[nan], ordered


def _pages_numbers(pages: list[pa.Table]) -> list[_Numbers]:
    """:func:`_page_numbers` of each of ``pages``, worked out over all of them at once (a
    conversion per page cost about 0.1 ms: an ``IN`` of 100 values meets ~80 pages)."""
    if len(pages) < 2:
        return [_page_numbers(t) for t in pages]
    whole = _page_numbers(pa.concat_tables(pages), keep_order=False)
    values, ids, nan = whole[0], whole[1], whole[2]
    # (the split points of the kept values: every page's rows, nulls and NaN dropped)
    kept = [t.num_rows - t.column("values").null_count for t in pages]
    nan_rows = whole[4]
    bounds = np.cumsum([0, *(t.num_rows for t in pages)])
    nan_at = np.searchsorted(nan_rows, bounds)
    out: list[_Numbers] = []
    at = 0
    for i, n in enumerate(kept):
        n -= int(nan_at[i + 1] - nan_at[i])
        got = values[at : at + n]
        ordered = len(got) < 2 or bool(np.all(got[1:] >= got[:-1]))
        out.append((got, ids[at : at + n], nan[nan_at[i] : nan_at[i + 1]], ordered))
        at += n
    return out


class BTreeIndex:
    """A BTREE index of one column over ``fragments`` (its fragment bitmap)."""

    kind = "BTREE"

    def __init__(self, store: ObjectStore, base: str, name: str, fragments: frozenset[int]) -> None:
        self.name, self.fragments = name, fragments
        self._lookup_file = IndexFile(store, f"{base}/page_lookup.lance")
        self._data = IndexFile(store, f"{base}/page_data.lance", ["values", "ids"])
        self._lookup: pa.Table | None = None
        self._bounds: _Bounds | bool | None = None  # (False: not numbers)
        self._value_type: pa.DataType | None = None
        self._page_rows = 4096
        self._pages: OrderedDict[int, pa.Table] = OrderedDict()
        self._page_bytes = 0
        #: the kept pages as numbers (see ``_page_numbers``)
        self._numeric: dict[int, _Numbers] = {}
        self._lock = threading.Lock()
        #: pages read from ``page_data`` so far (what tests and explain look at)
        self.pages_read = 0

    # ---- the parts ----------------------------------------------------------------------
    def lookup(self) -> pa.Table:
        """The page lookup (read once)."""
        if self._lookup is None:
            table = self._lookup_file.read_all()
            meta = table.schema.metadata  # (as the file's: one call less than metadata())
            if meta is None or b"batch_size" not in meta:
                meta = self._lookup_file.schema_metadata()
            try:
                self._page_rows = int(meta.get(b"batch_size", b"4096"))
                table.column("min"), table.column("max"), table.column("null_count")
            except (KeyError, ValueError) as e:
                raise CorruptTableError(self._lookup_file.rel, f"unexpected layout: {e}") from e
            self._lookup = table.sort_by("page_idx") if table.num_rows > 1 else table
        return self._lookup

    @property
    def value_type(self) -> pa.DataType:
        if self._value_type is None:
            self._value_type = self.lookup().schema.field("min").type
        return self._value_type

    def _read_pages(self, pages: np.ndarray) -> pa.Table:
        """The rows of ``pages`` (sorted page numbers), cached pages reused."""
        parts = self._page_list(pages)
        if not parts:
            return self._data.read_range(0, 0)
        return pa.concat_tables(parts)

    def _page_list(self, pages: np.ndarray) -> list[pa.Table]:
        """The rows of each of ``pages`` (sorted page numbers), cached pages reused."""
        lookup = self.lookup()
        page_ids = lookup.column("page_idx").to_numpy()
        parts: list[pa.Table] = []
        missing = [int(p) for p in pages if int(page_ids[p]) not in self._pages]
        runs: list[list[int]] = []
        for p in missing:  # runs of near pages: one read each
            if runs and page_ids[p] - page_ids[runs[-1][-1]] <= _GAP + 1:
                runs[-1].append(p)
            else:
                runs.append([p])
        for run in runs:
            first, last = int(page_ids[run[0]]), int(page_ids[run[-1]])
            start = first * self._page_rows
            got = self._data.read_range(start, (last - first + 1) * self._page_rows)
            with self._lock:
                self.pages_read += len(run)
                for p in run:
                    at = (int(page_ids[p]) - first) * self._page_rows
                    page = got.slice(at, self._page_rows).combine_chunks()
                    self._pages[int(page_ids[p])] = page
                    self._page_bytes += page.nbytes
                    while self._page_bytes > PAGE_BYTES_KEPT and len(self._pages) > 1:
                        gone, table = self._pages.popitem(last=False)
                        self._page_bytes -= table.nbytes
                        self._numeric.pop(gone, None)
        with self._lock:
            for p in pages:
                key = int(page_ids[p])
                page = self._pages.get(key)
                if page is None:  # (evicted meanwhile by another query: read again)
                    page = self._data.read_range(key * self._page_rows, self._page_rows)
                else:
                    self._pages.move_to_end(key)
                parts.append(page)
        return parts

    # ---- numbers: the lookup and pages as numpy, searched with searchsorted -------------
    def _numbers(self) -> _Bounds | None:
        """The lookup's bounds as numbers (None for values that are not numbers: strings,
        decimals, booleans); made once."""
        if self._bounds is None:
            lookup = self.lookup()
            mins, maxs = _as_numbers(lookup.column("min")), _as_numbers(lookup.column("max"))
            if mins is None or maxs is None:
                self._bounds = False
            else:
                self._bounds = _Bounds(
                    mins,
                    maxs,
                    pc.is_null(lookup.column("min")).to_numpy(zero_copy_only=False),
                    pc.is_valid(lookup.column("max")).to_numpy(zero_copy_only=False),
                )
        return self._bounds if isinstance(self._bounds, _Bounds) else None

    def _sorted_rows(self, pages: np.ndarray) -> list[_Numbers] | None:
        """Each page's non-null, non-NaN values as numbers (sorted), their row addresses
        and the addresses of its NaN rows (worked out once per page kept); None when a
        page's values are not sorted."""
        page_ids = self.lookup().column("page_idx").to_numpy()
        keys = [int(page_ids[p]) for p in pages]
        with self._lock:
            known = [self._numeric.get(k) for k in keys]
        todo = [p for p, got in zip(pages.tolist(), known, strict=True) if got is None]
        if todo:
            made = iter(_pages_numbers(self._page_list(np.asarray(todo))))
            with self._lock:
                for i, got in enumerate(known):
                    if got is None:
                        known[i] = got = next(made)
                        if keys[i] in self._pages:
                            self._numeric[keys[i]] = got
        parts = [k for k in known if k is not None]
        return parts if all(p[3] for p in parts) else None

    def _check_budget(self, pages: np.ndarray, budget: int | None) -> None:
        """Raise :class:`_OverBudget` when ``pages`` hold more rows than ``budget`` could
        select (the pages at both ends may hold few of them)."""
        if budget is not None and (len(pages) - 2) * self._page_rows > budget:
            raise _OverBudget

    def _numeric_in(
        self, cast: list[pa.Scalar], physical: Mapping[int, int], budget: int | None
    ) -> RowSelection | None:
        bounds = self._numbers()
        q = _as_numbers(pa.array([c.as_py() for c in cast], self.value_type))
        if bounds is None or q is None:
            return None
        q = np.unique(q)
        lo = np.searchsorted(q, bounds.mins, "left")
        lo[bounds.min_null] = 0
        hi = np.searchsorted(q, bounds.maxs, "right")
        hit = (hi > lo) & bounds.max_valid
        floating = q.dtype.kind == "f"
        if floating:
            hit |= self._nan_pages()
        pages = np.flatnonzero(hit)
        if not len(pages):
            return self._selection(np.empty(0, np.uint64), not floating, physical)
        found = self._sorted_rows(pages)
        if found is None:
            return None
        parts = []
        for values, ids, nan, _ in found:  # each page searched for every value
            left = np.searchsorted(values, q, "left")
            right = np.searchsorted(values, q, "right")
            parts += [ids[a:b] for a, b in zip(left.tolist(), right.tolist(), strict=True) if b > a]
            parts.append(nan)
        return self._selection(np.concatenate(parts), not floating, physical)

    def _numeric_between(
        self,
        lo: pa.Scalar | None,
        low_in: bool,
        hi: pa.Scalar | None,
        high_in: bool,
        physical: Mapping[int, int],
        budget: int | None,
    ) -> RowSelection | None:
        bounds = self._numbers()
        if bounds is None:
            return None
        ends = [
            None if v is None else _as_numbers(pa.array([v.as_py()], self.value_type))
            for v in (lo, hi)
        ]
        if any(e is None for e, v in zip(ends, (lo, hi), strict=True) if v is not None):
            return None
        low = None if ends[0] is None else ends[0][0]
        high = None if ends[1] is None else ends[1][0]
        hit = bounds.max_valid.copy()
        if high is not None:
            hit &= bounds.min_null | (bounds.mins <= high)
        if low is not None:
            hit &= bounds.maxs >= low
        floating = bounds.mins.dtype.kind == "f"
        if floating:
            hit |= self._nan_pages()
        pages = np.flatnonzero(hit)
        self._check_budget(pages, budget)
        if not len(pages):
            return self._selection(np.empty(0, np.uint64), not floating, physical)
        found = self._sorted_rows(pages)
        if found is None:
            return None
        parts = []
        for values, ids, nan, _ in found:
            a = (
                0
                if low is None
                else int(np.searchsorted(values, low, "left" if low_in else "right"))
            )
            b = len(values)
            if high is not None:
                b = int(np.searchsorted(values, high, "right" if high_in else "left"))
            parts += [ids[a : max(a, b)], nan]
        return self._selection(np.concatenate(parts), not floating, physical)

    def _selection(self, ids: np.ndarray, exact: bool, physical: Mapping[int, int]) -> RowSelection:
        covered = frozenset(self.fragments & physical.keys())
        return RowSelection(from_addresses(ids, covered), exact, (self.name,))

    # ---- queries ------------------------------------------------------------------------
    def _floating(self) -> bool:
        return pa.types.is_floating(self.value_type)

    def _cast(self, value: pa.Scalar) -> pa.Scalar | None:
        """``value`` in the index's value type, or None when it does not hold it exactly."""
        return key_value(value, self.value_type)

    def in_values(
        self,
        values: Sequence[pa.Scalar],
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None:
        """Rows whose value is one of ``values`` (``=``, ``IN``). ``budget`` is not
        applied: pages of a value's neighbours say nothing of how many rows hold it (the
        pages read are at most one or two per value)."""
        try:
            return self._in_values(values, physical, budget)
        except _OverBudget:
            return None

    def _in_values(
        self, values: Sequence[pa.Scalar], physical: Mapping[int, int], budget: int | None
    ) -> RowSelection | None:
        cast = [self._cast(v) for v in values]
        if any(c is None for c in cast):
            return None
        if self._numbers() is not None:
            fast = self._numeric_in(cast, physical, budget)
            if fast is not None:
                return fast
        lookup = self.lookup()
        mins, maxs = lookup.column("min"), lookup.column("max")
        hit = np.zeros(lookup.num_rows, dtype=bool)
        for v in cast:
            meets = pc.and_(
                pc.fill_null(pc.less_equal(mins, v), True),
                pc.fill_null(pc.greater_equal(maxs, v), False),
            )
            hit |= meets.to_numpy(zero_copy_only=False)
        if self._floating():
            hit |= self._nan_pages()
        pages = np.flatnonzero(hit)
        value_set = pa.array([c.as_py() for c in cast], self.value_type)  # type: ignore[union-attr]
        floating = self._floating()

        def keep(values: pa.ChunkedArray) -> pa.ChunkedArray:
            found = pc.is_in(values, value_set=value_set)
            return pc.or_(found, pc.is_nan(values)) if floating else found

        return self._answer_with(pages, keep, not floating, physical)

    def between(
        self,
        low: pa.Scalar | None,
        low_in: bool,
        high: pa.Scalar | None,
        high_in: bool,
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None:
        """Rows whose value is within the bounds (None: unbounded; ``*_in``: inclusive);
        None (not answered) when the pages to read hold more than ``budget`` rows."""
        try:
            return self._between(low, low_in, high, high_in, physical, budget)
        except _OverBudget:
            return None

    def _between(
        self,
        low: pa.Scalar | None,
        low_in: bool,
        high: pa.Scalar | None,
        high_in: bool,
        physical: Mapping[int, int],
        budget: int | None,
    ) -> RowSelection | None:
        lo = None if low is None else self._cast(low)
        hi = None if high is None else self._cast(high)
        if (low is not None and lo is None) or (high is not None and hi is None):
            return None
        floating = self._floating()
        if floating:
            low_in = high_in = True
        if self._numbers() is not None:
            fast = self._numeric_between(lo, low_in, hi, high_in, physical, budget)
            if fast is not None:
                return fast
        lookup = self.lookup()
        mins, maxs = lookup.column("min"), lookup.column("max")
        hit = pc.is_valid(maxs)
        if hi is not None:
            hit = pc.and_(hit, pc.fill_null(pc.less_equal(mins, hi), True))
        if lo is not None:
            hit = pc.and_(hit, pc.fill_null(pc.greater_equal(maxs, lo), False))
        flags = hit.to_numpy(zero_copy_only=False)
        if floating:
            flags |= self._nan_pages()
        self._check_budget(np.flatnonzero(flags), budget)

        def keep(values: pa.ChunkedArray) -> pa.ChunkedArray:
            mask = pc.is_valid(values)
            if lo is not None:
                mask = pc.and_(mask, (pc.greater_equal if low_in else pc.greater)(values, lo))
            if hi is not None:
                mask = pc.and_(mask, (pc.less_equal if high_in else pc.less)(values, hi))
            return pc.or_(mask, pc.is_nan(values)) if floating else mask

        return self._answer_with(np.flatnonzero(flags), keep, not floating, physical)

    def is_null(self, physical: Mapping[int, int]) -> RowSelection:
        """Rows whose value is null."""
        counts = self.lookup().column("null_count").to_numpy()
        return self._answer_with(np.flatnonzero(counts > 0), pc.is_null, True, physical)

    def is_not_null(self, physical: Mapping[int, int]) -> RowSelection:
        """Rows whose value is not null: every other row of the covered fragments."""
        nulls = self.is_null(physical)
        rows = {f: whole_fragment(physical[f]) - b for f, b in nulls.rows.items()}
        return RowSelection(rows, True, (self.name,))

    def _nan_pages(self) -> np.ndarray:
        maxs = self.lookup().column("max")
        return pc.fill_null(pc.is_nan(maxs), False).to_numpy(zero_copy_only=False)

    def _answer_with(
        self,
        pages: np.ndarray,
        keep: Callable[[pa.ChunkedArray], pa.ChunkedArray],
        exact: bool,
        physical: Mapping[int, int],
    ) -> RowSelection:
        """The rows of ``pages`` whose values ``keep`` accepts, in the covered fragments
        among those scanned (``physical``)."""
        covered = self.fragments & physical.keys()
        if not len(pages):
            return RowSelection({f: BitMap() for f in covered}, exact, (self.name,))
        rows = self._read_pages(pages)
        mask = keep(rows.column("values"))
        ids = rows.column("ids").filter(pc.fill_null(mask, False)).to_numpy()
        return RowSelection(from_addresses(ids, frozenset(covered)), exact, (self.name,))
