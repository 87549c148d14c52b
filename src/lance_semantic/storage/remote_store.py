"""Tables on object stores (``s3://``, and through the same code ``gs://``, ``az://``)
through obstore, which wraps the Rust ``object_store`` crate that Lance itself uses
(layer L3).

Manifests are published with a conditional PUT (``If-None-Match: *``): when two writers
race for one version, the store accepts exactly one and answers 412 to the other, which
then rebases (commit/committer.py), exactly as on the local file system. Data files are
written and read by pylance's file codec, which is handed :meth:`RemoteObjectStore.uri`
and the same storage options.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import obstore
from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError
from obstore.store import from_url

from ..errors import NotSupportedYetError
from .file_info import FileInfo

__all__ = ["RemoteObjectStore", "REMOTE_SCHEMES"]

#: URI schemes served by this backend (only ``s3`` is tested, against SeaweedFS)
REMOTE_SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss")

#: storage options (pylance's names) that configure the HTTP client rather than the store
_CLIENT_OPTIONS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "timeout",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "user_agent",
        "http1_only",
        "http2_only",
    }
)
_BOOLEAN_CLIENT_OPTIONS = frozenset(
    {"allow_http", "allow_invalid_certificates", "http1_only", "http2_only"}
)

#: options pylance understands that configure Lance, not the object store
_LANCE_ONLY = frozenset({"download_retry_count", "new_table_enable_stable_row_ids"})


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def _split_options(options: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(store config, HTTP client options) of pylance-style ``storage_options``."""
    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    for key, value in options.items():
        k = key.lower()
        if k in _LANCE_ONLY:
            continue
        if k in _CLIENT_OPTIONS:
            client[k] = _truthy(value) if k in _BOOLEAN_CLIENT_OPTIONS else value
        else:
            config[k] = value
    return config, client


def _os_error(e: BaseError, what: str) -> OSError:
    """An obstore failure as the OSError the table layer handles (missing objects already
    are FileNotFoundError)."""
    err = OSError(f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    err.__cause__ = e
    return err


#: environment variables the object store clients read (part of a client's identity)
_ENV_PREFIXES = ("AWS_", "GOOGLE_", "AZURE_")


@lru_cache(maxsize=64)
def _client(
    root: str, options: tuple[tuple[str, str], ...], env: tuple[tuple[str, str], ...]
) -> Any:
    """One obstore client per table root, options and credential environment (building
    one takes ~10 ms, longer than a request to a nearby store)."""
    config, client = _split_options(dict(options))
    try:
        return from_url(root, config=config, client_options=client)  # type: ignore[call-overload]
    except (BaseError, ValueError) as e:
        raise ValueError(f"cannot open the object store {root}: {e}") from e


class RemoteObjectStore:
    """A table under ``scheme://bucket/prefix`` of an object store.

    Every path is relative to the table root; :meth:`uri` gives the full URI that pylance's
    file codec takes together with :attr:`storage_options`. The options use pylance's names
    (``aws_endpoint``, ``aws_region``, ``aws_access_key_id``, ``aws_secret_access_key``,
    ``aws_session_token``, ``allow_http``, ...); ``AWS_*`` environment variables fill in
    what they leave out (both here and in pylance)."""

    is_local = False

    def __init__(self, uri: str, storage_options: Mapping[str, str] | None = None) -> None:
        self.root = uri.rstrip("/")
        self.storage_options: dict[str, str] | None = dict(storage_options or {})
        env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)))
        self._store = _client(self.root, tuple(sorted(self.storage_options.items())), env)

    def __repr__(self) -> str:
        return f"RemoteObjectStore({self.root!r})"

    def uri(self, path: str) -> str:
        """The full URI of ``path`` (the root itself for ``""``)."""
        return f"{self.root}/{path}" if path else self.root

    def local_path(self, path: str) -> str:
        raise NotSupportedYetError(
            f"{self.uri(path)} as a local file (an object store has no local paths)"
        )

    def get(self, path: str) -> bytes:
        try:
            return bytes(obstore.get(self._store, path).bytes())
        except FileNotFoundError:
            raise
        except BaseError as e:
            raise _os_error(e, f"cannot read {self.uri(path)}") from e

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of ``path`` from ``offset`` (one ranged GET; fewer bytes
        where the object ends)."""
        if length <= 0:
            return b""
        try:
            return bytes(obstore.get_range(self._store, path, start=offset, length=length))
        except FileNotFoundError:
            raise
        except BaseError as e:
            if "range" in str(e).lower():  # past the end of the object
                return b""
            raise _os_error(e, f"cannot read {self.uri(path)}") from e

    def put(self, path: str, data: bytes) -> None:
        """Write ``data`` (a PUT is atomic: readers see the old object or the new one)."""
        try:
            obstore.put(self._store, path, data)
        except BaseError as e:
            raise _os_error(e, f"cannot write {self.uri(path)}") from e

    def put_if_absent(self, path: str, data: bytes) -> bool:
        """Publish ``data`` at ``path`` with ``If-None-Match: *``; False when the object
        already exists (412, or 409 from a store that saw a racing PUT)."""
        try:
            obstore.put(self._store, path, data, mode="create")
            return True
        except (AlreadyExistsError, PreconditionError):
            return False
        except BaseError as e:
            raise _os_error(e, f"cannot write {self.uri(path)}") from e

    def list(self, prefix: str) -> list[str]:
        """Names directly under ``prefix`` (objects and "directories"), sorted."""
        try:
            listed = obstore.list_with_delimiter(self._store, prefix or None)
        except FileNotFoundError:
            return []
        except BaseError as e:
            raise _os_error(e, f"cannot list {self.uri(prefix)}") from e
        names = [o["path"].rsplit("/", 1)[-1] for o in listed["objects"]]
        names.extend(p.rstrip("/").rsplit("/", 1)[-1] for p in listed["common_prefixes"])
        return sorted(n for n in names if n)

    def _head(self, path: str) -> Any:
        try:
            return obstore.head(self._store, path)
        except FileNotFoundError:
            raise
        except BaseError as e:
            raise _os_error(e, f"cannot look at {self.uri(path)}") from e

    def exists(self, path: str) -> bool:
        try:
            self._head(path)
            return True
        except FileNotFoundError:
            return False

    def delete(self, path: str) -> None:
        try:
            obstore.delete(self._store, path)
        except FileNotFoundError:
            pass
        except BaseError as e:
            raise _os_error(e, f"cannot delete {self.uri(path)}") from e

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
        out: list[FileInfo] = []
        try:
            for chunk in obstore.list(self._store, base):
                for meta in chunk:
                    path = meta["path"]
                    modified = meta["last_modified"]
                    ns = int(modified.timestamp()) * 1_000_000_000 + modified.microsecond * 1000
                    out.append(FileInfo(path, int(meta["size"]), ns))
        except FileNotFoundError:
            return []
        except BaseError as e:
            raise _os_error(e, f"cannot list {self.uri(prefix)}") from e
        return sorted(out, key=lambda f: f.path)

    @staticmethod
    def _store_prefix(prefix: str) -> str | None:
        return f"{prefix.strip('/')}/" if prefix.strip("/") else None

    def remove_empty_dir(self, path: str) -> None:
        """Nothing to do: an object store has no directories."""
