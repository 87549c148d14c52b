"""The layout that Arrow's kernels run in (layer L4; spec "Output Encoding": views are
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

from .convert import DoesNotFit, resolve_converter

__all__ = ["has_view", "kernel_type", "kernel_schema", "to_kernel_layout", "to_layout"]


def _children(dt: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(dt):
        return [dt.field(i) for i in range(dt.num_fields)]
    if pa.types.is_list(dt) or pa.types.is_large_list(dt) or pa.types.is_fixed_size_list(dt):
        return [dt.value_field]
    if pa.types.is_map(dt):
        return [dt.key_field, dt.item_field]
    return []


def has_view(dt: pa.DataType, *, dictionaries: bool = False) -> bool:
    """Whether ``dt`` holds a view layout (or, with ``dictionaries``, a dictionary) at any
    depth (extension types are left alone: their storage is theirs)."""
    if pa.types.is_string_view(dt) or pa.types.is_binary_view(dt):
        return True
    if dictionaries and pa.types.is_dictionary(dt):
        return True
    return any(has_view(c.type, dictionaries=dictionaries) for c in _children(dt))


def kernel_type(dt: pa.DataType, *, dictionaries: bool = False, large: bool = False) -> pa.DataType:
    """``dt`` with every view replaced by utf8 / binary (``large``: the 64-bit layouts) and,
    with ``dictionaries``, every dictionary by its value type.

    Examples
    --------
    >>> kernel_type(pa.struct([("s", pa.string_view()), ("i", pa.int8())]))
    StructType(struct<s: string, i: int8>)
    >>> kernel_type(pa.list_(pa.binary_view()), large=True)
    ListType(list<item: large_binary>)
    >>> kernel_type(pa.dictionary(pa.int16(), pa.string()), dictionaries=True)
    DataType(string)
    """
    if not has_view(dt, dictionaries=dictionaries):
        return dt
    if pa.types.is_string_view(dt):
        return pa.large_string() if large else pa.string()
    if pa.types.is_binary_view(dt):
        return pa.large_binary() if large else pa.binary()
    if pa.types.is_dictionary(dt):
        return dt.value_type

    def child(f: pa.Field) -> pa.Field:
        return f.with_type(kernel_type(f.type, dictionaries=dictionaries, large=large))

    if pa.types.is_struct(dt):
        return pa.struct([child(f) for f in _children(dt)])
    if pa.types.is_list(dt):
        return pa.list_(child(dt.value_field))
    if pa.types.is_large_list(dt):
        return pa.large_list(child(dt.value_field))
    if pa.types.is_fixed_size_list(dt):
        return pa.list_(child(dt.value_field), dt.list_size)
    assert pa.types.is_map(dt)
    return pa.map_(child(dt.key_field), child(dt.item_field), dt.keys_sorted)


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
