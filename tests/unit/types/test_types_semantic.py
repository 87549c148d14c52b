"""Unit tests for lance_semantic.types.semantic (spec "Semantic Types")."""

from __future__ import annotations

import dataclasses

import pytest

from lance_semantic.errors import LanceSemanticError, UnsupportedTypeError
from lance_semantic.types.semantic import (
    BINARY,
    BLOB,
    FSL_ELEMENT_WORDS,
    JSON,
    LIST,
    MAP,
    PRIMITIVE_NAMES,
    STRING,
    STRUCT,
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

ALL_PRIMITIVE_NAMES = sorted(
    [
        "null",
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "halffloat",
        "float",
        "double",
        "date32:day",
        "date64:ms",
        "time32:s",
        "time32:ms",
        "time64:us",
        "time64:ns",
        "duration:s",
        "duration:ms",
        "duration:us",
        "duration:ns",
    ]
)


def test_primitive_names_are_the_unchanged_leaf_vocabulary() -> None:
    assert sorted(PRIMITIVE_NAMES) == ALL_PRIMITIVE_NAMES


@pytest.mark.parametrize(
    "name",
    [
        *ALL_PRIMITIVE_NAMES,
        "timestamp:s:-",
        "timestamp:ms:UTC",
        "timestamp:us:America/New_York",
        "timestamp:ns:+05:30",
        "fixed_size_binary:0",
        "fixed_size_binary:16",
    ],
)
def test_unchanged_primitive_str_is_its_logical_type(name: str) -> None:
    t = Primitive(name)
    assert str(t) == name
    assert t.kind == "unchanged"
    assert repr(t) == f"Primitive(name={name!r})"


@pytest.mark.parametrize(
    "name",
    [
        "",
        "int128",
        "string",
        "large_string",
        "decimal:10:2",
        "time32:us",
        "time64:s",
        "date32:ms",
        "timestamp",
        "timestamp:us",
        "timestamp:us:",
        "timestamp:xs:UTC",
        "fixed_size_binary",
        "fixed_size_binary:",
        "fixed_size_binary:-1",
        "fixed_size_binary:01",
        "fixed_size_binary:+1",
        "fixed_size_binary:x",
        "INT32",
    ],
)
def test_primitive_rejects_unknown_names(name: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        Primitive(name)
    assert info.value.type_name == name


def test_primitive_rejects_non_strings() -> None:
    with pytest.raises(UnsupportedTypeError):
        Primitive(32)  # type: ignore[arg-type]


def test_primitive_constructors() -> None:
    assert Primitive.timestamp("us") == Primitive("timestamp:us:-")
    assert Primitive.timestamp("s", "+05:30") == Primitive("timestamp:s:+05:30")
    assert Primitive.fixed_size_binary(3) == Primitive("fixed_size_binary:3")
    with pytest.raises(UnsupportedTypeError):
        Primitive.timestamp("minutes")
    with pytest.raises(UnsupportedTypeError):
        Primitive.fixed_size_binary(True)


@pytest.mark.parametrize(
    ("t", "text", "kind"),
    [
        (STRING, "string", "representation"),
        (BINARY, "binary", "representation"),
        (LIST, "list", "representation"),
        (Decimal(10, 2), "decimal:10:2", "representation"),
        (STRUCT, "struct", "unchanged"),
        (MAP, "map", "unchanged"),
        (FixedSizeList("float", 4), "fixed_size_list:float:4", "unchanged"),
        (JSON, "json", "value_transforming"),
        (BLOB, "blob", "value_transforming"),
    ],
)
def test_semantic_type_str_and_kind(t: SemanticType, text: str, kind: str) -> None:
    assert str(t) == text
    assert t.kind == kind
    assert type(t).kind == kind


@pytest.mark.parametrize(
    ("singleton", "cls"),
    [
        (STRING, String),
        (BINARY, Binary),
        (LIST, ListType),
        (STRUCT, StructType),
        (MAP, MapType),
        (JSON, Json),
        (BLOB, Blob),
    ],
)
def test_parameterless_types_equal_fresh_instances(singleton: SemanticType, cls: type) -> None:
    assert cls() == singleton
    assert hash(cls()) == hash(singleton)
    assert repr(singleton) == f"{cls.__name__}()"


def test_distinct_types_are_unequal() -> None:
    values: list[SemanticType] = [
        STRING,
        BINARY,
        LIST,
        STRUCT,
        MAP,
        JSON,
        BLOB,
        Primitive("int32"),
        Primitive("int64"),
        Decimal(10, 2),
        Decimal(10, 3),
        Decimal(12, 2),
        FixedSizeList("float", 4),
        FixedSizeList("float", 3),
        FixedSizeList("double", 4),
    ]
    assert len(set(values)) == len(values)
    for a in values:
        for b in values:
            assert (a == b) is (a is b)


def test_semantic_type_is_a_closed_union() -> None:
    for t in (STRING, Decimal(1, 0), Primitive("bool"), FixedSizeList("bool", 1), BLOB):
        assert isinstance(t, SemanticType)
    assert not isinstance("string", SemanticType)


@pytest.mark.parametrize("t", [Primitive("int8"), Decimal(3, 1), FixedSizeList("float", 2), STRING])
def test_semantic_types_are_frozen_and_slotted(t: SemanticType) -> None:
    assert not hasattr(t, "__dict__")
    field = next(iter(dataclasses.fields(t)), None)  # type: ignore[arg-type]
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        setattr(t, field.name if field else "x", 1)


# ---- Decimal ----


@pytest.mark.parametrize(
    ("precision", "scale", "width"),
    [(1, 0, 128), (10, 2, 128), (38, 38, 128), (38, -5, 128), (39, 0, 256), (76, 76, 256)],
)
def test_decimal_default_width_is_the_smallest_that_holds_p(
    precision: int, scale: int, width: int
) -> None:
    t = Decimal(precision, scale)
    assert (t.precision, t.scale, t.default_width) == (precision, scale, width)
    assert str(t) == f"decimal:{precision}:{scale}"
    assert repr(t) == f"Decimal(precision={precision}, scale={scale})"


def test_decimal_negative_scale() -> None:
    assert str(Decimal(5, -2)) == "decimal:5:-2"
    assert Decimal(5, -76).scale == -76


@pytest.mark.parametrize(
    ("precision", "scale"),
    [(0, 0), (-1, 0), (77, 0), (10, 77), (10, -77), (True, 0), (10, False), ("10", 2), (10.0, 2)],
)
def test_decimal_rejects_out_of_range_parameters(precision: object, scale: object) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        Decimal(precision, scale)  # type: ignore[arg-type]
    assert isinstance(info.value, LanceSemanticError)


# ---- FixedSizeList ----


@pytest.mark.parametrize(
    "element",
    [
        "float",
        "bool",
        "null",
        "halffloat",
        "timestamp:us:UTC",
        "timestamp:s:+05:30",
        "fixed_size_binary:3",
        "decimal:128:5:2",
        "decimal:128:38:-3",
        "decimal:256:76:10",
        "decimal:256:5:2",
        "fixed_size_list:float:2",
        "fixed_size_list:fixed_size_list:lance.bfloat16:2:3",
        "fixed_size_list:string:2",
        *sorted(FSL_ELEMENT_WORDS),
    ],
)
def test_fixed_size_list_elements_as_pylance_writes_them(element: str) -> None:
    t = FixedSizeList(element, 4)
    assert str(t) == f"fixed_size_list:{element}:4"
    assert t.kind == "unchanged"


def test_fsl_element_words() -> None:
    assert FSL_ELEMENT_WORDS == {
        "string",
        "large_string",
        "binary",
        "large_binary",
        "struct",
        "lance.bfloat16",
    }


@pytest.mark.parametrize(
    "element",
    [
        "",
        "list",
        "large_list",
        "list.struct",
        "map",
        "json",
        "blob",
        "string_view",
        "utf8",
        "dict:string:int32:false",
        "decimal:10:2",
        "decimal:128:39:2",
        "decimal:512:5:2",
        "decimal:128:x:2",
        "fixed_size_list:struct:2",
        "fixed_size_list:list:2",
        "fixed_size_list:float:-1",
        "fixed_size_list:float",
        "lance.uuid",
    ],
)
def test_fixed_size_list_rejects_elements_lance_cannot_store(element: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        FixedSizeList(element, 2)
    assert info.value.type_name == f"fixed_size_list:{element}:2"


@pytest.mark.parametrize("size", [-1, True, 2.0, "2"])
def test_fixed_size_list_rejects_bad_sizes(size: object) -> None:
    with pytest.raises(UnsupportedTypeError):
        FixedSizeList("float", size)  # type: ignore[arg-type]


def test_fixed_size_list_rejects_non_string_element() -> None:
    with pytest.raises(UnsupportedTypeError):
        FixedSizeList(Primitive("float"), 2)  # type: ignore[arg-type]


def test_fixed_size_list_of_size_zero_is_allowed_like_arrow() -> None:
    assert str(FixedSizeList("float", 0)) == "fixed_size_list:float:0"
