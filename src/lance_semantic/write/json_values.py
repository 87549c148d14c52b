"""The write side of the one value-transforming core type, ``json`` (layer L4; spec
"Value-transforming types", failure row "json input is not valid JSON").

Recursive through struct, list, large_list, fixed_size_list and map children: every array
that reaches a ``json`` field of the table is turned into JSONB (``arrow.json`` text is
validated and converted; pre-encoded ``lance.json`` is checked and stored as it is).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..codecs import encode_json, validate_jsonb
from ..errors import InvalidJsonError, UnsupportedInputTypeError
from ..schema import Field
from ..types.families import is_list_like

__all__ = ["has_json", "encode_json_values", "JSONB_TYPE"]

JSONB_TYPE = pa.large_binary()
_TEXT = (pa.string(), pa.large_string(), pa.string_view())


def has_json(field: Field) -> bool:
    return any(f.logical_type == "json" for f in field.walk())


def _to_jsonb(arr: pa.Array, field: Field) -> pa.Array:
    dt = arr.type
    storage = dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt
    if storage in _TEXT:
        return encode_json(arr, path=field.path)
    if storage == JSONB_TYPE:  # lance.json: JSONB already; refuse garbage, store unchanged
        plain = arr.storage if isinstance(dt, pa.BaseExtensionType) else arr
        validate_jsonb(plain, path=field.path)
        return plain
    raise UnsupportedInputTypeError(field.path, "json", str(dt))


def _elements(values: pa.Array, field: Field, offsets: pa.Array) -> pa.Array:
    """The json values of list or map elements, an error's row turned into the row of the
    list that holds it (``offsets`` start at 0) plus the element's position in it."""
    try:
        return encode_json_values(values, field)
    except InvalidJsonError as err:
        starts = offsets.to_numpy(zero_copy_only=False)
        row = int(np.searchsorted(starts, err.row, side="right")) - 1
        raise err.in_element(row, err.row - int(starts[row])) from None


def encode_json_values(arr: pa.Array, field: Field) -> pa.Array:
    """``arr`` (the input for table field ``field``) with every json value as JSONB.

    Raises :class:`InvalidJsonError` whose ``row`` is a row of ``arr`` (for a value inside a
    list or map, the row holding it, with its positions in ``elements``).
    """
    if field.logical_type == "json":
        return _to_jsonb(arr, field)
    if not has_json(field):
        return arr
    dt = arr.type
    if isinstance(dt, pa.BaseExtensionType):
        arr, dt = arr.storage, dt.storage_type
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(dt):
        by_name = {c.name: c for c in field.children}
        names = [dt.field(i).name for i in range(dt.num_fields)]
        children = [
            encode_json_values(arr.field(i), by_name[n]) if n in by_name else arr.field(i)
            for i, n in enumerate(names)
        ]
        fields = [dt.field(i).with_type(c.type) for i, c in enumerate(children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if is_list_like(dt, fixed=False):
        offsets = arr.offsets
        base = offsets[0].as_py() if len(arr) else 0
        end = offsets[-1].as_py() if len(arr) else 0
        rebased = pc.subtract(offsets, base).cast(offsets.type)
        values = _elements(arr.values.slice(base, end - base), field.children[0], rebased)
        item = dt.value_field.with_type(values.type)
        cls = pa.ListArray if pa.types.is_list(dt) else pa.LargeListArray
        target = pa.list_(item) if pa.types.is_list(dt) else pa.large_list(item)
        return cls.from_arrays(rebased, values, type=target, mask=mask)
    if pa.types.is_fixed_size_list(dt):
        flat = (
            arr.flatten()
            if not arr.null_count
            else arr.values.slice(arr.offset * dt.list_size, len(arr) * dt.list_size)
        )
        size = dt.list_size
        values = _elements(flat, field.children[0], pa.array(np.arange(len(arr)) * size))
        target = pa.list_(dt.value_field.with_type(values.type), dt.list_size)
        return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)
    if pa.types.is_map(dt):
        entries = field.children[0]
        key_f, value_f = entries.children
        base = arr.offsets[0].as_py() if len(arr) else 0
        end = arr.offsets[-1].as_py() if len(arr) else 0
        offsets = pc.subtract(arr.offsets, base)
        keys = _elements(arr.keys.slice(base, end - base), key_f, offsets)  # .keys and .items
        items = _elements(arr.items.slice(base, end - base), value_f, offsets)  # ignore slices
        target = pa.map_(dt.key_field.with_type(keys.type), dt.item_field.with_type(items.type))
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    return arr
