"""Read and write one Lance data file through pylance's file-level codec (layer L3).

The contract leaves data files unchanged, so the reference encoder is the right dependency
(DESIGN §2.1): :class:`lance.file.LanceFileWriter` writes every batch exactly in the physical
Arrow schema given here, and :class:`lance.file.LanceFileReader` reads it back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa
from lance.file import LanceFileReader, LanceFileWriter

from .object_store import ObjectStore
from .paths import DATA_DIR

__all__ = ["WrittenFile", "DataFileWriter", "DataFileReader"]

#: how many open data-file readers are kept for reuse
_OPEN_FILES = 256

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


def _open(path: str, columns: tuple[str, ...] | None) -> LanceFileReader:
    """An open reader; data files are immutable and uniquely named, so readers are shared
    across scans, takes and dataset handles of one thread (a pylance reader must not be used
    by two threads at once: "Already borrowed")."""
    return _open_in_thread(path, columns, threading.get_ident())


@lru_cache(maxsize=_OPEN_FILES)
def _open_in_thread(path: str, columns: tuple[str, ...] | None, thread: int) -> LanceFileReader:
    return LanceFileReader(path, columns=list(columns) if columns is not None else None)


@lru_cache(maxsize=_OPEN_FILES)
def _metadata(path: str) -> tuple[pa.Schema, int]:
    meta = _open(path, None).metadata()
    return meta.schema, int(meta.num_rows)


class DataFileReader:
    """An open data file: its physical schema, row count, ranges and takes."""

    def __init__(self, store: ObjectStore, name: str) -> None:
        self.name = name
        self._path = store.local_path(f"{DATA_DIR}/{name}")
        self.schema, self.num_rows = _metadata(self._path)

    def _reader(self, columns: Sequence[str] | None) -> LanceFileReader:
        if columns is None or list(columns) == self.schema.names:
            return _open(self._path, None)
        return _open(self._path, tuple(columns))

    def read(
        self, columns: Sequence[str] | None, start: int, num_rows: int, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        if num_rows <= 0:
            return iter(())
        reader = self._reader(columns)
        return iter(reader.read_range(start, num_rows, batch_size=batch_size).to_batches())

    def take(self, columns: Sequence[str] | None, rows: Sequence[int]) -> pa.Table:
        reader = self._reader(columns)
        return reader.take_rows(list(rows), batch_size=max(len(rows), 1)).to_table()
