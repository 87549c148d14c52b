"""The row streams of a scan: fragments read concurrently, filters with late
materialisation (layer L5).

Unfiltered: fragments that fit in one batch are read whole on the shared pool (pylance's
reader releases the GIL), a few ahead of the consumer and in order; larger fragments stream
batch by batch (pylance's reader reads ahead inside them).

Filtered: the rows are cut into *windows* (a whole small fragment, or at most
:data:`WINDOW_ROWS` rows of a large one). For each window only the filter's columns are read
first (with each row's physical offset); consecutive windows are gathered until they hold
:data:`EVAL_ROWS` rows and the filter is evaluated once over all of them (one DataFusion plan
per gathering, not one per batch or fragment). The other columns are then read only for the
matching rows: a take of those rows when they are few, a range read of the window filtered
by the same mask when they are many. ``count_rows(filter)`` reads the filter's columns only.
Memory stays bounded by a few windows of the filter's columns plus one window of output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..manifest.model import Fragment
from ..read.prefetch import ordered
from ..read.scan import ROW_OFFSET, FragmentReader, empty_rows
from ..schema.field import Field

if TYPE_CHECKING:
    from .scan import Predicate

__all__ = ["EVAL_ROWS", "WINDOW_ROWS", "drop_rows", "filtered_batches", "unfiltered_batches"]

#: a filter is evaluated over at least this many rows at once (fewer at the end)
EVAL_ROWS = 1 << 17
#: a large fragment's filter columns are read in windows of at most this many rows
WINDOW_ROWS = 1 << 17
#: above this share of matching rows the other columns are read as a range, not taken
DENSE = 0.25


def drop_rows(batches: Iterable[pa.RecordBatch], skip: int) -> Iterator[pa.RecordBatch]:
    """``batches`` without their first ``skip`` rows (``offset``)."""
    for batch in batches:
        if skip:
            if batch.num_rows <= skip:
                skip -= batch.num_rows
                continue
            batch = batch.slice(skip)
            skip = 0
        yield batch


def unfiltered_batches(
    readers: Iterable[FragmentReader], batch_size: int, skip: int
) -> Iterator[pa.RecordBatch]:
    """Every live row of the readers' fragments, in order, without the first ``skip``."""
    left = [skip]  # rows to skip; once a fragment is read, those inside it

    def tasks() -> Iterator[Callable[[], Iterable[pa.RecordBatch]]]:
        skipping = skip > 0
        for r in readers:
            if skipping:
                live = r.live_rows()
                if left[0] >= live:  # a whole fragment before the offset: never read
                    left[0] -= live
                    continue
                skipping = False
            if r.physical_rows <= batch_size:  # read whole, on the pool
                yield lambda r=r: list(r.batches(batch_size))  # type: ignore[misc]
            else:  # streamed by the consumer
                yield lambda r=r: r.batches(batch_size)  # type: ignore[misc]

    got = ordered(tasks())
    first = next(got, None)  # the tasks up to the first fragment read are known now
    if first is None:
        return
    yield from drop_rows(first, left[0])
    for batches in got:
        yield from batches


class _Window:
    """Physical rows ``[start, stop)`` of one fragment and, once read, its filter columns."""

    __slots__ = ("keys", "others", "start", "stop", "read")

    def __init__(
        self, keys: FragmentReader, others: FragmentReader | None, start: int, stop: int
    ) -> None:
        self.keys = keys
        self.others = others
        self.start, self.stop = start, stop
        self.read: pa.RecordBatch | None = None

    def read_keys(self) -> _Window:
        """Reads the filter's columns of the window's live rows (with their offsets)."""
        got = list(
            self.keys.batches(WINDOW_ROWS, with_offsets=True, start=self.start, stop=self.stop)
        )
        if len(got) == 1:
            self.read = got[0]
        elif got:
            self.read = pa.concat_batches(got)
        return self


def filtered_batches(
    make: Callable[[Fragment, list[Field], pa.Schema, dict[Any, Any]], FragmentReader],
    fragments: Iterable[Fragment],
    fields: Sequence[Field],
    schema: pa.Schema,
    predicate: Predicate,
    batch_size: int,
) -> Iterator[pa.RecordBatch]:
    """The live rows of ``fragments`` that match ``predicate``, in order, in batches of at
    most ``batch_size`` rows of ``schema`` (the ``fields`` read). ``make(fragment, fields,
    schema, plans)`` opens a fragment reader."""
    wanted = set(predicate.columns)
    key_idx = [i for i, f in enumerate(fields) if f.name in wanted]
    rest_idx = [i for i, f in enumerate(fields) if f.name not in wanted]
    key_fields = [fields[i] for i in key_idx]
    key_schema = pa.schema([schema.field(i) for i in key_idx])
    rest_fields = [fields[i] for i in rest_idx]
    rest_schema = pa.schema([schema.field(i) for i in rest_idx])
    key_plans: dict[Any, Any] = {}
    rest_plans: dict[Any, Any] = {}

    def windows() -> Iterator[Callable[[], _Window]]:
        for frag in fragments:
            keys = make(frag, key_fields, key_schema, key_plans)
            others = keys.sharing(rest_fields, rest_schema, rest_plans) if rest_idx else None
            n = frag.physical_rows
            for start in range(0, n, WINDOW_ROWS):
                yield _Window(keys, others, start, min(n, start + WINDOW_ROWS)).read_keys

    gathered: list[_Window] = []
    rows = 0
    for w in ordered(windows()):
        if w.read is None:
            continue
        gathered.append(w)
        rows += w.read.num_rows
        if rows >= EVAL_ROWS:
            yield from _evaluate(gathered, predicate, schema, batch_size)
            gathered, rows = [], 0
    if gathered:
        yield from _evaluate(gathered, predicate, schema, batch_size)


def _evaluate(
    windows: list[_Window], predicate: Predicate, schema: pa.Schema, batch_size: int
) -> Iterator[pa.RecordBatch]:
    """The matching rows of ``windows`` (filter evaluated once over all of them)."""
    parts = [w.read for w in windows if w.read is not None]
    keys = parts[0] if len(parts) == 1 else pa.concat_batches(parts)
    mask = pc.fill_null(predicate.mask(keys.drop_columns([ROW_OFFSET])), False)
    if not pc.any(mask).as_py():
        return
    jobs = []
    at = 0
    for w in windows:
        assert w.read is not None
        m = mask.slice(at, w.read.num_rows)
        at += w.read.num_rows
        hits = int(pc.sum(m).as_py() or 0)
        if hits:
            jobs.append(lambda w=w, m=m, hits=hits: _materialise(w, m, hits, schema))
    for batch in ordered(jobs):
        for start in range(0, batch.num_rows, batch_size):
            yield batch.slice(start, batch_size)


def _materialise(w: _Window, mask: pa.Array, hits: int, schema: pa.Schema) -> pa.RecordBatch:
    """The matching rows of window ``w`` with every field of ``schema``."""
    assert w.read is not None
    keys = w.read.filter(mask)
    if w.others is None:  # the filter's columns are all the scan reads
        if not schema:
            return empty_rows(keys.num_rows)
        return keys.drop_columns([ROW_OFFSET])
    if hits > DENSE * w.read.num_rows:  # many: read the window's range, filter it alike
        got = list(w.others.batches(WINDOW_ROWS, start=w.start, stop=w.stop))
        rest = got[0] if len(got) == 1 else pa.concat_batches(got)
        rest = rest.filter(mask)
    else:  # few: take just those rows
        offsets = keys.column(ROW_OFFSET).to_numpy().astype(np.int64)
        got = w.others.take(offsets)
        rest = got[0] if len(got) == 1 else pa.concat_batches(got)
    arrays = [
        keys.column(f.name) if f.name in keys.schema.names else rest.column(f.name) for f in schema
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
