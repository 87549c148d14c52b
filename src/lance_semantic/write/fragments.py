"""Turn user data into uncommitted fragments: normalise the input once, split it into data
files of at most ``max_rows_per_file`` rows, and write each file in its exact physical schema
(layer L4). Nothing written here is visible until a manifest references it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import _RowError
from ..manifest import DataFile, Fragment
from ..schema import Field, data_file_field_ids
from ..storage import BlobSidecarWriter, DataFileWriter, ObjectStore, new_data_file_name
from ..types.arrow_names import ordered_like
from ..types.casts import cast as safe_cast
from .blob_values import BlobPreparer, blob_columns
from .boundary import check_file_layout
from .defaults import MAX_BYTES_PER_FILE

__all__ = [
    "coerce_reader",
    "in_order_of",
    "write_fragments",
    "parse_storage_version",
    "unsliced_array",
]


def parse_storage_version(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def coerce_reader(data: Any, schema: pa.Schema | None = None) -> pa.RecordBatchReader:
    """One entry for every accepted input: Table, RecordBatch, RecordBatchReader, an iterable
    of batches or tables, a pandas / polars DataFrame, a list of dicts (rows), a dict of
    lists (columns), a ``pyarrow.dataset.Dataset`` (a pylance dataset too), or anything
    with ``__arrow_c_stream__``. The batches of an iterable come in the column order of the
    first (or of ``schema``), struct members included (:func:`in_order_of`)."""
    import pyarrow.dataset as pds

    if isinstance(data, pa.RecordBatchReader):
        reader = data
    elif isinstance(data, pa.Table):
        reader = data.to_reader()
    elif isinstance(data, pa.RecordBatch):
        reader = pa.RecordBatchReader.from_batches(data.schema, [data])
    elif isinstance(data, pds.Dataset):  # streamed, batch by batch
        reader = data.scanner().to_reader()
    elif isinstance(data, dict):
        reader = pa.table(data, schema=schema).to_reader()
    elif isinstance(data, (list, tuple)) and data and all(isinstance(r, dict) for r in data):
        reader = pa.Table.from_pylist(list(data), schema=schema).to_reader()
    elif hasattr(data, "__arrow_c_stream__") and not isinstance(data, (list, tuple)):
        reader = pa.RecordBatchReader.from_stream(data)
    elif type(data).__module__.startswith("pandas"):
        reader = pa.Table.from_pandas(data, preserve_index=False).to_reader()
    elif (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(b, (pa.RecordBatch, pa.Table)) for b in data)
    ):
        reader = _in_one_order(data[0].schema, iter(data))
    elif isinstance(data, Iterable) and schema is not None:
        reader = _in_one_order(schema, iter(data))
    elif isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        first = next(it, None)
        if first is None:
            raise ValueError("cannot infer a schema from an empty iterable; pass schema=")
        if not isinstance(first, (pa.RecordBatch, pa.Table)):
            raise TypeError(_not_a_batch(first))
        reader = _in_one_order(first.schema, _chain(first, it))
    else:
        raise TypeError(f"unsupported data type {type(data).__name__} for a Lance write")
    if schema is not None and reader.schema != schema:
        target = schema
        reader = pa.RecordBatchReader.from_batches(
            target, (b.select(target.names).cast(target) for b in reader)
        )
    return reader


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _not_a_batch(item: object) -> str:
    return (
        f"an iterable of pyarrow RecordBatches or Tables was expected, got an item of type "
        f"{type(item).__name__}"
    )


def in_order_of(batch: pa.RecordBatch, like: pa.Schema) -> pa.RecordBatch:
    """``batch`` with its columns, and the members of its structs at any depth, in the order
    of ``like`` where they are the same names in another order; its layouts unchanged.

    Column order is free: the batches of one write may bring their columns in any order,
    and a write takes them in the order of its first batch (one set of data files).
    """
    schema = batch.schema
    if schema.equals(like):
        return batch
    names, like_names = schema.names, like.names
    if (
        names != like_names
        and len(set(names)) == len(names)
        and sorted(names) == sorted(like_names)
    ):
        batch = batch.select(like_names)
    fields, columns, changed = [], [], False
    for f, col in zip(batch.schema, batch.columns, strict=True):
        i = like.get_field_index(f.name)
        target = ordered_like(f.type, like.field(i).type) if i >= 0 else f.type
        if target != f.type:
            col, f, changed = safe_cast(col, target), f.with_type(target), True
        fields.append(f)
        columns.append(col)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=schema.metadata))


def _in_one_order(schema: pa.Schema, items: Iterator[Any]) -> pa.RecordBatchReader:
    """A reader of the batches of ``items`` (record batches or tables), each in the column
    order of ``schema`` (:func:`in_order_of`)."""

    def batches() -> Iterator[pa.RecordBatch]:
        for item in items:
            if isinstance(item, pa.Table):
                parts = item.to_batches()
            elif isinstance(item, pa.RecordBatch):
                parts = [item]
            else:
                raise TypeError(_not_a_batch(item))
            for batch in parts:
                yield in_order_of(batch, schema)

    return pa.RecordBatchReader.from_batches(schema, batches())


def unsliced_array(arr: pa.Array) -> pa.Array:
    """``arr`` starting at offset 0: pylance 14's encoder panics on sliced struct arrays
    ("assertion failed: end <= self.len()"), so slices are copied."""
    return pa.concat_arrays([arr]) if arr.offset else arr


def _narrow_dictionaries(batch: pa.RecordBatch) -> Iterator[tuple[str, pa.DictionaryArray]]:
    """Top-level and struct-member dictionary columns whose keys are narrower than 32 bits."""

    def walk(name: str, arr: pa.Array) -> Iterator[tuple[str, pa.DictionaryArray]]:
        if pa.types.is_dictionary(arr.type) and arr.type.index_type.bit_width < 32:
            yield name, arr
        elif pa.types.is_struct(arr.type):
            for i in range(arr.type.num_fields):
                yield from walk(f"{name}.{arr.type.field(i).name}", arr.field(i))

    for name, col in zip(batch.schema.names, batch.columns, strict=True):
        yield from walk(name, col)


class _NarrowDictionaries:
    """Distinct values so far of each narrow-key dictionary column of one data file.

    pylance 14's encoder merges the dictionaries of all batches of a file; when the union
    outgrows an 8/16-bit key it writes a file it cannot read back ("corrupt file
    dictionary"). A batch that would overflow a key therefore starts a new data file, and
    every file keeps the input layout.
    """

    def __init__(self) -> None:
        self._seen: dict[str, pa.Array] = {}

    def fits(self, batch: pa.RecordBatch) -> bool:
        merged = {}
        for name, arr in _narrow_dictionaries(batch):
            key = arr.type.index_type
            capacity = 1 << (key.bit_width - (1 if pa.types.is_signed_integer(key) else 0))
            before = self._seen.get(name)
            values = (
                arr.dictionary if before is None else pa.concat_arrays([before, arr.dictionary])
            )
            union = pc.unique(values)
            if before is not None and len(union) > capacity:
                return False
            merged[name] = union
        self._seen.update(merged)
        return True


def write_fragments(
    store: ObjectStore,
    batches: Iterable[pa.RecordBatch],
    fields: Sequence[Field],
    *,
    flagged: bool,
    version: str,
    max_rows_per_file: int,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    on_file: Callable[[str], None] | None = None,
    allow_external_blobs: bool = False,
    schemas: list[pa.Schema] | None = None,
) -> list[Fragment]:
    """Write physical batches as fragments (ids 0.. — assigned for real at commit).

    Each batch is already in its exact physical layout (the write boundary made it so) and
    its schema becomes the data file's schema. A new data file starts when the current one
    reaches ``max_rows_per_file`` rows, once the rows written to it hold
    ``max_bytes_per_file`` bytes in Arrow memory (a soft limit, as pylance's), or when a
    batch's physical schema differs (each data
    file may hold a different layout). ``fields`` are the table's top-level fields in the
    input's shape, for ``DataFile.fields``; each new file's schema must hold their types
    (:func:`~lance_semantic.write.boundary.check_file_layout`, the rule of a ``flagged``
    table or of a legacy one), or nothing is written. Errors about a row give the row of
    ``batches`` as a whole. ``on_file`` sees each data file name as soon as
    it exists (and each blob sidecar, as ``<stem>/<id>.blob``), so a failed write can remove
    what it left behind. Blob v2 columns are prepared per data file (see
    :mod:`lance_semantic.write.blob_values`); ``allow_external_blobs`` admits external URIs.
    ``schemas``, when given, receives the schema of each fragment's data file as its batches
    had it (the exact layout; blob columns as values, before they become descriptors).
    """
    major, minor = parse_storage_version(version)
    ids, column_indices = data_file_field_ids(fields, (major, minor))
    fragments: list[Fragment] = []
    writer: DataFileWriter | None = None
    logical: pa.Schema | None = None  # the batches' schema before blob preparation
    blobs: BlobPreparer | None = None
    sidecars: BlobSidecarWriter | None = None

    def finish() -> None:
        assert writer is not None
        if sidecars is not None:
            sidecars.close()
        written = writer.close()
        data_file = DataFile(
            path=written.name,
            fields=tuple(ids),
            column_indices=tuple(column_indices),
            file_major_version=major,
            file_minor_version=minor,
            file_size_bytes=written.size_bytes,
        )
        fragments.append(Fragment(id=0, files=(data_file,), physical_rows=written.num_rows))
        if schemas is not None:
            assert logical is not None
            schemas.append(logical)

    dictionaries = _NarrowDictionaries()
    done = 0  # rows of ``batches`` written so far
    file_bytes = 0  # Arrow bytes of the rows written to the current file
    try:
        for batch in batches:
            while batch.num_rows:
                if writer is not None and (
                    writer.num_rows >= max_rows_per_file
                    or file_bytes >= max_bytes_per_file
                    or not batch.schema.equals(logical, check_metadata=True)
                    or not dictionaries.fits(batch)
                ):
                    finish()
                    writer = None
                if writer is None:
                    dictionaries = _NarrowDictionaries()
                    dictionaries.fits(batch)
                    name = new_data_file_name()
                    if on_file is not None:
                        on_file(name)
                    if logical is None or not batch.schema.equals(logical, check_metadata=True):
                        check_file_layout(fields, batch.schema, flagged=flagged)
                    logical = batch.schema
                    blobs = sidecars = None
                    if blob_columns(batch.schema):
                        sidecars = BlobSidecarWriter(store, name, on_file)
                        blobs = BlobPreparer(
                            sidecars, batch.schema, allow_external=allow_external_blobs
                        )
                    schema = blobs.schema if blobs is not None else batch.schema
                    writer = DataFileWriter(store, name, schema, version)
                    file_bytes = 0
                room = max_rows_per_file - writer.num_rows
                part = batch.slice(0, room) if batch.num_rows > room else batch  # copied when
                # sliced structs need it (storage.datafile)
                try:
                    writer.write(part if blobs is None else blobs.prepare(part))
                except _RowError as err:  # rows of ``part``, which starts at row ``done``
                    err.at_offset(done)
                    raise
                done += part.num_rows
                file_bytes += part.get_total_buffer_size()
                batch = batch.slice(room) if batch.num_rows > room else batch.slice(0, 0)
        if writer is not None:
            finish()
    except BaseException:
        # close the open files so that they are named files (which the caller removes), not
        # the encoder's anonymous temporary ones
        for open_file in (sidecars, writer):
            if open_file is not None:
                try:
                    open_file.close()
                except Exception:  # noqa: BLE001 - the first error is the one to report
                    pass
        raise
    return fragments
