"""Which field ids a data file stores, per data storage version (layer L2;
docs/format/lance-format-facts.md §4).

``DataFile.fields`` lists the field ids of the file's columns in file column order and
``DataFile.column_indices`` the column each one is stored in:

* 2.1 / 2.2 / 2.3: only leaf columns, in pre-order: primitives, fixed-size lists of
  primitives (one entry), empty structs and blob-v2 structs (one entry for the whole blob).
  Struct, list, large_list, map and fixed_size_list<struct> parents have no entry.
* 2.0: every field id in pre-order, except that a fixed_size_list<struct> is one column
  (its own id; its descendants are absent).
* legacy (major version 0): every field id, no column indices.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.schema.blob import BLOB_V2_EXTENSION, is_blob_v2
from lance_semantic.schema.field import Field

__all__ = [
    "BLOB_V2_EXTENSION",
    "data_file_field_ids",
    "leaf_fields",
    "check_storage_version_support",
]


def _is_fsl_of_struct(field: Field) -> bool:
    return field.logical_type.startswith("fixed_size_list:struct:")


def leaf_fields(fields: Sequence[Field]) -> Iterator[Field]:
    """The fields stored as columns of a 2.1+ data file, in pre-order (see module doc)."""
    for f in fields:
        if is_blob_v2(f) or not f.children:
            yield f
        else:
            yield from leaf_fields(f.children)


def _v2_0_fields(fields: Sequence[Field]) -> Iterator[Field]:
    for f in fields:
        yield f
        if not _is_fsl_of_struct(f):
            yield from _v2_0_fields(f.children)


def data_file_field_ids(
    fields: Sequence[Field], version: tuple[int, int]
) -> tuple[list[int], list[int]]:
    """``(DataFile.fields, DataFile.column_indices)`` for a file holding these fields.

    ``fields`` are the (top-level) table fields the file stores, in file column order;
    ``version`` is the data file's ``(major, minor)`` version.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from lance_semantic.schema.arrow import schema_from_arrow
    >>> s = pa.struct([("x", pa.int8()), ("y", pa.int8())])
    >>> ts = schema_from_arrow(pa.schema([("a", pa.int32()), ("s", s), ("b", pa.int8())]))
    >>> data_file_field_ids(ts.fields, (2, 2))
    ([0, 2, 3, 4], [0, 1, 2, 3])
    >>> data_file_field_ids(ts.fields, (2, 0))
    ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4])
    """
    major, minor = version
    if major == 0:
        return [f.id for top in fields for f in top.walk()], []
    if (major, minor) == (2, 0):
        ids = [f.id for f in _v2_0_fields(fields)]
    elif major == 2 and minor >= 1:
        ids = [f.id for f in leaf_fields(fields)]
    else:
        raise UnsupportedTypeError("<data file>", f"data storage version {major}.{minor}")
    return ids, list(range(len(ids)))


def check_storage_version_support(fields: Sequence[Field], version: tuple[int, int]) -> None:
    """Raise :class:`UnsupportedTypeError` for fields pylance 14 cannot write at ``version``.

    Maps need 2.2+; fixed_size_list<struct> is refused by 2.1 and legacy files
    (2.0 and 2.2+ accept it); blob-v2 columns need 2.2+.
    """
    for top in fields:
        for f in top.walk():
            reason = _unsupported_at(f, version)
            if reason:
                raise UnsupportedTypeError(f.path or f.name, f.logical_type, reason)


def _unsupported_at(field: Field, version: tuple[int, int]) -> str:
    label = f"{version[0]}.{version[1]}"
    if field.logical_type == "map" and version < (2, 2):
        return f"maps need data storage version 2.2 or later, not {label}"
    if _is_fsl_of_struct(field) and (version[0] == 0 or version == (2, 1)):
        return f"fixed_size_list<struct> is not supported by data storage version {label}"
    if is_blob_v2(field) and version < (2, 2):
        return f"blob v2 columns need data storage version 2.2 or later, not {label}"
    return ""
