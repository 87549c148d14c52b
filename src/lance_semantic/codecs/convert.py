"""Lossless conversion from a data file's physical layout to a field's output layout
(layer L2; spec "Output Encoding", "Contract and Invariants: Lossless conversion", and the
failure row "The requested output layout cannot hold a value").

A converter is resolved once per (file layout, output layout) pair and applied per batch
(the pyiceberg ``resolve_reader`` shape). Conversions never truncate: when the output
layout cannot hold a whole batch (32-bit offsets over :data:`OFFSET_LIMIT` bytes, a
dictionary key too narrow for the distinct values) :func:`convert_batch` emits smaller
batches; when it cannot hold a single value it raises :class:`OutputEncodingOverflowError`.

Compaction converts with the same resolver, into the merged layout of a column's data files
(:mod:`lance_semantic.dataset.compaction.layout`), and says so with ``widen=True``: that
layout only widens a source (32 -> 64-bit offsets, decimal128 -> decimal256, narrow -> wide
dictionary keys) or decodes a dictionary into a plain layout, so a dictionary is re-keyed
rather than encoded afresh, a ``fixed_size_list`` converts its items, and an extension type
is cast as it is (a merged layout keeps nested extension types and never renders JSON text).
Decoding into a 32-bit layout is the one conversion that can outgrow a batch; it raises
:class:`DoesNotFit` as reads do, so :func:`convert_batch` splits the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import OutputEncodingOverflowError
from ..types import layouts
from ..types.casts import cast as safe_cast
from ..types.families import is_large, is_list_like, is_string_like, is_string_or_binary
from .json import decode_jsonb

__all__ = [
    "OFFSET_LIMIT",
    "Converter",
    "identity",
    "nulls_of",
    "resolve_converter",
    "convert_batch",
    "DoesNotFit",
    "encoding_name",
    "longest_list",
]

#: the read side's 32-bit offset limit (``types.layouts.OFFSET_LIMIT``); tests may lower it
OFFSET_LIMIT = layouts.OFFSET_LIMIT

Converter = Callable[[pa.Array], pa.Array]


class DoesNotFit(Exception):
    """A batch is too big for the output layout; ``value_size`` is its largest value,
    counted in ``unit`` (bytes, items or distinct values)."""

    def __init__(self, path: str, value_size: int, encoding: str, unit: str = "bytes") -> None:
        super().__init__(path, value_size, encoding, unit)
        self.path = path
        self.value_size = value_size
        self.encoding = encoding
        self.unit = unit


def encoding_name(dt: pa.DataType) -> str:
    names = {
        pa.string(): "utf8",
        pa.large_string(): "large_utf8",
        pa.string_view(): "utf8_view",
        pa.binary(): "binary",
        pa.large_binary(): "large_binary",
        pa.binary_view(): "binary_view",
    }
    if pa.types.is_dictionary(dt):
        return f"dictionary:{dt.index_type}:{encoding_name(dt.value_type)}"
    if pa.types.is_list(dt):
        return "list"
    if pa.types.is_large_list(dt):
        return "large_list"
    return names.get(dt, str(dt))


def _lengths(arr: pa.Array) -> pa.Array:
    views = (pa.string_view(), pa.binary_view())
    return pc.binary_length(arr.cast(pa.large_binary()) if arr.type in views else arr)


def _total_bytes(arr: pa.Array) -> int:
    """Value bytes of a plain, large or view string/binary array; O(1) for offset layouts
    (the span of the offsets, which also holds for slices)."""
    if len(arr) == 0:
        return 0
    if arr.type in (pa.string_view(), pa.binary_view()):
        return int(pc.sum(_lengths(arr)).as_py() or 0)
    width = 8 if arr.type in (pa.large_string(), pa.large_binary()) else 4
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64 if width == 8 else np.int32)
    return int(offsets[arr.offset + len(arr)] - offsets[arr.offset])


def _largest(arr: pa.Array) -> int:
    """The largest value's byte length (only needed for the overflow error)."""
    return int(pc.max(_lengths(arr)).as_py() or 0) if len(arr) else 0


def longest_list(arr: pa.Array) -> int:
    """The most items any one list value holds (only needed for the overflow error)."""
    return int(pc.max(pc.list_value_length(arr)).as_py() or 0) if len(arr) else 0


def _to_plain(path: str, target: pa.DataType) -> Converter:
    """Any string/binary layout (plain, large, view, dictionary) -> a plain or view layout."""
    needs_check = target in (pa.string(), pa.binary())

    def convert(arr: pa.Array) -> pa.Array:
        if arr.type == target:
            return arr
        if pa.types.is_dictionary(arr.type):  # decode into the 64-bit layout, then check
            value = arr.type.value_type
            wide = pa.large_string() if is_string_like(value) else pa.large_binary()
            arr = arr.cast(wide)
        if needs_check:
            if _total_bytes(arr) > OFFSET_LIMIT:
                raise DoesNotFit(path, _largest(arr), encoding_name(target))
            if arr.offset and is_large(arr.type):
                # Arrow's cast checks the absolute 64-bit offsets of a slice, not its span
                arr = pa.concat_arrays([arr])
        return safe_cast(arr, target)

    return convert


def _to_dictionary(path: str, target: pa.DictionaryType) -> Converter:
    plain = _to_plain(path, target.value_type)
    key = target.index_type
    capacity = (1 << (key.bit_width - (1 if pa.types.is_signed_integer(key) else 0))) - 1

    def convert(arr: pa.Array) -> pa.Array:
        if arr.type == target:
            return arr
        try:
            values = plain(arr)
        except DoesNotFit as e:  # the request was the dictionary, name it
            raise DoesNotFit(path, e.value_size, encoding_name(target)) from None
        encoded = pc.dictionary_encode(values)
        if len(encoded.dictionary) > capacity + 1:
            distinct = len(encoded.dictionary)
            raise DoesNotFit(path, distinct, encoding_name(target), "distinct values")
        return pa.DictionaryArray.from_arrays(encoded.indices.cast(key), encoded.dictionary)

    return convert


def _rekey(path: str, source: pa.DictionaryType, target: pa.DictionaryType) -> Converter:
    """A dictionary under a wider key (``widen``): the indices widen and the dictionary's
    values convert; nothing is decoded or encoded afresh."""
    values = resolve_converter(
        source.value_type, target.value_type, f"{path}.dictionary", widen=True
    )

    def convert(arr: pa.Array) -> pa.Array:
        return pa.DictionaryArray.from_arrays(
            arr.indices.cast(target.index_type), values(arr.dictionary)
        )

    return convert


def _to_list(path: str, source: pa.DataType, target: pa.DataType, widen: bool) -> Converter:
    child = resolve_converter(source.value_type, target.value_type, f"{path}.item", widen=widen)
    small = pa.types.is_list(target)

    def convert(arr: pa.Array) -> pa.Array:
        offsets = arr.offsets
        if small and len(arr) and pa.types.is_large_list(arr.type):
            span = offsets[-1].as_py() - offsets[0].as_py()
            if span > OFFSET_LIMIT:
                raise DoesNotFit(path, longest_list(arr), "list", "items")
        base = offsets[0].as_py() if len(arr) else 0
        values = child(arr.values.slice(base, (offsets[-1].as_py() - base) if len(arr) else 0))
        rebased = pc.subtract(offsets, base).cast(pa.int32() if small else pa.int64())
        cls = pa.ListArray if small else pa.LargeListArray
        return cls.from_arrays(
            rebased, values, type=target, mask=arr.is_null() if arr.null_count else None
        )

    return convert


def _to_fixed_size_list(path: str, source: pa.DataType, target: pa.DataType) -> Converter:
    """A fixed_size_list item by item (``widen``; both sides have the same list size)."""
    child = resolve_converter(source.value_type, target.value_type, f"{path}.item", widen=True)
    size = target.list_size

    def convert(arr: pa.Array) -> pa.Array:
        values = child(arr.values.slice(arr.offset * size, len(arr) * size))  # .values: unsliced
        mask = arr.is_null() if arr.null_count else None
        return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)

    return convert


def _to_struct(path: str, source: pa.StructType, target: pa.StructType, widen: bool) -> Converter:
    present = {source.field(i).name: i for i in range(source.num_fields)}
    plans: list[tuple[int | None, Converter | None, pa.Field]] = []
    for f in target:
        i = present.get(f.name)
        conv = (
            None
            if i is None
            else resolve_converter(source.field(i).type, f.type, f"{path}.{f.name}", widen=widen)
        )
        plans.append((i, conv, f))

    def convert(arr: pa.Array) -> pa.Array:
        children = [
            pa.nulls(len(arr), f.type) if i is None else conv(arr.field(i))  # type: ignore[misc]
            for i, conv, f in plans
        ]
        return pa.StructArray.from_arrays(
            children, fields=list(target), mask=arr.is_null() if arr.null_count else None
        )

    return convert


def _to_map(path: str, source: pa.MapType, target: pa.MapType, widen: bool) -> Converter:
    keys = resolve_converter(source.key_type, target.key_type, f"{path}.entries.key", widen=widen)
    items = resolve_converter(
        source.item_type, target.item_type, f"{path}.entries.value", widen=widen
    )

    def convert(arr: pa.Array) -> pa.Array:
        offsets = arr.offsets
        base = offsets[0].as_py() if len(arr) else 0
        end = offsets[-1].as_py() if len(arr) else 0
        k = keys(arr.keys.slice(base, end - base))  # .keys / .items ignore the slice
        v = items(arr.items.slice(base, end - base))
        rebased = pc.subtract(offsets, base)
        return pa.MapArray.from_arrays(
            rebased, k, v, type=target, mask=arr.is_null() if arr.null_count else None
        )

    return convert


def identity(arr: pa.Array) -> pa.Array:
    """The converter between equal layouts."""
    return arr


def nulls_of(target: pa.DataType) -> Converter:
    """The converter of a field no data file of a fragment holds: read as Arrow's null type
    (which every filter and take kernel takes, where views and extensions over them have
    none), it becomes nulls of its output type once the rows are chosen."""

    def convert(arr: pa.Array) -> pa.Array:
        return pa.nulls(len(arr), target)

    return convert


def resolve_converter(
    source: pa.DataType, target: pa.DataType, path: str, *, widen: bool = False
) -> Converter:
    """The converter from arrays of ``source`` to arrays of ``target`` (field ``path``).

    ``widen=True``: ``target`` is a merged layout of data files that holds every ``source``
    value as it is (compaction, see the module doc): dictionaries are re-keyed, fixed-size
    lists convert their items, extension types are cast as they are.

    >>> small = pa.dictionary(pa.int8(), pa.string())
    >>> wide = resolve_converter(small, pa.dictionary(pa.int32(), pa.string()), "s", widen=True)
    >>> out = wide(pa.array(["b", None, "a"]).dictionary_encode().cast(small))
    >>> out.type, out.dictionary.to_pylist()
    (DictionaryType(dictionary<values=string, indices=int32, ordered=0>), ['b', 'a'])
    """
    try:
        hash((source, target))
    except TypeError:  # some Python extension types are unhashable
        return _resolve.__wrapped__(source, target, path, widen)
    return _resolve(source, target, path, widen)


def _to_json_text(path: str, target: pa.BaseExtensionType) -> Converter:
    """JSONB (large_binary) -> arrow.json text, rendered as pylance renders it."""

    def convert(arr: pa.Array) -> pa.Array:
        text = decode_jsonb(arr, path=path)
        if text.type != target.storage_type:
            text = text.cast(target.storage_type)
        return pa.ExtensionArray.from_storage(target, text)

    return convert


def _via_storage(path: str, source: pa.DataType, target: pa.DataType) -> Converter:
    """Between an extension type and its storage (or another layout of it): extension
    values are their storage values (spec "Value preservation"), so convert the storage
    and wrap it in the target's extension type, if it has one."""
    inner = resolve_converter(
        source.storage_type if isinstance(source, pa.BaseExtensionType) else source,
        target.storage_type if isinstance(target, pa.BaseExtensionType) else target,
        path,
    )

    def convert(arr: pa.Array) -> pa.Array:
        values = inner(arr.storage if isinstance(arr, pa.ExtensionArray) else arr)
        if isinstance(target, pa.BaseExtensionType):
            return pa.ExtensionArray.from_storage(target, values)
        return values

    return convert


@lru_cache(maxsize=1024)
def _resolve(source: pa.DataType, target: pa.DataType, path: str, widen: bool) -> Converter:
    if source == target:
        return identity
    if not widen:
        if isinstance(target, pa.BaseExtensionType) and target.extension_name == "arrow.json":
            return _to_json_text(path, target)
        if isinstance(source, pa.BaseExtensionType) or isinstance(target, pa.BaseExtensionType):
            return _via_storage(path, source, target)
    if pa.types.is_struct(source) and pa.types.is_struct(target):
        return _to_struct(path, source, target, widen)
    if is_list_like(source, fixed=False) and is_list_like(target, fixed=False):
        return _to_list(path, source, target, widen)
    if widen and pa.types.is_fixed_size_list(source) and pa.types.is_fixed_size_list(target):
        return _to_fixed_size_list(path, source, target)
    if pa.types.is_map(source) and pa.types.is_map(target):
        return _to_map(path, source, target, widen)
    if widen and pa.types.is_dictionary(source) and pa.types.is_dictionary(target):
        return _rekey(path, source, target)
    if is_string_or_binary(source, dictionary=True) and pa.types.is_dictionary(target):
        return _to_dictionary(path, target)
    if is_string_or_binary(source, dictionary=True) and is_string_or_binary(
        target, dictionary=True
    ):
        return _to_plain(path, target)

    def cast(arr: pa.Array) -> pa.Array:
        return safe_cast(arr, target)

    return cast


def convert_batch(
    batch: pa.RecordBatch, converters: Sequence[Converter], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """``batch`` in ``schema``, as one batch or, when the output layout cannot hold it
    whole, as several smaller ones; never truncated."""
    try:
        arrays = [conv(col) for conv, col in zip(converters, batch.columns, strict=True)]
    except DoesNotFit as e:
        if batch.num_rows <= 1:
            raise OutputEncodingOverflowError(e.path, e.value_size, e.encoding, e.unit) from None
        half = batch.num_rows // 2
        yield from convert_batch(batch.slice(0, half), converters, schema)
        yield from convert_batch(batch.slice(half), converters, schema)
        return
    yield pa.RecordBatch.from_arrays(arrays, schema=schema)
