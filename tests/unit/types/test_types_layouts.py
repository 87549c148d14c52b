"""Unit tests for lance_semantic.types.layouts: every row of the spec's representation-only and
value-transforming tables, output encodings, and the failure rows they serve."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.errors import (
    InvalidOutputEncodingError,
    UnsupportedInputTypeError,
)
from lance_semantic.types.arrow_names import INTEGER_TYPES, arrow_type_of_primitive
from lance_semantic.types.layouts import (
    DICTIONARY_KEYS,
    OUTPUT_ENCODING_NAMES,
    accepts_input,
    default_output_encoding,
    encoding_of_layout,
    is_known_output_encoding,
    is_physical_layout,
    output_encodings,
    output_type_of,
    physical_layout_of,
    validate_output_encoding,
)
from lance_semantic.types.semantic import (
    BINARY,
    BLOB,
    JSON,
    LIST,
    MAP,
    PRIMITIVE_NAMES,
    STRING,
    STRUCT,
    Decimal,
    FixedSizeList,
    Primitive,
    SemanticType,
)

KEYS = list(INTEGER_TYPES.values())


class _Ext(pa.ExtensionType):
    """A registered-style extension type for tests (name and storage chosen per test)."""

    def __init__(self, name: str, storage: pa.DataType) -> None:
        super().__init__(storage, name)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> _Ext:
        raise NotImplementedError


#: pyarrow keeps only a borrowed reference to a Python extension type inside nested types:
#: keep every instance alive for the whole session (else nested types segfault)
_EXTENSIONS: dict[tuple[str, pa.DataType], _Ext] = {}


def _ext(name: str, storage: pa.DataType) -> _Ext:
    return _EXTENSIONS.setdefault((name, storage), _Ext(name, storage))


def _dicts(values: list[pa.DataType]) -> list[pa.DataType]:
    return [pa.dictionary(k, v) for k in KEYS for v in values]


# ---- accepted inputs: spec table "Representation-only types" ----

STRING_ACCEPTED = [
    pa.string(),
    pa.large_string(),
    pa.string_view(),
    *_dicts([pa.string(), pa.large_string()]),
]
BINARY_ACCEPTED = [
    pa.binary(),
    pa.large_binary(),
    pa.binary_view(),
    *_dicts([pa.binary(), pa.large_binary()]),
]
STRING_REJECTED = [
    pa.binary(),
    pa.large_binary(),
    pa.binary_view(),
    pa.dictionary(pa.int32(), pa.string_view()),
    pa.dictionary(pa.int32(), pa.binary()),
    pa.dictionary(pa.int32(), pa.int64()),
    pa.json_(),
    pa.json_(pa.large_string()),
    _ext("lance.json", pa.large_binary()),
    pa.int32(),
    pa.null(),
    pa.list_(pa.string()),
    pa.binary(4),
]
BINARY_REJECTED = [
    pa.string(),
    pa.large_string(),
    pa.string_view(),
    pa.dictionary(pa.int32(), pa.binary_view()),
    pa.dictionary(pa.int8(), pa.string()),
    pa.binary(4),
    pa.uint8(),
    _ext("lance.blob.v2", pa.large_binary()),
]


@pytest.mark.parametrize("dt", STRING_ACCEPTED, ids=str)
def test_representation_only_types_accept_every_string_layout(dt: pa.DataType) -> None:
    assert accepts_input(STRING, dt)


@pytest.mark.parametrize("dt", STRING_REJECTED, ids=str)
def test_string_refuses_other_layouts(dt: pa.DataType) -> None:
    assert not accepts_input(STRING, dt)


@pytest.mark.parametrize("dt", BINARY_ACCEPTED, ids=str)
def test_representation_only_types_accept_every_binary_layout(dt: pa.DataType) -> None:
    assert accepts_input(BINARY, dt)


@pytest.mark.parametrize("dt", BINARY_REJECTED, ids=str)
def test_binary_refuses_other_layouts(dt: pa.DataType) -> None:
    assert not accepts_input(BINARY, dt)


def test_ordered_dictionaries_are_accepted_dictionaries() -> None:
    assert accepts_input(STRING, pa.dictionary(pa.int16(), pa.string(), ordered=True))


@pytest.mark.parametrize(
    ("dt", "accepted"),
    [
        (pa.list_(pa.int32()), True),
        (pa.large_list(pa.int32()), True),
        (pa.list_(pa.struct([("a", pa.int8())])), True),
        (pa.large_list(pa.field("element", pa.string(), nullable=False)), True),
        (pa.list_view(pa.int32()), False),
        (pa.large_list_view(pa.int32()), False),
        (pa.list_(pa.int32(), 3), False),
        (pa.struct([("a", pa.int8())]), False),
        (pa.map_(pa.string(), pa.int8()), False),
        (pa.string(), False),
    ],
    ids=str,
)
def test_representation_only_list_accepts_list_and_large_list(
    dt: pa.DataType, accepted: bool
) -> None:
    assert accepts_input(LIST, dt) is accepted


@pytest.mark.parametrize(
    ("dt", "accepted"),
    [
        (pa.decimal128(10, 2), True),
        (pa.decimal256(10, 2), True),
        (pa.decimal128(12, 2), False),
        (pa.decimal256(12, 2), False),
        (pa.decimal128(10, 3), False),
        (pa.decimal64(10, 2), False),
        (pa.float64(), False),
        (pa.string(), False),
    ],
    ids=str,
)
def test_append_of_decimal_accepts_same_precision_and_scale_in_either_width(
    dt: pa.DataType, accepted: bool
) -> None:
    """Spec "Schema Compatibility": Decimal256(10, 2) into decimal:10:2 succeeds,
    Decimal128(12, 2) fails."""
    assert accepts_input(Decimal(10, 2), dt) is accepted


def test_decimal_above_38_digits_accepts_only_decimal256() -> None:
    assert accepts_input(Decimal(40, 5), pa.decimal256(40, 5))
    assert not accepts_input(Decimal(9, 2), pa.decimal32(9, 2))


def test_struct_and_map_are_unchanged() -> None:
    s = pa.struct([("a", pa.int8())])
    m = pa.map_(pa.string(), pa.int8())
    assert accepts_input(STRUCT, s) and accepts_input(STRUCT, pa.struct([]))
    assert not accepts_input(STRUCT, m) and not accepts_input(STRUCT, pa.list_(pa.int8()))
    assert accepts_input(MAP, m)
    assert not accepts_input(MAP, s)
    assert not accepts_input(MAP, pa.map_(pa.string(), pa.int8(), keys_sorted=True))


@pytest.mark.parametrize("name", sorted(PRIMITIVE_NAMES))
def test_unchanged_primitives_accept_exactly_their_one_arrow_type(name: str) -> None:
    t = Primitive(name)
    own = arrow_type_of_primitive(t)
    assert accepts_input(t, own)
    others = {arrow_type_of_primitive(Primitive(n)) for n in PRIMITIVE_NAMES} - {own}
    for dt in [*others, pa.string(), pa.timestamp("us"), pa.binary(2)]:
        assert not accepts_input(t, dt)


def test_timestamps_compare_unit_and_time_zone() -> None:
    t = Primitive.timestamp("us", "UTC")
    assert accepts_input(t, pa.timestamp("us", "UTC"))
    assert not accepts_input(t, pa.timestamp("us"))
    assert not accepts_input(t, pa.timestamp("ns", "UTC"))
    assert not accepts_input(t, pa.timestamp("us", "+00:00"))
    assert accepts_input(Primitive.timestamp("s", "+05:30"), pa.timestamp("s", "+05:30"))
    assert accepts_input(Primitive.timestamp("s"), pa.timestamp("s"))


def test_fixed_size_binary_compares_width() -> None:
    assert accepts_input(Primitive.fixed_size_binary(16), pa.binary(16))
    assert not accepts_input(Primitive.fixed_size_binary(16), pa.binary(8))
    assert not accepts_input(Primitive.fixed_size_binary(16), pa.binary())


BF16_META = {"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}


@pytest.mark.parametrize(
    ("t", "dt"),
    [
        (FixedSizeList("float", 4), pa.list_(pa.float32(), 4)),
        (FixedSizeList("float", 4), pa.list_(pa.field("vec", pa.float32(), False), 4)),
        (FixedSizeList("fixed_size_list:float:2", 3), pa.list_(pa.list_(pa.float32(), 2), 3)),
        (FixedSizeList("decimal:128:5:2", 2), pa.list_(pa.decimal128(5, 2), 2)),
        (FixedSizeList("decimal:256:5:2", 2), pa.list_(pa.decimal256(5, 2), 2)),
        (FixedSizeList("timestamp:us:UTC", 2), pa.list_(pa.timestamp("us", "UTC"), 2)),
        (FixedSizeList("fixed_size_binary:3", 2), pa.list_(pa.binary(3), 2)),
        (FixedSizeList("string", 2), pa.list_(pa.string(), 2)),
        (FixedSizeList("large_string", 2), pa.list_(pa.large_string(), 2)),
        (FixedSizeList("bool", 3), pa.list_(pa.bool_(), 3)),
        (FixedSizeList("struct", 2), pa.list_(pa.struct([("x", pa.int8())]), 2)),
        (FixedSizeList("lance.bfloat16", 8), pa.list_(_ext("lance.bfloat16", pa.binary(2)), 8)),
        (
            FixedSizeList("lance.bfloat16", 8),
            pa.list_(pa.field("item", pa.binary(2), metadata=BF16_META), 8),
        ),
    ],
    ids=str,
)
def test_fixed_size_list_accepts_its_one_arrow_type(t: FixedSizeList, dt: pa.DataType) -> None:
    assert accepts_input(t, dt)
    assert physical_layout_of(t, dt) == dt
    assert encoding_of_layout(t, dt) is None


@pytest.mark.parametrize(
    ("t", "dt"),
    [
        (FixedSizeList("float", 4), pa.list_(pa.float32(), 3)),
        (FixedSizeList("float", 4), pa.list_(pa.float64(), 4)),
        (FixedSizeList("float", 4), pa.list_(pa.float32())),
        (FixedSizeList("float", 4), pa.large_list(pa.float32())),
        (FixedSizeList("decimal:128:5:2", 2), pa.list_(pa.decimal256(5, 2), 2)),
        (FixedSizeList("string", 2), pa.list_(pa.string_view(), 2)),
        (FixedSizeList("string", 2), pa.list_(pa.large_string(), 2)),
        (
            FixedSizeList("fixed_size_binary:2", 2),
            pa.list_(_ext("lance.bfloat16", pa.binary(2)), 2),
        ),
        (FixedSizeList("lance.bfloat16", 2), pa.list_(pa.binary(2), 2)),
        (FixedSizeList("lance.bfloat16", 2), pa.list_(_ext("other.half", pa.binary(2)), 2)),
        (
            FixedSizeList("fixed_size_binary:16", 2),
            pa.list_(
                pa.field("item", pa.binary(16), metadata={"ARROW:extension:name": "arrow.uuid"}), 2
            ),
        ),
        (FixedSizeList("struct", 2), pa.list_(pa.int8(), 2)),
    ],
    ids=str,
)
def test_fixed_size_list_refuses_other_elements_and_sizes(
    t: FixedSizeList, dt: pa.DataType
) -> None:
    assert not accepts_input(t, dt)


# ---- accepted inputs: spec table "Value-transforming types" ----


@pytest.mark.parametrize(
    ("dt", "extension_name"),
    [
        (pa.json_(pa.string()), None),
        (pa.json_(pa.large_string()), None),
        (pa.json_(pa.string_view()), None),
        (pa.large_binary(), "lance.json"),
        (_ext("lance.json", pa.large_binary()), None),
        (pa.string(), "arrow.json"),
    ],
    ids=str,
)
def test_value_transforming_json_accepts_arrow_json_text_and_lance_json(
    dt: pa.DataType, extension_name: str | None
) -> None:
    assert accepts_input(JSON, dt, extension_name=extension_name)
    assert physical_layout_of(JSON, dt, extension_name=extension_name) == pa.large_binary()


@pytest.mark.parametrize(
    ("dt", "extension_name"),
    [
        (pa.string(), None),
        (pa.large_binary(), None),
        (pa.binary(), "lance.json"),
        (pa.string(), "lance.json"),
        (pa.large_binary(), "arrow.json"),
        (_ext("arrow.json", pa.binary()), None),
        (_ext("example.json", pa.string()), None),
        (pa.struct([]), None),
    ],
    ids=str,
)
def test_json_refuses_other_inputs(dt: pa.DataType, extension_name: str | None) -> None:
    assert not accepts_input(JSON, dt, extension_name=extension_name)


def test_extension_inputs_are_judged_by_their_storage() -> None:
    """Spec "Extension Semantic Types": a core field carries the extension name."""
    assert accepts_input(Primitive.fixed_size_binary(2), _ext("lance.bfloat16", pa.binary(2)))
    assert accepts_input(STRING, _ext("example.tag", pa.large_string()))
    assert accepts_input(FixedSizeList("float", 4), _ext("example.bbox", pa.list_(pa.float32(), 4)))
    assert accepts_input(STRING, pa.string(), extension_name="example.tag")
    # core extensions stay their own types
    assert not accepts_input(STRING, pa.string(), extension_name="arrow.json")
    assert not accepts_input(BINARY, pa.large_binary(), extension_name="lance.json")
    assert not accepts_input(STRUCT, pa.struct([]), extension_name="lance.blob.v2")


def test_blob_accepts_the_blob_specification_layouts_and_has_no_output_encodings() -> None:
    v2 = pa.struct([("data", pa.large_binary()), ("uri", pa.string())])
    assert accepts_input(BLOB, pa.large_binary())
    assert accepts_input(BLOB, v2, extension_name="lance.blob.v2")
    assert not accepts_input(BLOB, v2)  # the struct means blob only under the extension
    assert not accepts_input(BLOB, pa.binary())
    assert not accepts_input(
        BLOB, pa.struct([("data", pa.binary())]), extension_name="lance.blob.v2"
    )
    assert output_encodings(BLOB) == ()
    assert default_output_encoding(BLOB) is None
    with pytest.raises(InvalidOutputEncodingError):
        validate_output_encoding(BLOB, "large_binary")


# ---- physical layouts ----


@pytest.mark.parametrize(
    ("t", "view", "small", "large"),
    [
        (STRING, pa.string_view(), pa.string(), pa.large_string()),
        (BINARY, pa.binary_view(), pa.binary(), pa.large_binary()),
    ],
)
def test_view_input_is_written_as_a_non_view_layout_that_holds_every_value(
    t: SemanticType, view: pa.DataType, small: pa.DataType, large: pa.DataType
) -> None:
    assert physical_layout_of(t, view) == small
    assert physical_layout_of(t, view, fits_32bit=True) == small
    assert physical_layout_of(t, view, fits_32bit=False) == large
    assert not is_physical_layout(t, view)
    assert is_physical_layout(t, small) and is_physical_layout(t, large)


@pytest.mark.parametrize(
    ("t", "dt"),
    [
        *((STRING, dt) for dt in STRING_ACCEPTED if dt != pa.string_view()),
        *((BINARY, dt) for dt in BINARY_ACCEPTED if dt != pa.binary_view()),
        (STRING, pa.dictionary(pa.uint8(), pa.large_string(), ordered=True)),
        (LIST, pa.list_(pa.int8())),
        (LIST, pa.large_list(pa.string_view())),
        (Decimal(10, 2), pa.decimal128(10, 2)),
        (Decimal(10, 2), pa.decimal256(10, 2)),
        (STRUCT, pa.struct([("a", pa.string_view())])),
        (MAP, pa.map_(pa.string(), pa.int8())),
        (Primitive("int32"), pa.int32()),
    ],
    ids=str,
)
def test_representation_only_inputs_pass_through_unchanged(
    t: SemanticType, dt: pa.DataType
) -> None:
    """Spec "Contract and Invariants / Writer boundary"."""
    for fits in (True, False):
        assert physical_layout_of(t, dt, fits_32bit=fits) is dt
    assert is_physical_layout(t, dt)


def test_json_physical_layout_is_large_binary_with_lance_json() -> None:
    assert is_physical_layout(JSON, pa.large_binary(), extension_name="lance.json")
    assert is_physical_layout(JSON, _ext("lance.json", pa.large_binary()))
    assert not is_physical_layout(JSON, pa.json_())
    assert not is_physical_layout(JSON, pa.large_binary())


def test_input_not_accepted_for_the_semantic_type_names_path_type_and_input() -> None:
    """Spec "Failure Semantics", row 1."""
    with pytest.raises(UnsupportedInputTypeError) as info:
        physical_layout_of(STRING, pa.dictionary(pa.int32(), pa.int64()), path="s.tags")
    e = info.value
    assert (e.field_path, e.semantic_type, e.input_type) == (
        "s.tags",
        "string",
        "dict:int64:int32:false",
    )
    assert isinstance(e, TypeError)
    with pytest.raises(UnsupportedInputTypeError) as info:
        encoding_of_layout(Decimal(10, 2), pa.decimal128(12, 2), path="price")
    assert (info.value.semantic_type, info.value.input_type) == ("decimal:10:2", "decimal:128:12:2")
    assert not is_physical_layout(LIST, pa.list_view(pa.int8()))


# ---- output encodings ----

STRING_DICTIONARIES = tuple(
    f"dictionary:{k}:{v}" for k in INTEGER_TYPES for v in ("utf8", "large_utf8")
)
BINARY_DICTIONARIES = tuple(
    f"dictionary:{k}:{v}" for k in INTEGER_TYPES for v in ("binary", "large_binary")
)


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (STRING, ("utf8", "large_utf8", "utf8_view", *STRING_DICTIONARIES)),
        (BINARY, ("binary", "large_binary", "binary_view", *BINARY_DICTIONARIES)),
        (LIST, ("list", "large_list")),
        (Decimal(1, 0), ("decimal128", "decimal256")),
        (Decimal(38, 10), ("decimal128", "decimal256")),
        (Decimal(39, 10), ("decimal256",)),
        (Decimal(76, 0), ("decimal256",)),
        (JSON, ("arrow.json", "lance.json")),
        (Primitive("int32"), ()),
        (Primitive.timestamp("us", "UTC"), ()),
        (STRUCT, ()),
        (MAP, ()),
        (FixedSizeList("float", 2), ()),
        (BLOB, ()),
    ],
    ids=str,
)
def test_output_encodings_default_first(t: SemanticType, expected: tuple[str, ...]) -> None:
    assert output_encodings(t) == expected
    assert default_output_encoding(t) == (expected[0] if expected else None)
    for encoding in expected:
        assert is_known_output_encoding(t, encoding)
        validate_output_encoding(t, encoding, path="f")


@pytest.mark.parametrize(
    ("t", "default"),
    [
        (STRING, "utf8"),
        (BINARY, "binary"),
        (LIST, "list"),
        (Decimal(38, 2), "decimal128"),
        (Decimal(39, 2), "decimal256"),
        (JSON, "arrow.json"),
        (Primitive("int32"), None),
        (STRUCT, None),
    ],
    ids=str,
)
def test_default_output_encoding(t: SemanticType, default: str | None) -> None:
    assert default_output_encoding(t) == default


def test_output_encoding_vocabulary_is_design_section_3() -> None:
    dictionaries = {
        f"dictionary:{k}:{v}"
        for k in DICTIONARY_KEYS
        for v in ("utf8", "large_utf8", "binary", "large_binary")
    }
    assert OUTPUT_ENCODING_NAMES == {
        "utf8",
        "large_utf8",
        "utf8_view",
        "binary",
        "large_binary",
        "binary_view",
        "list",
        "large_list",
        "decimal128",
        "decimal256",
        "arrow.json",
        "lance.json",
        *dictionaries,
    }
    assert DICTIONARY_KEYS is INTEGER_TYPES


INVALID = [
    (Decimal(40, 2), "decimal128"),
    (Decimal(76, 0), "decimal128"),
    (STRING, "large_list"),
    (STRING, "binary"),
    (STRING, "large_binary"),
    (STRING, "binary_view"),
    (STRING, "decimal128"),
    (STRING, "arrow.json"),
    (STRING, "dictionary:int16:binary"),
    (STRING, "dictionary:float32:utf8"),
    (STRING, "dictionary:string:utf8"),
    (STRING, "dictionary:int16:utf8_view"),
    (STRING, "dictionary:int16"),
    (STRING, "dictionary:int16:utf8:false"),
    (STRING, "dict:string:int16:false"),
    (STRING, "large_string"),
    (STRING, "UTF8"),
    (STRING, " utf8"),
    (STRING, ""),
    (BINARY, "utf8"),
    (BINARY, "dictionary:int8:utf8"),
    (BINARY, "dictionary:int8:large_utf8"),
    (LIST, "list_view"),
    (LIST, "fixed_size_list"),
    (LIST, "utf8"),
    (LIST, "dictionary:int8:utf8"),
    (Decimal(10, 2), "decimal32"),
    (Decimal(10, 2), "decimal"),
    (Decimal(10, 2), "decimal:10:2"),
    (JSON, "utf8"),
    (JSON, "large_binary"),
    (JSON, "json"),
    (Primitive("int32"), "int64"),
    (Primitive("int32"), "utf8"),
    (Primitive("int32"), "int32"),
    (STRUCT, "struct"),
    (MAP, "map"),
    (FixedSizeList("float", 4), "list"),
    (BLOB, "lance.blob.v2"),
]


@pytest.mark.parametrize(("t", "encoding"), INVALID, ids=str)
def test_setting_an_invalid_output_encoding_fails(t: SemanticType, encoding: str) -> None:
    """Spec "Failure Semantics": an output encoding invalid for the type or its parameters."""
    with pytest.raises(InvalidOutputEncodingError) as info:
        validate_output_encoding(t, encoding, path="a.b")
    e = info.value
    assert (e.field_path, e.encoding) == ("a.b", encoding)
    assert e.why and isinstance(e, ValueError)
    # a reader falls back to the default instead
    assert not is_known_output_encoding(t, encoding)


@pytest.mark.parametrize("encoding", [None, 3, b"utf8", ("utf8",)])
def test_non_string_output_encodings_are_invalid(encoding: object) -> None:
    assert not is_known_output_encoding(STRING, encoding)
    with pytest.raises(InvalidOutputEncodingError) as info:
        validate_output_encoding(STRING, encoding)  # type: ignore[arg-type]
    assert info.value.encoding == str(encoding)


def test_invalid_output_encoding_reasons_differ_per_rule() -> None:
    reasons = set()
    for t, encoding in [
        (Decimal(40, 2), "decimal128"),
        (STRING, "large_list"),
        (STRING, "dictionary:float32:utf8"),
        (STRING, "dictionary:int16:binary"),
        (Primitive("int32"), "utf8"),
        (STRING, "nonsense"),
        (LIST, "dictionary:int8:utf8"),
        (STRING, "dictionary:int16"),
        (BLOB, "x"),
    ]:
        with pytest.raises(InvalidOutputEncodingError) as info:
            validate_output_encoding(t, encoding)
        reasons.add(info.value.why)
    assert len(reasons) == 9


# ---- output types ----


@pytest.mark.parametrize(
    ("t", "encoding", "expected"),
    [
        (STRING, "utf8", pa.string()),
        (STRING, "large_utf8", pa.large_string()),
        (STRING, "utf8_view", pa.string_view()),
        (BINARY, "binary", pa.binary()),
        (BINARY, "large_binary", pa.large_binary()),
        (BINARY, "binary_view", pa.binary_view()),
        *(
            (STRING, f"dictionary:{k}:{v}", pa.dictionary(kt, vt))
            for k, kt in INTEGER_TYPES.items()
            for v, vt in (("utf8", pa.string()), ("large_utf8", pa.large_string()))
        ),
        *(
            (BINARY, f"dictionary:{k}:{v}", pa.dictionary(kt, vt))
            for k, kt in INTEGER_TYPES.items()
            for v, vt in (("binary", pa.binary()), ("large_binary", pa.large_binary()))
        ),
        (Decimal(10, 2), "decimal128", pa.decimal128(10, 2)),
        (Decimal(10, 2), "decimal256", pa.decimal256(10, 2)),
        (Decimal(5, -3), "decimal256", pa.decimal256(5, -3)),
        (Decimal(60, 30), "decimal256", pa.decimal256(60, 30)),
        (JSON, "arrow.json", pa.json_(pa.string())),
        (JSON, "lance.json", pa.large_binary()),
    ],
    ids=str,
)
def test_output_type_of_each_encoding(
    t: SemanticType, encoding: str, expected: pa.DataType
) -> None:
    assert output_type_of(t, encoding) == expected


def test_list_output_types_need_the_resolved_child() -> None:
    child = pa.field("item", pa.large_string(), nullable=False)
    assert output_type_of(LIST, "list", child=child) == pa.list_(child)
    assert output_type_of(LIST, "large_list", child=child) == pa.large_list(child)
    with pytest.raises(TypeError):
        output_type_of(LIST, "list")


def test_output_type_of_an_invalid_encoding_fails() -> None:
    with pytest.raises(InvalidOutputEncodingError) as info:
        output_type_of(Decimal(40, 2), "decimal128", path="p")
    assert info.value.field_path == "p"
    with pytest.raises(InvalidOutputEncodingError):
        output_type_of(Primitive("int32"), "utf8")


# ---- encoding of an input layout (recorded at column creation) ----


@pytest.mark.parametrize(
    ("t", "dt", "encoding"),
    [
        (STRING, pa.string(), "utf8"),
        (STRING, pa.large_string(), "large_utf8"),
        (STRING, pa.string_view(), "utf8_view"),
        (STRING, pa.dictionary(pa.int16(), pa.string()), "dictionary:int16:utf8"),
        (STRING, pa.dictionary(pa.uint64(), pa.large_string()), "dictionary:uint64:large_utf8"),
        (STRING, pa.dictionary(pa.int8(), pa.string(), ordered=True), "dictionary:int8:utf8"),
        (BINARY, pa.binary(), "binary"),
        (BINARY, pa.large_binary(), "large_binary"),
        (BINARY, pa.binary_view(), "binary_view"),
        (BINARY, pa.dictionary(pa.int32(), pa.large_binary()), "dictionary:int32:large_binary"),
        (LIST, pa.list_(pa.int8()), "list"),
        (LIST, pa.large_list(pa.int8()), "large_list"),
        (Decimal(10, 2), pa.decimal128(10, 2), "decimal128"),
        (Decimal(10, 2), pa.decimal256(10, 2), "decimal256"),
        (Decimal(50, 2), pa.decimal256(50, 2), "decimal256"),
        (JSON, pa.json_(), "arrow.json"),
        (JSON, pa.json_(pa.string_view()), "arrow.json"),
        (JSON, pa.large_binary(), "lance.json"),
        (STRING, _ext("example.tag", pa.large_string()), "large_utf8"),
        (Primitive("int32"), pa.int32(), None),
        (STRUCT, pa.struct([]), None),
        (MAP, pa.map_(pa.int8(), pa.int8()), None),
    ],
    ids=str,
)
def test_writer_records_the_input_layout_as_output_encoding(
    t: SemanticType, dt: pa.DataType, encoding: str | None
) -> None:
    """Spec "Output Encoding": a LargeUtf8 input reads back as LargeUtf8."""
    extension_name = "lance.json" if dt == pa.large_binary() and t == JSON else None
    assert encoding_of_layout(t, dt, extension_name=extension_name) == encoding
    if encoding is not None:
        validate_output_encoding(t, encoding)
