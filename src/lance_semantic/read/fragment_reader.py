"""Read the rows of one fragment as batches of the table's output schema (layer L4).

A fragment is one or more data files holding disjoint columns of the same rows, plus an
optional deletion file. Batches stream: at most ``batch_size`` rows of the selected
columns are in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..codecs import convert
from ..codecs.convert import Converter, convert_batch, identity, nulls_of, resolve_converter
from ..errors import CorruptTableError, NotSupportedYetError
from ..manifest import Fragment
from ..schema import Field, TableSchema, is_blob, is_blob_v2, is_descriptor_type
from ..storage import DataFileReader, ObjectStore, datafile, opened_file, unprojectable_columns
from ..types.arrow_names import has_dictionary
from .blob_descriptors import BlobAwareReader
from .deletions import deleted_rows
from .plan import FilePlan, merge_parts, plan_data_file, retag_array

__all__ = [
    "FragmentReader",
    "ROW_ADDRESS",
    "ROW_OFFSET",
    "empty_rows",
    "per_fragment",
    "read_together",
]

#: what reads a data file's columns: the file itself, or with blob columns from shadows
_Reader = DataFileReader | BlobAwareReader


class FragmentReader:
    """Reads selected top-level fields of one fragment into ``out_schema`` batches."""

    __slots__ = (
        "store",
        "fragment",
        "fields",
        "out_schema",
        "row_addresses",
        "_table",
        "_opened",
        "_deletions",
        "_plan_cache",
        "_planned",
    )

    def __init__(
        self,
        store: ObjectStore,
        table: TableSchema,
        fragment: Fragment,
        fields: Sequence[Field],
        out_schema: pa.Schema,
        plans: dict[Any, Any] | None = None,
        *,
        row_addresses: bool = False,
    ) -> None:
        """``plans``: a cache of data-file plans shared by the readers of one scan (the same
        fields and output schema); files with the same columns and field ids share a plan.
        ``row_addresses``: every batch also ends with :data:`ROW_ADDRESS`, each row's address
        ``(fragment id << 32) | physical offset`` (after :data:`ROW_OFFSET` when both)."""
        self.store = store
        self.fragment = fragment
        self.fields = fields
        self.out_schema = out_schema
        self.row_addresses = row_addresses
        self._table = table
        self._opened: list[tuple[_Reader, FilePlan, list[str]]] | None = None
        self._deletions = _Deletions()
        self._plan_cache = plans if plans is not None else {}
        #: the plan of the fragment's one data file with selected fields (set by ``_open``)
        self._planned: _Planned | None = None

    @property
    def _plans(self) -> list[tuple[_Reader, FilePlan, list[str]]]:
        """Open (once) the data files holding the selected fields and plan their columns."""
        opened = self._opened
        if opened is None:  # built aside, then published: windows of one fragment
            opened = self._opened = self._open()  # may be read by several threads at once
        return opened

    def _open(self) -> list[tuple[_Reader, FilePlan, list[str]]]:
        """The data files holding the selected fields, opened and planned. What is the same
        for every file alike (columns, field ids, format version and schema) is worked out
        once per scan, in the shared plan cache: per file, what remains is the open."""
        opened: list[tuple[_Reader, FilePlan, list[str]]] = []
        cache = self._plan_cache
        only: _Planned | None = None
        for df in self.fragment.files:
            key = (df.fields, df.file_major_version, df.file_minor_version)
            alike = cache.get(key)
            if alike is None:
                if df.file_major_version < 2:
                    raise NotSupportedYetError("reading legacy (0.1) data files")
                wanted = {f.id for f in self.fields}
                relevant = any(_in(self._table, fid, wanted) for fid in df.fields)
                alike = cache[key] = _Alike(relevant, [])
            if not alike.relevant:
                continue
            file = opened_file(self.store, df.path)
            if file.num_rows != self.fragment.physical_rows:
                raise CorruptTableError(
                    file.path,
                    f"holds {file.num_rows} rows, the manifest says fragment "
                    f"{self.fragment.id} has {self.fragment.physical_rows}",
                )
            planned = alike.plan_of(file.schema)
            if planned is None:
                planned = self._plan(df, file)
                alike.plans.append(planned)
            if not planned.cols:
                continue
            reader: _Reader = file
            if planned.shadowed:  # descriptors, and the columns after a blob v2 column, read
                # through pylance's table reader
                reader = BlobAwareReader(self.store, file, df, planned.blob, planned.values)
            only = planned if not opened else None
            opened.append((reader, planned.plan, planned.cols))
        self._planned = only
        return opened

    def _plan(self, df: Any, file: DataFileReader) -> _Planned:
        plan = plan_data_file(self._table, df, file.schema, where=file.path)
        cols = [plan.columns[f.id] for f in self.fields if f.id in plan.columns]
        blob, values = self._blob_columns(plan)
        late = unprojectable_columns(file.schema)
        shadowed = bool(blob) or any(c in late for c in cols)
        # whether the rows of fragments read with this plan can be joined before assembly
        # (see ``read_together``): all read by the file reader, no dictionaries (reads
        # return each fragment's dictionaries as stored)
        joinable = not shadowed and not any(has_dictionary(t) for t in self.out_schema.types)
        joinable = joinable and not any(has_dictionary(file.schema.field(c).type) for c in cols)
        # and whether its batches are already the output's: the output's names and layouts
        # (legacy tables, flagged ones read in their stored layouts)
        out = self.out_schema
        passthrough = (
            joinable
            and cols == out.names
            and not plan.retag
            and all(file.schema.field(c).type == t for c, t in zip(cols, out.types, strict=True))
        )
        return _Planned(file.schema, plan, cols, blob, values, shadowed, joinable, passthrough)

    def _blob_columns(self, plan: FilePlan) -> tuple[dict[str, Field], frozenset[str]]:
        """The file columns of ``plan`` that hold blob fields read through shadows, and those
        of them the output schema wants as values (v2 rewrites); blob v1 values (bytes) are
        read from the data file like any binary column."""
        blob: dict[str, Field] = {}
        values: set[str] = set()
        for f, out in zip(self.fields, self.out_schema, strict=True):
            if f.id not in plan.columns or not is_blob(f):
                continue
            name = plan.columns[f.id]
            if is_descriptor_type(out.type):
                blob[name] = f
            elif is_blob_v2(f):
                blob[name] = f
                values.add(name)
        return blob, frozenset(values)

    def share_deletions(self, other: FragmentReader) -> None:
        """Use ``other``'s deletion vector (a reader of the same fragment): read once."""
        self._deletions = other._deletions

    @property
    def physical_rows(self) -> int:
        return self.fragment.physical_rows

    def deleted(self) -> np.ndarray | None:
        d = self._deletions
        if not d.loaded:  # (two threads may both read it; the second write is the same)
            d.rows = deleted_rows(self.store, self.fragment)
            d.loaded = True
        return d.rows

    def live_rows(self) -> int:
        known = self.fragment.deletion_file
        if known is None:
            return self.physical_rows
        if known.num_deleted_rows:
            return self.physical_rows - known.num_deleted_rows
        d = self.deleted()
        return self.physical_rows - (0 if d is None else len(d))

    def _assemble(self, parts: list[tuple[FilePlan, pa.RecordBatch]], num_rows: int) -> _Raw:
        """The selected fields of one row range, still in their data files' layouts."""
        arrays, converters = [], []
        for f, out in zip(self.fields, self.out_schema, strict=True):
            found = []
            for plan, batch in parts:
                name = plan.columns.get(f.id)
                if name is not None:
                    arr = batch.column(name)
                    retag = plan.retag.get(f.id)
                    # nested members by field id, under the table's names
                    found.append(arr if retag is None else retag_array(arr, retag))
            # a struct's members may be spread over several data files
            arr = merge_parts(found) if found else None
            if arr is None:  # no data file of the fragment holds it: nulls, made last
                arrays.append(pa.nulls(num_rows))
                converters.append(nulls_of(out.type))
            else:
                arrays.append(arr)
                converters.append(resolve_converter(arr.type, out.type, f.path))
        return _Raw(arrays, converters, num_rows)

    def _convert(
        self,
        raw: _Raw,
        keep: np.ndarray | None = None,
        offsets: np.ndarray | None = None,
        addresses: np.ndarray | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """``raw`` converted to the output layouts (rows not in ``keep`` dropped), ending with
        each row's physical ``offsets`` (:data:`ROW_OFFSET`) and ``addresses``
        (:data:`ROW_ADDRESS`) when given."""
        schema = self.out_schema
        if offsets is not None:  # carry each row's physical offset through filters and splits
            arrays = [*raw.arrays, pa.array(offsets)]
            raw = _Raw(arrays, [*raw.converters, identity], raw.num_rows)
            schema = schema.append(pa.field(ROW_OFFSET, pa.uint64(), nullable=False))
        if addresses is not None:
            arrays = [*raw.arrays, pa.array(addresses)]
            raw = _Raw(arrays, [*raw.converters, identity], raw.num_rows)
            schema = schema.append(pa.field(ROW_ADDRESS, pa.uint64(), nullable=False))
        if not raw.arrays:
            yield empty_rows(raw.num_rows if keep is None else int(keep.sum()))
            return
        batch = pa.RecordBatch.from_arrays(raw.arrays, names=schema.names)
        if keep is not None:
            batch = batch.filter(pa.array(keep))
        yield from convert_batch(batch, raw.converters, schema)

    def _addresses(self, offsets: np.ndarray) -> np.ndarray:
        """The row addresses (uint64) of physical ``offsets`` in this fragment."""
        return offsets.astype(np.uint64) | np.uint64(self.fragment.id << 32)

    def batches(
        self,
        batch_size: int,
        *,
        with_offsets: bool = False,
        start: int = 0,
        stop: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The live rows in physical order, in batches of at most ``batch_size`` rows
        (those among the physical rows ``[start, stop)`` when given).

        With ``with_offsets`` each batch ends with a ``_rowoffset`` column: the row's physical
        offset in the fragment (what deletion files record)."""
        n = self.physical_rows if stop is None else min(stop, self.physical_rows)
        deleted = self.deleted()
        if not self._plans:
            stream: Iterator[tuple[int, _Raw]] = (
                (s, self._assemble([], min(batch_size, n - s))) for s in range(start, n, batch_size)
            )
        elif len(self._plans) == 1:
            reader, plan, cols = self._plans[0]
            stream = self._single(reader, plan, cols, start, n, batch_size)
        else:
            stream = self._zipped(start, n, batch_size)
        for first, raw in stream:
            keep = None
            if deleted is not None and len(deleted):
                lo, hi = np.searchsorted(deleted, [first, first + raw.num_rows])
                if hi > lo:
                    keep = np.ones(raw.num_rows, dtype=bool)
                    keep[deleted[lo:hi] - first] = False
            offsets = None
            if with_offsets or self.row_addresses:
                offsets = np.arange(first, first + raw.num_rows, dtype=np.uint64)
            addresses = None
            if offsets is not None and self.row_addresses:
                addresses = self._addresses(offsets)
            for batch in self._convert(raw, keep, offsets if with_offsets else None, addresses):
                if batch.num_rows:
                    yield batch

    def _single(
        self, reader: _Reader, plan: FilePlan, cols: list[str], start: int, n: int, batch_size: int
    ) -> Iterator[tuple[int, _Raw]]:
        count = n - start
        if count <= batch_size and isinstance(reader, DataFileReader):  # one read, no stream
            if count > 0:
                yield start, self._assemble([(plan, reader.read_all(cols, start, count))], count)
            return
        for b in reader.read(cols, start, count, batch_size):
            yield start, self._assemble([(plan, b)], b.num_rows)
            start += b.num_rows

    def _zipped(self, first: int, n: int, batch_size: int) -> Iterator[tuple[int, _Raw]]:
        for start in range(first, n, batch_size):
            count = min(batch_size, n - start)
            parts = []
            for reader, plan, cols in self._plans:
                got = list(reader.read(cols, start, count, count))
                batch = (
                    got[0]
                    if len(got) == 1
                    else pa.Table.from_batches(got).combine_chunks().to_batches()[0]
                )
                parts.append((plan, batch))
            yield start, self._assemble(parts, count)

    def live_between(self, start: int, stop: int) -> np.ndarray:
        """The physical offsets (int64) of the live rows among physical rows
        ``[start, stop)``."""
        offsets = np.arange(start, min(stop, self.physical_rows), dtype=np.int64)
        deleted = self.deleted()
        if deleted is not None and len(deleted):
            lo, hi = np.searchsorted(deleted, [start, stop])
            if hi > lo:
                offsets = np.delete(offsets, deleted[lo:hi].astype(np.int64) - start)
        return offsets

    def physical_offsets(self, live_offsets: np.ndarray) -> np.ndarray:
        """The physical offsets of the rows at ``live_offsets`` among the live rows."""
        deleted = self.deleted()
        if deleted is not None and len(deleted):
            return self.live_between(0, self.physical_rows)[live_offsets]
        return live_offsets

    def take_live(self, live_offsets: np.ndarray) -> list[pa.RecordBatch]:
        """Rows at sorted, unique offsets among the live (not deleted) rows."""
        return self.take(self.physical_offsets(live_offsets))

    def take(self, physical_rows: np.ndarray) -> list[pa.RecordBatch]:
        """Rows at sorted, unique physical offsets (one batch, or several when the output
        layout cannot hold them in one)."""
        rows = physical_rows.tolist()
        parts = []
        for reader, plan, cols in self._plans:
            table = reader.take(cols, rows)
            batch = table.combine_chunks().to_batches()
            parts.append((plan, batch[0] if batch else _empty(table.schema)))
        addresses = None
        if self.row_addresses:
            addresses = self._addresses(np.asarray(physical_rows, dtype=np.uint64))
        return list(self._convert(self._assemble(parts, len(rows)), addresses=addresses))


def read_together(
    readers: Sequence[FragmentReader], *, with_offsets: bool = False
) -> tuple[list[pa.RecordBatch], list[int]]:
    """The live rows of ``readers``' fragments (small ones, each read whole), laid end to
    end, and each fragment's count of them.

    Consecutive fragments of one data file each whose files share a plan (same columns,
    field ids and layouts, no dictionaries or blob columns) are read by one pylance call
    each (every such fragment of ``readers`` first, back to back: see ``read_whole``), then
    joined and assembled, converted and cut as one batch; where the files already hold the
    output's names and layouts, each fragment's batch is output as read (as pylance's scans
    return them). Other fragments are read on their own. With
    ``with_offsets`` the batches end with :data:`ROW_OFFSET` (offsets within each row's
    own fragment); readers with ``row_addresses`` add :data:`ROW_ADDRESS`."""
    out: list[pa.RecordBatch] = []
    counts: list[int] = []
    run: _Run = []
    run_bytes = 0
    lead: FragmentReader | None = None

    def as_read(r: FragmentReader, planned: _Planned) -> bool:
        """Whether ``r``'s batch, read with ``planned``, is output as it is (not joined)."""
        return planned.passthrough and not with_offsets and not r.row_addresses

    def flush() -> None:
        nonlocal lead, run_bytes
        if lead is None:
            return
        if lead_planned is not None and as_read(lead, lead_planned):
            out.extend(_as_output(run, lead.out_schema))
        else:
            out.extend(_joined_run(run, lead, with_offsets))
        run.clear()
        run_bytes = 0
        lead = None

    # the fragments read whole by one call each, read back to back first (``read_whole``:
    # no Python between the pylance calls but the loop); the others are read in order below
    whole: list[tuple[DataFileReader, list[str], int]] = []
    for r in readers:
        n = r.fragment.physical_rows
        plans = r._plans  # (opens and checks the files of fragments without rows too)
        planned = r._planned
        if n and planned is not None and planned.joinable:
            file = plans[0][0]
            assert isinstance(file, DataFileReader)  # (joinable: no blob columns)
            whole.append((file, planned.cols, n))
    read = iter(datafile.read_whole(whole))

    lead_planned: _Planned | None = None
    for r in readers:  # (the per-fragment path: kept to a few lookups)
        n = r.fragment.physical_rows
        planned = r._planned
        if n == 0:
            counts.append(0)
            continue
        if lead is not None and (
            planned is not lead_planned
            or r.out_schema is not lead.out_schema
            or r.row_addresses != lead.row_addresses
        ):
            flush()
        if lead is None and (planned is None or not planned.joinable):
            got = list(r.batches(n, with_offsets=with_offsets))
            out.extend(got)
            counts.append(sum(b.num_rows for b in got))
            continue
        assert planned is not None
        batch = next(read)
        size = 0
        if not as_read(r, planned):  # to be joined: within 32-bit offsets
            size = batch.get_total_buffer_size()
            if run and run_bytes + size > convert.OFFSET_LIMIT:
                flush()
        if lead is None:
            lead, lead_planned = r, planned
        keep = None
        if r.fragment.deletion_file is not None:
            deleted = r.deleted()
            if deleted is not None and len(deleted):
                keep = np.ones(n, dtype=bool)
                keep[deleted] = False
        run.append((batch, keep, r))
        run_bytes += size
        counts.append(n if keep is None else int(keep.sum()))
    flush()
    return out, counts


def per_fragment(batches: list[pa.RecordBatch], counts: list[int]) -> list[list[pa.RecordBatch]]:
    """``read_together``'s batches cut back into each fragment's rows (``counts`` of them,
    in order): zero-copy slices, the batch itself where a fragment's rows are one batch."""
    out: list[list[pa.RecordBatch]] = []
    it = iter(batches)
    batch, at = None, 0
    for n in counts:
        got = []
        while n:
            if batch is None or at == batch.num_rows:
                batch, at = next(it), 0
            k = min(n, batch.num_rows - at)
            got.append(batch if k == batch.num_rows else batch.slice(at, k))
            at, n = at + k, n - k
        out.append(got)
    return out


#: fragments read together: each one's batch, the live rows among them (None: all), reader
_Run = list[tuple[pa.RecordBatch, "np.ndarray | None", FragmentReader]]


def _as_output(run: _Run, schema: pa.Schema) -> list[pa.RecordBatch]:
    """The live rows of each fragment of ``run``, a batch each, as read (they are the
    output's names and layouts)."""
    # (field metadata, nullability: as the output's) the run's files share one schema, so
    # their batches do: checked once
    if not run[0][0].schema.equals(schema, check_metadata=True):
        return [
            pa.RecordBatch.from_arrays(b.columns, schema=schema) for b in _live(run) if b.num_rows
        ]
    out = [b for b in _live(run) if b.num_rows]
    if len(out) > 1:
        _comparable(out, schema)
    return out


def _live(run: _Run) -> Iterator[pa.RecordBatch]:
    for b, keep, _ in run:
        yield b if keep is None else b.filter(pa.array(keep))


def _comparable(batches: list[pa.RecordBatch], schema: pa.Schema) -> None:
    """Makes ``batches`` (of ``schema``) quick to compare with it, here on the reading
    thread with the GIL released rather than where they are gathered.

    Each batch read by pylance's file reader has a schema object of its own, and Arrow
    compares schemas by fingerprints it works out once per object: the first comparison of
    each batch (``Table.from_batches`` in ``to_table``, or a consumer's) cost 10 µs a batch,
    on the consuming thread after the last read (2 ms of a 40 ms scan of 200 fragments).
    pylance's scans return batches that share one schema object."""
    pa.Table.from_batches(batches, schema=schema)


def _joined_run(run: _Run, lead: FragmentReader, with_offsets: bool) -> list[pa.RecordBatch]:
    """The live rows of ``run``'s fragments joined, then assembled, converted and cut as one
    batch by ``lead`` (the run's first reader: they share its plan)."""
    raws = [b for b, _, _ in run]
    total = sum(b.num_rows for b in raws)
    joined = raws[0] if len(raws) == 1 else pa.concat_batches(raws)
    keep = None
    if any(k is not None for _, k, _ in run):
        keep = np.concatenate([np.ones(b.num_rows, bool) if k is None else k for b, k, _ in run])
    offsets = addresses = None
    if with_offsets or lead.row_addresses:
        offsets = np.concatenate([np.arange(b.num_rows, dtype=np.uint64) for b in raws])
    if lead.row_addresses:
        addresses = np.concatenate(
            [r._addresses(np.arange(b.num_rows, dtype=np.uint64)) for b, _, r in run]
        )
    plan = lead._plans[0][1]
    raw = lead._assemble([(plan, joined)], total)
    offsets = offsets if with_offsets else None
    return [b for b in lead._convert(raw, keep, offsets, addresses) if b.num_rows]


#: name of the physical row offset column ``batches(with_offsets=True)`` appends
ROW_OFFSET = "_rowoffset"
#: name of the row address column readers with ``row_addresses`` append (an internal name:
#: scans hand it out as ``_rowid`` / ``_rowaddr``)
ROW_ADDRESS = "_lance_semantic_rowaddr"


@dataclass(frozen=True, slots=True)
class _Planned:
    """One data file's plan for the fields a scan reads (shared by files alike)."""

    schema: pa.Schema
    plan: FilePlan
    cols: list[str]
    blob: dict[str, Field]
    values: frozenset[str]
    #: some columns are read through pylance's table reader (:class:`BlobAwareReader`)
    shadowed: bool
    #: fragments read with this plan alone can be joined before assembly
    joinable: bool
    #: the columns read are the output's as they are (names and layouts)
    passthrough: bool


@dataclass(frozen=True, slots=True)
class _Alike:
    """What a scan knows of data files with the same columns, field ids and format
    version: whether they hold any selected field, and the plans of their schemas."""

    relevant: bool
    plans: list[_Planned]

    def plan_of(self, schema: pa.Schema) -> _Planned | None:
        """The plan of files with ``schema``, if one is known. Schemas are interned when
        files are opened, so files alike share the object; a ``pa.Schema`` with extension
        types is not hashable, so the others are compared."""
        for p in self.plans:
            if p.schema is schema:
                return p
        for p in self.plans:
            if p.schema.equals(schema, True):
                return p
        return None


@dataclass(slots=True)
class _Deletions:
    """A fragment's deleted row offsets, read once when first needed."""

    rows: np.ndarray | None = None
    loaded: bool = False


@dataclass(slots=True)
class _Raw:
    arrays: list[pa.Array]
    converters: list[Converter]
    num_rows: int


def empty_rows(n: int) -> pa.RecordBatch:
    """A batch of ``n`` rows and no columns (``count_rows`` with a filter, ``columns=[]``)."""
    return pa.RecordBatch.from_struct_array(pa.nulls(n, pa.struct([])))


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


def _in(table: TableSchema, fid: int, wanted: set[int]) -> bool:
    top = table.top_level_of(fid)
    return top is not None and top.id in wanted
