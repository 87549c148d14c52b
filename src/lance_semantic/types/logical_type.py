"""Parse and format ``logical_type`` strings (layer L1; spec "Semantic Types" and
"Compatibility and Migration / Upgrade"). No pyarrow here.

Canonical strings name a semantic type (``string``, ``decimal:10:2``, ``int32`` ...).
Legacy aliases (``large_string``, ``dict:string:int16:false``, ``decimal:256:10:2`` ...) are
what tables without ``FLAG_SEMANTIC_TYPES`` store; readers of flagged tables still interpret
them, as the canonical type plus the output encoding that reproduces the legacy read type
(the spec's upgrade table). Both vocabularies are one grammar table: exact spellings in
:data:`_EXACT`, parameterized ones by their head word in :data:`_PARAMETERIZED`.

>>> parse_logical_type("decimal:10:2")
Decimal(precision=10, scale=2)
>>> parse_any_logical_type("dict:string:int16:false")
(String(), 'dictionary:int16:utf8')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.types.semantic import (
    BINARY,
    BLOB,
    INTEGER_NAMES,
    JSON,
    LIST,
    MAP,
    MAX_DECIMAL128_PRECISION,
    PRIMITIVE_NAMES,
    STRING,
    STRUCT,
    Decimal,
    FixedSizeList,
    Primitive,
    SemanticType,
    _canonical_int,
)

__all__ = [
    "parse_logical_type",
    "parse_any_logical_type",
    "is_legacy_alias",
    "format_logical_type",
    "DICTIONARY_KEY_NAMES",
]


class _Parsed(NamedTuple):
    semantic_type: SemanticType
    #: the output encoding a legacy alias implies (None: the type's default)
    output_encoding: str | None
    legacy: bool


#: integer logical types a dictionary key may have (legacy ``dict:<value>:<key>:false``); the
#: output encoding spells them the same way (``dictionary:<key>:<value>``)
DICTIONARY_KEY_NAMES: frozenset[str] = frozenset(INTEGER_NAMES)

#: legacy dictionary value logical type -> (semantic type, output-encoding value layout)
_DICTIONARY_VALUES: Mapping[str, tuple[SemanticType, str]] = MappingProxyType(
    {
        "string": (STRING, "utf8"),
        "large_string": (STRING, "large_utf8"),
        "binary": (BINARY, "binary"),
        "large_binary": (BINARY, "large_binary"),
    }
)

#: exact spellings: canonical names, then the legacy aliases of the upgrade table
_EXACT: Mapping[str, _Parsed] = MappingProxyType(
    {
        **{name: _Parsed(Primitive(name), None, False) for name in sorted(PRIMITIVE_NAMES)},
        "string": _Parsed(STRING, None, False),
        "binary": _Parsed(BINARY, None, False),
        "list": _Parsed(LIST, None, False),
        "struct": _Parsed(STRUCT, None, False),
        "map": _Parsed(MAP, None, False),
        "json": _Parsed(JSON, None, False),
        # display name only (blob is stored as large_binary / struct + metadata); parsing it
        # keeps parse_logical_type(str(t)) == t for every semantic type
        "blob": _Parsed(BLOB, None, False),
        # the 64-bit string / binary names: the plain type read as its large layout
        **{
            name: _Parsed(semantic, layout, True)
            for name, (semantic, layout) in _DICTIONARY_VALUES.items()
            if name.startswith("large_")
        },
        "list.struct": _Parsed(LIST, None, True),
        "large_list": _Parsed(LIST, "large_list", True),
        "large_list.struct": _Parsed(LIST, "large_list", True),
    }
)


def _error(logical_type: str, reason: str, path: str) -> UnsupportedTypeError:
    return UnsupportedTypeError(path, logical_type, reason)


def _reason(e: UnsupportedTypeError) -> str:
    """The reason part of an error raised by a semantic type's constructor."""
    return str(e).removeprefix(f"field '{e.field_path}': type {e.type_name} is not supported: ")


def _parse_primitive(logical_type: str, path: str) -> _Parsed:
    try:
        return _Parsed(Primitive(logical_type), None, False)
    except UnsupportedTypeError as e:
        raise _error(logical_type, _reason(e), path) from None


def _parse_fixed_size_list(logical_type: str, path: str) -> _Parsed:
    element, _, size = logical_type.removeprefix("fixed_size_list:").rpartition(":")
    n = _canonical_int(size)
    if n is None:
        raise _error(logical_type, "expected fixed_size_list:<element>:<size>", path)
    try:
        return _Parsed(FixedSizeList(element, n), None, False)
    except UnsupportedTypeError as e:
        raise _error(logical_type, _reason(e), path) from None


def _parse_decimal(logical_type: str, path: str) -> _Parsed:
    parts = logical_type.split(":")[1:]
    numbers = [_canonical_int(p) for p in parts]
    if len(parts) not in (2, 3) or None in numbers:
        reason = "expected decimal:<p>:<s> (legacy: decimal:<128|256>:<p>:<s>)"
        raise _error(logical_type, reason, path)
    *width, precision, scale = (n for n in numbers if n is not None)
    try:
        semantic = Decimal(precision, scale)
    except UnsupportedTypeError as e:
        raise _error(logical_type, _reason(e), path) from None
    if not width:
        return _Parsed(semantic, None, False)
    if width == [128]:
        if precision > MAX_DECIMAL128_PRECISION:
            reason = f"decimal128 holds at most {MAX_DECIMAL128_PRECISION} digits"
            raise _error(logical_type, reason, path)
        return _Parsed(semantic, None, True)
    if width == [256]:
        # decimal256 is the default above 38 digits; below, it must be recorded to read back
        encoding = "decimal256" if precision <= MAX_DECIMAL128_PRECISION else None
        return _Parsed(semantic, encoding, True)
    raise _error(logical_type, "the legacy decimal width is 128 or 256", path)


def _parse_dictionary(logical_type: str, path: str) -> _Parsed:
    parts = logical_type.split(":")
    if len(parts) != 4 or parts[3] != "false":
        raise _error(logical_type, "expected dict:<value>:<key>:false", path)
    value, key = parts[1], parts[2]
    if key not in DICTIONARY_KEY_NAMES:
        reason = f"a dictionary key must be an integer type (int8…uint64), got {key}"
        raise _error(logical_type, reason, path)
    if value not in _DICTIONARY_VALUES:
        reason = (
            f"dictionaries of {value} values cannot be expressed under the semantic type "
            "contract (dictionary encoding is a layout of string or binary values only)"
        )
        raise _error(logical_type, reason, path)
    semantic, layout = _DICTIONARY_VALUES[value]
    return _Parsed(semantic, f"dictionary:{key}:{layout}", True)


#: parameterized spellings, by the word before the first ':'
_PARAMETERIZED: Mapping[str, Callable[[str, str], _Parsed]] = MappingProxyType(
    {
        "timestamp": _parse_primitive,
        "fixed_size_binary": _parse_primitive,
        "fixed_size_list": _parse_fixed_size_list,
        "decimal": _parse_decimal,
        "dict": _parse_dictionary,
    }
)


def _parse(logical_type: str, path: str) -> _Parsed:
    if not isinstance(logical_type, str):
        raise _error(repr(logical_type), "a logical_type is a string", path)
    exact = _EXACT.get(logical_type)
    if exact is not None:
        return exact
    parser = _PARAMETERIZED.get(logical_type.partition(":")[0])
    if parser is None or ":" not in logical_type:
        raise _error(logical_type, "unknown logical type", path)
    return parser(logical_type, path)


def parse_logical_type(logical_type: str, *, path: str = "") -> SemanticType:
    """The semantic type named by a canonical ``logical_type`` string.

    Parameters
    ----------
    logical_type
        A canonical string, as writers of flagged tables store it.
    path
        The field path, for error messages.

    Returns
    -------
    SemanticType
        The type; ``str()`` of it gives ``logical_type`` back.

    Raises
    ------
    UnsupportedTypeError
        If the string is unknown or malformed, or is a legacy alias (use
        :func:`parse_any_logical_type` for those).

    Examples
    --------
    >>> parse_logical_type("string")
    String()
    >>> parse_logical_type("timestamp:us:+05:30")
    Primitive(name='timestamp:us:+05:30')
    >>> parse_logical_type("fixed_size_list:decimal:128:5:2:4")
    FixedSizeList(element='decimal:128:5:2', size=4)
    """
    parsed = _parse(logical_type, path)
    if parsed.legacy:
        reason = (
            f"legacy alias of {parsed.semantic_type}, not a canonical logical type "
            "(parse_any_logical_type accepts it)"
        )
        raise _error(logical_type, reason, path)
    return parsed.semantic_type


def parse_any_logical_type(logical_type: str, *, path: str = "") -> tuple[SemanticType, str | None]:
    """The semantic type of a canonical or legacy ``logical_type``, with its implied encoding.

    Implements the spec's upgrade table: a legacy alias maps to its canonical type plus the
    output encoding that reproduces the legacy read type; a canonical string implies none.

    Parameters
    ----------
    logical_type
        A canonical string or a legacy alias.
    path
        The field path, for error messages.

    Returns
    -------
    tuple of (SemanticType, str or None)
        The canonical type and the output encoding to record (None: the type's default).

    Raises
    ------
    UnsupportedTypeError
        If the string is unknown or malformed, or is a legacy string the contract cannot
        express (a dictionary of values other than string or binary, ``decimal:128`` with
        precision above 38).

    Examples
    --------
    >>> parse_any_logical_type("large_string")
    (String(), 'large_utf8')
    >>> parse_any_logical_type("large_list.struct")
    (ListType(), 'large_list')
    >>> parse_any_logical_type("decimal:256:10:2")
    (Decimal(precision=10, scale=2), 'decimal256')
    >>> parse_any_logical_type("decimal:256:40:2")
    (Decimal(precision=40, scale=2), None)
    >>> parse_any_logical_type("int32")
    (Primitive(name='int32'), None)
    """
    parsed = _parse(logical_type, path)
    return parsed.semantic_type, parsed.output_encoding


def is_legacy_alias(logical_type: str) -> bool:
    """Whether ``logical_type`` is a well-formed legacy alias (not a canonical name).

    Examples
    --------
    >>> is_legacy_alias("large_string"), is_legacy_alias("string"), is_legacy_alias("nope")
    (True, False, False)
    """
    try:
        return _parse(logical_type, "").legacy
    except UnsupportedTypeError:
        return False


def format_logical_type(semantic_type: SemanticType) -> str:
    """The canonical ``logical_type`` string of a semantic type (``str(semantic_type)``).

    >>> format_logical_type(Decimal(5, -2))
    'decimal:5:-2'
    """
    return str(semantic_type)
