"""The layout that Arrow's kernels run in (layer L2; spec "Output Encoding": views are
output layouts only).

pyarrow has no ``filter``, ``take``, ``index_in`` / ``is_in`` or hash-join kernel for
``string_view`` / ``binary_view`` arrays, and its hash joins, ``index_in`` and ``group_by``
do not match dictionary arrays by value (nor unify differing dictionaries). So reads that
filter, take or join compute in a *kernel layout* -- the output layout with every view
replaced by its non-view equivalent (utf8 / binary, 64-bit only when the values need it),
and for rewrites and key matching optionally with every dictionary decoded -- and convert
to the view output layout last.
"""

from __future__ import annotations

import pyarrow as pa

from ..types.arrow_names import has_view, kernel_type
from .convert import DoesNotFit, resolve_converter

__all__ = ["has_view", "kernel_type", "kernel_schema", "to_kernel_layout", "to_layout"]


def kernel_schema(schema: pa.Schema, *, dictionaries: bool = False) -> pa.Schema:
    """``schema`` with every field in :func:`kernel_type` (names, nullability and metadata
    kept), or ``schema`` itself when nothing changes; the result of a read into it is
    converted by :mod:`.convert` as usual (a batch that does not fit 32-bit offsets is
    emitted as smaller batches)."""
    if not any(has_view(f.type, dictionaries=dictionaries) for f in schema):
        return schema
    fields = [f.with_type(kernel_type(f.type, dictionaries=dictionaries)) for f in schema]
    return pa.schema(fields, metadata=schema.metadata)


def to_kernel_layout(
    arr: pa.Array | pa.ChunkedArray, path: str, *, dictionaries: bool = False
) -> pa.Array | pa.ChunkedArray:
    """``arr`` in :func:`kernel_type` (values unchanged); 64-bit offsets only when the values
    do not fit 32-bit ones."""
    dt = arr.type
    if not has_view(dt, dictionaries=dictionaries):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        chunks = [to_kernel_layout(c, path, dictionaries=dictionaries) for c in arr.chunks]
        if len({c.type for c in chunks}) > 1:  # some chunks needed 64-bit offsets
            wide = kernel_type(dt, dictionaries=dictionaries, large=True)
            chunks = [resolve_converter(c.type, wide, path)(c) for c in chunks]
        target = chunks[0].type if chunks else kernel_type(dt, dictionaries=dictionaries)
        return pa.chunked_array(chunks, type=target)
    try:
        return resolve_converter(dt, kernel_type(dt, dictionaries=dictionaries), path)(arr)
    except DoesNotFit:
        wide = kernel_type(dt, dictionaries=dictionaries, large=True)
        return resolve_converter(dt, wide, path)(arr)


def to_layout(arr: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    """``arr`` (in a kernel layout) converted to its output layout ``target``; towards views
    that never fails (a view holds every value a utf8 or binary array holds)."""
    if arr.type == target:
        return arr
    return resolve_converter(arr.type, target, path)(arr)
