"""The Arrow side of the unchanged types and the legacy Arrow-mapped names (layer L1).

Spec "Data Files and the Physical Schema": a data file records its exact physical layout with
the existing Arrow-mapped strings (``large_string``, ``dict:string:int16:false``,
``decimal:128:10:2`` ...; docs/format/lance-format-facts.md §5). This module maps unchanged
primitive types to their one Arrow type and names any Arrow layout in that vocabulary, for error
messages and for fixed-size-list element strings. The policy tables live in :mod:`.layouts`.

>>> layout_name(arrow_type_of_primitive(Primitive.timestamp("us", "UTC")))
'timestamp:us:UTC'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import pyarrow as pa
import pyarrow.types as pat

from lance_semantic.types import metadata_keys
from lance_semantic.types.families import is_list_like, is_view
from lance_semantic.types.semantic import INTEGER_NAMES, Primitive

__all__ = [
    "EXTENSION_NAME_KEY",
    "BFLOAT16",
    "INTEGER_TYPES",
    "PRIMITIVE_ARROW_TYPES",
    "LEGACY_LEAF_TYPES",
    "LEGACY_PARAMETRIC_LEAVES",
    "arrow_type_of_primitive",
    "layout_name",
    "fsl_element_name",
    "with_child_fields",
    "child_fields",
    "has_dictionary",
    "has_view",
    "kernel_type",
    "ordered_like",
]

#: ``ARROW:extension:name`` as pyarrow metadata holds it (bytes)
EXTENSION_NAME_KEY = metadata_keys.EXTENSION_NAME_KEY.encode()
BFLOAT16 = metadata_keys.BFLOAT16_EXTENSION

#: the integer Arrow types by logical_type spelling (int8…int64, uint8…uint64)
INTEGER_TYPES: Mapping[str, pa.DataType] = MappingProxyType(
    {name: getattr(pa, name)() for name in INTEGER_NAMES}
)

#: the unchanged primitive types without parameters (semantic.PRIMITIVE_NAMES) -> Arrow type
PRIMITIVE_ARROW_TYPES: Mapping[str, pa.DataType] = MappingProxyType(
    {
        "null": pa.null(),
        "bool": pa.bool_(),
        **INTEGER_TYPES,
        "halffloat": pa.float16(),
        "float": pa.float32(),
        "double": pa.float64(),
        "date32:day": pa.date32(),
        "date64:ms": pa.date64(),
        **{f"time32:{u}": pa.time32(u) for u in ("s", "ms")},
        **{f"time64:{u}": pa.time64(u) for u in ("us", "ns")},
        **{f"duration:{u}": pa.duration(u) for u in ("s", "ms", "us", "ns")},
    }
)


def _timestamp(rest: str) -> pa.DataType:
    unit, _, tz = rest.partition(":")
    return pa.timestamp(unit, None if tz == "-" else tz)


#: parameterized primitives: head word -> Arrow type from the rest of the name
_PRIMITIVE_PARAMETRIC: Mapping[str, Callable[[str], pa.DataType]] = MappingProxyType(
    {"timestamp": _timestamp, "fixed_size_binary": lambda rest: pa.binary(int(rest))}
)


def arrow_type_of_primitive(t: Primitive) -> pa.DataType:
    """The one Arrow type of an unchanged primitive type.

    Examples
    --------
    >>> arrow_type_of_primitive(Primitive("halffloat"))
    DataType(halffloat)
    >>> arrow_type_of_primitive(Primitive.timestamp("ns", "America/New_York"))
    TimestampType(timestamp[ns, tz=America/New_York])
    >>> arrow_type_of_primitive(Primitive.fixed_size_binary(16))
    FixedSizeBinaryType(fixed_size_binary[16])
    """
    leaf = PRIMITIVE_ARROW_TYPES.get(t.name)
    if leaf is not None:
        return leaf
    head, _, rest = t.name.partition(":")
    return _PRIMITIVE_PARAMETRIC[head](rest)


#: the one table of legacy names without parameters: logical_type -> its one Arrow type
#: (the unchanged primitives, and string / binary in their 32- and 64-bit layouts)
LEGACY_LEAF_TYPES: Mapping[str, pa.DataType] = MappingProxyType(
    {
        **PRIMITIVE_ARROW_TYPES,
        "string": pa.string(),
        "large_string": pa.large_string(),
        "binary": pa.binary(),
        "large_binary": pa.large_binary(),
    }
)

#: the legacy names with parameters and no children: pyarrow predicate -> legacy string
LEGACY_PARAMETRIC_LEAVES: tuple[
    tuple[Callable[[pa.DataType], bool], Callable[[pa.DataType], str]], ...
] = (
    (pat.is_timestamp, lambda t: f"timestamp:{t.unit}:{t.tz or '-'}"),
    (pat.is_decimal128, lambda t: f"decimal:128:{t.precision}:{t.scale}"),
    (pat.is_decimal256, lambda t: f"decimal:256:{t.precision}:{t.scale}"),
    (pat.is_fixed_size_binary, lambda t: f"fixed_size_binary:{t.byte_width}"),
)

_LEAF_NAMES: Mapping[pa.DataType, str] = MappingProxyType(
    {
        **{t: name for name, t in LEGACY_LEAF_TYPES.items()},
        # no legacy spelling (legacy stores views as their plain layouts): name them apart
        pa.string_view(): "string_view",
        pa.binary_view(): "binary_view",
    }
)


def _list_name(dt: pa.DataType) -> str:
    base = "list" if pat.is_list(dt) else "large_list"
    value = dt.value_type
    storage = value.storage_type if isinstance(value, pa.BaseExtensionType) else value
    return f"{base}.struct" if pat.is_struct(storage) else base


#: parameterized layouts: pyarrow predicate -> legacy string
_PARAMETRIC_NAMES: tuple[
    tuple[Callable[[pa.DataType], bool], Callable[[pa.DataType], str]], ...
] = (
    *LEGACY_PARAMETRIC_LEAVES,
    (pat.is_struct, lambda t: "struct"),
    (pat.is_map, lambda t: "map"),
    (lambda t: is_list_like(t, fixed=False), _list_name),
    (
        pat.is_fixed_size_list,
        lambda t: f"fixed_size_list:{fsl_element_name(t.value_field)}:{t.list_size}",
    ),
    (
        pat.is_dictionary,
        lambda t: f"dict:{layout_name(t.value_type)}:{layout_name(t.index_type)}:false",
    ),
)


def layout_name(dt: pa.DataType) -> str:
    """The legacy Arrow-mapped string of an Arrow layout, for messages and data-file schemas.

    Views, which have no legacy string, are named ``string_view`` / ``binary_view``;
    extension types ``<name><<storage>>``; types Lance cannot store fall back to ``str(dt)``.

    Parameters
    ----------
    dt
        Any Arrow type.

    Returns
    -------
    str
        E.g. ``large_string``, ``dict:string:int16:false``, ``decimal:256:10:2``.

    Examples
    --------
    >>> layout_name(pa.large_string()), layout_name(pa.decimal256(10, 2))
    ('large_string', 'decimal:256:10:2')
    >>> layout_name(pa.dictionary(pa.int16(), pa.string()))
    'dict:string:int16:false'
    >>> layout_name(pa.list_(pa.float32(), 4)), layout_name(pa.json_())
    ('fixed_size_list:float:4', 'arrow.json<string>')
    """
    if isinstance(dt, pa.BaseExtensionType):
        return f"{dt.extension_name}<{layout_name(dt.storage_type)}>"
    leaf = _LEAF_NAMES.get(dt)
    if leaf is not None:
        return leaf
    for matches, name in _PARAMETRIC_NAMES:
        if matches(dt):
            return name(dt)
    return str(dt)


def fsl_element_name(item: pa.Field) -> str:
    """The element string of a fixed_size_list's item field, as pylance writes it.

    Examples
    --------
    >>> fsl_element_name(pa.field("item", pa.decimal128(5, 2)))
    'decimal:128:5:2'
    >>> meta = {"ARROW:extension:name": "lance.bfloat16"}
    >>> fsl_element_name(pa.field("item", pa.binary(2), metadata=meta))
    'lance.bfloat16'
    """
    dt = item.type
    metadata = item.metadata or {}
    extension = metadata.get(EXTENSION_NAME_KEY)
    if isinstance(dt, pa.BaseExtensionType):
        if dt.extension_name == BFLOAT16 and dt.storage_type == pa.binary(2):
            return BFLOAT16
    elif extension is not None:
        # an unregistered extension travels as item metadata over its storage
        if extension == BFLOAT16.encode() and dt == pa.binary(2):
            return BFLOAT16
        return f"{extension.decode(errors='replace')}<{layout_name(dt)}>"
    return layout_name(dt)


def with_child_fields(dt: pa.DataType, children: list[pa.Field]) -> pa.DataType:
    """The nested type ``dt`` rebuilt around new child fields: a struct's members, a list's
    or fixed-size list's item, a map's key and item (``dt`` itself otherwise).

    >>> with_child_fields(pa.list_(pa.int8()), [pa.field("item", pa.int16())])
    ListType(list<item: int16>)
    """
    if pa.types.is_struct(dt):
        return pa.struct(children)
    if pa.types.is_list(dt):
        return pa.list_(children[0])
    if pa.types.is_large_list(dt):
        return pa.large_list(children[0])
    if pa.types.is_fixed_size_list(dt):
        return pa.list_(children[0], dt.list_size)
    if pa.types.is_map(dt):
        return pa.map_(children[0], children[1], dt.keys_sorted)
    return dt


def child_fields(dt: pa.DataType) -> list[pa.Field]:
    """The child fields :func:`with_child_fields` takes back: a struct's members, a list's or
    fixed-size list's item, a map's key and item (none for other types, extension types
    included: their storage is theirs)."""
    if pa.types.is_struct(dt):
        return [dt.field(i) for i in range(dt.num_fields)]
    if is_list_like(dt, fixed=True):
        return [dt.value_field]
    if pa.types.is_map(dt):
        return [dt.key_field, dt.item_field]
    return []


def has_view(dt: pa.DataType, *, dictionaries: bool = False) -> bool:
    """Whether ``dt`` holds a view layout (or, with ``dictionaries``, a dictionary) at any
    depth (extension types are left alone: their storage is theirs)."""
    if is_view(dt):
        return True
    if dictionaries and pa.types.is_dictionary(dt):
        return True
    return any(has_view(c.type, dictionaries=dictionaries) for c in child_fields(dt))


def has_dictionary(dt: pa.DataType) -> bool:
    """Whether ``dt`` holds a dictionary at any depth, extension storage included.

    >>> has_dictionary(pa.list_(pa.dictionary(pa.int8(), pa.string())))
    True
    """
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    if pa.types.is_dictionary(dt):
        return True
    return any(has_dictionary(c.type) for c in child_fields(dt))


def kernel_type(dt: pa.DataType, *, dictionaries: bool = False, large: bool = False) -> pa.DataType:
    """``dt`` with every view replaced by utf8 / binary (``large``: the 64-bit layouts) and,
    with ``dictionaries``, every dictionary by its value type: the layout Arrow's kernels
    (filter, take, joins) run in.

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
    kids = [
        f.with_type(kernel_type(f.type, dictionaries=dictionaries, large=large))
        for f in child_fields(dt)
    ]
    return with_child_fields(dt, kids)


def ordered_like(dt: pa.DataType, like: pa.DataType) -> pa.DataType:
    """``dt`` with the members of every struct, at any depth, in the order of the struct at
    the same place in ``like`` where both hold the same member names (column order is free);
    layouts, nullability and metadata stay ``dt``'s. Anything else is left as it is.

    >>> b_a = pa.struct([("b", pa.int8()), ("a", pa.string())])
    >>> a_b = pa.struct([("a", pa.large_string()), ("b", pa.int8())])
    >>> ordered_like(pa.list_(b_a), pa.large_list(a_b))
    ListType(list<item: struct<a: string, b: int8>>)
    """
    kids, like_kids = child_fields(dt), child_fields(like)
    if not kids or not like_kids or pat.is_struct(dt) != pat.is_struct(like):
        return dt
    if pat.is_map(dt) != pat.is_map(like):
        return dt
    pairs: list[tuple[pa.Field, pa.Field | None]]
    if pat.is_struct(dt):
        by_name = {f.name: f for f in kids}
        names = [f.name for f in like_kids]
        if len(by_name) == len(kids) and sorted(by_name) == sorted(names):  # a permutation
            pairs = [(by_name[n], f) for n, f in zip(names, like_kids, strict=True)]
        else:  # other members: the input's order (the binding reports the difference)
            like_by_name = {f.name: f for f in like_kids}
            pairs = [(f, like_by_name.get(f.name)) for f in kids]
    else:  # a list's item, a map's key and item
        pairs = list(zip(kids, like_kids, strict=True))
    ordered = [f if g is None else f.with_type(ordered_like(f.type, g.type)) for f, g in pairs]
    return with_child_fields(dt, ordered)
