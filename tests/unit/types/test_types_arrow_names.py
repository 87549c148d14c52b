"""Unit tests for lance_semantic.types.arrow_names: the legacy Arrow-mapped vocabulary
(spec "Data Files and the Physical Schema"; facts §5)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.types.arrow_names import (
    BFLOAT16,
    INTEGER_TYPES,
    PRIMITIVE_ARROW_TYPES,
    arrow_type_of_primitive,
    fsl_element_name,
    layout_name,
)
from lance_semantic.types.semantic import PRIMITIVE_NAMES, FixedSizeList, Primitive


class _BFloat16(pa.ExtensionType):
    """Stands in for pylance's lance.arrow.BFloat16Type (unit tests never import pylance)."""

    def __init__(self) -> None:
        super().__init__(pa.binary(2), BFLOAT16)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> _BFloat16:
        return cls()


_BF16 = _BFloat16()  # kept alive: nested types only borrow the Python extension type

#: facts §5, one row per Arrow type (the strings pylance 14 writes)
FACTS_5: list[tuple[pa.DataType, str]] = [
    (pa.null(), "null"),
    (pa.bool_(), "bool"),
    (pa.int8(), "int8"),
    (pa.int16(), "int16"),
    (pa.int32(), "int32"),
    (pa.int64(), "int64"),
    (pa.uint8(), "uint8"),
    (pa.uint16(), "uint16"),
    (pa.uint32(), "uint32"),
    (pa.uint64(), "uint64"),
    (pa.float16(), "halffloat"),
    (pa.float32(), "float"),
    (pa.float64(), "double"),
    (pa.date32(), "date32:day"),
    (pa.date64(), "date64:ms"),
    (pa.time32("s"), "time32:s"),
    (pa.time32("ms"), "time32:ms"),
    (pa.time64("us"), "time64:us"),
    (pa.time64("ns"), "time64:ns"),
    (pa.timestamp("s"), "timestamp:s:-"),
    (pa.timestamp("us", "UTC"), "timestamp:us:UTC"),
    (pa.timestamp("ns", "America/New_York"), "timestamp:ns:America/New_York"),
    (pa.timestamp("s", "+05:30"), "timestamp:s:+05:30"),
    (pa.duration("s"), "duration:s"),
    (pa.duration("ns"), "duration:ns"),
    (pa.decimal128(10, 2), "decimal:128:10:2"),
    (pa.decimal128(5, -2), "decimal:128:5:-2"),
    (pa.decimal256(10, 2), "decimal:256:10:2"),
    (pa.string(), "string"),
    (pa.large_string(), "large_string"),
    (pa.binary(), "binary"),
    (pa.large_binary(), "large_binary"),
    (pa.binary(16), "fixed_size_binary:16"),
    (pa.list_(pa.float32(), 4), "fixed_size_list:float:4"),
    (pa.list_(pa.list_(pa.float32(), 2), 3), "fixed_size_list:fixed_size_list:float:2:3"),
    (pa.list_(pa.timestamp("us", "UTC"), 2), "fixed_size_list:timestamp:us:UTC:2"),
    (pa.list_(pa.decimal128(5, 2), 2), "fixed_size_list:decimal:128:5:2:2"),
    (pa.list_(pa.binary(3), 2), "fixed_size_list:fixed_size_binary:3:2"),
    (pa.list_(pa.bool_(), 3), "fixed_size_list:bool:3"),
    (pa.list_(pa.string(), 2), "fixed_size_list:string:2"),
    (pa.list_(_BF16, 8), "fixed_size_list:lance.bfloat16:8"),
    (pa.list_(pa.struct([("x", pa.int8())]), 2), "fixed_size_list:struct:2"),
    (pa.list_(pa.int32()), "list"),
    (pa.large_list(pa.int32()), "large_list"),
    (pa.list_(pa.struct([("x", pa.int8())])), "list.struct"),
    (pa.large_list(pa.struct([("x", pa.int8())])), "large_list.struct"),
    (pa.struct([("x", pa.int8())]), "struct"),
    (pa.map_(pa.string(), pa.int64()), "map"),
    (pa.dictionary(pa.int32(), pa.string()), "dict:string:int32:false"),
    (pa.dictionary(pa.int32(), pa.large_string()), "dict:large_string:int32:false"),
    (pa.dictionary(pa.int16(), pa.int64()), "dict:int64:int16:false"),
    (pa.dictionary(pa.uint16(), pa.string()), "dict:string:uint16:false"),
    (pa.dictionary(pa.uint16(), pa.string(), ordered=True), "dict:string:uint16:false"),
]


@pytest.mark.parametrize(("dt", "name"), FACTS_5, ids=[row[1] for row in FACTS_5])
def test_layout_name_is_the_legacy_arrow_mapped_string(dt: pa.DataType, name: str) -> None:
    assert layout_name(dt) == name


@pytest.mark.parametrize(
    ("dt", "name"),
    [
        (pa.string_view(), "string_view"),
        (pa.binary_view(), "binary_view"),
        (pa.json_(), "arrow.json<string>"),
        (_BF16, "lance.bfloat16<fixed_size_binary:2>"),
        (pa.list_(pa.string_view(), 2), "fixed_size_list:string_view:2"),
        (pa.list_view(pa.int8()), str(pa.list_view(pa.int8()))),
        (pa.decimal32(5, 2), str(pa.decimal32(5, 2))),
        (pa.month_day_nano_interval(), str(pa.month_day_nano_interval())),
    ],
    ids=str,
)
def test_layout_name_of_layouts_without_a_legacy_string(dt: pa.DataType, name: str) -> None:
    assert layout_name(dt) == name


def test_layout_names_agree_with_the_schema_layers_legacy_vocabulary() -> None:
    from lance_semantic.schema.leaves import logical_type_of

    for dt, name in FACTS_5:
        assert logical_type_of(dt, "f") == name == layout_name(dt)


@pytest.mark.parametrize("name", sorted(PRIMITIVE_NAMES))
def test_every_primitive_has_one_arrow_type_named_by_its_logical_type(name: str) -> None:
    dt = arrow_type_of_primitive(Primitive(name))
    assert layout_name(dt) == name
    assert PRIMITIVE_ARROW_TYPES[name] == dt


def test_primitive_tables_match() -> None:
    assert set(PRIMITIVE_ARROW_TYPES) == PRIMITIVE_NAMES
    assert set(INTEGER_TYPES) <= PRIMITIVE_NAMES


@pytest.mark.parametrize(
    ("t", "dt"),
    [
        (Primitive.timestamp("ms"), pa.timestamp("ms")),
        (Primitive.timestamp("us", "UTC"), pa.timestamp("us", "UTC")),
        (Primitive.timestamp("ns", "+05:30"), pa.timestamp("ns", "+05:30")),
        (Primitive.fixed_size_binary(0), pa.binary(0)),
        (Primitive.fixed_size_binary(16), pa.binary(16)),
    ],
    ids=str,
)
def test_arrow_type_of_parameterized_primitives(t: Primitive, dt: pa.DataType) -> None:
    assert arrow_type_of_primitive(t) == dt
    assert layout_name(dt) == str(t)


@pytest.mark.parametrize(
    ("item", "name"),
    [
        (pa.field("item", pa.float32()), "float"),
        (pa.field("v", pa.float32(), nullable=False), "float"),
        (pa.field("item", _BF16), BFLOAT16),
        (pa.field("item", pa.binary(2), metadata={"ARROW:extension:name": BFLOAT16}), BFLOAT16),
        (
            pa.field("item", pa.binary(4), metadata={"ARROW:extension:name": BFLOAT16}),
            "lance.bfloat16<fixed_size_binary:4>",
        ),
        (
            pa.field("item", pa.binary(16), metadata={"ARROW:extension:name": "arrow.uuid"}),
            "arrow.uuid<fixed_size_binary:16>",
        ),
        (pa.field("item", pa.struct([])), "struct"),
        (pa.field("item", pa.list_(pa.int8(), 2)), "fixed_size_list:int8:2"),
    ],
    ids=str,
)
def test_fsl_element_name(item: pa.Field, name: str) -> None:
    assert fsl_element_name(item) == name


def test_fsl_element_names_of_valid_types_build_valid_fixed_size_lists() -> None:
    for _, name in FACTS_5:
        if name.startswith("fixed_size_list:"):
            element, _, size = name.removeprefix("fixed_size_list:").rpartition(":")
            assert str(FixedSizeList(element, int(size))) == name
