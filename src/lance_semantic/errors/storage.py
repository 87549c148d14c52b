"""Storage errors (layer L0): a failed store or file operation, an invalid table location, an
invalid storage option. Import them from :mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from .base import LanceSemanticError

__all__ = [
    "StorageError",
    "InvalidUriError",
    "InvalidStorageOptionError",
]


class StorageError(LanceSemanticError, OSError):
    """Raised when the table's storage fails an operation: a request to an object store
    that fails, or a call into pylance's file codec or obstore (Rust code) that panics or
    fails. ``operation`` says what was being done, ``path`` on which file or object,
    ``reason`` what went wrong. An ``OSError``, as pylance's own storage errors.

    >>> import lance_semantic as ls
    >>> e = ls.StorageError("write the data file", "s3://b/t/data/x.lance", "connection reset")
    >>> e.operation, e.path, isinstance(e, OSError)
    ('write the data file', 's3://b/t/data/x.lance', True)
    >>> str(e)
    'cannot write the data file s3://b/t/data/x.lance: connection reset'
    """

    def __init__(self, operation: str, path: str, reason: str, *, message: str = "") -> None:
        self.operation = operation
        self.path = path
        self.reason = reason
        super().__init__(message or f"cannot {operation} {path}: {reason}")

    def __str__(self) -> str:  # OSError's own __str__ would format errno / strerror
        return str(self.args[0])


class InvalidUriError(StorageError, ValueError):
    """Raised for a table location that pylance 14 cannot use either: a scheme it has no
    store for (``ab:t.lance`` is a URI of scheme ``ab``, as in pylance; ``./ab:t.lance`` is
    the local path), an object store URI without a bucket, a path with control characters
    or with percent-escapes that do not decode to UTF-8. ``uri`` is the location as given,
    ``reason`` why it is refused. Nothing is read or written.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> try:
    ...     ls.write_dataset(pa.table({"id": [1]}), "ab:t.lance")
    ... except ls.InvalidUriError as e:
    ...     print(e.uri, "|", e.reason)
    ab:t.lance | no object store for the scheme 'ab' (a location with a scheme is a URI)
    """

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        super().__init__("open", uri, reason, message=f"invalid table location {uri!r}: {reason}")


class InvalidStorageOptionError(StorageError, TypeError, ValueError):
    """Raised when ``storage_options`` cannot configure the store: a value that is not a
    ``str`` (pylance 14 takes strings only: ``"true"``, not ``True``), a boolean option whose
    value is none of ``true/false, 1/0, yes/no, on/off, y/n``, or a value the object store
    refuses. ``key`` names the option (None when the store does not say which), ``value``
    is the ``repr`` of its value (or None). Raised before anything is read or written.

    >>> import lance_semantic as ls
    >>> try:
    ...     ls.dataset("s3://bucket/t.lance", storage_options={"allow_http": True})
    ... except ls.InvalidStorageOptionError as e:
    ...     print(e.key, e.value, "|", e.reason)
    allow_http True | the value must be a str, not bool (pylance takes strings: 'true')
    """

    def __init__(self, key: str | None, value: str | None, reason: str) -> None:
        self.key = key
        self.value = value
        where = f"storage option {key!r}" if key is not None else "storage options"
        shown = f" = {value}" if value is not None else ""
        super().__init__(
            "configure the store with", where, reason, message=f"invalid {where}{shown}: {reason}"
        )
