"""Arrow layouts of the semantic types: the policy tables of the spec (layer L1).

Spec sections "Representation-only types", "Value-transforming types" and "Output Encoding":
per semantic type, the Arrow layouts a write accepts, the physical layouts data files hold,
and the output encodings a read may return (default first). The policy is data: tables keyed
by encoding name and pyarrow predicate families (``pyarrow.types.is_large_list`` ...).

Only the top level of a type is checked here; children of struct, list and map are fields of
their own and are checked recursively by the schema layer. Extension annotations other than
the core ones (``arrow.json``, ``lance.json``, ``lance.blob.v2``) are transparent: an extension
input is judged by its storage type, and whether its name matches the field's is the schema
layer's rule.

>>> from lance_semantic.types.semantic import STRING
>>> accepts_input(STRING, pa.large_string()), output_type_of(STRING, "dictionary:int16:utf8")
(True, DictionaryType(dictionary<values=string, indices=int16, ordered=0>))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import assert_never

import pyarrow as pa
import pyarrow.types as pat

from lance_semantic.errors import (
    InvalidOutputEncodingError,
    UnsupportedInputTypeError,
)
from lance_semantic.types.arrow_names import (
    INTEGER_TYPES,
    arrow_type_of_primitive,
    fsl_element_name,
    layout_name,
)
from lance_semantic.types.blob_layouts import BLOB_V2_EXTENSION, is_logical_v2_type
from lance_semantic.types.semantic import (
    MAX_DECIMAL128_PRECISION,
    MAX_DECIMAL_PRECISION,
    Binary,
    Blob,
    Decimal,
    FixedSizeList,
    Json,
    ListType,
    MapType,
    Primitive,
    SemanticType,
    String,
    StructType,
)

#: the most value bytes (and list items) an Arrow array with 32-bit offsets can hold
OFFSET_LIMIT = 2**31 - 1

__all__ = [
    "OFFSET_LIMIT",
    "DICTIONARY_KEYS",
    "OUTPUT_ENCODING_NAMES",
    "accepts_input",
    "is_physical_layout",
    "physical_layout_of",
    "output_encodings",
    "default_output_encoding",
    "is_known_output_encoding",
    "validate_output_encoding",
    "output_type_of",
    "encoding_of_layout",
    "arrow_type_of_primitive",
    "layout_name",
]

# ---- The policy tables ----

#: dictionary key spellings of ``dictionary:<key>:<value>`` -> index type (any integer)
DICTIONARY_KEYS: Mapping[str, pa.DataType] = INTEGER_TYPES
_DICTIONARY_KEY_NAMES = MappingProxyType({t: name for name, t in DICTIONARY_KEYS.items()})


@dataclass(frozen=True, slots=True)
class _VariableWidthFamily:
    """Layouts of string or binary: plain 32/64-bit offsets (physical), a view, dictionaries."""

    #: output encoding -> Arrow type; the physical layouts, default first, 64-bit second
    plain: Mapping[str, pa.DataType]
    view: str
    view_type: pa.DataType

    @property
    def encodings(self) -> tuple[str, ...]:
        dictionaries = (f"dictionary:{k}:{v}" for k in DICTIONARY_KEYS for v in self.plain)
        return (*self.plain, self.view, *dictionaries)

    def physical_of_view(self, fits_32bit: bool) -> pa.DataType:
        small, large = self.plain.values()
        return small if fits_32bit else large

    def is_dictionary_layout(self, dt: pa.DataType) -> bool:
        return (
            pat.is_dictionary(dt)
            and pat.is_integer(dt.index_type)
            and dt.value_type in self.plain.values()
        )

    def name_of(self, dt: pa.DataType) -> str:
        for name, t in (*self.plain.items(), (self.view, self.view_type)):
            if dt == t:
                return name
        value = next(n for n, t in self.plain.items() if dt.value_type == t)
        return f"dictionary:{_DICTIONARY_KEY_NAMES[dt.index_type]}:{value}"


#: spec table "Representation-only types", rows string and binary
_STRING_FAMILY = _VariableWidthFamily(
    MappingProxyType({"utf8": pa.string(), "large_utf8": pa.large_string()}),
    "utf8_view",
    pa.string_view(),
)
_BINARY_FAMILY = _VariableWidthFamily(
    MappingProxyType({"binary": pa.binary(), "large_binary": pa.large_binary()}),
    "binary_view",
    pa.binary_view(),
)

#: string and binary by semantic type class
_FAMILIES: Mapping[type, _VariableWidthFamily] = MappingProxyType(
    {String: _STRING_FAMILY, Binary: _BINARY_FAMILY}
)

#: row list: output encoding -> (predicate of the physical layout, constructor from the child)
_LIST_LAYOUTS: Mapping[
    str, tuple[Callable[[pa.DataType], bool], Callable[[pa.Field], pa.DataType]]
] = MappingProxyType(
    {"list": (pat.is_list, pa.list_), "large_list": (pat.is_large_list, pa.large_list)}
)

#: row decimal: output encoding -> (predicate, constructor, widest precision)
_DECIMAL_LAYOUTS: Mapping[
    str, tuple[Callable[[pa.DataType], bool], Callable[[int, int], pa.DataType], int]
] = MappingProxyType(
    {
        "decimal128": (pat.is_decimal128, pa.decimal128, MAX_DECIMAL128_PRECISION),
        "decimal256": (pat.is_decimal256, pa.decimal256, MAX_DECIMAL_PRECISION),
    }
)

#: value-transforming row json: accepted input extension -> its accepted storage types
_JSON_INPUTS: Mapping[str, frozenset[pa.DataType]] = MappingProxyType(
    {
        "arrow.json": frozenset({pa.string(), pa.large_string(), pa.string_view()}),
        "lance.json": frozenset({pa.large_binary()}),
    }
)
#: json output encoding -> Arrow type a read returns (lance.json is not a registered pyarrow
#: extension: the field carries it as ``ARROW:extension:name`` metadata over large_binary)
_JSON_OUTPUTS: Mapping[str, pa.DataType] = MappingProxyType(
    {"arrow.json": pa.json_(pa.string()), "lance.json": pa.large_binary()}
)
_JSON_PHYSICAL = pa.large_binary()

#: extension names owned by core semantic types: never transparent for another type
_CORE_EXTENSIONS = frozenset({*_JSON_INPUTS, "lance.blob.v2"})

#: every output encoding (spec "Output Encoding"; DESIGN.md §3) -> the type it belongs to
_OWNER: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(_STRING_FAMILY.encodings, "string"),
        **dict.fromkeys(_BINARY_FAMILY.encodings, "binary"),
        **dict.fromkeys(_LIST_LAYOUTS, "list"),
        **dict.fromkeys(_DECIMAL_LAYOUTS, "decimal"),
        **dict.fromkeys(_JSON_OUTPUTS, "json"),
    }
)
OUTPUT_ENCODING_NAMES: frozenset[str] = frozenset(_OWNER)

# ---- Accepted inputs and physical layouts ----


def _unwrap(dt: pa.DataType, extension_name: str | None) -> tuple[str | None, pa.DataType]:
    if isinstance(dt, pa.BaseExtensionType):
        return dt.extension_name, dt.storage_type
    return extension_name, dt


def _accepts_storage(t: SemanticType, dt: pa.DataType) -> bool:
    match t:
        case String() | Binary():
            family = _FAMILIES[type(t)]
            return (
                dt in family.plain.values()
                or dt == family.view_type
                or family.is_dictionary_layout(dt)
            )
        case ListType():
            return any(matches(dt) for matches, _ in _LIST_LAYOUTS.values())
        case Decimal():
            if not any(matches(dt) for matches, _, _ in _DECIMAL_LAYOUTS.values()):
                return False
            return bool(dt.precision == t.precision and dt.scale == t.scale)
        case StructType():
            return bool(pat.is_struct(dt))
        case MapType():
            # pylance refuses maps with sorted keys
            return bool(pat.is_map(dt) and not dt.keys_sorted)
        case Primitive():
            return bool(dt == arrow_type_of_primitive(t))
        case FixedSizeList():
            return (
                pat.is_fixed_size_list(dt)
                and dt.list_size == t.size
                and fsl_element_name(dt.value_field) == t.element
            )
        case Json():
            return False  # handled by accepts_input: the extension decides
        case Blob():
            return False  # handled by accepts_input: the extension decides
        case _:
            assert_never(t)


def accepts_input(t: SemanticType, dt: pa.DataType, *, extension_name: str | None = None) -> bool:
    """Whether ``dt`` is an accepted input layout for the top level of semantic type ``t``.

    Spec tables "Representation-only types" (physical layouts plus additional accepted input)
    and "Value-transforming types" (accepted input).

    Parameters
    ----------
    t
        The field's semantic type.
    dt
        The input Arrow type.
    extension_name
        The input field's ``ARROW:extension:name`` when ``dt`` is not itself an extension
        type (pyarrow has no ``lance.json`` type: it arrives as field metadata).

    Returns
    -------
    bool
        string: utf8, large_utf8, utf8_view, dictionary<int*, utf8 | large_utf8>; binary
        likewise; list: list, large_list; decimal:p:s: Decimal128/256(p, s); json: arrow.json
        over utf8 / large_utf8 / utf8_view, lance.json over large_binary; unchanged types:
        their one Arrow type.


    Examples
    --------
    >>> from lance_semantic.types.semantic import JSON, LIST, Decimal
    >>> accepts_input(LIST, pa.large_list(pa.int8())), accepts_input(LIST, pa.list_view(pa.int8()))
    (True, False)
    >>> [accepts_input(Decimal(9, 2), d) for d in (pa.decimal256(9, 2), pa.decimal128(9, 3))]
    [True, False]
    >>> accepts_input(JSON, pa.json_(pa.string_view())), accepts_input(JSON, pa.string())
    (True, False)
    >>> accepts_input(JSON, pa.large_binary(), extension_name="lance.json")
    True
    """
    extension, storage = _unwrap(dt, extension_name)
    if isinstance(t, Json):
        return storage in _JSON_INPUTS.get(extension or "", frozenset())
    if isinstance(t, Blob):  # v1 bytes, or the lance.blob.v2 logical struct
        if extension == BLOB_V2_EXTENSION:
            return is_logical_v2_type(storage)
        return extension is None and storage == pa.large_binary()
    if extension in _CORE_EXTENSIONS:
        return False
    return _accepts_storage(t, storage)


def physical_layout_of(
    t: SemanticType,
    dt: pa.DataType,
    *,
    fits_32bit: bool = True,
    extension_name: str | None = None,
    path: str = "",
) -> pa.DataType:
    """The layout an accepted input is written in (spec "Contract and Invariants").

    Representation-only and unchanged inputs pass through. A view becomes the plain layout
    that holds every value (32-bit offsets when ``fits_32bit``, else 64-bit); json becomes
    large_binary (JSONB; the field carries the ``lance.json`` extension).

    Parameters
    ----------
    t
        The field's semantic type.
    dt
        An accepted input type (see :func:`accepts_input`).
    fits_32bit
        Whether the view's values fit 32-bit offsets (the writer measures the data).
    extension_name
        As in :func:`accepts_input`.
    path
        The field path, for errors.

    Returns
    -------
    pyarrow.DataType
        The physical layout, never a view.

    Raises
    ------
    UnsupportedInputTypeError
        If ``dt`` is not an accepted input for ``t``.

    Examples
    --------
    >>> from lance_semantic.types.semantic import BINARY, STRING
    >>> physical_layout_of(STRING, pa.string_view()), physical_layout_of(STRING, pa.large_string())
    (DataType(string), DataType(large_string))
    >>> physical_layout_of(BINARY, pa.binary_view(), fits_32bit=False)
    DataType(large_binary)
    """
    if not accepts_input(t, dt, extension_name=extension_name):
        raise UnsupportedInputTypeError(path, str(t), layout_name(dt))
    if isinstance(t, Json):
        return _JSON_PHYSICAL
    family = _FAMILIES.get(type(t))
    if family is not None and _unwrap(dt, None)[1] == family.view_type:
        return family.physical_of_view(fits_32bit)
    return dt


def is_physical_layout(
    t: SemanticType, dt: pa.DataType, *, extension_name: str | None = None
) -> bool:
    """Whether ``dt`` may appear in a data file for a field of semantic type ``t``.

    The "Physical layouts in data files" column of the spec's tables: accepted inputs minus
    views; for json only large_binary carrying ``lance.json``.

    Examples
    --------
    >>> from lance_semantic.types.semantic import JSON, STRING
    >>> is_physical_layout(STRING, pa.large_string()), is_physical_layout(STRING, pa.string_view())
    (True, False)
    >>> is_physical_layout(JSON, pa.large_binary(), extension_name="lance.json")
    True
    """
    if isinstance(t, Json):
        extension, storage = _unwrap(dt, extension_name)
        return extension == "lance.json" and storage == _JSON_PHYSICAL
    if not accepts_input(t, dt, extension_name=extension_name):
        return False
    family = _FAMILIES.get(type(t))
    return family is None or _unwrap(dt, None)[1] != family.view_type


# ---- Output encodings ----


def output_encodings(t: SemanticType) -> tuple[str, ...]:
    """Every valid output encoding of ``t``, the default first (spec tables, last column).

    Unchanged types have one Arrow representation and no output encodings; blob's read modes
    belong to the Blob specification, so it has none here either.

    Examples
    --------
    >>> from lance_semantic.types.semantic import JSON, LIST, STRING, Decimal, Primitive
    >>> output_encodings(STRING)[:3], output_encodings(LIST), output_encodings(JSON)
    (('utf8', 'large_utf8', 'utf8_view'), ('list', 'large_list'), ('arrow.json', 'lance.json'))
    >>> output_encodings(Decimal(10, 2)), output_encodings(Decimal(40, 2))
    (('decimal128', 'decimal256'), ('decimal256',))
    >>> output_encodings(Primitive("int32"))
    ()
    """
    match t:
        case String() | Binary():
            return _FAMILIES[type(t)].encodings
        case ListType():
            return tuple(_LIST_LAYOUTS)
        case Decimal():
            # narrowest first: the smallest that holds p, then the other if it holds p too
            return tuple(
                n for n, (_, _, widest) in _DECIMAL_LAYOUTS.items() if t.precision <= widest
            )
        case Json():
            return tuple(_JSON_OUTPUTS)
        case Primitive() | StructType() | MapType() | FixedSizeList() | Blob():
            return ()
        case _:
            assert_never(t)


def default_output_encoding(t: SemanticType) -> str | None:
    """The encoding a read returns absent an override or field entry (None: unchanged type).

    Examples
    --------
    >>> from lance_semantic.types.semantic import BINARY, Decimal, Primitive
    >>> default_output_encoding(BINARY), default_output_encoding(Decimal(39, 0))
    ('binary', 'decimal256')
    >>> default_output_encoding(Primitive("int32")) is None
    True
    """
    encodings = output_encodings(t)
    return encodings[0] if encodings else None


def is_known_output_encoding(t: SemanticType, encoding: object) -> bool:
    """Whether a reader can honour ``encoding`` for ``t`` (otherwise: use the default).

    Examples
    --------
    >>> from lance_semantic.types.semantic import STRING
    >>> is_known_output_encoding(STRING, "utf8_view"), is_known_output_encoding(STRING, "utf16")
    (True, False)
    """
    return isinstance(encoding, str) and encoding in output_encodings(t)


def _why_invalid(t: SemanticType, encoding: object) -> str:
    """Why ``encoding`` is not an output encoding of ``t`` (it is known not to be one)."""
    if not isinstance(encoding, str):
        return "an output encoding is a string"
    if isinstance(t, Blob):
        return "blob read modes are defined by the Blob specification, not output encodings"
    if not output_encodings(t):
        return f"{t} has exactly one Arrow layout (unchanged type); it takes no output encoding"
    family = _FAMILIES.get(type(t))
    if encoding.startswith("dictionary:"):
        parts = encoding.split(":")
        if family is None:
            return f"dictionary encoding is a layout of string or binary values, not of {t}"
        if len(parts) != 3:
            return "expected dictionary:<key>:<value>"
        if parts[1] not in DICTIONARY_KEYS:
            return f"a dictionary key must be an integer type (int8…uint64), got {parts[1]!r}"
        values = " or ".join(family.plain)
        return f"the dictionary values of a {t} column are {values}, got {parts[2]!r}"
    valid = ", ".join(e for e in output_encodings(t) if not e.startswith("dictionary:"))
    valid += ", dictionary:<key>:<value>" if family is not None else ""
    if encoding not in OUTPUT_ENCODING_NAMES:
        return f"unknown output encoding (valid for {t}: {valid})"
    if isinstance(t, Decimal) and encoding in _DECIMAL_LAYOUTS:
        return f"{encoding} cannot hold precision {t.precision}; {t} needs decimal256"
    return f"{encoding} is an output encoding of {_OWNER[encoding]}, not of {t} (valid: {valid})"


def validate_output_encoding(t: SemanticType, encoding: str, *, path: str = "") -> None:
    """Refuse an output encoding that is invalid for ``t`` or its parameters.

    Spec "Failure Semantics": setting ``lance-schema:output-encoding`` to such a value fails
    the schema update. (Readers use :func:`is_known_output_encoding` and fall back instead.)

    Parameters
    ----------
    t
        The field's semantic type.
    encoding
        The proposed output encoding.
    path
        The field path, for the error.

    Raises
    ------
    InvalidOutputEncodingError
        If ``encoding`` is not in ``output_encodings(t)``: ``decimal128`` for precision above
        38, ``large_list`` for a string, a dictionary with a non-integer key or a value layout
        of the other family, anything for an unchanged type, malformed strings.

    Examples
    --------
    >>> from lance_semantic.types.semantic import STRING, Decimal
    >>> validate_output_encoding(STRING, "dictionary:uint8:large_utf8")
    >>> try:
    ...     validate_output_encoding(Decimal(40, 2), "decimal128", path="price")
    ... except InvalidOutputEncodingError as e:
    ...     print(e.field_path, e.encoding, e.why)
    price decimal128 decimal128 cannot hold precision 40; decimal:40:2 needs decimal256
    """
    if not is_known_output_encoding(t, encoding):
        raise InvalidOutputEncodingError(path, str(encoding), _why_invalid(t, encoding))


def output_type_of(
    t: SemanticType, encoding: str, *, child: pa.Field | None = None, path: str = ""
) -> pa.DataType:
    """The Arrow type a read returns for ``t`` in output encoding ``encoding``.

    Parameters
    ----------
    t
        The field's semantic type; a decimal's precision and scale come from it.
    encoding
        A valid output encoding of ``t``.
    child
        For list encodings: the item field, already resolved to its own output type.
    path
        The field path, for errors.

    Returns
    -------
    pyarrow.DataType
        ``dictionary:<key>:<value>`` gives ``pa.dictionary(key, value)``; ``arrow.json`` the
        JSON extension over utf8; ``lance.json`` large_binary (JSONB; the extension travels
        as field metadata).

    Raises
    ------
    InvalidOutputEncodingError
        If ``encoding`` is not valid for ``t``.
    TypeError
        If a list encoding is asked for without ``child``.

    Examples
    --------
    >>> from lance_semantic.types.semantic import LIST, Decimal
    >>> output_type_of(Decimal(10, 2), "decimal256")
    Decimal256Type(decimal256(10, 2))
    >>> output_type_of(LIST, "large_list", child=pa.field("item", pa.int32()))
    LargeListType(large_list<item: int32>)
    """
    validate_output_encoding(t, encoding, path=path)
    family = _FAMILIES.get(type(t))
    if family is not None:
        if encoding in family.plain:
            return family.plain[encoding]
        if encoding == family.view:
            return family.view_type
        _, key, value = encoding.split(":")
        return pa.dictionary(DICTIONARY_KEYS[key], family.plain[value])
    if isinstance(t, ListType):
        if child is None:
            raise TypeError(f"field '{path}': a {encoding} output type needs its child field")
        return _LIST_LAYOUTS[encoding][1](child)
    if isinstance(t, Decimal):
        return _DECIMAL_LAYOUTS[encoding][1](t.precision, t.scale)
    return _JSON_OUTPUTS[encoding]


def encoding_of_layout(
    t: SemanticType, dt: pa.DataType, *, extension_name: str | None = None, path: str = ""
) -> str | None:
    """The output encoding that reads back the input layout ``dt`` (spec "Output Encoding").

    A writer creating a column records it as the field's output encoding when it differs
    from :func:`default_output_encoding`.

    Parameters
    ----------
    t
        The field's semantic type.
    dt
        An accepted input type.
    extension_name
        As in :func:`accepts_input`.
    path
        The field path, for errors.

    Returns
    -------
    str or None
        The encoding name; None for unchanged types, which have none.

    Raises
    ------
    UnsupportedInputTypeError
        If ``dt`` is not an accepted input for ``t``.

    Examples
    --------
    >>> from lance_semantic.types.semantic import LIST, STRING, Decimal
    >>> encoding_of_layout(STRING, pa.string_view())
    'utf8_view'
    >>> encoding_of_layout(STRING, pa.dictionary(pa.int16(), pa.string()))
    'dictionary:int16:utf8'
    >>> encoding_of_layout(LIST, pa.large_list(pa.int8()))
    'large_list'
    >>> encoding_of_layout(Decimal(5, 1), pa.decimal256(5, 1))
    'decimal256'
    """
    if not accepts_input(t, dt, extension_name=extension_name):
        raise UnsupportedInputTypeError(path, str(t), layout_name(dt))
    extension, storage = _unwrap(dt, extension_name)
    family = _FAMILIES.get(type(t))
    if family is not None:
        return family.name_of(storage)
    if isinstance(t, ListType):
        return next(name for name, (matches, _) in _LIST_LAYOUTS.items() if matches(storage))
    if isinstance(t, Decimal):
        return next(n for n, (matches, _, _) in _DECIMAL_LAYOUTS.items() if matches(storage))
    if isinstance(t, Json):
        return extension
    return None
