"""Turn user data into uncommitted fragments: normalise the input once, split it into data
files of at most ``max_rows_per_file`` rows, and write each file in its exact physical schema
(layer L4). Nothing written here is visible until a manifest references it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from ..manifest.model import DataFile, Fragment
from ..schema.datafile import data_file_field_ids
from ..schema.field import Field
from ..storage.datafile import write_data_file
from ..storage.object_store import ObjectStore
from ..storage.paths import new_data_file_name

__all__ = ["coerce_reader", "write_fragments", "parse_storage_version"]


def parse_storage_version(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def coerce_reader(data: Any, schema: pa.Schema | None = None) -> pa.RecordBatchReader:
    """One entry for every accepted input: Table, RecordBatch, RecordBatchReader, an iterable
    of batches, a pandas / polars DataFrame, or anything with ``__arrow_c_stream__``."""
    if isinstance(data, pa.RecordBatchReader):
        reader = data
    elif isinstance(data, pa.Table):
        reader = data.to_reader()
    elif isinstance(data, pa.RecordBatch):
        reader = pa.RecordBatchReader.from_batches(data.schema, [data])
    elif hasattr(data, "__arrow_c_stream__") and not isinstance(data, (list, tuple)):
        reader = pa.RecordBatchReader.from_stream(data)
    elif type(data).__module__.startswith("pandas"):
        reader = pa.Table.from_pandas(data, preserve_index=False).to_reader()
    elif (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(b, pa.RecordBatch) for b in data)
    ):
        reader = pa.RecordBatchReader.from_batches(data[0].schema, data)
    elif isinstance(data, Iterable) and schema is not None:
        reader = pa.RecordBatchReader.from_batches(schema, iter(data))
    elif isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        first = next(it, None)
        if first is None:
            raise ValueError("cannot infer a schema from an empty iterable; pass schema=")
        reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, it))
    else:
        raise TypeError(f"unsupported data type {type(data).__name__} for a Lance write")
    if schema is not None and reader.schema != schema:
        target = schema
        reader = pa.RecordBatchReader.from_batches(
            target, (b.select(target.names).cast(target) for b in reader)
        )
    return reader


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


def _split(reader: pa.RecordBatchReader, max_rows: int) -> Iterator[Iterator[pa.RecordBatch]]:
    """Group the stream into runs of at most ``max_rows`` rows, lazily."""
    pending: list[pa.RecordBatch] = []
    batches = iter(reader)

    def one_file() -> Iterator[pa.RecordBatch]:
        rows = 0
        while rows < max_rows:
            b = pending.pop() if pending else next(batches, None)
            if b is None:
                return
            if b.num_rows == 0:
                continue
            room = max_rows - rows
            if b.num_rows > room:
                pending.append(b.slice(room))
                b = b.slice(0, room)
            rows += b.num_rows
            yield b

    while True:
        first = pending.pop() if pending else next(batches, None)
        while first is not None and first.num_rows == 0:
            first = next(batches, None)
        if first is None:
            return
        pending.append(first)
        yield one_file()


def write_fragments(
    store: ObjectStore,
    reader: pa.RecordBatchReader,
    fields: Sequence[Field],
    physical_schema: pa.Schema,
    *,
    version: str,
    max_rows_per_file: int,
    prepare: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
    on_file: Callable[[str], None] | None = None,
) -> list[Fragment]:
    """Write the stream as fragments (ids 0.. — assigned for real at commit).

    ``fields`` are the table's top-level fields in the input's column order and
    ``physical_schema`` is the exact Arrow schema of every batch handed to the encoder
    (after ``prepare``). ``on_file`` sees each data file name as soon as it exists, so a
    failed write can report or clean what it left behind.
    """
    major, minor = parse_storage_version(version)
    ids, column_indices = data_file_field_ids(fields, (major, minor))
    fragments: list[Fragment] = []
    for run in _split(reader, max_rows_per_file):
        name = new_data_file_name()
        if on_file is not None:
            on_file(name)
        batches = run if prepare is None else (prepare(b) for b in run)
        written = write_data_file(store, name, physical_schema, batches, version)
        if written.num_rows == 0:
            store.delete(f"data/{name}")
            continue
        data_file = DataFile(
            path=name,
            fields=tuple(ids),
            column_indices=tuple(column_indices),
            file_major_version=major,
            file_minor_version=minor,
            file_size_bytes=written.size_bytes,
        )
        fragments.append(Fragment(id=0, files=(data_file,), physical_rows=written.num_rows))
    return fragments
