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

from ..errors import CorruptTableError
from .object_store import ObjectStore
from .paths import DATA_DIR

__all__ = ["WrittenFile", "DataFileWriter", "DataFileReader", "file_metadata"]

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
        self._writer.write_batch(_without_sliced_nested_structs(batch))
        self.num_rows += batch.num_rows

    def close(self) -> WrittenFile:
        self._writer.close()
        return WrittenFile(
            self.name, self.num_rows, self._store.size(f"{DATA_DIR}/{self.name}"), self.schema
        )


def _has_struct(dt: pa.DataType) -> bool:
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    if pa.types.is_struct(dt):
        return True
    if pa.types.is_list(dt) or pa.types.is_large_list(dt) or pa.types.is_fixed_size_list(dt):
        return _has_struct(dt.value_type)
    if pa.types.is_map(dt):
        return _has_struct(dt.key_type) or _has_struct(dt.item_type)
    return False


def _sliced(arr: pa.Array) -> bool:
    """Whether any array in ``arr``'s tree starts at a non-zero offset."""
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if arr.offset:
        return True
    dt = arr.type
    if pa.types.is_struct(dt):
        return any(_sliced(arr.field(i)) for i in range(dt.num_fields))
    if pa.types.is_list(dt) or pa.types.is_large_list(dt) or pa.types.is_fixed_size_list(dt):
        return _sliced(arr.values)
    if pa.types.is_map(dt):
        return _sliced(arr.keys) or _sliced(arr.items)
    return False


def _without_sliced_nested_structs(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every column that holds a struct and a slice anywhere in its tree
    copied to offset 0: pylance 14's encoder panics (``assertion failed: end <= self.len()``
    in arrow-data) on a sliced struct whose child is a struct, at any depth, for every file
    version, and its own ``write_dataset`` does too (a cast of a sliced struct leaves the
    slice in the children). Other columns pass unchanged."""
    columns = batch.columns
    fixed = [pa.concat_arrays([c]) if _has_struct(c.type) and _sliced(c) else c for c in columns]
    if all(a is b for a, b in zip(fixed, columns, strict=True)):
        return batch
    return pa.RecordBatch.from_arrays(fixed, schema=batch.schema)


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


def file_metadata(path: str) -> tuple[pa.Schema, int]:
    """A data file's own schema and row count, read afresh (no reader cache)."""
    meta = LanceFileReader(path).metadata()
    return meta.schema, int(meta.num_rows)


#: what pylance's file reader raises for a missing, truncated or garbage file
_READ_ERRORS = (OSError, ValueError, IndexError, RuntimeError, pa.ArrowException)


def _is_read_error(e: BaseException) -> bool:
    # pylance panics (pyo3 PanicException, a BaseException) on some truncated files
    return isinstance(e, _READ_ERRORS) or type(e).__name__ == "PanicException"


def _damaged(path: str, e: BaseException) -> CorruptTableError:
    if isinstance(e, FileNotFoundError) or "Not found" in str(e):
        return CorruptTableError(path, "the data file is missing")
    return CorruptTableError(path, f"cannot read the data file: {_first_line(e)}")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


class DataFileReader:
    """An open data file: its physical schema, row count, ranges and takes.

    Every failure to read the file (missing, truncated, not a Lance file, pages that do
    not decode) is a :class:`~lance_semantic.errors.CorruptTableError` naming it."""

    def __init__(self, store: ObjectStore, name: str) -> None:
        self.name = name
        self._path = store.local_path(f"{DATA_DIR}/{name}")
        try:
            self.schema, self.num_rows = _metadata(self._path)
        except BaseException as e:
            if not _is_read_error(e):
                raise
            raise _damaged(self._path, e) from e

    @property
    def path(self) -> str:
        return self._path

    def _reader(self, columns: Sequence[str] | None) -> LanceFileReader:
        if columns is None or list(columns) == self.schema.names:
            return _open(self._path, None)
        return _open(self._path, tuple(columns))

    def read(
        self, columns: Sequence[str] | None, start: int, num_rows: int, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        if num_rows <= 0:
            return iter(())
        return self._guarded(columns, start, num_rows, batch_size)

    def _guarded(
        self, columns: Sequence[str] | None, start: int, num_rows: int, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        try:
            reader = self._reader(columns)
            yield from reader.read_range(start, num_rows, batch_size=batch_size).to_batches()
        except BaseException as e:
            if not _is_read_error(e):
                raise
            raise _damaged(self._path, e) from e

    def take(self, columns: Sequence[str] | None, rows: Sequence[int]) -> pa.Table:
        try:
            reader = self._reader(columns)
            return reader.take_rows(list(rows), batch_size=max(len(rows), 1)).to_table()
        except BaseException as e:
            if not _is_read_error(e):
                raise
            raise _damaged(self._path, e) from e
