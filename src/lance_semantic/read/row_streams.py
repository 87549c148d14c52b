"""The row streams of a scan: fragments read concurrently, filters with late
materialisation (layer L4).

Unfiltered: fragments that fit in one batch are read whole on the shared pool (pylance's
reader releases the GIL), in groups spread over its threads, a few ahead of the consumer and
in order; larger fragments stream batch by batch (pylance's reader reads ahead inside them).

Filtered: the rows are cut into *windows* (a whole small fragment, or at most
:data:`WINDOW_ROWS` rows of a large one). For each window only the filter's columns are read
first; consecutive windows are gathered until they hold :data:`EVAL_ROWS` rows, and each
gathering is a *job* on the pool: the filter is evaluated once over all of it (one
DataFusion plan per gathering, not one per batch or fragment), then the other columns are
read only for the matching rows -- a take of those rows when they are few (their offsets
come from the deletion vector), a range read of the window filtered by the same mask when
they are many. Jobs run while later windows are read, their output in order. Once most of
the rows evaluated (at least :data:`EVAL_ROWS`) have matched, later fragments are read in
one pass with every column, as a scan without late materialisation would.
``count_rows(filter)`` reads the filter's columns only and builds no rows; row addresses
(``with_row_address``, deletes) are worked out for the matching rows only.
Readers come from ``read.readers`` (kept across scans) and are looked up by the tasks.
Memory stays bounded by a few windows of the filter's columns plus a few windows of output.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..codecs import convert
from ..manifest import Fragment
from ..schema import Field
from ..types.arrow_names import has_dictionary
from .fragment_reader import ROW_ADDRESS, FragmentReader, empty_rows, per_fragment, read_together
from .prefetch import WORKERS, ordered
from .readers import Readers

if TYPE_CHECKING:
    from ..query import Predicate

__all__ = [
    "EVAL_ROWS",
    "WINDOW_ROWS",
    "drop_rows",
    "fields_where",
    "filtered_batches",
    "unfiltered_batches",
]

#: a filter is evaluated over at least this many rows at once (fewer at the end)
EVAL_ROWS = 1 << 18
#: a large fragment's filter columns are read in windows of at most this many rows
WINDOW_ROWS = 1 << 18
#: a window is read in batches of this many rows (pylance decodes them in parallel)
READ_BATCH = 1 << 16
#: at most this many small fragments are read into one batch
GROUP_FRAGMENTS = 64
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
    fragments: Sequence[Fragment],
    reader_of: Callable[[Fragment], FragmentReader],
    batch_size: int,
    skip: int,
) -> Iterator[pa.RecordBatch]:
    """Every live row of ``fragments``, in order, without the first ``skip``;
    ``reader_of(fragment)`` gives a fragment's reader.

    Small fragments are read in groups spread over the reading threads; the tasks get
    their readers themselves, so the consumer's work per fragment is a row count."""
    left = [skip]  # rows to skip; once a fragment is read, those inside it
    per_group = _per_group(len(fragments))

    def group_task(group: list[Fragment]) -> Callable[[], Iterable[pa.RecordBatch]]:
        return lambda: _read_group([reader_of(f) for f in group], batch_size)

    def tasks() -> Iterator[Callable[[], Iterable[pa.RecordBatch]]]:
        first = 0
        while skip and first < len(fragments):
            live = reader_of(fragments[first]).live_rows()
            if left[0] < live:
                break
            left[0] -= live  # a whole fragment before the offset: never read
            first += 1
        group: list[Fragment] = []  # consecutive small fragments, read by one task
        rows = 0
        for f in fragments[first:]:
            n = f.physical_rows
            if group and (rows + n > batch_size or len(group) >= per_group):
                yield group_task(group)
                group, rows = [], 0
            if n <= batch_size:  # read whole, on the pool
                group.append(f)
                rows += n
            else:  # streamed by the consumer
                yield lambda f=f: reader_of(f).batches(batch_size)  # type: ignore[misc]
        if group:
            yield group_task(group)

    got = ordered(tasks())
    first = next(got, None)  # the tasks up to the first fragment read are known now
    if first is None:
        return
    yield from drop_rows(first, left[0])
    for batches in got:
        yield from batches


def _per_group(count: int | None) -> int:
    """How many small fragments one task reads: at most :data:`GROUP_FRAGMENTS`, fewer
    when that leaves threads idle (``count`` fragments, when known)."""
    if not count:
        return GROUP_FRAGMENTS
    return max(1, min(GROUP_FRAGMENTS, -(-count // WORKERS)))


def _read_group(readers: list[FragmentReader], batch_size: int) -> list[pa.RecordBatch]:
    """The live rows of small fragments (together at most ``batch_size``): a batch per
    fragment where its rows are read as they are output (as pylance's scans return them),
    else a batch per run of fragments alike (see ``read_together``)."""
    return read_together(readers)[0]


#: batches of fewer rows than this on average are joined before they are filtered
_SMALL_BATCH = 4096


def _joined(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """``batches`` as one batch where that cannot overflow a 32-bit offset layout (the
    reads split batches that would, see ``codecs.convert``) and their dictionaries can be
    unified, else as given. Batches with dictionaries stay apart: joining them would
    unify their dictionaries, and reads return each fragment's dictionaries as stored."""
    if len(batches) < 2:
        return batches
    fixed = all(pa.types.is_primitive(t) for t in batches[0].schema.types)
    if not fixed and sum(b.get_total_buffer_size() for b in batches) > convert.OFFSET_LIMIT:
        return batches
    if any(has_dictionary(t) for t in batches[0].schema.types):
        return batches
    try:
        return [pa.concat_batches(batches)]
    except pa.ArrowInvalid:  # a narrow dictionary index cannot hold the unified values
        return batches


class _Window:
    """Physical rows ``[start, stop)`` of one fragment and, once read, its filter columns.
    Its readers (``keys`` for the columns read first, ``others`` for the rest, None when
    the first read has every column) are taken from their shapes by the task reading it."""

    __slots__ = ("fragment", "shapes", "keys", "others", "start", "stop", "read", "rows")

    keys: FragmentReader
    others: FragmentReader | None

    def __init__(
        self, fragment: Fragment, keys: Readers, others: Readers | None, start: int, stop: int
    ) -> None:
        self.fragment = fragment
        self.shapes = (keys, others)
        self.start, self.stop = start, stop
        self.read: list[pa.RecordBatch] = []
        self.rows = 0

    def readers(self) -> FragmentReader:
        """Takes the window's readers from their shapes; returns ``keys``."""
        key_shape, rest_shape = self.shapes
        keys = self.keys = key_shape.reader(self.fragment)
        self.others = None if rest_shape is None else rest_shape.reader(self.fragment, like=keys)
        return keys

    def read_keys(self) -> _Window:
        """Reads the filter's columns of the window's live rows."""
        keys = self.readers()
        self.read = list(keys.batches(READ_BATCH, start=self.start, stop=self.stop))
        self.rows = sum(b.num_rows for b in self.read)
        return self


def _read_windows(group: list[_Window]) -> list[_Window]:
    """Reads the filter's columns of whole small fragments, all at once (see
    ``read_together``); each window holds its slice of the batches read."""
    batches, counts = read_together([w.readers() for w in group])
    for w, n, read in zip(group, counts, per_fragment(batches, counts), strict=True):
        w.rows, w.read = n, read
    return group


def fields_where(
    fields: Sequence[Field], schema: pa.Schema, keep: Callable[[str], bool]
) -> tuple[list[Field], pa.Schema]:
    """The ``fields`` (read into ``schema``, in order) whose names ``keep`` accepts, and
    their part of ``schema``."""
    at = [i for i, f in enumerate(fields) if keep(f.name)]
    return [fields[i] for i in at], pa.schema([schema.field(i) for i in at])


def filtered_batches(
    shape: Callable[[Sequence[Field], pa.Schema, bool], Readers],
    fragments: Iterable[Fragment],
    fields: Sequence[Field],
    schema: pa.Schema,
    predicate: Predicate,
    batch_size: int,
    count: int | None = None,
    *,
    row_addresses: bool = False,
    rows_only: bool = False,
) -> Iterator[pa.RecordBatch]:
    """The live rows of ``fragments`` that match ``predicate``, in order, in batches of at
    most ``batch_size`` rows of ``schema`` (the ``fields`` read). ``shape(fields, schema,
    row_addresses)`` gives the fragment readers of those fields (see ``read.readers``);
    ``row_addresses``: the batches end with each row's address. ``count``: how many
    fragments there are (when known), to spread small ones over the reading threads.
    ``rows_only``: the caller wants the matching rows' count only (batches without
    columns)."""
    per_group = _per_group(count)
    wanted = set(predicate.columns)
    key_fields, key_schema = fields_where(fields, schema, lambda name: name in wanted)
    rest_fields, rest_schema = fields_where(fields, schema, lambda name: name not in wanted)
    # (no row addresses: those of the matching rows alone are worked out after the filter)
    key_readers = shape(key_fields, key_schema, False)
    rest_readers = shape(rest_fields, rest_schema, False) if rest_fields else None
    seen = [0, 0]  # rows evaluated, rows matched

    def windows() -> Iterator[Callable[[], list[_Window]]]:
        group: list[_Window] = []  # consecutive small fragments, read by one task
        rows = 0
        # the readers of each window: the filter's columns, then the others (None: all at
        # once); once most rows match, every column at once
        first: Readers = key_readers
        then: Readers | None = rest_readers
        for frag in fragments:
            n = frag.physical_rows
            if then is not None and seen[0] >= EVAL_ROWS and seen[1] > DENSE * seen[0]:
                # most rows match: reading the filter's columns first only adds a pass
                first, then = shape(fields, schema, row_addresses), None
            if group and (
                n > READ_BATCH
                or len(group) >= per_group
                or rows + n > WINDOW_ROWS
                or group[-1].shapes[1] is not then
            ):
                yield lambda g=group: _read_windows(g)  # type: ignore[misc]
                group, rows = [], 0
            if n <= READ_BATCH:
                group.append(_Window(frag, first, then, 0, n))
                rows += n
                continue
            for start in range(0, n, WINDOW_ROWS):
                w = _Window(frag, first, then, start, min(n, start + WINDOW_ROWS))
                yield lambda w=w: [w.read_keys()]  # type: ignore[misc]
        if group:
            yield lambda g=group: _read_windows(g)  # type: ignore[misc]

    lock = threading.Lock()

    def evaluate(gathered: list[_Window]) -> Callable[[], list[pa.RecordBatch]]:
        return lambda: _evaluate(
            gathered, predicate, schema, batch_size, seen, lock, rows_only, row_addresses
        )

    def jobs() -> Iterator[Callable[[], list[pa.RecordBatch]]]:
        """One job per gathering of windows read: its filter and the reads of its other
        columns run on the pool, while the next windows are read."""
        gathered: list[_Window] = []
        rows = 0
        for ws in ordered(windows()):
            for w in ws:
                if not w.rows:
                    continue
                gathered.append(w)
                rows += w.rows
            if rows >= EVAL_ROWS:
                yield evaluate(gathered)
                gathered, rows = [], 0
        if gathered:
            yield evaluate(gathered)

    for batches in ordered(jobs()):
        yield from batches


def _mask(
    predicate: Predicate, batches: list[pa.RecordBatch]
) -> tuple[pa.Array, list[pa.RecordBatch] | None]:
    """The filter over ``batches`` laid end to end (nulls false), evaluated at once; and,
    when the batches hold the filter's columns only, the batches joined for it."""
    names = batches[0].schema.names
    used = [n for n in predicate.columns if n in names]
    whole = used == names
    parts = batches if whole else [b.select(used) for b in batches]
    joined = _joined(parts)
    masks = [pc.fill_null(predicate.mask(b), False) for b in joined]
    mask = masks[0] if len(masks) == 1 else pa.concat_arrays(masks)
    return mask, joined if whole else None


def _filtered(batches: list[pa.RecordBatch], mask: pa.Array) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` (laid end to end) where ``mask`` is true."""
    at = 0
    for b in batches:
        got = b.filter(mask.slice(at, b.num_rows))
        at += b.num_rows
        if got.num_rows:
            yield got


def _evaluate(
    windows: list[_Window],
    predicate: Predicate,
    schema: pa.Schema,
    batch_size: int,
    seen: list[int],
    lock: threading.Lock,
    rows_only: bool = False,
    row_addresses: bool = False,
) -> list[pa.RecordBatch]:
    """The matching rows of ``windows`` (filter evaluated once over all of them); adds the
    rows evaluated and matched to ``seen`` (under ``lock``: jobs run on several threads).
    ``rows_only``: the rows' values are not wanted (``count_rows``), only how many match.
    ``row_addresses``: the rows end with their addresses (read with the rows, or worked
    out for the matching rows alone from the deletion vector)."""
    read = [b for w in windows for b in w.read]
    mask, joined = _mask(predicate, read)
    flags = mask.to_numpy(zero_copy_only=False)
    matched = int(np.count_nonzero(flags))
    with lock:
        seen[0] += len(flags)
        seen[1] += matched
    if not matched:
        return []
    if all(w.others is None for w in windows):  # the reads hold every field: one filter
        if rows_only or (not schema and not row_addresses):
            sizes = [min(batch_size, matched - at) for at in range(0, matched, batch_size)]
            return [empty_rows(n) for n in sizes]
        if joined is None and len(flags) < _SMALL_BATCH * len(read):  # many small batches:
            joined = _joined(read)  # one filter over them joined costs less than one each
        keys = pa.Table.from_batches(_filtered(joined or read, mask), schema=read[0].schema)
        if row_addresses and not windows[0].keys.row_addresses:
            keys = keys.append_column(_ADDRESS, [_matching_addresses(windows, flags)])
        if not schema:
            keys = keys.select([ROW_ADDRESS])
        return keys.to_batches(max_chunksize=batch_size)
    starts = np.cumsum([0] + [w.rows for w in windows[:-1]])
    per_window = np.add.reduceat(flags.astype(np.int64), starts)
    out: list[pa.RecordBatch] = []
    for w, at, hits in zip(windows, starts.tolist(), per_window.tolist(), strict=True):
        if hits:
            table = _materialise(w, mask.slice(at, w.rows), hits, schema, row_addresses)
            out.extend(table.to_batches(max_chunksize=batch_size))
    return out


#: the row address column of the scan's batches
_ADDRESS = pa.field(ROW_ADDRESS, pa.uint64(), nullable=False)


def _matching_offsets(w: _Window, flags: np.ndarray) -> np.ndarray:
    """The physical offsets of the rows of window ``w`` where ``flags`` (one per live row
    of the window) is true."""
    return w.keys.live_between(w.start, w.stop)[np.flatnonzero(flags)]


def _addresses_at(w: _Window, offsets: np.ndarray) -> pa.Array:
    """The row addresses of physical ``offsets`` of window ``w``'s fragment."""
    return pa.array(w.keys._addresses(offsets), pa.uint64())


def _matching_addresses(windows: list[_Window], flags: np.ndarray) -> pa.Array:
    """The row addresses of the rows of ``windows`` (laid end to end) where ``flags``."""
    parts, at = [], 0
    for w in windows:
        mine = flags[at : at + w.rows]
        at += w.rows
        if mine.any():
            parts.append(_addresses_at(w, _matching_offsets(w, mine)))
    return pa.concat_arrays(parts)


def _materialise(
    w: _Window, mask: pa.Array, hits: int, schema: pa.Schema, row_addresses: bool = False
) -> pa.Table:
    """The matching rows of window ``w`` with every field of ``schema`` (and their row
    addresses, with ``row_addresses``)."""
    keys = pa.Table.from_batches(w.read).filter(mask)
    offsets: np.ndarray | None = None
    if w.others is None:  # the window's reads hold every field of the scan
        if not schema and not row_addresses:
            return pa.Table.from_batches([empty_rows(keys.num_rows)])
        if not row_addresses or w.keys.row_addresses:
            return keys
        found = _matching_offsets(w, mask.to_numpy(zero_copy_only=False))
        keys = keys.append_column(_ADDRESS, [_addresses_at(w, found)])
        return keys.select([ROW_ADDRESS]) if not schema else keys
    if hits > DENSE * w.rows:  # many: read the window's range, filter it alike
        got = list(w.others.batches(READ_BATCH, start=w.start, stop=w.stop))
        rest = pa.Table.from_batches(got, schema=w.others.out_schema).filter(mask)
    else:  # few: take just those rows
        offsets = _matching_offsets(w, mask.to_numpy(zero_copy_only=False))
        rest = pa.Table.from_batches(w.others.take(offsets), schema=w.others.out_schema)
    names = set(w.keys.out_schema.names)
    columns = [keys.column(f.name) if f.name in names else rest.column(f.name) for f in schema]
    if row_addresses:
        if offsets is None:
            offsets = _matching_offsets(w, mask.to_numpy(zero_copy_only=False))
        columns.append(_addresses_at(w, offsets))
        schema = schema.append(_ADDRESS)
    return pa.Table.from_arrays(columns, schema=schema)
