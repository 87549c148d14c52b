"""Blob bytes outside the data file's pages (layer L3; docs/format/lance-format-facts.md §10).

:class:`BlobSidecarWriter` writes the sidecar files of one data file through pylance's
file-level blob writers: ``data/<data-file-stem>/<blob_id, 32 binary digits, least
significant first>.blob``. Ids count from 1 per data file; a packed sidecar holds several
payloads back to back and rolls over at its size limit, a dedicated one holds one payload.

:class:`BlobFile` is a seekable, read-only file object over one blob's bytes: a range of a
data file, a sidecar, or an external object.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.fs as pafs
from lance.file import LanceFileSession

from ..errors import CorruptTableError
from .object_store import ObjectStore
from .panics import guarded
from .paths import DATA_DIR

__all__ = ["BlobSidecarWriter", "BlobFile", "sidecar_path"]


def sidecar_path(data_file: str, blob_id: int) -> str:
    """Path (under ``data/``) of sidecar ``blob_id`` of data file ``data_file``.

    >>> sidecar_path("abc.lance", 1)
    'abc/10000000000000000000000000000000.blob'
    """
    stem = data_file[: -len(".lance")] if data_file.endswith(".lance") else data_file
    bits = format(blob_id, "032b")[::-1]
    return f"{stem}/{bits}.blob"


class BlobSidecarWriter:
    """The sidecars of one data file being written (``data_file`` relative to ``data/``)."""

    def __init__(
        self,
        store: ObjectStore,
        data_file: str,
        on_file: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        with guarded("open the object store", store.uri("")):
            self._session = LanceFileSession(
                store.codec_root, storage_options=store.storage_options
            )
        self._target = f"{DATA_DIR}/{data_file}"
        self._next_id = 1
        self._pack: Any = None
        self._pack_id = 0
        self._pack_size = 0
        self._on_file = on_file  # sees each sidecar (under data/), for cleanup on failure
        self._data_file = data_file

    def _allocate(self) -> int:
        blob_id = self._next_id
        self._next_id += 1
        if self._on_file is not None:
            self._on_file(sidecar_path(self._data_file, blob_id))
        return blob_id

    def dedicated(self, payload: bytes | memoryview) -> int:
        """Write one payload to its own sidecar; its blob id."""
        blob_id = self._allocate()
        with self._guarded(blob_id):
            writer = self._session.open_dedicated_blob_writer(self._target, blob_id)
            # bytes, not a memoryview: pylance reads anything else element by element as
            # ints (slowly, and a signed view of a pyarrow buffer fails on bytes >= 0x80)
            writer.write(bytes(payload))
            writer.finish()
        return blob_id

    def _guarded(self, blob_id: int) -> AbstractContextManager[None]:
        """Failures of pylance's blob writers (its errors, a panic) on sidecar ``blob_id``
        as a StorageError naming the sidecar."""
        path = self._store.uri(f"{DATA_DIR}/{sidecar_path(self._data_file, blob_id)}")
        return guarded("write the blob sidecar", path, (OSError,))

    def packed(self, payload: bytes | memoryview, limit: int) -> tuple[int, int]:
        """Append one payload to the current packed sidecar (a new one when it would grow
        past ``limit`` bytes); its (blob id, offset)."""
        size = len(payload)
        if self._pack is not None and self._pack_size + size > limit:
            self._close_pack()
        if self._pack is None:
            self._pack_id = self._allocate()
            with self._guarded(self._pack_id):
                self._pack = self._session.open_packed_blob_writer(self._target, self._pack_id)
            self._pack_size = 0
        offset = self._pack_size
        with self._guarded(self._pack_id):
            self._pack.write_blob(bytes(payload))  # bytes: see dedicated()
        self._pack_size += size
        return self._pack_id, offset

    def _close_pack(self) -> None:
        if self._pack is not None:
            pack, self._pack = self._pack, None
            with self._guarded(self._pack_id):
                pack.finish()

    def close(self) -> None:
        self._close_pack()


def _open_external(uri: str) -> tuple[Any, int]:
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path) if parsed.scheme else uri
        f = open(path, "rb")  # noqa: SIM115 -- owned by the BlobFile
        return f, os.fstat(f.fileno()).st_size
    fs, path = pafs.FileSystem.from_uri(uri)
    f = fs.open_input_file(path)
    return f, f.size()


class _StoreObject:
    """A read-only, seekable view of one object of a store: each read is one ranged read
    (an object store's ranged GET)."""

    def __init__(self, store: ObjectStore, path: str) -> None:
        self._store, self._path, self._pos = store, path, 0

    def seek(self, pos: int) -> None:
        self._pos = pos

    def read(self, n: int) -> bytes:
        data = self._store.read_range(self._path, self._pos, n)
        self._pos += len(data)
        return data

    def close(self) -> None:
        pass


def _resolves_inside(path: str, root: str) -> bool:
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return real.startswith(real_root.rstrip(os.sep) + os.sep)


class BlobFile(io.RawIOBase):
    """A seekable, read-only view of ``size`` bytes at ``offset`` of a local file or URI
    (what :meth:`lance_semantic.Dataset.take_blobs` returns, like pylance's ``BlobFile``).

    ``size=None`` means "to the end of the object" (external blobs stored with size 0).
    ``inside``: a table directory that a local ``location`` must resolve into. A file that
    cannot be opened, or ends before the blob does, is a ``CorruptTableError`` naming it.
    Use :meth:`in_store` for a blob inside a table on an object store.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
    >>> with ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0] as f:
    ...     f, f.read(5), f.read()
    (<BlobFile size=11>, b'hello', b' world')
    """

    def __init__(
        self, location: str, offset: int, size: int | None, *, inside: str | None = None
    ) -> None:
        super().__init__()
        if inside is not None and not _resolves_inside(location, inside):
            raise CorruptTableError(
                location, f"resolves outside the table directory {inside} (a symbolic link)"
            )
        try:
            self._file, total = _open_external(location)
        except OSError as e:
            raise CorruptTableError(location, f"cannot open the blob's file: {e}") from e
        self._start(location, offset, max(total - offset, 0) if size is None else size)

    @classmethod
    def in_store(cls, store: ObjectStore, path: str, offset: int, size: int) -> BlobFile:
        """``size`` bytes at ``offset`` of ``path`` in ``store`` (a table on an object
        store: nothing is read until the blob is; each read is one ranged read).

        >>> from lance_semantic.storage.object_store import open_store
        >>> with open("data.bin", "wb") as out:
        ...     _ = out.write(b"0123456789")
        >>> BlobFile.in_store(open_store("."), "data.bin", offset=2, size=3).read()
        b'234'
        """
        self = cls.__new__(cls)
        io.RawIOBase.__init__(self)
        self._file = _StoreObject(store, path)
        self._start(store.uri(path), offset, size)
        return self

    def _start(self, location: str, offset: int, size: int) -> None:
        self._offset = offset
        self._size = size
        self._pos = 0
        self.location = location

    def size(self) -> int:
        """The blob's length in bytes.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.size()
        11
        """
        return self._size

    def readable(self) -> bool:
        """Always true (a blob file is read-only: ``writable()`` is false).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.readable(), f.writable()
        (True, False)
        """
        return True

    def seekable(self) -> bool:
        """Always true.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.seekable()
        True
        """
        return True

    def tell(self) -> int:
        """The cursor's position within the blob.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> _ = f.read(4)
        >>> f.tell()
        4
        """
        self._checkClosed()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move the cursor (``whence``: ``io.SEEK_SET``, ``SEEK_CUR`` or ``SEEK_END``) and
        return the new position; past the end reads give ``b""``.

        >>> import io
        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.seek(-5, io.SEEK_END), f.read()
        (6, b'world')
        """
        self._checkClosed()
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def read_range(self, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset`` within the blob, without moving the cursor.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.read_range(6, 5), f.tell()
        (b'world', 0)
        """
        self._checkClosed()  # (also for reads of no bytes, as pylance's)
        end = min(offset + length, self._size)
        if offset >= end:
            return b""
        try:
            self._file.seek(self._offset + offset)
            data = bytes(self._file.read(end - offset))
        except OSError as e:
            raise CorruptTableError(self.location, f"cannot read the blob's file: {e}") from e
        if len(data) != end - offset:  # never hand back a blob cut short
            raise CorruptTableError(
                self.location,
                f"blob at offset {self._offset}, size {self._size}: the file ends "
                f"{end - offset - len(data)} bytes early",
            )
        return data

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer`` up to its length; return the number of bytes read.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> buffer = bytearray(5)
        >>> f.readinto(buffer), buffer
        (5, bytearray(b'hello'))
        """
        data = self.read_range(self._pos, len(buffer))
        n = len(data)
        memoryview(buffer).cast("B")[:n] = data
        self._pos += n
        return n

    def readall(self) -> bytes:
        """The bytes from the cursor to the end of the blob.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> _ = f.seek(6)
        >>> f.readall()
        b'world'
        """
        data = self.read_range(self._pos, self._size - self._pos)
        self._pos += len(data)
        return data

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes from the cursor (all the rest when ``size`` is negative or
        None); ``CorruptTableError`` if the file holding the blob ends early.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.read(5), f.read(1), f.read()
        (b'hello', b' ', b'world')
        """
        if size is None or size < 0:
            return self.readall()
        data = self.read_range(self._pos, size)
        self._pos += len(data)
        return data

    def close(self) -> None:
        """Close the file holding the blob (also on leaving a ``with`` block).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world"]}, schema=pa.schema([blob]))
        >>> f = ls.write_dataset(data, "clips.lance").take_blobs("clip", indices=[0])[0]
        >>> f.close()
        >>> f.closed
        True
        """
        if not self.closed:
            self._file.close()
        super().close()

    def __repr__(self) -> str:
        return f"<BlobFile size={self._size}>"
