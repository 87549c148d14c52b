"""Tables on object stores (``s3://``, and through the same code ``gs://``, ``az://``)
through obstore, which wraps the Rust ``object_store`` crate that Lance itself uses
(layer L3).

Manifests are published with a conditional PUT (``If-None-Match: *``): when two writers
race for one version, the store accepts exactly one and answers 412 to the other, which
then rebases (commit/committer.py), exactly as on the local file system. Data files are
written and read by pylance's file codec, which is handed :attr:`RemoteObjectStore.codec_root`
and the same storage options.

Every failure is a :class:`~lance_semantic.errors.StorageError` naming the operation and
the object (a missing object stays ``FileNotFoundError``). A request that is idempotent
(GET, HEAD, LIST, DELETE, a plain PUT) is tried again, up to :data:`ATTEMPTS` times in all
with a short backoff, when it fails in a way that may not last (obstore's ``GenericError``:
a connection reset, a lost or late answer, a body cut short, a 5xx after the client's own
retries): the client does not retry a LIST whose body was cut short, nor a DELETE (S3's
bulk ``POST ?delete``) whose answer was lost, and a DELETE tried again settles it (an
object already gone is deleted). A conditional PUT is never tried again here:
``storage/conditional.py`` settles those by reading back.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NoReturn, TypeVar
from urllib.parse import quote

import obstore
from obstore.exceptions import (
    AlreadyExistsError,
    BaseError,
    GenericError,
    PreconditionError,
    UnknownConfigurationKeyError,
)
from obstore.store import from_url

from ..errors import InvalidStorageOptionError, InvalidUriError, NotSupportedYetError, StorageError
from .file_info import FileInfo
from .options import StoreSettings, check_values, store_settings
from .panics import first_line, guarded, is_panic
from .uris import REMOTE_SCHEMES

__all__ = ["RemoteObjectStore", "REMOTE_SCHEMES", "ATTEMPTS"]

_T = TypeVar("_T")

#: tries of an idempotent request that fails in a way that may not last, and the pauses
#: between them (seconds)
ATTEMPTS = 3
_BACKOFF = (0.05, 0.25)
#: failures that will not pass by trying again (the request cannot be built, a bad setting)
_LASTING = re.compile(r"builder error|Config error", re.IGNORECASE)
#: a ranged read starting at or past the end of the object (S3 answers 416)
_PAST_END = re.compile(r"\b416\b|not satisfiable|InvalidRange|range starting at", re.IGNORECASE)


def _transient(e: BaseException) -> bool:
    """Whether failure ``e`` of a request may not happen again (obstore's GenericError:
    the network, the server's answer; not a panic, a refusal or a bad configuration)."""
    return isinstance(e, GenericError) and not _LASTING.search(str(e))


def _failed(e: BaseException, operation: str, path: str, hint: str = "") -> NoReturn:
    """Raise the obstore failure (or panic) ``e`` being handled as a StorageError naming
    ``operation`` and ``path``; any other exception (KeyboardInterrupt, ...) as it is. A
    StorageError is an OSError, which the table layer handles (missing objects stay
    FileNotFoundError). ``hint`` is added to a failure to build the request."""
    if is_panic(e):
        raise StorageError(operation, path, f"Rust panic: {first_line(e)}") from e
    if isinstance(e, BaseError):
        reason = f"{type(e).__name__}: {first_line(e)}"
        if hint and "builder error" in reason:
            reason += f" ({hint})"
        raise StorageError(operation, path, reason) from e
    raise  # noqa: PLE0704 -- called from the except block handling ``e``


def _plain_http_hint(settings: StoreSettings) -> str:
    """Why a request to an ``http://`` endpoint cannot be built: HTTP is not allowed."""
    endpoint = dict(settings.config).get("aws_endpoint", "")
    if endpoint.lower().startswith("http://") and not dict(settings.client).get("allow_http"):
        return (
            f"the endpoint {endpoint} is plain HTTP, which is refused unless allow_http is "
            "'true' (storage option, or AWS_ALLOW_HTTP in the environment)"
        )
    return ""


#: an obstore message about the location rather than the configuration
_URL_PROBLEM = re.compile(r"\burl\b|path", re.IGNORECASE)


def _open_failure(root: str, e: BaseException) -> StorageError:
    reason = first_line(e)
    if _URL_PROBLEM.search(reason):
        return InvalidUriError(root, reason)
    return InvalidStorageOptionError(None, None, f"the object store refuses them: {reason}")


@lru_cache(maxsize=64)
def _client(root: str, settings: StoreSettings) -> Any:
    """One obstore client per table root and configuration (building one takes ~10 ms,
    longer than a request to a nearby store). Keys a store other than S3 does not know are
    dropped, as pylance ignores them."""
    config = dict(settings.config)
    while True:
        try:
            with guarded("open the object store", root):
                return from_url(  # type: ignore[call-overload]
                    root,
                    config=config,
                    client_options=dict(settings.client),
                    retry_config=settings.retry_config(),
                )
        except UnknownConfigurationKeyError as e:
            unknown = re.search(r"key: '([^']*)'", str(e))
            if unknown is None or unknown.group(1) not in config:
                raise _open_failure(root, e) from e
            del config[unknown.group(1)]
        except (BaseError, ValueError) as e:
            raise _open_failure(root, e) from e


class RemoteObjectStore:
    """A table under ``scheme://bucket/prefix`` of an object store.

    Every path is relative to the table root; :meth:`uri` gives the full URI shown in
    messages, :attr:`codec_root` the URL that pylance's file codec takes together with
    :attr:`storage_options`. The options use pylance's names and its environment variables
    (``storage/options.py``)."""

    is_local = False

    def __init__(self, uri: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.root = uri.rstrip("/")
        self.storage_options: dict[str, str] | None = check_values(storage_options or {})
        scheme = uri.split(":", 1)[0].lower()
        settings = store_settings(scheme, self.storage_options, os.environ)
        self._store = _client(self.root, settings)
        self._hint = _plain_http_hint(settings)
        # the key prefix obstore decoded from the URI (pylance's rules: the same crate),
        # encoded again so that pylance decodes the same key from it
        authority = re.match(r"\s*[^:]*://[^/?#]*", uri)
        base = f"{scheme}://{authority.group(0).split('://', 1)[1]}" if authority else uri
        prefix = getattr(self._store, "prefix", None)
        self.codec_root = f"{base}/{quote(str(prefix), safe='/')}" if prefix else base

    def __repr__(self) -> str:
        return f"RemoteObjectStore({self.root!r})"

    def uri(self, path: str) -> str:
        """The full URI of ``path`` (the root itself for ``""``)."""
        return f"{self.root}/{path}" if path else self.root

    def local_path(self, path: str) -> str:
        raise NotSupportedYetError(
            f"{self.uri(path)} as a local file (an object store has no local paths)"
        )

    def _idempotent(self, operation: str, path: str, call: Callable[[], _T]) -> _T:
        """``call()``, a request that may be made again, tried up to :data:`ATTEMPTS` times
        while it fails in a way that may not last; a missing object stays
        ``FileNotFoundError``, any other failure is a StorageError (``_failed``)."""
        for attempt in range(ATTEMPTS):
            try:
                return call()
            except FileNotFoundError:
                raise
            except BaseException as e:
                if attempt + 1 < ATTEMPTS and _transient(e):
                    time.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
                    continue
                _failed(e, operation, self.uri(path), self._hint)
        raise AssertionError("unreachable")  # (the last attempt returns or raises)

    def get(self, path: str) -> bytes:
        return self._idempotent("read", path, lambda: bytes(obstore.get(self._store, path).bytes()))

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of ``path`` from ``offset`` (one ranged GET; fewer bytes
        where the object ends)."""
        if length <= 0:
            return b""

        def ranged() -> bytes:
            try:
                return bytes(obstore.get_range(self._store, path, start=offset, length=length))
            except BaseError as e:
                if _PAST_END.search(str(e)):
                    return b""
                raise

        return self._idempotent("read", path, ranged)

    def put(self, path: str, data: bytes) -> None:
        """Write ``data`` (a PUT is atomic: readers see the old object or the new one; it
        may be made again, as it leaves the same object)."""
        self._idempotent("write", path, lambda: obstore.put(self._store, path, data))

    def put_if_absent(self, path: str, data: bytes) -> bool:
        """Publish ``data`` at ``path`` with ``If-None-Match: *``; False when the object
        already exists (412, or 409 from a store that saw a racing PUT)."""
        try:
            obstore.put(self._store, path, data, mode="create")
            return True
        except (AlreadyExistsError, PreconditionError):
            return False
        except BaseException as e:
            _failed(e, "write", self.uri(path), self._hint)

    def list(self, prefix: str) -> list[str]:
        """Names directly under ``prefix`` (objects and "directories"), sorted."""
        try:
            listed = self._idempotent(
                "list", prefix, lambda: obstore.list_with_delimiter(self._store, prefix or None)
            )
        except FileNotFoundError:
            return []
        names = [o["path"].rsplit("/", 1)[-1] for o in listed["objects"]]
        names.extend(p.rstrip("/").rsplit("/", 1)[-1] for p in listed["common_prefixes"])
        return sorted(n for n in names if n)

    def _head(self, path: str) -> Any:
        return self._idempotent("look at", path, lambda: obstore.head(self._store, path))

    def exists(self, path: str) -> bool:
        try:
            self._head(path)
            return True
        except FileNotFoundError:
            return False

    def delete(self, path: str) -> None:
        """Remove ``path`` (nothing to do when it is missing). Tried again when its answer
        is lost: the object is gone either way."""
        try:
            self._idempotent("delete", path, lambda: obstore.delete(self._store, path))
        except FileNotFoundError:
            pass

    def size(self, path: str) -> int:
        return int(self._head(path)["size"])

    def state(self, paths: Sequence[str]) -> tuple[object, ...]:
        """Nothing to compare (all None): an object store has no cheap change marker for a
        "directory", so what this feeds (skipping the checks of a manifest opened before)
        is not used; on an object store those checks are string checks only."""
        return tuple(None for _ in paths)

    def walk(self, prefix: str) -> Sequence[FileInfo]:
        """Every object under ``prefix/`` (a recursive listing), sorted by path."""
        base = self._store_prefix(prefix)

        def listing() -> list[FileInfo]:  # (all pages again on a retry)
            out: list[FileInfo] = []
            for chunk in obstore.list(self._store, base):
                for meta in chunk:
                    modified = meta["last_modified"]
                    ns = int(modified.timestamp()) * 1_000_000_000 + modified.microsecond * 1000
                    out.append(FileInfo(meta["path"], int(meta["size"]), ns))
            return out

        try:
            return sorted(self._idempotent("list", prefix, listing), key=lambda f: f.path)
        except FileNotFoundError:
            return []

    @staticmethod
    def _store_prefix(prefix: str) -> str | None:
        return f"{prefix.strip('/')}/" if prefix.strip("/") else None

    def remove_empty_dir(self, path: str) -> None:
        """Nothing to do: an object store has no directories."""
