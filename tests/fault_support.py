"""In-process fault injection at every storage call of an operation.

:class:`Faults` patches the storage calls a table operation makes on a local disk -- the
store's gets, puts, put-if-absents, listings and deletes, and the data-file and sidecar
writers' opens, writes and closes (pylance's encoder writes the bytes) -- numbers them in
the order they happen, and at call ``at`` raises ``error`` either instead of the call
(``when="before"``) or after it took effect (``when="after"``: the manifest is published,
then Ctrl-C). A dry run counts an operation's calls, so a test can visit every one.
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from lance_semantic.storage import blobs, datafile
from lance_semantic.storage.object_store import LocalObjectStore

#: (owner, method name, kind): kind "write" calls change the disk, "read" ones do not
_CALLS: tuple[tuple[Any, str, str], ...] = (
    (LocalObjectStore, "get", "read"),
    (LocalObjectStore, "read_range", "read"),
    (LocalObjectStore, "list", "read"),
    (LocalObjectStore, "exists", "read"),
    (LocalObjectStore, "size", "read"),
    (LocalObjectStore, "put", "write"),
    (LocalObjectStore, "put_if_absent", "write"),
    (LocalObjectStore, "delete", "delete"),
    (datafile.DataFileWriter, "__init__", "write"),
    (datafile.DataFileWriter, "write", "write"),
    (datafile.DataFileWriter, "close", "write"),
    (blobs.BlobSidecarWriter, "dedicated", "write"),
    (blobs.BlobSidecarWriter, "packed", "write"),
    (blobs.BlobSidecarWriter, "close", "write"),
)


def disk_full(what: str) -> OSError:
    return OSError(errno.ENOSPC, "No space left on device (injected)", what)


@dataclass
class Call:
    index: int
    name: str
    kind: str
    path: str

    def __str__(self) -> str:
        return f"#{self.index} {self.name}({self.path})"


@dataclass
class Faults:
    """Numbered storage calls, and the one fault to inject among them."""

    at: int | None = None
    when: str = "before"
    error: Callable[[Call], BaseException] | None = None
    #: every delete raises PermissionError (a store that refuses deletes)
    refuse_deletes: bool = False
    calls: list[Call] = field(default_factory=list)
    fired: Call | None = None

    def _wrap(
        self, owner: Any, name: str, kind: str, real: Callable[..., Any]
    ) -> Callable[..., Any]:
        label = f"{owner.__name__}.{name}"

        @functools.wraps(real)
        def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
            path = str(args[0]) if args and isinstance(args[0], str) else getattr(obj, "name", "")
            here = Call(len(self.calls), label, kind, path)
            self.calls.append(here)
            if kind == "delete" and self.refuse_deletes:
                raise PermissionError(errno.EACCES, "deletes are refused (injected)", path)
            due = self.fired is None and self.at == here.index and self.error is not None
            if due and self.when == "before":
                self.fired = here
                raise self.error(here)  # type: ignore[misc]
            out = real(obj, *args, **kwargs)
            if due and self.when == "after":
                self.fired = here
                raise self.error(here)  # type: ignore[misc]
            return out

        return call

    @contextmanager
    def installed(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[Faults]:
        with monkeypatch.context() as m:
            for owner, name, kind in _CALLS:
                m.setattr(owner, name, self._wrap(owner, name, kind, getattr(owner, name)))
            yield self
