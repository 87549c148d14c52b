"""Bytes in, bytes out: the one place that touches the table's storage (layer L3).

All paths are relative to the table root and use ``/``. The only primitive with
concurrency semantics is :meth:`ObjectStore.put_if_absent`, which publishes a manifest
so that two writers can never both publish the same version (DESIGN §2.7).

Two backends: :class:`LocalObjectStore` (a directory) and
:class:`~lance_semantic.storage.remote_store.RemoteObjectStore` (``s3://`` and other object
stores). Data files go through pylance's file codec, which takes :meth:`ObjectStore.uri`
and :attr:`ObjectStore.storage_options`; only the local backend has a ``local_path``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

from .file_info import FileInfo
from .options import check_values
from .remote_store import RemoteObjectStore
from .uris import parse_location

__all__ = ["ObjectStore", "LocalObjectStore", "FileInfo", "open_store"]


class ObjectStore(Protocol):
    """What the table layer needs from storage."""

    root: str
    #: whether paths are files of the local file system (links, ``local_path``)
    is_local: bool
    #: what pylance's file codec takes beside :attr:`codec_root` (None for local tables)
    storage_options: dict[str, str] | None
    #: the table root as pylance's file codec takes it: the local directory, or a URL that
    #: pylance decodes to the table's key prefix (paths under it are given relative to it)
    codec_root: str

    def uri(self, path: str) -> str: ...
    def get(self, path: str) -> bytes: ...
    def read_range(self, path: str, offset: int, length: int) -> bytes: ...
    def put(self, path: str, data: bytes) -> None: ...
    def put_if_absent(self, path: str, data: bytes) -> bool: ...
    def list(self, prefix: str) -> list[str]: ...
    def exists(self, path: str) -> bool: ...
    def delete(self, path: str) -> None: ...
    def size(self, path: str) -> int: ...
    def local_path(self, path: str) -> str: ...
    def state(self, paths: Sequence[str]) -> tuple[object, ...]: ...
    def walk(self, prefix: str) -> Sequence[FileInfo]: ...
    def remove_empty_dir(self, path: str) -> None: ...


class LocalObjectStore:
    """A table directory on the local file system."""

    is_local = True
    storage_options: dict[str, str] | None = None

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.codec_root = self.root  # pylance takes a path without a scheme literally

    def uri(self, path: str) -> str:
        """What pylance's file codec is given for ``path``: its local path."""
        return self.local_path(path)

    def local_path(self, path: str) -> str:
        return os.path.join(self.root, path)

    def get(self, path: str) -> bytes:
        with open(self.local_path(path), "rb") as f:
            return f.read()

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of ``path`` from ``offset`` (fewer where the file ends)."""
        with open(self.local_path(path), "rb") as f:
            f.seek(offset)
            return f.read(length)

    def _temp_for(self, target: str, data: bytes) -> str:
        """A new temp file beside ``target`` holding ``data``; never left behind when
        writing it fails (a full disk, Ctrl-C)."""
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = os.path.join(os.path.dirname(target), f".tmp-{uuid.uuid4().hex}")
        try:
            with open(tmp, "wb") as f:  # no fsync, like pylance: atomicity from link/rename
                f.write(data)
        except BaseException:
            _remove_quietly(tmp)
            raise
        return tmp

    def put(self, path: str, data: bytes) -> None:
        """Write ``data`` atomically (temp file, then rename over any existing file)."""
        target = self.local_path(path)
        tmp = self._temp_for(target, data)
        try:
            os.replace(tmp, target)
        except BaseException:
            _remove_quietly(tmp)
            raise

    def put_if_absent(self, path: str, data: bytes) -> bool:
        """Publish ``data`` at ``path`` only if nothing is there; False if it already exists.

        The file appears complete or not at all: it is written to a temp name, then hard-linked
        to the target (``link`` fails atomically when the target exists).
        """
        target = self.local_path(path)
        tmp = self._temp_for(target, data)
        try:
            os.link(tmp, target)
            return True
        except FileExistsError:
            return False
        finally:
            _remove_quietly(tmp)

    def list(self, prefix: str) -> list[str]:
        """Names of the entries directly under the directory ``prefix`` (empty if missing)."""
        try:
            return sorted(
                n for n in os.listdir(self.local_path(prefix)) if not n.startswith(".tmp-")
            )
        except (FileNotFoundError, NotADirectoryError):
            return []

    def exists(self, path: str) -> bool:
        return os.path.exists(self.local_path(path))

    def delete(self, path: str) -> None:
        try:
            os.unlink(self.local_path(path))
        except FileNotFoundError:
            pass

    def size(self, path: str) -> int:
        return os.path.getsize(self.local_path(path))

    def state(self, paths: Sequence[str]) -> tuple[object, ...]:
        """Something that changes whenever one of ``paths`` (files or directories) is
        written, replaced or has entries added or removed: (inode, size, mtime, ctime) of
        each (ctime cannot be set back), None for one that is missing."""
        out: list[object] = []
        for path in paths:
            try:
                st = os.stat(self.local_path(path))
            except OSError:
                out.append(None)
                continue
            out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return tuple(out)

    def walk(self, prefix: str) -> Sequence[FileInfo]:
        """Every file under the directory ``prefix``, at any depth (empty if missing);
        symbolic links are not followed. Sorted by path."""
        top = self.local_path(prefix)
        out: list[FileInfo] = []
        for here, dirs, names in os.walk(top):
            dirs.sort()
            rel = os.path.relpath(here, self.root).replace(os.sep, "/")
            for name in names:
                try:
                    st = os.lstat(os.path.join(here, name))
                except FileNotFoundError:  # removed while listing
                    continue
                out.append(FileInfo(f"{rel}/{name}", st.st_size, st.st_mtime_ns))
        return sorted(out, key=lambda f: f.path)

    def remove_empty_dir(self, path: str) -> None:
        """Remove the directory ``path`` if it exists and is empty."""
        try:
            os.rmdir(self.local_path(path))
        except OSError:
            pass


def _remove_quietly(path: str) -> None:
    """Remove a temp file of ours, if it is there; a failure leaves it (``.tmp-`` names
    are never listed as table files)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def open_store(uri: str, storage_options: Mapping[str, str] | None = None) -> ObjectStore:
    """The store for ``uri``, read as pylance reads it (``storage/uris.py``): a local path
    (taken literally) or ``file:`` URI (decoded), or an object store URI
    (``s3://bucket/prefix``; ``gs://`` and ``az://`` go through the same backend) opened
    with pylance-style ``storage_options``.

    Raises
    ------
    InvalidUriError
        For a location pylance cannot use either (``ab:t.lance``, ``s3:bucket``, control
        characters).
    InvalidStorageOptionError
        For an option value that is not a ``str`` (a local table checks them too).
    NotSupportedYetError
        For a scheme pylance serves and this library does not (``memory://``, ``hf://``).
    """
    location = parse_location(uri)
    if location.is_local:
        check_values(storage_options or {})
        return LocalObjectStore(location.path)
    return RemoteObjectStore(uri, storage_options)
