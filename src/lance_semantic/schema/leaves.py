"""The logical_type vocabulary under the legacy rules (layer L2; docs/format/lance-format-facts.md
§5).

Each Arrow type is stored as one ``logical_type`` string and, legacy rule, each string names
exactly one Arrow type. This module maps types both ways for the cases that need no child
fields (everything but struct, list, map and fixed_size_list<struct>, whose children
:mod:`lance_semantic.schema.arrow` handles), and knows the ``Field.encoding`` pylance 14
writes for each. JSON (``arrow.json`` text or ``lance.json`` JSONB) is the logical type
``json``; blob columns keep pylance's strings (see :mod:`lance_semantic.schema.blob`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import pyarrow as pa
import pyarrow.types as pat

from lance_semantic.errors import NotSupportedYetError, UnsupportedTypeError
from lance_semantic.schema.field import ENCODING
from lance_semantic.types.arrow_names import (
    LEGACY_LEAF_TYPES,
    LEGACY_PARAMETRIC_LEAVES,
    fsl_element_name,
)
from lance_semantic.types.families import is_list_like, is_string_or_binary
from lance_semantic.types.logical_type import DICTIONARY_KEY_NAMES
from lance_semantic.types.metadata_keys import (
    ARROW_JSON_EXTENSION,
    BFLOAT16_EXTENSION,
    BLOB_KEY,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    LANCE_JSON_EXTENSION,
)

__all__ = [
    "EXTENSION_NAME_KEY",
    "EXTENSION_METADATA_KEY",
    "BFLOAT16_EXTENSION",
    "is_bfloat16",
    "JSON_EXTENSIONS",
    "json_logical_type",
    "BLOB_METADATA_KEY",
    "LIST_LOGICAL_TYPES",
    "logical_type_of",
    "arrow_type_of_logical",
    "encoding_of",
    "parse_int",
    "unsupported",
]

JSON_EXTENSIONS = frozenset({ARROW_JSON_EXTENSION, LANCE_JSON_EXTENSION})
BLOB_METADATA_KEY = BLOB_KEY

# ---- The vocabulary tables (docs/format/lance-format-facts.md §5) ----

#: logical_type -> Arrow type, for every type without parameters beyond its name
_LEAF_ARROW: Mapping[str, pa.DataType] = LEGACY_LEAF_TYPES

#: Arrow type -> logical_type; the view types are stored as their plain counterparts
_LEAF_LOGICAL: Mapping[pa.DataType, str] = MappingProxyType(
    {
        **{t: name for name, t in _LEAF_ARROW.items()},
        pa.string_view(): "string",
        pa.binary_view(): "binary",
    }
)

#: Arrow types with parameters that still fold into one logical string (no children)
_PARAMETRIC = LEGACY_PARAMETRIC_LEAVES

#: dictionary values must be a one-word leaf: pylance cannot parse ``dict:<a:b>:<k>:false`` back
_DICT_VALUES = frozenset(name for name in _LEAF_ARROW if ":" not in name)
_DICT_KEYS = DICTIONARY_KEY_NAMES

#: ``lance.file.Field.encoding`` by logical type (anything else: PLAIN)
_ENCODING_BY_LOGICAL: Mapping[str, int] = MappingProxyType(
    {
        "null": ENCODING["NONE"],
        "struct": ENCODING["NONE"],
        **{n: ENCODING["VAR_BINARY"] for n, t in _LEAF_ARROW.items() if is_string_or_binary(t)},
        "json": ENCODING["VAR_BINARY"],
    }
)

#: logical types of list fields (one child) -> Arrow constructor
LIST_LOGICAL_TYPES: Mapping[str, Callable[[pa.Field], pa.DataType]] = MappingProxyType(
    {
        f"{k}{s}": c
        for k, c in (("list", pa.list_), ("large_list", pa.large_list))
        for s in ("", ".struct")
    }
)


def encoding_of(logical_type: str) -> int:
    """The ``Field.encoding`` pylance 14 writes for ``logical_type``
    (docs/format/lance-format-facts.md §5)."""
    if logical_type.startswith("dict:"):
        return ENCODING["DICTIONARY"]
    return _ENCODING_BY_LOGICAL.get(logical_type, ENCODING["PLAIN"])


def unsupported(path: str, dt: object, reason: str = "") -> UnsupportedTypeError:
    """The error for a type (or logical type) ``dt`` at ``path`` that Lance cannot store."""
    return UnsupportedTypeError(path, str(dt), reason)


def _storage(dt: pa.DataType) -> pa.DataType:
    return dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt


def json_logical_type(storage: pa.DataType, extension_name: str, path: str) -> str:
    """``json`` for ``arrow.json`` over utf8 / large_utf8 / utf8_view and for ``lance.json``
    over large_binary (pre-encoded JSONB); other storage is refused
    (docs/format/lance-format-facts.md §9: plain ``binary`` + ``lance.json`` is not JSON)."""
    text = (pa.string(), pa.large_string(), pa.string_view())
    if (extension_name == "arrow.json" and storage in text) or (
        extension_name == "lance.json" and storage == pa.large_binary()
    ):
        return "json"
    raise UnsupportedTypeError(path, f"{extension_name}<{storage}>", "not a JSON layout")


def is_bfloat16(item: pa.Field) -> bool:
    """Whether a fixed-size list's item field holds ``lance.bfloat16`` values, in either form
    pylance reads return: the registered ``lance.arrow.BFloat16Type``, or (when
    ``lance.arrow`` is not imported) ``fixed_size_binary(2)`` storage whose field carries
    ``ARROW:extension:name = lance.bfloat16``. Both are one type (docs/format/lance-format-facts.md
    §5)."""
    return fsl_element_name(item) == BFLOAT16_EXTENSION


# ---- Arrow type -> logical_type ----


def logical_type_of(dt: pa.DataType, path: str) -> str:
    """The Lance ``logical_type`` string of an Arrow type (docs/format/lance-format-facts.md §5).

    Extension types give the logical type of their storage. ``path`` names the field in
    errors.

    Raises
    ------
    UnsupportedTypeError
        If pylance 14 has no representation for the type (decimal32/64, intervals,
        list views, unions, run-end encoded, FSL of list/map/dict/extension, sorted maps, ...).

    Examples
    --------
    >>> logical_type_of(pa.timestamp("s", "+05:30"), "t")
    'timestamp:s:+05:30'
    >>> logical_type_of(pa.list_(pa.list_(pa.float32(), 2), 3), "v")
    'fixed_size_list:fixed_size_list:float:2:3'
    """
    if isinstance(dt, pa.BaseExtensionType):
        if dt.extension_name in JSON_EXTENSIONS:
            return json_logical_type(dt.storage_type, dt.extension_name, path)
        return logical_type_of(dt.storage_type, path)
    leaf = _LEAF_LOGICAL.get(dt)
    if leaf is not None:
        return leaf
    for matches, fmt in _PARAMETRIC:
        if matches(dt):
            return fmt(dt)
    if pat.is_struct(dt):
        return "struct"
    if is_list_like(dt, fixed=False):
        base = "list" if pat.is_list(dt) else "large_list"
        return base + ".struct" if pat.is_struct(_storage(dt.value_type)) else base
    if pat.is_map(dt):
        if dt.keys_sorted:
            raise unsupported(path, dt, "maps with keys_sorted=True are not supported")
        return "map"
    if pat.is_fixed_size_list(dt):
        return f"fixed_size_list:{_fsl_element_logical(dt.value_field, path)}:{dt.list_size}"
    if pat.is_dictionary(dt):
        return _dictionary_logical(dt, path)
    raise unsupported(path, dt)


def _fsl_element_logical(item_field: pa.Field, path: str) -> str:
    item = item_field.type
    if is_bfloat16(item_field):
        return BFLOAT16_EXTENSION
    if (item_field.metadata or {}).get(EXTENSION_NAME_KEY.encode()) == BFLOAT16_EXTENSION.encode():
        # pylance 14 refuses this too ("does not match the file schema")
        raise unsupported(path, item, "lance.bfloat16 values are fixed_size_binary(2)")
    if isinstance(item, pa.BaseExtensionType):
        raise unsupported(path, item, "fixed_size_list of an extension type")
    if pat.is_struct(item):
        return "struct"
    if pat.is_fixed_size_list(item) and pat.is_struct(_storage(item.value_type)):
        raise unsupported(path, item, "fixed_size_list of fixed_size_list of struct")
    element = logical_type_of(item, path)
    if element in ("list", "large_list", "list.struct", "large_list.struct", "map") or (
        element.startswith("dict:")
    ):
        raise unsupported(path, item, f"fixed_size_list of {element}")
    return element


def _dictionary_logical(dt: pa.DictionaryType, path: str) -> str:
    value = logical_type_of(dt.value_type, path)
    key = logical_type_of(dt.index_type, path)
    if value not in _DICT_VALUES or isinstance(dt.value_type, pa.BaseExtensionType):
        raise unsupported(path, dt, f"dictionary values of logical type {value}")
    if key not in _DICT_KEYS:
        raise unsupported(path, dt, f"dictionary keys of logical type {key}")
    return f"dict:{value}:{key}:false"


# ---- logical_type -> Arrow type ----


def parse_int(text: str, path: str, logical: str) -> int:
    """``int(text)``, a bad number in ``logical`` raising :class:`UnsupportedTypeError`."""
    try:
        return int(text)
    except ValueError:
        raise unsupported(path, logical, f"bad number {text!r}") from None


def _parse_timestamp(logical: str, path: str) -> pa.DataType:
    # the tz may itself contain ':' (e.g. "+05:30"): split the unit off, keep the rest whole
    parts = logical.split(":", 2)
    if len(parts) != 3 or parts[1] not in ("s", "ms", "us", "ns") or not parts[2]:
        raise unsupported(path, logical)
    return pa.timestamp(parts[1], None if parts[2] == "-" else parts[2])


def _parse_decimal(logical: str, path: str) -> pa.DataType:
    parts = logical.split(":")
    ctors = {"128": pa.decimal128, "256": pa.decimal256}
    if len(parts) != 4 or parts[1] not in ctors:
        raise unsupported(path, logical)
    precision, scale = parse_int(parts[2], path, logical), parse_int(parts[3], path, logical)
    try:
        return ctors[parts[1]](precision, scale)
    except (ValueError, TypeError, pa.ArrowInvalid) as e:
        raise unsupported(path, logical, str(e)) from e


def _parse_fixed_size_binary(logical: str, path: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) != 2:
        raise unsupported(path, logical)
    width = parse_int(parts[1], path, logical)
    if width < 0:
        raise unsupported(path, logical)
    return pa.binary(width)


def _parse_fixed_size_list(logical: str, path: str) -> pa.DataType:
    inner, _, size_text = logical[len("fixed_size_list:") :].rpartition(":")
    size = parse_int(size_text, path, logical)
    if not inner or size < 0:
        raise unsupported(path, logical)
    if inner == BFLOAT16_EXTENSION:
        meta = {EXTENSION_NAME_KEY: BFLOAT16_EXTENSION, EXTENSION_METADATA_KEY: ""}
        return pa.list_(pa.field("item", pa.binary(2), True, metadata=meta), size)
    if inner == "struct":
        raise unsupported(path, logical, "fixed_size_list:struct needs its child field")
    return pa.list_(pa.field("item", arrow_type_of_logical(inner, path), True), size)


def _parse_dictionary(logical: str, path: str) -> pa.DataType:
    parts = logical.split(":")
    if len(parts) != 4 or parts[1] not in _DICT_VALUES or parts[2] not in _DICT_KEYS:
        raise unsupported(path, logical)
    # the stored `ordered` flag is always false; pylance reads every dictionary back unordered
    return pa.dictionary(_LEAF_ARROW[parts[2]], _LEAF_ARROW[parts[1]], ordered=False)


_PARSERS: Mapping[str, Callable[[str, str], pa.DataType]] = MappingProxyType(
    {
        "timestamp": _parse_timestamp,
        "decimal": _parse_decimal,
        "fixed_size_binary": _parse_fixed_size_binary,
        "fixed_size_list": _parse_fixed_size_list,
        "dict": _parse_dictionary,
    }
)


def arrow_type_of_logical(logical_type: str, path: str = "") -> pa.DataType:
    """The Arrow type of a logical type that needs no child fields (not struct/list/map).

    Extension element types inside ``fixed_size_list:lance.bfloat16:n`` are returned as
    their storage with ``ARROW:extension:*`` item metadata (see :func:`arrow_type_of`).

    Examples
    --------
    >>> arrow_type_of_logical("timestamp:s:+05:30")
    TimestampType(timestamp[s, tz=+05:30])
    >>> arrow_type_of_logical("dict:string:int16:false")
    DictionaryType(dictionary<values=string, indices=int16, ordered=0>)
    """
    if logical_type == "json":
        return pa.json_(pa.string())
    if logical_type == "blob":
        # pylance 14 stores blob columns as large_binary / struct with markers
        # (docs/format/lance-format-facts.md §10)
        raise NotSupportedYetError("the logical type 'blob' (pylance 14 never writes it)")
    leaf = _LEAF_ARROW.get(logical_type)
    if leaf is not None:
        return leaf
    parser = _PARSERS.get(logical_type.split(":", 1)[0])
    if parser is None:
        raise unsupported(path, logical_type, "unknown logical type")
    return parser(logical_type, path)
