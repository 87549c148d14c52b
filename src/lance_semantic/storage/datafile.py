"""Read and write one Lance data file through pylance's file-level codec (layer L3).

The contract leaves data files unchanged, so the reference encoder is the right dependency
(DESIGN §2.1): :class:`lance.file.LanceFileWriter` writes every batch exactly in the physical
Arrow schema given here, and :class:`lance.file.LanceFileReader` reads it back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from lance.file import LanceFileReader, LanceFileWriter

from .object_store import ObjectStore
from .paths import DATA_DIR

__all__ = ["WrittenFile", "DataFileWriter", "write_data_file", "DataFileReader"]

#: data storage versions whose files pylance 14 writes through the file API
WRITABLE_VERSIONS = ("2.0", "2.1", "2.2", "2.3")


@dataclass(frozen=True, slots=True)
class WrittenFile:
    name: str  # relative to data/
    num_rows: int
    size_bytes: int
    schema: pa.Schema


class DataFileWriter:
    """One data file being written: every batch must have exactly ``schema``."""

    def __init__(self, store: ObjectStore, name: str, schema: pa.Schema, version: str) -> None:
        self.name = name
        self.schema = schema
        self.num_rows = 0
        self._store = store
        path = store.local_path(f"{DATA_DIR}/{name}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._writer = LanceFileWriter(path, schema, version=version)

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)
        self.num_rows += batch.num_rows

    def close(self) -> WrittenFile:
        self._writer.close()
        return WrittenFile(
            self.name, self.num_rows, self._store.size(f"{DATA_DIR}/{self.name}"), self.schema
        )


def write_data_file(
    store: ObjectStore,
    name: str,
    schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    version: str,
) -> WrittenFile:
    """Write ``batches`` (all exactly ``schema``) to ``data/<name>`` as a ``version`` file."""
    writer = DataFileWriter(store, name, schema, version)
    try:
        for batch in batches:
            writer.write(batch)
    finally:
        written = writer.close()
    return written


class DataFileReader:
    """An open data file: its physical schema, row count, ranges and takes."""

    def __init__(self, store: ObjectStore, name: str) -> None:
        self.name = name
        self._path = store.local_path(f"{DATA_DIR}/{name}")
        self._reader = LanceFileReader(self._path)
        self._meta = self._reader.metadata()

    @property
    def schema(self) -> pa.Schema:
        return self._meta.schema

    @property
    def num_rows(self) -> int:
        return int(self._meta.num_rows)

    def read(
        self, columns: Sequence[str] | None, start: int, num_rows: int, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        reader = self._reader if columns is None else self._with_columns(columns)
        if num_rows <= 0:
            return iter(())
        return iter(reader.read_range(start, num_rows, batch_size=batch_size).to_batches())

    def take(self, columns: Sequence[str] | None, rows: Sequence[int]) -> pa.Table:
        reader = self._reader if columns is None else self._with_columns(columns)
        return reader.take_rows(list(rows), batch_size=max(len(rows), 1)).to_table()

    def _with_columns(self, columns: Sequence[str]) -> LanceFileReader:
        return LanceFileReader(self._path, columns=list(columns))
