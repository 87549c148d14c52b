"""Calls into Rust (pylance's file codec, obstore) never let a panic reach a caller
(layer L3).

A Rust panic inside a pyo3 extension surfaces as ``pyo3_runtime.PanicException``, which
derives from ``BaseException`` (so ``except Exception`` does not see it), and each extension
has a class of its own by that name. :func:`guarded` turns one into a
:class:`~lance_semantic.errors.StorageError` naming the operation and the path. A refusal
of the codec that is the caller's to fix (null structs on data storage 2.0) becomes the
library error naming the field (:func:`unstorable_null_structs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LanceSemanticError, StorageError, UnsupportedTypeError

__all__ = ["is_panic", "guarded", "first_line", "unstorable_null_structs"]


def is_panic(e: BaseException) -> bool:
    """Whether ``e`` is a Rust panic surfaced by pyo3.

    >>> is_panic(ValueError("x"))
    False
    """
    cls = type(e)
    return cls.__name__ == "PanicException" and cls.__module__ == "pyo3_runtime"


def first_line(e: BaseException) -> str:
    """The first line of ``e``'s message (its class name when it has none).

    >>> first_line(OSError("LanceError(IO): not found\\nbacktrace ..."))
    'LanceError(IO): not found'
    """
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


@contextmanager
def guarded(
    operation: str, path: str, also: tuple[type[BaseException], ...] = ()
) -> Iterator[None]:
    """Run the block; a Rust panic in it, or an exception of the types ``also`` (that is
    not already a library error), becomes a ``StorageError(operation, path, ...)``.

    >>> with guarded("write the data file", "/t/data/x.lance", also=(OSError,)):
    ...     raise OSError("LanceError(IO): disk full")
    Traceback (most recent call last):
    ...
    lance_semantic.errors.StorageError: cannot write the data file /t/data/x.lance: \
LanceError(IO): disk full
    """
    try:
        yield
    except LanceSemanticError:
        raise
    except BaseException as e:
        if is_panic(e):
            raise StorageError(operation, path, f"Rust panic: {first_line(e)}") from e
        if also and isinstance(e, also):
            raise StorageError(operation, path, first_line(e)) from e
        raise


_NULL_STRUCTS = re.compile(r"struct field `([^`]*)` contains (\d+) null value")


def unstorable_null_structs(error: ValueError) -> UnsupportedTypeError | None:
    """The codec's refusal of null structs on data storage 2.0 (it stores no struct
    validity) as a library error naming the field; None for any other error."""
    found = _NULL_STRUCTS.search(str(error))
    if found is None:
        return None
    path, count = found.groups()
    return UnsupportedTypeError(
        path,
        "struct",
        f"{count} row(s) hold a null struct, which data storage version 2.0 cannot store "
        "(it keeps no struct validity; version 2.1 and later do)",
    )
