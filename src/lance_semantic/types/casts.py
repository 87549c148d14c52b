"""Casts of nested arrays that come out valid (layer L1).

pyarrow 26's cast of a struct whose children hold a ``list<struct<..., null>>`` returns an
invalid array: the ``null`` child of the inner struct keeps the length of one row instead of
the list's values ("Struct child array #1 has length smaller than expected for struct
array"), and any later ``RecordBatch.from_arrays`` or write refuses it. :func:`cast` casts
with pyarrow, checks the result (a cheap structural check, not a scan of the values), and
when it is invalid casts child by child instead: structs and lists are rebuilt around their
cast children with the same validity and offsets, leaves are cast by pyarrow.
"""

from __future__ import annotations

import pyarrow as pa

from lance_semantic.types.families import is_list_like

__all__ = ["cast"]


def cast(arr: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``arr`` as ``target`` (what ``arr.cast(target)`` gives, always valid).

    >>> inner = pa.struct([("a", pa.string()), ("b", pa.null())])
    >>> t = pa.struct([("x", pa.string_view()), ("l", pa.list_(inner))])
    >>> arr = pa.array([{"x": "v", "l": [None, None]}], t)
    >>> out = cast(arr, pa.struct([("x", pa.string()), ("l", pa.list_(inner))]))
    >>> out.validate(full=True)
    >>> out.to_pylist()
    [{'x': 'v', 'l': [None, None]}]
    """
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([cast(c, target) for c in arr.chunks], type=target)
    if not _nested(target):
        return arr.cast(target)
    try:
        out = arr.cast(target)
        out.validate()
        return out
    except pa.ArrowInvalid:  # (the cast may also fail its own check)
        return _by_child(arr, target)


def _nested(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or is_list_like(t, fixed=True)


def _by_child(arr: pa.Array, target: pa.DataType) -> pa.Array:
    mask = arr.is_null() if arr.null_count else None
    source = arr.type
    if pa.types.is_struct(target) and pa.types.is_struct(source):
        fields = [target.field(i) for i in range(target.num_fields)]
        children = [cast(arr.field(f.name), f.type) for f in fields]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if is_list_like(target, fixed=True) and is_list_like(source, fixed=False):
        if pa.types.is_fixed_size_list(target):
            return arr.cast(target)
        offsets = pa.concat_arrays(
            [arr.offsets]
        )  # unsliced: from_arrays takes no slice with a mask
        values = cast(arr.values, target.value_type)
        if pa.types.is_large_list(target):
            build = pa.LargeListArray.from_arrays
            offsets = offsets.cast(pa.int64())
        else:
            build = pa.ListArray.from_arrays
            offsets = offsets.cast(pa.int32())
        return build(offsets, values, type=target, mask=mask)
    if pa.types.is_fixed_size_list(target) and pa.types.is_fixed_size_list(source):
        start, stop = arr.offset * source.list_size, (arr.offset + len(arr)) * source.list_size
        values = cast(arr.values.slice(start, stop - start), target.value_type)
        return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)
    return arr.cast(target)
