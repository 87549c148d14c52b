"""The files of pylance's scalar indices, read lazily (layer L3).

Every scalar index file is a Lance file under ``_indices/<uuid>/``. An index's small parts
(a BTREE's ``page_lookup``, a BITMAP's keys) are read once per index and kept; its large
parts (BTREE pages, bitmaps) are read on demand. Index files never change once written (a
new index gets a new uuid), so what is kept stays good while the table lives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import pyarrow as pa
from lance.file import LanceFileReader

from ..errors import CorruptTableError
from ..storage import ObjectStore, first_line, is_read_error, open_reader

__all__ = ["IndexFile", "Kept", "KEPT_INDICES"]

#: opened indices kept (their lookups and decoded parts), over every table
KEPT_INDICES = 16

T = TypeVar("T")


class IndexFile:
    """One Lance file of an index, opened on first use; its reads are serialised (a
    pylance reader is never used by two threads at once)."""

    __slots__ = ("store", "rel", "columns", "_reader", "_lock")

    def __init__(self, store: ObjectStore, rel: str, columns: list[str] | None = None) -> None:
        self.store, self.rel, self.columns = store, rel, columns
        self._reader: LanceFileReader | None = None
        self._lock = threading.Lock()

    def _run(self, what: Callable[[LanceFileReader], T]) -> T:
        try:
            with self._lock:
                if self._reader is None:
                    self._reader = open_reader(
                        self.store, self.rel, self.columns, what="index file"
                    )
                return what(self._reader)
        except BaseException as e:
            if not is_read_error(e):
                raise
            raise CorruptTableError(
                self.store.uri(self.rel), f"cannot read the index file: {first_line(e)}"
            ) from e

    def read_all(self) -> pa.Table:
        return self._run(lambda r: r.read_all().to_table())

    def read_range(self, start: int, count: int) -> pa.Table:
        """Rows ``[start, start + count)`` (fewer at the end of the file)."""

        def read(r: LanceFileReader) -> pa.Table:
            n = max(0, min(count, int(r.num_rows()) - start))
            return r.read_range(start, n, batch_size=max(n, 1)).to_table()

        return self._run(read)

    def take(self, rows: list[int]) -> pa.Table:
        return self._run(lambda r: r.take_rows(rows).to_table())

    def schema_metadata(self) -> dict[bytes, bytes]:
        return self._run(lambda r: dict(r.metadata().schema.metadata or {}))

    def global_buffer(self, index: int) -> bytes:
        return self._run(lambda r: bytes(r.read_global_buffer(index)))


class Kept:
    """A bounded map of opened things (least recently used out), safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[object, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: object, make: Callable[[], T]) -> T:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found  # type: ignore[return-value]
        made = make()
        with self._lock:
            self._items[key] = made
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return made

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
