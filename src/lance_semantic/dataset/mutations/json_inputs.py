"""A json value joining rows of the table in a merge or an update (layer L5; spec
"Value-transforming types", failure row "json input is not valid JSON").

``merge_insert`` and ``update`` assemble batches in the table's read layout: target rows as
read, with source rows or SQL results put over them. A json value arriving there is read by
its own type -- ``arrow.json`` text over ``utf8``, ``large_utf8`` or ``utf8_view``, or
pre-encoded JSONB (``large_binary``, ``lance.json``) -- and brought into the layout of the
rows it joins, whatever the column's output encoding: text changes its width, text becomes
JSONB (validated here), JSONB becomes text rendered as a read renders it. The writer then
stores every value as JSONB, as for an insert. Only the values written are converted.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...codecs.convert import resolve_converter
from ...errors import InvalidJsonError
from ...schema import Field
from ...types.arrow_names import child_fields, with_child_fields
from ...write import encode_json_values

__all__ = ["conform_json", "on_rows", "plain_json"]

_TEXT = (pa.string(), pa.large_string(), pa.string_view())


def _storage(dt: pa.DataType) -> pa.DataType:
    return dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt


def _retyped(dt: pa.DataType, views: bool) -> pa.DataType:
    """``dt`` with every extension type as its storage (``views``: and every view as its
    64-bit layout)."""
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    if views and pa.types.is_string_view(dt):
        return pa.large_string()
    if views and pa.types.is_binary_view(dt):
        return pa.large_binary()
    kids = child_fields(dt)
    if not kids:
        return dt
    return with_child_fields(dt, [f.with_type(_retyped(f.type, views)) for f in kids])


def plain_json(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A source column holding json as plain storage values Arrow's kernels take (no
    extension types, 64-bit layouts for views), values unchanged: in a json field text is
    text and ``large_binary`` is JSONB, so the values keep their kind.

    (The extension types are dropped by a zero-copy view first: pyarrow 26 casts an
    extension array over ``utf8_view`` into garbage.)"""
    plain = _retyped(col.type, views=True)
    if plain == col.type:
        return col
    bare = _retyped(col.type, views=False)
    chunks = [c if c.type == bare else c.view(bare) for c in col.chunks]
    return pa.chunked_array([c if c.type == plain else c.cast(plain) for c in chunks], plain)


def conform_json(arr: pa.Array, field: Field, target: pa.DataType) -> pa.Array:
    """``arr`` (values of table field ``field``, which holds json, in an accepted input
    layout) as ``target``: json values read by their own type, other values cast.

    Raises :class:`InvalidJsonError` on a row of ``arr`` (with the element positions of a
    value inside a list or map) for text that is not JSON and is converted here.
    """
    if arr.type == target:
        return arr
    source, wanted = _storage(arr.type), _storage(target)
    if field.logical_type == "json" and source in _TEXT and wanted in _TEXT:
        # text to text: the same documents in another width (the writer validates them)
        plain = arr.storage if isinstance(arr, pa.ExtensionArray) else arr
        values = plain if source == wanted else plain.cast(wanted)
        if isinstance(target, pa.BaseExtensionType):
            return pa.ExtensionArray.from_storage(target, values)
        return values
    jsonb = encode_json_values(arr, field)  # every json value as JSONB, read by its type
    return resolve_converter(jsonb.type, target, field.path)(jsonb)


def on_rows(error: InvalidJsonError, rows: np.ndarray) -> InvalidJsonError:
    """``error``, raised on a row of an array of the caller's rows ``rows``, on the
    caller's row (its element positions kept)."""
    at = int(rows[error.row])
    error.at_offset(at - error.row)
    return error
