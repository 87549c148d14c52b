"""Filters answered through pylance's scalar indices (layer L4).

:func:`scalar_choice` asks the BTREE / BITMAP / LABEL_LIST indices of a filter's columns
(``scalar.select_rows``) which rows of the scanned fragments may match, and keeps the
answer when it is selective: at most :data:`SELECTIVE` of the covered fragments' rows
(above that, taking the rows one by one costs more than scanning the filter's columns).
:func:`indexed_batches` then reads, fragment by fragment in table order, only the selected
rows of a covered fragment (a take of their physical offsets, deleted rows dropped first)
and scans the others as before; the whole filter is evaluated again on the rows taken
(unless the selection is *complete*), so the rows and their order are those of an
unindexed scan. A count (no columns, no row
addresses) over a *complete* selection (every part of the filter answered exactly) reads no
rows at all.

``use_scalar_index=False`` (the scanner's option) forces the scan. Tables with stable row
ids are not answered here (their indices hold row ids, not addresses: the caller passes no
index section).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from ..manifest import Fragment
from ..query import Predicate, SqlExpression
from ..scalar import RowSelection, open_scalar_index, select_rows, single_field_entries
from ..scalar.planner import ScalarIndex
from ..schema import TableSchema
from ..storage import ObjectStore
from .fragment_reader import empty_rows
from .prefetch import WORKERS, ordered
from .readers import Readers
from .readers import readers as kept_readers
from .scan_plan import ScanPlan

__all__ = ["SELECTIVE", "ScalarChoice", "indexed_batches", "scalar_choice"]

#: the index is used when it selects at most this share of the covered fragments' rows.
#: Measured on 1M rows in 4 fragments (int64, float64, 16-char string columns; rows spread
#: at random): taking the rows costs as much as scanning at 1-3% of the rows (every column
#: or one), so the index is used up to 2%
SELECTIVE = 0.02
#: selected rows taken per read
_TAKE_ROWS = 1 << 16
#: a selection of at most this many rows (every fragment covered) is taken in the calling
#: thread: handing a take of a few rows to the pool costs more than it saves
_INLINE_ROWS = 64


@dataclass(frozen=True)
class ScalarChoice:
    """How a filtered scan reads through the scalar indices (what ``explain`` shows):
    ``indices`` answered, ``selection`` per covered fragment, ``complete`` when the
    selection is exactly the filter's rows, ``selected`` / ``covered`` row counts."""

    selection: RowSelection
    complete: bool
    indices: tuple[str, ...]
    selected: int
    covered: int


def scalar_choice(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    index_section: bytes | None,
    *,
    use_scalar_index: bool | None = None,
    selective: float | None = None,
    count_only: bool = False,
) -> ScalarChoice | None:
    """The scalar index reading of the plan's filter over ``fragments``, or None to scan
    (no SQL filter, no usable index of its columns, ``use_scalar_index=False``, or a
    selection larger than ``selective`` (default :data:`SELECTIVE`) of the covered rows).
    ``count_only``: only the number of rows is wanted; a complete selection is then used
    however large (the count needs no rows). A damaged index file raises
    :class:`~lance_semantic.errors.CorruptTableError` naming it."""
    predicate = plan.predicate
    if use_scalar_index is False or predicate is None or not index_section:
        return None
    if not isinstance(predicate.expr, str) or not fragments:
        return None
    by_column = _indices_of(store, table, predicate.columns, index_section)
    if not by_column:
        return None
    physical = {f.id: f.physical_rows for f in fragments}
    names = [n for n in predicate.columns if n in plan.read_schema.names]
    schema = pa.schema([plan.read_schema.field(n) for n in names])
    sql = SqlExpression(predicate.expr, is_filter=True)
    expr = sql.simple(schema)  # (a simple filter never goes through DataFusion)
    if expr is None:
        expr = sql.parsed(schema)
    if selective is None:
        selective = SELECTIVE
    # (a BTREE comparison whose pages hold more rows than could be used is not looked up)
    budget = int(selective * sum(physical.values()))
    try:
        found = select_rows(expr, by_column, physical, budget=budget)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None  # (a comparison Arrow's kernels cannot make: the scan answers)
    if found is None:
        return None
    selection = found.selection
    covered = sum(physical[f] for f in selection.rows)
    selected = selection.selected()
    if not covered or (selected > selective * covered and not (count_only and found.complete)):
        return None
    return ScalarChoice(selection, found.complete, selection.indices, selected, covered)


def _indices_of(
    store: ObjectStore, table: TableSchema, columns: Sequence[str], section: bytes
) -> dict[str, list[ScalarIndex]]:
    """The readable scalar indices of the top-level ``columns``, by column name."""
    by_field = single_field_entries(section)
    out: dict[str, list[ScalarIndex]] = {}
    for name in columns:
        if name not in table.names:
            continue
        for entry in by_field.get(table.field(name).id, ()):
            reader = open_scalar_index(store, entry)
            if reader is not None:
                out.setdefault(name, []).append(reader)
    return out


def indexed_batches(
    choice: ScalarChoice,
    fragments: Sequence[Fragment],
    scan: Callable[[Sequence[Fragment]], Iterator[pa.RecordBatch]],
    shape: Readers,
    plan: ScanPlan,
    batch_size: int,
    *,
    rows_only: bool,
) -> Iterator[pa.RecordBatch]:
    """The filter's rows of ``fragments`` in table order: the selected rows of a covered
    fragment taken (through ``shape``'s readers, every read field), the others from
    ``scan`` (the unindexed filtered stream of a run of fragments). ``rows_only``: only the
    number of rows is wanted (batches without columns)."""
    predicate = plan.predicate
    assert predicate is not None
    rows = choice.selection.rows
    counted = rows_only and choice.complete  # the count, from the indices alone

    def taken(frag: Fragment) -> tuple[bool, Iterable[pa.RecordBatch]]:
        """The selected live rows of covered fragment ``frag`` (True: the filter is still
        to be evaluated on them)."""
        reader = shape.reader(frag)
        if counted:
            got = _count(choice.selection.rows[frag.id], frag, reader.deleted())
            if got is not None:
                sizes = [min(batch_size, got - at) for at in range(0, got, batch_size)]
                return False, [empty_rows(n) for n in sizes]
        offsets = choice.selection.offsets(frag.id)
        offsets = offsets[offsets < frag.physical_rows]
        deleted = reader.deleted()
        if deleted is not None and len(deleted) and len(offsets):
            offsets = offsets[~np.isin(offsets, deleted.astype(np.int64))]
        if counted:
            sizes = [
                min(batch_size, len(offsets) - at) for at in range(0, len(offsets), batch_size)
            ]
            return False, [empty_rows(n) for n in sizes]
        out: list[pa.RecordBatch] = []
        for at in range(0, len(offsets), _TAKE_ROWS):
            out.extend(reader.take(offsets[at : at + _TAKE_ROWS]))
        return True, out

    def tasks() -> Iterator[Callable[[], tuple[bool, Iterable[pa.RecordBatch]]]]:
        run: list[Fragment] = []
        for frag in fragments:
            if frag.id not in rows:
                run.append(frag)
                continue
            if run:  # (the scan of a run streams as the consumer reads it)
                yield lambda run=run: (False, scan(run))  # type: ignore[misc]
                run = []
            if len(rows[frag.id]):  # (nothing selected: nothing to read)
                yield lambda frag=frag: taken(frag)  # type: ignore[misc]
        if run:
            yield lambda run=run: (False, scan(run))  # type: ignore[misc]

    pending: list[pa.RecordBatch] = []  # rows taken, the filter not yet evaluated
    covered = [f for f in fragments if f.id in rows]
    small = choice.selected <= _INLINE_ROWS
    if len(covered) == len(fragments) and (
        small or (counted and all(f.deletion_file is None for f in covered))
    ):  # (a count without deletion files reads nothing)
        results: Iterable[tuple[bool, Iterable[pa.RecordBatch]]] = (t() for t in tasks())
    else:
        results = ordered(tasks(), ahead=WORKERS)  # takes run in parallel
    for to_filter, batches in results:
        if to_filter:
            pending.extend(b for b in batches if b.num_rows)
            continue
        if pending:
            yield from _filtered(pending, predicate, batch_size, rows_only, choice.complete)
            pending = []
        yield from batches
    if pending:
        yield from _filtered(pending, predicate, batch_size, rows_only, choice.complete)


def _count(rows: BitMap, frag: Fragment, deleted: np.ndarray | None) -> int | None:
    """How many of a fragment's selected ``rows`` are live, when no row of the fragment
    is deleted (None: there are deleted rows, counted from the offsets)."""
    if deleted is not None and len(deleted):
        return None
    if not rows:
        return 0
    if rows.max() < frag.physical_rows:
        return len(rows)
    return int(rows.rank(frag.physical_rows - 1))


def _filtered(
    batches: list[pa.RecordBatch],
    predicate: Predicate,
    batch_size: int,
    rows_only: bool,
    complete: bool = False,
) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` (taken from consecutive fragments) that match ``predicate``,
    evaluated once over all of them (one evaluation costs about the same for few rows as
    for many), in batches of at most ``batch_size`` rows. ``complete``: the rows were
    selected by indices that answered every part of the filter exactly, so they all match
    (deleted rows were dropped before the take): not evaluated again."""
    if complete:
        for b in batches:
            for start in range(0, b.num_rows, batch_size):
                got = b.slice(start, batch_size)
                yield empty_rows(got.num_rows) if rows_only else got
        return
    names = [n for n in predicate.columns if n in batches[0].schema.names]
    try:
        keys = pa.concat_batches([b.select(names) for b in batches])
        whole = pc.fill_null(predicate.mask(keys), False)
        masks = []
        at = 0
        for b in batches:
            masks.append(whole.slice(at, b.num_rows))
            at += b.num_rows
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # (dictionaries that do not unify)
        masks = [pc.fill_null(predicate.mask(b), False) for b in batches]
    for b, mask in zip(batches, masks, strict=True):
        got = b.filter(mask)
        if rows_only:
            got = empty_rows(got.num_rows)
        for start in range(0, got.num_rows, batch_size):
            yield got.slice(start, batch_size)


def taken_shape(
    store: ObjectStore, table: TableSchema, plan: ScanPlan, row_addresses: bool
) -> Readers:
    """The readers of the rows a covered fragment's selection takes: every read field."""
    return kept_readers(store, table, plan.top_fields, plan.read_schema, row_addresses)
