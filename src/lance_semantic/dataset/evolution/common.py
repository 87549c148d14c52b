"""What adding and rewriting columns share (layer L5; docs/format/lance-format-facts.md §3 "What
pylance 14 actually writes per operation", §4 field ids): the errors of schema evolution, new field
ids, and the writer that gives every fragment one new data file holding new columns for exactly its
physical rows.

New column values are computed from the fragment's live rows only (deleted rows may hold
anything, including values a transform would reject) and scattered back to their physical
offsets. A read never returns a deleted position, so it holds a copy of a computed row
(valid for non-nullable columns, and for 2.0 files, which cannot store null structs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ...errors import ColumnNotFoundError, NotSupportedYetError, SchemaEvolutionError
from ...manifest import DataFile, Fragment, Manifest
from ...read import (
    ROW_OFFSET,
    FragmentReader,
    ScanRequest,
    blob_values_schema,
    output_schema,
    plan_scan,
    run_scan,
)
from ...schema import Field, TableSchema, data_file_field_ids, schema_to_arrow
from ...storage import (
    BlobSidecarWriter,
    DataFileWriter,
    ObjectStore,
    WrittenFile,
    new_data_file_name,
)
from ...types.layouts import OFFSET_LIMIT
from ...write import (
    BlobPreparer,
    Boundary,
    blob_columns,
    check_file_layout,
    parse_storage_version,
    unsliced_array,
)
from ..core import Snapshot

__all__ = [
    "field_at",
    "ColumnNotFoundError",
    "SchemaEvolutionError",
    "next_field_id",
    "ColumnSource",
    "write_column_files",
    "TOMBSTONE_FIELD_ID",
    "with_files",
    "scan_columns",
]

#: ``DataFile.fields`` entry of a field whose data in that file was superseded (2.0 parents)
TOMBSTONE_FIELD_ID = -2

#: a transform from the live rows of a read batch to the new columns for those rows
Transform = Callable[[pa.RecordBatch], pa.RecordBatch]


def next_field_id(manifest: Manifest) -> int:
    """The first id for new fields: one more than the largest id in the schema *and* in any
    ``DataFile.fields`` (dropped ids are not reused while a data file still holds them),
    and past ``max_allocated_field_id`` when the table tracks it (docs/format/lance-format-facts.md
    §4)."""
    high = manifest.schema.max_field_id
    for frag in manifest.fragments:
        for df in frag.files:
            if df.fields:
                high = max(high, max(df.fields))
    if manifest.max_allocated_field_id is not None:
        high = max(high, manifest.max_allocated_field_id)
    return high + 1


@dataclass(frozen=True, slots=True)
class ColumnSource:
    """What the new columns are computed from: the table fields to read (top level), the
    Arrow schema they are read in, and the transform of each batch of live rows."""

    fields: tuple[Field, ...]
    read_schema: pa.Schema
    transform: Transform


def _takeable(arr: pa.Array) -> pa.Array:
    """``arr`` in a layout Arrow's take kernel handles: a view becomes the non-view layout
    that holds its values (32-bit offsets when they fit)."""
    view = pa.types.is_string_view(arr.type), pa.types.is_binary_view(arr.type)
    if not any(view):
        return arr
    large = arr.nbytes > OFFSET_LIMIT
    if view[0]:
        return arr.cast(pa.large_string() if large else pa.string())
    return arr.cast(pa.large_binary() if large else pa.binary())


class _Scatter:
    """Places computed rows at their physical offsets. Deleted positions get a copy of a
    computed row (they are never read; a copy is valid for non-nullable columns and for
    2.0 files, which cannot store null structs), or nulls while no row is computed yet."""

    def __init__(self) -> None:
        self.filler: pa.RecordBatch | None = None  # one computed row

    def place(
        self, result: pa.RecordBatch, offsets: np.ndarray, start: int, end: int
    ) -> pa.RecordBatch:
        """Rows ``start .. end`` (physical) with ``result`` at ``offsets``."""
        n, k = end - start, result.num_rows
        if k and self.filler is None:
            self.filler = pa.RecordBatch.from_arrays(
                [_takeable(unsliced_array(c.slice(0, 1))) for c in result.columns],
                names=result.schema.names,
            )
        if k == n:
            return result
        index = np.full(n, k, dtype=np.int64)  # k: the filler row
        index[offsets - start] = np.arange(k)
        assert self.filler is not None
        columns = [
            pa.concat_arrays([_takeable(col), self.filler.column(i)]).take(pa.array(index))
            for i, col in enumerate(result.columns)
        ]
        return pa.RecordBatch.from_arrays(columns, names=result.schema.names)

    def holes(self, schema: pa.Schema, n: int) -> pa.RecordBatch:
        """``n`` deleted rows after the last computed one."""
        if self.filler is not None:
            index = pa.array(np.zeros(n, dtype=np.int64))
            return pa.RecordBatch.from_arrays(
                [c.take(index) for c in self.filler.columns], names=self.filler.schema.names
            )
        return pa.RecordBatch.from_arrays([pa.nulls(n, f.type) for f in schema], names=schema.names)


class _Physical:
    """Batches of new columns in the layout their data file declares (legacy: the table's
    one Arrow type per field; flagged tables: the input layout through the write
    boundary)."""

    def __init__(self, fields: Sequence[Field], flagged: bool) -> None:
        self._fields = tuple(fields)
        self._flagged = flagged
        table = TableSchema.of(fields)
        legacy = None if flagged else blob_values_schema(table, schema_to_arrow(table))
        # legacy: the first batch is the transform's, whose fields these are (an altered
        # column keeps extension keys its values lack); a later batch must match them
        first = None if flagged else table.fields
        self._boundary = Boundary(table, flagged=flagged, first=first, legacy_schema=legacy)

    def relaxed(self) -> _Physical:
        """The same with every column nullable (deleted rows with nothing to copy)."""
        fields = [replace(f, nullable=True) for f in self._fields]
        return _Physical(TableSchema.of(fields).fields, self._flagged)

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        # (slices are copied where the encoder needs it: storage.datafile)
        return self._boundary(batch)


def _fragment_chunks(
    store: ObjectStore,
    table: TableSchema,
    fragment: Fragment,
    source: ColumnSource,
    scatter: _Scatter,
    out_schema: pa.Schema,
    batch_size: int,
) -> Iterator[pa.RecordBatch]:
    """The new columns for every physical row of ``fragment``, in physical order."""
    reader = FragmentReader(store, table, fragment, source.fields, source.read_schema)
    pos = 0
    for batch in reader.batches(batch_size, with_offsets=True):
        offsets = batch.column(ROW_OFFSET).to_numpy().astype(np.int64)
        live = batch.drop_columns([ROW_OFFSET])
        result = source.transform(live)
        if result.num_rows != live.num_rows:
            raise SchemaEvolutionError(
                ", ".join(result.schema.names),
                f"the transform returned {result.num_rows} rows for {live.num_rows}",
            )
        end = int(offsets[-1]) + 1
        yield scatter.place(result, offsets, pos, end)
        pos = end
    if pos < fragment.physical_rows:
        yield scatter.holes(out_schema, fragment.physical_rows - pos)


class _ColumnFile:
    """One new data file of a column set: batches in the first batch's layout (later ones
    are cast to it), blob v2 columns prepared with their sidecars (as the fragment writer
    does). Its schema must hold the new fields' types (the writers' last guard)."""

    def __init__(
        self,
        store: ObjectStore,
        name: str,
        schema: pa.Schema,
        version: str,
        written: list[str],
        fields: Sequence[Field],
        flagged: bool,
    ) -> None:
        check_file_layout(fields, schema, flagged=flagged)
        written.append(name)  # the owner's from the moment the file may exist
        self.schema = schema
        self._sidecars: BlobSidecarWriter | None = None
        self._blobs: BlobPreparer | None = None
        if blob_columns(schema):
            self._sidecars = BlobSidecarWriter(store, name, written.append)
            self._blobs = BlobPreparer(self._sidecars, schema, allow_external=False)
        declared = self._blobs.schema if self._blobs is not None else schema
        self._writer = DataFileWriter(store, name, declared, version)

    def write(self, batch: pa.RecordBatch) -> None:
        if not batch.schema.equals(self.schema, check_metadata=True):
            batch = batch.cast(self.schema)
        self._writer.write(batch if self._blobs is None else self._blobs.prepare(batch))

    def close(self) -> WrittenFile:
        if self._sidecars is not None:
            self._sidecars.close()
        return self._writer.close()


def write_column_files(
    store: ObjectStore,
    manifest: Manifest,
    source: ColumnSource,
    out_fields: Sequence[Field],
    *,
    flagged: bool,
    batch_size: int,
    written: list[str],
) -> list[DataFile]:
    """One new data file per fragment of ``manifest`` (same order), holding the top-level
    ``out_fields`` (final ids, file column order) for exactly the fragment's physical rows.

    Each name is appended to ``written`` as its file is opened (not before: a name that
    never became a file is no leftover), so that a failure can remove what was left
    behind.
    """
    version = manifest.data_storage_version
    major, minor = parse_storage_version(version)
    if major < 2:
        raise NotSupportedYetError(f"schema evolution of data storage version {version}")
    ids, column_indices = data_file_field_ids(out_fields, (major, minor))
    new_table = TableSchema.of(out_fields)
    # new columns are written: blob columns take values, not read descriptors
    out_schema = blob_values_schema(new_table, output_schema(new_table, flagged=flagged))
    scatter = _Scatter()
    strict = _Physical(out_fields, flagged)
    relaxed = strict.relaxed()
    # fragments without live rows go last: by then a computed row exists to fill them with
    order = sorted(
        range(len(manifest.fragments)), key=lambda i: manifest.fragments[i].num_rows == 0
    )
    files: dict[int, DataFile] = {}
    for i in order:
        frag = manifest.fragments[i]
        name = new_data_file_name()
        writer: _ColumnFile | None = None
        for chunk in _fragment_chunks(
            store, manifest.schema, frag, source, scatter, out_schema, batch_size
        ):
            if not chunk.num_rows:
                continue
            out = (strict if scatter.filler is not None else relaxed)(chunk)
            if writer is None:
                writer = _ColumnFile(store, name, out.schema, version, written, out_fields, flagged)
            writer.write(out)
        if writer is None:  # a fragment without rows: an empty file of the declared layout
            empty = pa.RecordBatch.from_pylist([], schema=out_schema)
            writer = _ColumnFile(
                store, name, strict(empty).schema, version, written, out_fields, flagged
            )
        done = writer.close()
        files[i] = DataFile(
            path=done.name,
            fields=tuple(ids),
            column_indices=tuple(column_indices),
            file_major_version=major,
            file_minor_version=minor,
            file_size_bytes=done.size_bytes,
        )
    return [files[i] for i in range(len(manifest.fragments))]


def with_files(fragments: Sequence[Fragment], files: Sequence[DataFile]) -> list[Fragment]:
    """Every fragment with its new data file appended."""
    return [replace(f, files=(*f.files, df)) for f, df in zip(fragments, files, strict=True)]


def scan_columns(
    snap: Snapshot, columns: Sequence[str] | None, *, limit: int | None = None
) -> Iterator[pa.RecordBatch]:
    """The rows of ``columns`` (all: None) as ``Dataset.to_batches`` reads them."""
    request = ScanRequest(columns=columns, limit=limit)
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    return run_scan(snap.store, snap.semantic_schema, snap.manifest.fragments, plan, request)


def field_at(schema: TableSchema, path: str) -> Field:
    """The field at ``path`` of ``schema``, or ``ColumnNotFoundError`` naming the table's
    columns."""
    if not isinstance(path, str):
        raise TypeError(f"a column path must be a string, not {type(path).__name__}")
    try:
        return schema.field(path)
    except KeyError:
        raise ColumnNotFoundError(path, schema.names) from None
