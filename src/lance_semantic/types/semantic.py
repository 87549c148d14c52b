"""Semantic type values (layer L1; spec "Proposed Design / Semantic Types").

A semantic type names the value domain of a column: ``Field.logical_type`` of a table that
follows the Semantic Type Contract. Layout choices (32/64-bit offsets, views, dictionary
encoding, decimal width) are not types. The spec sorts core types into three classes, recorded
on every class as :attr:`kind`:

* ``"unchanged"``: one Arrow representation each, logical_type string as before
  (:class:`Primitive`, :class:`StructType`, :class:`MapType`, :class:`FixedSizeList`);
* ``"representation"``: several Arrow layouts hold the same values
  (:class:`String`, :class:`Binary`, :class:`ListType`, :class:`Decimal`);
* ``"value_transforming"``: input is converted to a different stored representation
  (:class:`Json`, :class:`Blob`).

The values are immutable, compare and hash by their parameters, and form the closed union
:data:`SemanticType`. ``str(t)`` is the canonical ``logical_type``; parsing lives in
:mod:`lance_semantic.types.logical_type`, Arrow layouts in :mod:`lance_semantic.types.layouts`.

>>> str(Decimal(10, 2)), STRING.kind, JSON.kind
('decimal:10:2', 'representation', 'value_transforming')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias, final

from lance_semantic.errors import UnsupportedTypeError

__all__ = [
    "Kind",
    "SemanticType",
    "Primitive",
    "String",
    "Binary",
    "Decimal",
    "ListType",
    "StructType",
    "MapType",
    "FixedSizeList",
    "Json",
    "Blob",
    "STRING",
    "BINARY",
    "LIST",
    "STRUCT",
    "MAP",
    "JSON",
    "BLOB",
    "PRIMITIVE_NAMES",
    "INTEGER_NAMES",
    "TIME_UNITS",
    "MAX_DECIMAL_PRECISION",
    "MAX_DECIMAL128_PRECISION",
    "FSL_ELEMENT_WORDS",
]

Kind: TypeAlias = Literal["unchanged", "representation", "value_transforming"]

#: unit spellings of timestamp and duration types (docs/format/lance-format-facts.md §5)
TIME_UNITS = ("s", "ms", "us", "ns")

#: the integer logical types, in width order, signed first (int8 … int64, uint8 … uint64)
INTEGER_NAMES: tuple[str, ...] = tuple(f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64))

#: every primitive logical_type without parameters (docs/format/lance-format-facts.md §5)
PRIMITIVE_NAMES: frozenset[str] = frozenset(
    {
        "null",
        "bool",
        *INTEGER_NAMES,
        "halffloat",
        "float",
        "double",
        "date32:day",
        "date64:ms",
        "time32:s",
        "time32:ms",
        "time64:us",
        "time64:ns",
        *(f"duration:{u}" for u in TIME_UNITS),
    }
)

#: the widest decimal precision (Decimal256) and the widest Decimal128 holds
MAX_DECIMAL_PRECISION = 76
MAX_DECIMAL128_PRECISION = 38

#: one-word element strings of ``fixed_size_list:<element>:<n>`` besides primitives, decimals
#: and nested fixed-size lists: pylance folds the element's legacy logical type into the string
FSL_ELEMENT_WORDS: frozenset[str] = frozenset(
    {"string", "large_string", "binary", "large_binary", "struct", "lance.bfloat16"}
)

_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")


def _canonical_int(text: str) -> int | None:
    """``int(text)`` if ``text`` is the canonical spelling of an integer, else None."""
    return int(text) if _CANONICAL_INT.fullmatch(text) else None


def _invalid(spelling: str, reason: str) -> UnsupportedTypeError:
    return UnsupportedTypeError("", spelling, reason)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _primitive_problem(name: str) -> str | None:
    """Why ``name`` is not a canonical primitive logical_type (None when it is)."""
    if name in PRIMITIVE_NAMES:
        return None
    head, _, rest = name.partition(":")
    if head == "timestamp":
        # the tz may itself contain ':' ("+05:30"): split the unit off, keep the rest whole
        unit, sep, tz = rest.partition(":")
        if unit not in TIME_UNITS or not sep or not tz:
            return "expected timestamp:<s|ms|us|ns>:<tz or ->"
        return None
    if head == "fixed_size_binary":
        width = _canonical_int(rest)
        if width is None or width < 0:
            return "expected fixed_size_binary:<byte width ≥ 0>"
        return None
    return "unknown primitive type"


def _decimal_problem(precision: object, scale: object, max_precision: int) -> str | None:
    if not _is_int(precision) or not _is_int(scale):
        return "precision and scale must be integers"
    assert isinstance(precision, int) and isinstance(scale, int)
    if not 1 <= precision <= max_precision:
        return f"precision must be between 1 and {max_precision}, got {precision}"
    if abs(scale) > MAX_DECIMAL_PRECISION:
        return f"scale must be between -{MAX_DECIMAL_PRECISION} and {MAX_DECIMAL_PRECISION}"
    return None


def _element_problem(element: str) -> str | None:
    """Why ``element`` is not an element string pylance writes in a fixed_size_list type."""
    if element in FSL_ELEMENT_WORDS or _primitive_problem(element) is None:
        return None
    head, _, rest = element.partition(":")
    if head == "decimal":
        parts = rest.split(":")
        widths = {"128": MAX_DECIMAL128_PRECISION, "256": MAX_DECIMAL_PRECISION}
        if len(parts) != 3 or parts[0] not in widths:
            return "a decimal element is spelled decimal:<128|256>:<p>:<s>"
        p, s = _canonical_int(parts[1]), _canonical_int(parts[2])
        if p is None or s is None:
            return "decimal precision and scale must be canonical integers"
        return _decimal_problem(p, s, widths[parts[0]])
    if head == "fixed_size_list":
        inner, _, size = rest.rpartition(":")
        n = _canonical_int(size)
        if n is None or n < 0:
            return "expected fixed_size_list:<element>:<size ≥ 0>"
        if inner == "struct":
            return "a fixed_size_list of fixed_size_list of struct is not supported by Lance"
        return _element_problem(inner)
    return f"{element!r} cannot be a fixed_size_list element"


@final
@dataclass(frozen=True, slots=True)
class Primitive:
    """An unchanged leaf type, named by its canonical logical_type string.

    ``name`` is one of ``null, bool, int8…int64, uint8…uint64, halffloat, float, double,
    date32:day, date64:ms, time32:s|ms, time64:us|ns, duration:s|ms|us|ns``,
    ``timestamp:<unit>:<tz>`` (``-`` when there is no time zone; the zone may contain ``:``)
    or ``fixed_size_binary:<n>``.

    Raises
    ------
    UnsupportedTypeError
        If ``name`` is not such a string.

    Examples
    --------
    >>> str(Primitive("int32"))
    'int32'
    >>> Primitive.timestamp("s", "+05:30")
    Primitive(name='timestamp:s:+05:30')
    >>> Primitive("int32") == Primitive("int32"), Primitive("int32") == Primitive("int64")
    (True, False)
    """

    kind: ClassVar[Kind] = "unchanged"
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise _invalid(repr(self.name), "a primitive type is named by a string")
        problem = _primitive_problem(self.name)
        if problem is not None:
            raise _invalid(self.name, problem)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def timestamp(cls, unit: str, tz: str | None = None) -> Primitive:
        """The timestamp type of ``unit`` (s, ms, us, ns) in time zone ``tz`` (None: none).

        >>> str(Primitive.timestamp("us"))
        'timestamp:us:-'
        """
        return cls(f"timestamp:{unit}:{tz or '-'}")

    @classmethod
    def fixed_size_binary(cls, width: int) -> Primitive:
        """The fixed-size binary type of ``width`` bytes.

        >>> str(Primitive.fixed_size_binary(16))
        'fixed_size_binary:16'
        """
        if not _is_int(width):
            raise _invalid(f"fixed_size_binary:{width!r}", "the width must be an integer")
        return cls(f"fixed_size_binary:{width}")


@final
@dataclass(frozen=True, slots=True)
class String:
    """UTF-8 text; representation-only (utf8, large_utf8, utf8_view, dictionary).

    >>> str(STRING), STRING.kind, String() == STRING
    ('string', 'representation', True)
    """

    kind: ClassVar[Kind] = "representation"

    def __str__(self) -> str:
        return "string"


@final
@dataclass(frozen=True, slots=True)
class Binary:
    """Bytes; representation-only (binary, large_binary, binary_view, dictionary).

    >>> str(BINARY), BINARY.kind
    ('binary', 'representation')
    """

    kind: ClassVar[Kind] = "representation"

    def __str__(self) -> str:
        return "binary"


@final
@dataclass(frozen=True, slots=True)
class Decimal:
    """A decimal of ``precision`` digits, ``scale`` of them after the point.

    Representation-only: Decimal128 and Decimal256 with the same precision and scale hold the
    same values. ``scale`` may be negative.

    Raises
    ------
    UnsupportedTypeError
        If precision is not within 1…76 or |scale| exceeds 76.

    Examples
    --------
    >>> Decimal(10, 2)
    Decimal(precision=10, scale=2)
    >>> str(Decimal(5, -2)), Decimal(38, 2).default_width, Decimal(39, 2).default_width
    ('decimal:5:-2', 128, 256)
    """

    kind: ClassVar[Kind] = "representation"
    precision: int
    scale: int

    def __post_init__(self) -> None:
        problem = _decimal_problem(self.precision, self.scale, MAX_DECIMAL_PRECISION)
        if problem is not None:
            raise _invalid(f"decimal:{self.precision!r}:{self.scale!r}", problem)

    def __str__(self) -> str:
        return f"decimal:{self.precision}:{self.scale}"

    @property
    def default_width(self) -> Literal[128, 256]:
        """Bit width of the smallest Arrow decimal that holds the precision (128 or 256).

        >>> Decimal(38, 2).default_width, Decimal(39, 2).default_width
        (128, 256)
        """
        return 128 if self.precision <= MAX_DECIMAL128_PRECISION else 256


@final
@dataclass(frozen=True, slots=True)
class ListType:
    """A variable-length list; representation-only (list, large_list).

    The element is the child field, not part of the type.

    >>> str(LIST), LIST.kind
    ('list', 'representation')
    """

    kind: ClassVar[Kind] = "representation"

    def __str__(self) -> str:
        return "list"


@final
@dataclass(frozen=True, slots=True)
class StructType:
    """A struct; its members are child fields. Unchanged.

    >>> str(STRUCT), STRUCT.kind
    ('struct', 'unchanged')
    """

    kind: ClassVar[Kind] = "unchanged"

    def __str__(self) -> str:
        return "struct"


@final
@dataclass(frozen=True, slots=True)
class MapType:
    """A map; its entries struct is the child field. Unchanged.

    >>> str(MAP)
    'map'
    """

    kind: ClassVar[Kind] = "unchanged"

    def __str__(self) -> str:
        return "map"


@final
@dataclass(frozen=True, slots=True)
class FixedSizeList:
    """A list of exactly ``size`` elements; unchanged, one Arrow representation.

    ``element`` is the element's legacy Arrow-mapped string exactly as pylance writes it:
    ``float``, ``lance.bfloat16``, ``string``, ``decimal:128:5:2``, ``timestamp:us:UTC``,
    ``fixed_size_list:float:2``, ``struct`` (then the struct is a child field), ...

    Raises
    ------
    UnsupportedTypeError
        If ``element`` cannot be a fixed-size-list element or ``size`` is negative.

    Examples
    --------
    >>> str(FixedSizeList("float", 4))
    'fixed_size_list:float:4'
    >>> str(FixedSizeList("fixed_size_list:float:2", 3))
    'fixed_size_list:fixed_size_list:float:2:3'
    >>> FixedSizeList("lance.bfloat16", 8)
    FixedSizeList(element='lance.bfloat16', size=8)
    """

    kind: ClassVar[Kind] = "unchanged"
    element: str
    size: int

    def __post_init__(self) -> None:
        spelling = f"fixed_size_list:{self.element}:{self.size}"
        if not isinstance(self.element, str):
            raise _invalid(spelling, "the element is a logical_type string")
        if not _is_int(self.size) or self.size < 0:
            raise _invalid(spelling, "the size must be an integer ≥ 0")
        problem = _element_problem(self.element)
        if problem is not None:
            raise _invalid(spelling, problem)

    def __str__(self) -> str:
        return f"fixed_size_list:{self.element}:{self.size}"


@final
@dataclass(frozen=True, slots=True)
class Json:
    """JSON documents; value-transforming (text in, JSONB stored, text out).

    >>> str(JSON), JSON.kind
    ('json', 'value_transforming')
    """

    kind: ClassVar[Kind] = "value_transforming"

    def __str__(self) -> str:
        return "json"


@final
@dataclass(frozen=True, slots=True)
class Blob:
    """Large binary objects, governed by the Blob specification; value-transforming.

    Only classified by the contract. Its stored logical_type is ``large_binary`` with
    ``lance-encoding:blob`` (v1) or ``struct`` with ``lance.blob.v2`` (v2), so ``str(BLOB)``
    is a display name, never written to a table schema.

    >>> str(BLOB), BLOB.kind
    ('blob', 'value_transforming')
    """

    kind: ClassVar[Kind] = "value_transforming"

    def __str__(self) -> str:
        return "blob"


#: The closed union of semantic types: ``match`` over it with ``assert_never`` for the rest.
SemanticType: TypeAlias = (
    Primitive
    | String
    | Binary
    | Decimal
    | ListType
    | StructType
    | MapType
    | FixedSizeList
    | Json
    | Blob
)

STRING = String()
BINARY = Binary()
LIST = ListType()
STRUCT = StructType()
MAP = MapType()
JSON = Json()
BLOB = Blob()
