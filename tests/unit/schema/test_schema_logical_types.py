"""The logical_type vocabulary (facts §5): Arrow type <-> logical string <-> Field.encoding."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.errors import NotSupportedYetError, UnsupportedTypeError
from lance_semantic.schema.field import ENCODING
from lance_semantic.schema.leaves import arrow_type_of_logical, encoding_of, logical_type_of

PLAIN, VAR, NONE, DICT = (ENCODING[k] for k in ("PLAIN", "VAR_BINARY", "NONE", "DICTIONARY"))

#: (Arrow type, logical_type, encoding, the Arrow type it reads back as or None if the same)
CASES: list[tuple[pa.DataType, str, int, pa.DataType | None]] = [
    (pa.null(), "null", NONE, None),
    (pa.bool_(), "bool", PLAIN, None),
    *[(getattr(pa, n)(), n, PLAIN, None) for n in ("int8", "int16", "int32", "int64")],
    *[(getattr(pa, n)(), n, PLAIN, None) for n in ("uint8", "uint16", "uint32", "uint64")],
    (pa.float16(), "halffloat", PLAIN, None),
    (pa.float32(), "float", PLAIN, None),
    (pa.float64(), "double", PLAIN, None),
    (pa.date32(), "date32:day", PLAIN, None),
    (pa.date64(), "date64:ms", PLAIN, None),
    (pa.time32("s"), "time32:s", PLAIN, None),
    (pa.time32("ms"), "time32:ms", PLAIN, None),
    (pa.time64("us"), "time64:us", PLAIN, None),
    (pa.time64("ns"), "time64:ns", PLAIN, None),
    *[(pa.timestamp(u), f"timestamp:{u}:-", PLAIN, None) for u in ("s", "ms", "us", "ns")],
    (pa.timestamp("us", "UTC"), "timestamp:us:UTC", PLAIN, None),
    (pa.timestamp("ns", "America/New_York"), "timestamp:ns:America/New_York", PLAIN, None),
    (pa.timestamp("s", "+05:30"), "timestamp:s:+05:30", PLAIN, None),
    (pa.timestamp("ms", "-08:00"), "timestamp:ms:-08:00", PLAIN, None),
    *[(pa.duration(u), f"duration:{u}", PLAIN, None) for u in ("s", "ms", "us", "ns")],
    (pa.decimal128(10, 2), "decimal:128:10:2", PLAIN, None),
    (pa.decimal128(5, -2), "decimal:128:5:-2", PLAIN, None),
    (pa.decimal256(40, 3), "decimal:256:40:3", PLAIN, None),
    (pa.string(), "string", VAR, None),
    (pa.large_string(), "large_string", VAR, None),
    (pa.binary(), "binary", VAR, None),
    (pa.large_binary(), "large_binary", VAR, None),
    (pa.string_view(), "string", VAR, pa.string()),
    (pa.binary_view(), "binary", VAR, pa.binary()),
    (pa.binary(3), "fixed_size_binary:3", PLAIN, None),
    (pa.list_(pa.float32(), 4), "fixed_size_list:float:4", PLAIN, None),
    (
        pa.list_(pa.list_(pa.float32(), 2), 3),
        "fixed_size_list:fixed_size_list:float:2:3",
        PLAIN,
        None,
    ),
    (pa.list_(pa.timestamp("us", "UTC"), 2), "fixed_size_list:timestamp:us:UTC:2", PLAIN, None),
    (
        pa.list_(pa.timestamp("s", "+05:30"), 2),
        "fixed_size_list:timestamp:s:+05:30:2",
        PLAIN,
        None,
    ),
    (pa.list_(pa.decimal128(5, 2), 2), "fixed_size_list:decimal:128:5:2:2", PLAIN, None),
    (pa.list_(pa.binary(3), 2), "fixed_size_list:fixed_size_binary:3:2", PLAIN, None),
    (pa.list_(pa.bool_(), 3), "fixed_size_list:bool:3", PLAIN, None),
    (pa.list_(pa.string(), 2), "fixed_size_list:string:2", PLAIN, None),
    (pa.list_(pa.string_view(), 2), "fixed_size_list:string:2", PLAIN, pa.list_(pa.string(), 2)),
    (pa.list_(pa.null(), 2), "fixed_size_list:null:2", PLAIN, None),
    (pa.list_(pa.duration("s"), 2), "fixed_size_list:duration:s:2", PLAIN, None),
    (
        pa.list_(pa.field("el", pa.int8(), nullable=False), 2),
        "fixed_size_list:int8:2",
        PLAIN,
        pa.list_(pa.int8(), 2),
    ),
    (pa.dictionary(pa.int32(), pa.string()), "dict:string:int32:false", DICT, None),
    (pa.dictionary(pa.int32(), pa.large_string()), "dict:large_string:int32:false", DICT, None),
    (pa.dictionary(pa.int16(), pa.int64()), "dict:int64:int16:false", DICT, None),
    (pa.dictionary(pa.uint16(), pa.string()), "dict:string:uint16:false", DICT, None),
    (pa.dictionary(pa.int64(), pa.binary()), "dict:binary:int64:false", DICT, None),
    (pa.dictionary(pa.int8(), pa.float64()), "dict:double:int8:false", DICT, None),
    (pa.dictionary(pa.int8(), pa.bool_()), "dict:bool:int8:false", DICT, None),
    (
        pa.dictionary(pa.int8(), pa.string(), ordered=True),
        "dict:string:int8:false",
        DICT,
        pa.dictionary(pa.int8(), pa.string()),
    ),
    (
        pa.dictionary(pa.int8(), pa.string_view()),
        "dict:string:int8:false",
        DICT,
        pa.dictionary(pa.int8(), pa.string()),
    ),
    (pa.uuid(), "fixed_size_binary:16", PLAIN, pa.binary(16)),
]

#: logical types of types that carry child fields (their Arrow type needs the children)
NESTED: list[tuple[pa.DataType, str, int]] = [
    (pa.struct([("x", pa.int8())]), "struct", NONE),
    (pa.struct([]), "struct", NONE),
    (pa.list_(pa.int8()), "list", PLAIN),
    (pa.large_list(pa.int8()), "large_list", PLAIN),
    (pa.list_(pa.struct([("x", pa.int8())])), "list.struct", PLAIN),
    (pa.large_list(pa.struct([("x", pa.int8())])), "large_list.struct", PLAIN),
    (pa.list_(pa.uuid()), "list", PLAIN),
    (pa.map_(pa.string(), pa.int64()), "map", PLAIN),
    (pa.list_(pa.struct([("x", pa.int8())]), 2), "fixed_size_list:struct:2", PLAIN),
    (pa.list_(pa.struct([]), 2), "fixed_size_list:struct:2", PLAIN),
]

REJECTED: list[pa.DataType] = [
    pa.decimal32(5, 2),
    pa.decimal64(12, 2),
    pa.month_day_nano_interval(),
    pa.list_view(pa.int8()),
    pa.large_list_view(pa.int8()),
    pa.run_end_encoded(pa.int32(), pa.int8()),
    pa.dense_union([pa.field("a", pa.int8())]),
    pa.sparse_union([pa.field("a", pa.int8())]),
    pa.map_(pa.string(), pa.int64(), keys_sorted=True),
    pa.list_(pa.list_(pa.int8()), 2),
    pa.list_(pa.large_list(pa.int8()), 2),
    pa.list_(pa.map_(pa.string(), pa.int8()), 2),
    pa.list_(pa.dictionary(pa.int8(), pa.string()), 2),
    pa.list_(pa.uuid(), 2),
    pa.list_(pa.list_(pa.struct([("x", pa.int8())]), 2), 3),
    pa.dictionary(pa.int8(), pa.binary(4)),
    pa.dictionary(pa.int8(), pa.timestamp("us")),
    pa.dictionary(pa.int8(), pa.decimal128(5, 2)),
    pa.dictionary(pa.int8(), pa.date32()),
    pa.dictionary(pa.int8(), pa.uuid()),
    pa.dictionary(pa.int8(), pa.list_(pa.int8())),
    pa.dictionary(pa.int8(), pa.struct([("a", pa.int8())])),
]


def _id(case: object) -> str:
    return str(case[0] if isinstance(case, tuple) else case)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_logical_type_of_leaf_types(case: tuple[pa.DataType, str, int, pa.DataType | None]) -> None:
    dt, logical, encoding, _ = case
    assert logical_type_of(dt, "c") == logical
    assert encoding_of(logical) == encoding


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_arrow_type_of_logical_gives_the_read_back_type(
    case: tuple[pa.DataType, str, int, pa.DataType | None],
) -> None:
    dt, logical, _, read_back = case
    got = arrow_type_of_logical(logical, "c")
    assert got == (read_back if read_back is not None else dt)
    # legacy rule: one logical type names exactly one Arrow type
    assert logical_type_of(got, "c") == logical


@pytest.mark.parametrize("case", NESTED, ids=_id)
def test_logical_type_of_nested_types(case: tuple[pa.DataType, str, int]) -> None:
    dt, logical, encoding = case
    assert logical_type_of(dt, "c") == logical
    assert encoding_of(logical) == encoding


def test_fixed_size_list_items_are_nullable_item_fields() -> None:
    got = arrow_type_of_logical("fixed_size_list:fixed_size_list:int8:2:3")
    assert got.value_field.name == "item" and got.value_field.nullable
    assert got.value_type.value_field.name == "item"


def test_fixed_size_list_of_bfloat16_folds_the_extension_name() -> None:
    class _BF16(pa.ExtensionType):
        def __init__(self) -> None:
            super().__init__(pa.binary(2), "lance.bfloat16")

        def __arrow_ext_serialize__(self) -> bytes:
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> _BF16:
            return cls()

    assert logical_type_of(pa.list_(_BF16(), 8), "v") == "fixed_size_list:lance.bfloat16:8"
    assert logical_type_of(_BF16(), "v") == "fixed_size_binary:2"
    item = arrow_type_of_logical("fixed_size_list:lance.bfloat16:8").value_field
    assert item.type == pa.binary(2)
    assert item.metadata == {
        b"ARROW:extension:name": b"lance.bfloat16",
        b"ARROW:extension:metadata": b"",
    }


def test_fixed_size_list_of_bfloat16_in_metadata_form_is_the_same_type() -> None:
    """pylance's reads return this form when ``lance.arrow`` is not imported."""
    keys = {"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}
    item = pa.field("item", pa.binary(2), metadata=keys)
    assert logical_type_of(pa.list_(item, 8), "v") == "fixed_size_list:lance.bfloat16:8"
    nested = pa.list_(pa.field("item", pa.list_(item, 2)), 3)
    assert logical_type_of(nested, "v") == "fixed_size_list:fixed_size_list:lance.bfloat16:2:3"
    # bfloat16 storage is fixed_size_binary(2); pylance 14 refuses the name on other storage
    wide = pa.field("item", pa.binary(4), metadata=keys)
    with pytest.raises(UnsupportedTypeError) as info:
        logical_type_of(pa.list_(wide, 8), "v")
    assert info.value.field_path == "v"
    # the round trip gives the metadata form back
    assert arrow_type_of_logical("fixed_size_list:lance.bfloat16:8") == pa.list_(item, 8)


@pytest.mark.parametrize("dt", REJECTED, ids=str)
def test_rejected_types_raise_unsupported_type(dt: pa.DataType) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        logical_type_of(dt, "s.c")
    assert info.value.field_path == "s.c"
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("dt", [pa.json_(), pa.json_(pa.large_string())], ids=str)
def test_json_is_the_json_logical_type(dt: pa.DataType) -> None:
    assert logical_type_of(dt, "j") == "json"
    assert arrow_type_of_logical("json", "j") == pa.json_(pa.string())


def test_the_blob_logical_type_string_is_not_supported_yet() -> None:
    """pylance 14 stores blob columns as large_binary / struct with markers (facts §10); a
    manifest naming the logical type ``blob`` itself is refused, saying so."""
    with pytest.raises(NotSupportedYetError) as info:
        arrow_type_of_logical("blob", "x")
    assert info.value.feature == "the logical type 'blob' (pylance 14 never writes it)"


BAD_LOGICAL = [
    "int128",
    "",
    "struct",
    "list",
    "map",
    "timestamp:xs:-",
    "timestamp:s",
    "timestamp:s:",
    "decimal:64:5:2",
    "decimal:128:5",
    "decimal:128:x:2",
    "decimal:128:99:2",
    "fixed_size_binary:x",
    "fixed_size_binary:-1",
    "fixed_size_binary:2:3",
    "fixed_size_list:float",
    "fixed_size_list:float:x",
    "fixed_size_list:struct:2",
    "fixed_size_list:nope:2",
    "dict:string:int32",
    "dict:string:string:false",
    "dict:timestamp:us:-:int8:false",
    "time32:us",
]


@pytest.mark.parametrize("logical", BAD_LOGICAL)
def test_bad_logical_types_raise_unsupported_type(logical: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        arrow_type_of_logical(logical, "p.q")
    assert info.value.field_path == "p.q"


def test_dictionary_ordered_flag_on_disk_is_ignored() -> None:
    assert arrow_type_of_logical("dict:string:int8:true") == pa.dictionary(pa.int8(), pa.string())
