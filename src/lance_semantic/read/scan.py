"""Read the rows of one fragment as batches of the table's output schema (layer L4).

A fragment is one or more data files holding disjoint columns of the same rows, plus an
optional deletion file. Batches stream: at most ``batch_size`` rows of the selected
columns are in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..errors import NotSupportedYetError
from ..manifest.model import Fragment
from ..schema.field import Field, TableSchema
from ..storage.datafile import DataFileReader
from ..storage.deletions import read_deleted_rows
from ..storage.object_store import ObjectStore
from .plan import FilePlan, plan_data_file

__all__ = ["FragmentReader", "conform", "deleted_rows"]


def deleted_rows(store: ObjectStore, fragment: Fragment) -> np.ndarray | None:
    """Sorted deleted row offsets of ``fragment``, or None when it has no deletion file."""
    d = fragment.deletion_file
    if d is None:
        return None
    return read_deleted_rows(store, fragment.id, d.read_version, d.id, d.file_type == "bitmap")


class FragmentReader:
    """Reads selected top-level fields of one fragment into ``out_schema`` batches."""

    def __init__(
        self,
        store: ObjectStore,
        table: TableSchema,
        fragment: Fragment,
        fields: Sequence[Field],
        out_schema: pa.Schema,
    ) -> None:
        self.store = store
        self.fragment = fragment
        self.fields = list(fields)
        self.out_schema = out_schema
        self._table = table
        self._opened: list[tuple[DataFileReader, FilePlan, list[str]]] | None = None
        self._deleted: np.ndarray | None = None
        self._deleted_loaded = False

    @property
    def _plans(self) -> list[tuple[DataFileReader, FilePlan, list[str]]]:
        """Open (once) the data files holding the selected fields and plan their columns."""
        if self._opened is None:
            self._opened = []
            wanted = {f.id for f in self.fields}
            for df in self.fragment.files:
                if df.file_major_version < 2:
                    raise NotSupportedYetError("reading legacy (0.1) data files")
                if not any(_in(self._table, fid, wanted) for fid in df.fields):
                    continue
                reader = DataFileReader(self.store, df.path)
                plan = plan_data_file(self._table, df, reader.schema)
                cols = [plan.columns[f.id] for f in self.fields if f.id in plan.columns]
                if cols:
                    self._opened.append((reader, plan, cols))
        return self._opened

    @property
    def physical_rows(self) -> int:
        return self.fragment.physical_rows

    def deleted(self) -> np.ndarray | None:
        if not self._deleted_loaded:
            self._deleted = deleted_rows(self.store, self.fragment)
            self._deleted_loaded = True
        return self._deleted

    def live_rows(self) -> int:
        known = self.fragment.deletion_file
        if known is None:
            return self.physical_rows
        if known.num_deleted_rows:
            return self.physical_rows - known.num_deleted_rows
        d = self.deleted()
        return self.physical_rows - (0 if d is None else len(d))

    def _assemble(
        self, parts: list[tuple[FilePlan, pa.RecordBatch]], num_rows: int
    ) -> pa.RecordBatch:
        arrays = []
        for f, out in zip(self.fields, self.out_schema, strict=True):
            arr = None
            for plan, batch in parts:
                name = plan.columns.get(f.id)
                if name is not None:
                    arr = batch.column(name)
                    break
            arrays.append(pa.nulls(num_rows, out.type) if arr is None else conform(arr, out.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)

    def batches(self, batch_size: int) -> Iterator[pa.RecordBatch]:
        """The live rows in physical order, in batches of at most ``batch_size`` rows."""
        n = self.physical_rows
        deleted = self.deleted()
        if not self._plans:
            stream: Iterator[tuple[int, pa.RecordBatch]] = (
                (s, self._assemble([], min(batch_size, n - s))) for s in range(0, n, batch_size)
            )
        elif len(self._plans) == 1:
            reader, plan, cols = self._plans[0]
            stream = self._single(reader, plan, cols, n, batch_size)
        else:
            stream = self._zipped(n, batch_size)
        for start, batch in stream:
            if deleted is not None and len(deleted):
                lo, hi = np.searchsorted(deleted, [start, start + batch.num_rows])
                if hi > lo:
                    keep = np.ones(batch.num_rows, dtype=bool)
                    keep[deleted[lo:hi] - start] = False
                    batch = batch.filter(pa.array(keep))
            if batch.num_rows:
                yield batch

    def _single(
        self, reader: DataFileReader, plan: FilePlan, cols: list[str], n: int, batch_size: int
    ) -> Iterator[tuple[int, pa.RecordBatch]]:
        start = 0
        for b in reader.read(cols, 0, n, batch_size):
            yield start, self._assemble([(plan, b)], b.num_rows)
            start += b.num_rows

    def _zipped(self, n: int, batch_size: int) -> Iterator[tuple[int, pa.RecordBatch]]:
        for start in range(0, n, batch_size):
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

    def take_live(self, live_offsets: np.ndarray) -> pa.RecordBatch:
        """Rows at sorted, unique offsets among the live (not deleted) rows."""
        deleted = self.deleted()
        if deleted is not None and len(deleted):
            keep = np.ones(self.physical_rows, dtype=bool)
            keep[deleted] = False
            live_offsets = np.flatnonzero(keep)[live_offsets]
        return self.take(live_offsets)

    def take(self, physical_rows: np.ndarray) -> pa.RecordBatch:
        """Rows at sorted, unique physical offsets."""
        rows = physical_rows.tolist()
        parts = []
        for reader, plan, cols in self._plans:
            table = reader.take(cols, rows)
            batch = table.combine_chunks().to_batches()
            parts.append((plan, batch[0] if batch else _empty(table.schema)))
        return self._assemble(parts, len(rows))


def conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` as ``target``: struct members missing from the file (a fragment appended with
    a subset of nested fields) read as nulls; other differences are lossless casts."""
    if arr.type == target:
        return arr
    if pa.types.is_struct(target) and pa.types.is_struct(arr.type):
        names = {arr.type.field(i).name for i in range(arr.type.num_fields)}
        children = [
            conform(arr.field(f.name), f.type) if f.name in names else pa.nulls(len(arr), f.type)
            for f in target
        ]
        return pa.StructArray.from_arrays(
            children, fields=list(target), mask=arr.is_null() if arr.null_count else None
        )
    return arr.cast(target)


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


def _in(table: TableSchema, fid: int, wanted: set[int]) -> bool:
    top = table.top_level_of(fid)
    return top is not None and top.id in wanted
