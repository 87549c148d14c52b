"""Checks of the arguments of the public API (layer L5).

Every public entry point (``ls.dataset``, ``write_dataset``, the ``Dataset`` and fragment
verbs, the merge builder, compaction) validates what the caller gave here, before it reads
or writes anything, so a bad argument never moves a table's version and always gets an
error that names the argument and what was given:

* a value of the wrong type is a ``TypeError`` (a float or a string where a row index or a
  count is expected, a string where a mapping is expected);
* a value of the right type that cannot be meant is a ``ValueError`` (a negative limit, an
  empty URI, an unknown mode);
* a SQL expression that does not give what its place needs (a filter that is not boolean,
  an update value that cannot be stored in its column) is an ``InvalidExpressionError``.

Integers follow pylance: numpy integers are accepted everywhere, and so are bools where
pylance takes them as integers (``limit=True`` is ``limit=1`` there too); where pylance
expects a bool (``nullable``, ``materialize_deletions``) an integer or string is refused.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import NotSupportedYetError
from ...storage import check_values

__all__ = [
    "check_uri",
    "check_int",
    "check_optional_int",
    "check_version",
    "check_reference",
    "check_row_indices",
    "check_str",
    "check_optional_str",
    "check_bool",
    "check_optional_bool",
    "check_real",
    "check_mode",
    "check_str_mapping",
    "check_storage_options",
    "check_columns",
    "check_column_names",
    "check_filter",
    "check_on",
    "shown",
]


def _shown(value: object) -> str:
    """How an offending value is shown: its repr (shortened) and its type."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


shown = _shown


# ---- scalars -----------------------------------------------------------------------------------


def check_uri(name: str, uri: object) -> str:
    """A table location: a non-empty ``str`` or ``os.PathLike`` (returned as ``str``, a
    leading ``~`` of a local path expanded)."""
    if isinstance(uri, os.PathLike):
        uri = os.fspath(uri)
    if isinstance(uri, bytes) or not isinstance(uri, str):
        raise TypeError(f"{name} must be a str or os.PathLike naming a table, got {_shown(uri)}")
    if not uri.strip():
        raise ValueError(f"{name} must not be empty")
    if "://" not in uri:  # a local path: ``~`` is the user's home, as in a shell
        uri = os.path.expanduser(uri)
    return uri


def check_int(name: str, value: object, *, minimum: int = 0) -> int:
    """An integer (Python, numpy, or a bool as pylance takes it) of at least ``minimum``."""
    if not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {_shown(value)}")
    number = int(value)
    if number < minimum:
        what = "non-negative" if minimum == 0 else f"at least {minimum}"
        raise ValueError(f"{name} must be {what}, got {number}")
    return number


def check_optional_int(name: str, value: object, *, minimum: int = 0) -> int | None:
    return None if value is None else check_int(name, value, minimum=minimum)


def check_version(version: object, *, name: str = "version") -> int | None:
    """A version number (``None``: the latest). A string is refused with the reason (where
    pylance reads it as a tag name, :func:`check_reference` is used instead), never looked
    up as a number."""
    if version is None:
        return None
    if isinstance(version, str):
        raise NotSupportedYetError(
            f"{name}={version!r}: a string names a tag in pylance; here give the version "
            f"number as an int"
        )
    if not isinstance(version, Integral):
        raise TypeError(f"{name} must be an int version number, got {_shown(version)}")
    return check_int(name, version, minimum=1)


def check_reference(
    reference: object, *, name: str = "version"
) -> int | str | tuple[str | None, int | None] | None:
    """What names a version, as in pylance: a version number, a tag name (``str``), a
    ``(branch, version)`` tuple, or ``None`` (the latest). Only the shape is checked here;
    the tag or branch is looked up by the caller."""
    if reference is None or isinstance(reference, str):
        return reference
    if isinstance(reference, tuple):
        if len(reference) != 2:
            raise TypeError(f"{name} as a tuple must be (branch, version), got {_shown(reference)}")
        branch, number = reference
        if branch is not None and not isinstance(branch, str):
            raise TypeError(f"{name}: the branch must be a str or None, got {_shown(branch)}")
        return (branch, check_version(number, name=name))
    if isinstance(reference, Integral):
        return check_version(reference, name=name)
    raise TypeError(
        f"{name} must be an int version number, a tag name (str) or a (branch, version) "
        f"tuple, got {_shown(reference)}"
    )


def check_str(name: str, value: object, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {_shown(value)}")
    if not empty and not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def check_optional_str(name: str, value: object, *, empty: bool = False) -> str | None:
    return None if value is None else check_str(name, value, empty=empty)


def check_bool(name: str, value: object) -> bool:
    """A real bool (numpy's included): ``1`` or ``"yes"`` is refused, as pylance does."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {_shown(value)}")
    return bool(value)


def check_optional_bool(name: str, value: object) -> bool | None:
    return None if value is None else check_bool(name, value)


def check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {_shown(value)}")
    return float(value)


def check_mode(name: str, value: object, allowed: Collection[str]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {_shown(value)}")
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


# ---- collections -------------------------------------------------------------------------------


def check_row_indices(name: str, indices: object) -> np.ndarray:
    """Row offsets or addresses: a sequence, numpy array or Arrow array of non-negative
    integers, as an ``int64`` (``uint64`` for values past its range) numpy array.

    A float (even ``1.0``), a string or a null is a ``TypeError`` / ``ValueError``, never
    rounded to a row (pylance refuses them the same way)."""
    if isinstance(indices, pa.ChunkedArray):
        indices = indices.combine_chunks()
    if isinstance(indices, pa.Array):
        if not (pa.types.is_integer(indices.type) or pa.types.is_boolean(indices.type)):
            raise TypeError(f"{name} must hold integers, got an Arrow array of {indices.type}")
        if indices.null_count:
            raise ValueError(f"{name} must not hold nulls")
        arr = indices.to_numpy(zero_copy_only=False)
    elif isinstance(indices, np.ndarray):
        arr = indices
    elif isinstance(indices, str | bytes | Mapping) or not isinstance(indices, Sequence | range):
        raise TypeError(
            f"{name} must be a sequence of integers (a list, numpy array or Arrow array), "
            f"got {_shown(indices)}"
        )
    else:
        for i, v in enumerate(indices):
            if not isinstance(v, Integral):
                raise TypeError(f"{name}[{i}] must be an integer, got {_shown(v)}")
        arr = np.asarray(indices) if len(indices) else np.empty(0, dtype=np.int64)
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integers, got a numpy array of {arr.dtype}")
    arr = arr.reshape(-1)
    if arr.dtype.kind == "i" and len(arr) and arr.min() < 0:
        first = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be non-negative, got {int(arr[first])} at position {first}")
    if arr.dtype.kind == "u" and len(arr) and arr.max() > np.iinfo(np.int64).max:
        return arr.astype(np.uint64)
    return arr.astype(np.int64, copy=False)


def check_str_mapping(
    name: str, value: object, *, values: str = "str", optional: bool = True
) -> Mapping[str, Any] | None:
    """A mapping whose keys are non-empty strings and whose values are strings (``values``
    names them in the message); ``None`` when ``optional``."""
    if value is None and optional:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict of str to {values}, got {_shown(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be str, got {_shown(key)}")
        if not key.strip():
            raise ValueError(f"{name} keys must not be empty")
        if not isinstance(item, str):
            raise TypeError(f"{name}[{key!r}] must be a {values}, got {_shown(item)}")
    return value


def check_storage_options(value: object) -> Mapping[str, str] | None:
    """``storage_options``: None or a mapping of str to str (a key or value of another
    type, ``True`` included, is an InvalidStorageOptionError naming it, as pylance refuses
    it with a TypeError)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"storage_options must be a dict of str to str, got {_shown(value)}")
    return check_values(value)


def check_columns(columns: object) -> None:
    """``columns``: ``None``, a column path, a sequence of paths, or a mapping of output
    names to SQL expressions."""
    if columns is None or isinstance(columns, str):
        return
    if isinstance(columns, Mapping):
        check_str_mapping("columns", columns, values="SQL expression (str)")
        return
    if not isinstance(columns, Sequence):
        raise TypeError(
            f"columns must be a list of column names or a dict of output names to SQL "
            f"expressions, got {_shown(columns)}"
        )
    check_column_names("columns", columns)


def check_column_names(name: str, value: object) -> None:
    """A column name or a sequence of them (``None`` is refused)."""
    if isinstance(value, str):
        return
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of column names, got {_shown(value)}")
    for i, c in enumerate(value):
        if not isinstance(c, str):
            raise TypeError(f"{name}[{i}] must be a str (a column name), got {_shown(c)}")


def check_filter(name: str, value: object, *, optional: bool = True) -> None:
    """A filter: a SQL string or a ``pyarrow.compute.Expression`` (``None`` if optional)."""
    if value is None and optional:
        return
    if not isinstance(value, str | pc.Expression):
        raise TypeError(
            f"{name} must be a SQL string or a pyarrow.compute.Expression, got {_shown(value)}"
        )


def check_on(on: object, table_columns: Sequence[str]) -> list[str]:
    """merge_insert keys: a column name or a non-empty sequence of them, all in the table;
    the table's names of them."""
    keys = [on] if isinstance(on, str) else on
    if isinstance(keys, Mapping) or not isinstance(keys, Sequence):
        raise TypeError(f"on must be a column name or a list of them, got {_shown(on)}")
    if not keys:
        raise ValueError("on must name at least one key column")
    named = []
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"on must hold column names (str), got {_shown(k)}")
        # as pylance: the column of exactly that name, else the one equal to it but for case
        same = [c for c in table_columns if c.lower() == k.lower()]
        if k not in table_columns and len(same) != 1:
            raise ValueError(
                f"merge key {k!r} is not a column of the table (columns: "
                f"{', '.join(table_columns)})"
            )
        named.append(k if k in table_columns else same[0])
    return named
