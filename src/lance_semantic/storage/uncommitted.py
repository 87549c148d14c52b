"""The one owner of the files a write puts in a table before its commit (layer L3).

Every path that writes data files, blob sidecars, deletion files or transaction files for
a commit that is not yet published registers them with one :class:`UncommittedFiles`, and
runs inside it as a context manager. The rule lives here, once:

* A file belongs to the table from the moment a manifest that may name it may have been
  written. The committer says when it starts to publish a manifest
  (:meth:`UncommittedFiles.publishing`) and how that ended (:meth:`~UncommittedFiles.settle`).
  A failure after that point (a lost answer, a full disk while the version hint is
  written, Ctrl-C) never deletes anything.
* Any other failure (the write fails, the commit conflicts, the manifest PUT is refused
  for certain) deletes every registered file, then lets the caller's first error
  propagate. A delete that fails is logged, never raised: it leaves an unreferenced file
  (``cleanup_old_versions`` removes those), never a changed error. The warning's record
  names the file as ``record.uncommitted_file`` (its path relative to the table root).
* :class:`~lance_semantic.errors.CommitOutcomeUnknownError` keeps the files: a published
  manifest may name them.
* Leaving the block normally keeps the files (they are the table's, or handed to the
  caller as uncommitted fragments of a two-phase write).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from types import TracebackType

from ..errors import CommitOutcomeUnknownError
from .object_store import ObjectStore
from .paths import DATA_DIR

__all__ = ["UncommittedFiles"]

_log = logging.getLogger("lance_semantic")


class UncommittedFiles:
    """The files one write created for a commit that is not published yet.

    ``data_names`` are names under ``data/`` (data files, and blob sidecars as
    ``<stem>/<id>.blob``): the writers append to it as each file comes into being. Other
    files (deletion files, transaction files) are added by path with :meth:`add`.

    >>> import tempfile
    >>> from lance_semantic.storage.object_store import LocalObjectStore
    >>> store = LocalObjectStore(tempfile.mkdtemp())
    >>> try:
    ...     with UncommittedFiles(store) as files:
    ...         store.put("data/a.lance", b"rows")
    ...         files.data_names.append("a.lance")
    ...         raise ValueError("the write failed")
    ... except ValueError:
    ...     pass
    >>> store.exists("data/a.lance")
    False
    """

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.data_names: list[str] = []
        self._paths: list[str] = []
        #: manifests whose publication started and has not been settled: path -> bytes
        self._pending: dict[str, bytes] = {}
        #: a manifest naming these files was (or may have been) published
        self._table_owns = False

    def add(self, path: str) -> str:
        """Register ``path`` (relative to the table root) as written; returns it."""
        self._paths.append(path)
        return path

    def add_all(self, paths: Iterable[str]) -> None:
        self._paths.extend(paths)

    def publishing(self, path: str, data: bytes) -> None:
        """The manifest ``data`` is about to be put at ``path``: from here on a failure
        may leave it published."""
        self._pending[path] = data

    def settle(self, path: str, *, ours: bool) -> None:
        """The publication of ``path`` ended: the store holds our manifest there
        (``ours``), or certainly never will (another writer's is there, or nothing was
        stored)."""
        self._pending.pop(path, None)
        if ours:
            self._table_owns = True

    def outcome_unknown(self) -> None:
        """Whether a manifest was published cannot be told: keep everything."""
        self._table_owns = True

    @property
    def paths(self) -> list[str]:
        """Every registered file, relative to the table root."""
        return [*(f"{DATA_DIR}/{n}" for n in self.data_names), *self._paths]

    def __enter__(self) -> UncommittedFiles:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            return
        if isinstance(exc, CommitOutcomeUnknownError) or self._may_be_published():
            if self.paths:
                _log.warning(
                    "lance-semantic: %s after a manifest of %s may have been published; "
                    "its %d new files are kept",
                    type(exc).__name__,
                    self.store.root,
                    len(self.paths),
                )
            return
        self.discard()

    def _may_be_published(self) -> bool:
        """Whether a manifest naming these files is, or may yet be, in the store."""
        if self._table_owns:
            return True
        for path, data in self._pending.items():
            if not self.store.is_local:
                return True  # a request in flight may still be applied by the server
            try:  # a local put has finished by now: the file is there, or never will be
                if self.store.get(path) == data:
                    return True
            except FileNotFoundError:
                continue
            except BaseException:  # noqa: BLE001 - cannot tell: keep the files
                return True
        return False

    def discard(self) -> None:
        """Delete every registered file (and the sidecar folders left empty). A delete
        that fails is logged; nothing here raises."""
        folders: set[str] = set()
        for path in self.paths:
            try:
                self.store.delete(path)
            except Exception as e:  # noqa: BLE001 - the caller's error is the one to report
                _log.warning(
                    "lance-semantic: could not remove uncommitted file %s: %s",
                    path,
                    e,
                    extra={"uncommitted_file": path},
                )
            head, _, _ = path.rpartition("/")
            if head.startswith(f"{DATA_DIR}/"):
                folders.add(head)
        for folder in sorted(folders, reverse=True):
            try:
                self.store.remove_empty_dir(folder)
            except Exception:  # noqa: BLE001 - an empty folder left behind is harmless
                pass
        self.data_names.clear()
        self._paths.clear()
