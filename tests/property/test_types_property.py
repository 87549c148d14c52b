"""Properties of the semantic type vocabulary and its layout tables (spec "Semantic Types",
"Output Encoding", "Compatibility and Migration"; STYLE.md §(c) Tests/Properties)."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.types as pat
from hypothesis import given, settings
from hypothesis import strategies as st

from lance_semantic.errors import InvalidOutputEncodingError
from lance_semantic.types.arrow_names import INTEGER_TYPES, arrow_type_of_primitive, layout_name
from lance_semantic.types.layouts import (
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
from lance_semantic.types.logical_type import (
    is_legacy_alias,
    parse_any_logical_type,
    parse_logical_type,
)
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
    TIME_UNITS,
    Decimal,
    FixedSizeList,
    Primitive,
    SemanticType,
)

# ---- strategies ----

TIME_ZONES = ["UTC", "+05:30", "-08:00", "America/New_York", "Europe/Paris", "Asia/Kolkata"]

timestamps = st.builds(
    Primitive.timestamp, st.sampled_from(TIME_UNITS), st.none() | st.sampled_from(TIME_ZONES)
)
primitives = st.one_of(
    st.sampled_from(sorted(PRIMITIVE_NAMES)).map(Primitive),
    timestamps,
    # any non-empty zone text is a valid spelling, ':' included
    st.builds(Primitive.timestamp, st.sampled_from(TIME_UNITS), st.text(min_size=1)),
    st.integers(0, 1 << 20).map(Primitive.fixed_size_binary),
)
decimals = st.builds(Decimal, st.integers(1, 76), st.integers(-76, 76))


def _decimal_element(draw: st.DrawFn) -> str:
    width = draw(st.sampled_from([128, 256]))
    precision = draw(st.integers(1, 38 if width == 128 else 76))
    return f"decimal:{width}:{precision}:{draw(st.integers(-76, 76))}"


fsl_leaf_elements = st.one_of(
    primitives.map(str),
    st.sampled_from(sorted(FSL_ELEMENT_WORDS)),
    st.composite(lambda draw: _decimal_element(draw))(),
)
fsl_elements = st.recursive(
    fsl_leaf_elements,
    lambda inner: st.builds(
        lambda e, n: f"fixed_size_list:{e}:{n}",
        inner.filter(lambda e: e != "struct"),
        st.integers(0, 64),
    ),
    max_leaves=4,
)
semantic_types: st.SearchStrategy[SemanticType] = st.one_of(
    primitives,
    decimals,
    st.sampled_from([STRING, BINARY, LIST, STRUCT, MAP, JSON, BLOB]),
    st.builds(FixedSizeList, fsl_elements, st.integers(0, 1 << 16)),
)

keys = st.sampled_from(list(INTEGER_TYPES.values()))
leaf_arrow = st.sampled_from(
    [pa.int8(), pa.float32(), pa.string(), pa.large_binary(), pa.string_view(), pa.bool_()]
)
children = st.builds(pa.field, st.sampled_from(["item", "element"]), leaf_arrow, st.booleans())


@st.composite
def string_layouts(draw: st.DrawFn, plain: list[pa.DataType], view: pa.DataType) -> pa.DataType:
    return draw(
        st.one_of(
            st.sampled_from([*plain, view]),
            st.builds(pa.dictionary, keys, st.sampled_from(plain), st.booleans()),
        )
    )


@st.composite
def decimal_layouts(draw: st.DrawFn) -> tuple[SemanticType, pa.DataType]:
    t = draw(decimals)
    wide = t.precision > 38 or draw(st.booleans())
    return t, (pa.decimal256 if wide else pa.decimal128)(t.precision, t.scale)


@st.composite
def fsl_layouts(draw: st.DrawFn, depth: int = 2) -> tuple[str, pa.DataType]:
    """(element string, element Arrow type), built independently of the code under test."""
    options = ["primitive", "decimal", "word"] + (["fsl"] if depth else [])
    kind = draw(st.sampled_from(options))
    if kind == "primitive":
        p = draw(st.one_of(st.sampled_from(sorted(PRIMITIVE_NAMES)).map(Primitive), timestamps))
        return str(p), arrow_type_of_primitive(p)
    if kind == "decimal":
        p = draw(st.integers(1, 76))
        s = draw(st.integers(-10, 10))
        width = 256 if p > 38 or draw(st.booleans()) else 128
        ctor = pa.decimal256 if width == 256 else pa.decimal128
        return f"decimal:{width}:{p}:{s}", ctor(p, s)
    if kind == "word":
        return draw(
            st.sampled_from(
                [
                    ("string", pa.string()),
                    ("large_string", pa.large_string()),
                    ("binary", pa.binary()),
                    ("large_binary", pa.large_binary()),
                ]
            )
        )
    element, dt = draw(fsl_layouts(depth - 1))
    n = draw(st.integers(0, 8))
    return f"fixed_size_list:{element}:{n}", pa.list_(dt, n)


@st.composite
def accepted_inputs(draw: st.DrawFn) -> tuple[SemanticType, pa.DataType, str | None]:
    """(semantic type, an accepted input layout, the input field's extension name)."""
    which = draw(
        st.sampled_from(
            ["string", "binary", "list", "decimal", "primitive", "fsl", "struct", "map", "json"]
        )
    )
    if which == "string":
        return (
            STRING,
            draw(string_layouts([pa.string(), pa.large_string()], pa.string_view())),
            None,
        )
    if which == "binary":
        return (
            BINARY,
            draw(string_layouts([pa.binary(), pa.large_binary()], pa.binary_view())),
            None,
        )
    if which == "list":
        ctor = draw(st.sampled_from([pa.list_, pa.large_list]))
        return LIST, ctor(draw(children)), None
    if which == "decimal":
        t, dt = draw(decimal_layouts())
        return t, dt, None
    if which == "primitive":
        p = draw(st.one_of(st.sampled_from(sorted(PRIMITIVE_NAMES)).map(Primitive), timestamps))
        return p, arrow_type_of_primitive(p), None
    if which == "fsl":
        element, dt = draw(fsl_layouts())
        n = draw(st.integers(0, 1024))
        return FixedSizeList(element, n), pa.list_(dt, n), None
    if which == "struct":
        return STRUCT, pa.struct(draw(st.lists(children, max_size=3))), None
    if which == "map":
        return MAP, pa.map_(pa.string(), draw(leaf_arrow)), None
    if draw(st.booleans()):
        return JSON, pa.large_binary(), "lance.json"
    return (
        JSON,
        pa.json_(draw(st.sampled_from([pa.string(), pa.large_string(), pa.string_view()]))),
        None,
    )


def _is_view(dt: pa.DataType) -> bool:
    return bool(pat.is_string_view(dt) or pat.is_binary_view(dt))


def _unordered(dt: pa.DataType) -> pa.DataType:
    return pa.dictionary(dt.index_type, dt.value_type) if pat.is_dictionary(dt) else dt


# ---- properties ----


@given(semantic_types)
def test_parsing_the_formatted_string_returns_the_same_type(t: SemanticType) -> None:
    text = str(t)
    assert parse_logical_type(text) == t
    assert parse_any_logical_type(text) == (t, None)
    assert not is_legacy_alias(text)
    assert hash(parse_logical_type(text)) == hash(t)


@given(accepted_inputs(), st.booleans())
def test_every_accepted_input_is_written_in_a_non_view_physical_layout(
    case: tuple[SemanticType, pa.DataType, str | None], fits_32bit: bool
) -> None:
    t, dt, extension_name = case
    assert accepts_input(t, dt, extension_name=extension_name)
    physical = physical_layout_of(t, dt, fits_32bit=fits_32bit, extension_name=extension_name)
    assert not _is_view(physical)
    physical_extension = "lance.json" if t == JSON else None
    assert is_physical_layout(t, physical, extension_name=physical_extension)
    # a physical layout is itself accepted and written unchanged
    assert accepts_input(t, physical, extension_name=physical_extension)
    assert physical_layout_of(t, physical, extension_name=physical_extension) == physical
    if not _is_view(dt) and t != JSON:
        assert physical is dt


@given(accepted_inputs())
def test_the_recorded_encoding_of_an_accepted_input_is_valid_and_reads_it_back(
    case: tuple[SemanticType, pa.DataType, str | None],
) -> None:
    t, dt, extension_name = case
    encoding = encoding_of_layout(t, dt, extension_name=extension_name)
    if t.kind == "unchanged":
        assert encoding is None and default_output_encoding(t) is None
        return
    assert encoding is not None
    validate_output_encoding(t, encoding)
    assert is_known_output_encoding(t, encoding)
    if t != JSON:  # arrow.json is read back over utf8, whatever the input's storage
        child = dt.value_field if t == LIST else None
        assert output_type_of(t, encoding, child=child) == _unordered(dt)


encodings = st.one_of(
    st.sampled_from(sorted(OUTPUT_ENCODING_NAMES)),
    st.text(max_size=30),
    st.builds(
        "dictionary:{}:{}".format,
        st.sampled_from([*INTEGER_TYPES, "float32", "string", "utf8", ""]),
        st.sampled_from(["utf8", "large_utf8", "binary", "large_binary", "utf8_view", "x"]),
    ),
)


@given(semantic_types, encodings)
def test_validate_output_encoding_accepts_exactly_the_types_output_encodings(
    t: SemanticType, encoding: str
) -> None:
    valid = encoding in output_encodings(t)
    assert is_known_output_encoding(t, encoding) is valid
    try:
        validate_output_encoding(t, encoding, path="f")
    except InvalidOutputEncodingError as e:
        assert not valid
        assert (e.field_path, e.encoding) == ("f", encoding)
    else:
        assert valid
    assert set(output_encodings(t)) <= OUTPUT_ENCODING_NAMES
    assert default_output_encoding(t) == (output_encodings(t) or (None,))[0]


@st.composite
def legacy_layouts(draw: st.DrawFn) -> pa.DataType:
    """Layouts a legacy table stores under one logical_type each (no views)."""
    return draw(
        st.one_of(
            string_layouts([pa.string(), pa.large_string()], pa.string()),
            string_layouts([pa.binary(), pa.large_binary()], pa.binary()),
            st.builds(pa.list_, children),
            st.builds(pa.large_list, children),
            st.builds(
                pa.list_,
                st.builds(pa.field, st.just("item"), st.just(pa.struct([("a", pa.int8())]))),
            ),
            st.builds(pa.large_list, st.builds(pa.field, st.just("item"), st.just(pa.struct([])))),
            decimal_layouts().map(lambda pair: pair[1]),
        )
    )


@given(legacy_layouts())
def test_upgraded_legacy_alias_reads_back_the_same_arrow_type(dt: pa.DataType) -> None:
    """Spec "Upgrade": the canonical type plus the recorded output encoding reproduce the
    legacy read type."""
    legacy = layout_name(dt)
    t, recorded = parse_any_logical_type(legacy)
    assert accepts_input(t, dt)
    encoding = recorded or default_output_encoding(t)
    assert encoding is not None
    child = dt.value_field if t == LIST else None
    assert output_type_of(t, encoding, child=child) == _unordered(dt)
    # what a writer records at creation is what the upgrade records
    observed = encoding_of_layout(t, dt)
    assert recorded == (None if observed == default_output_encoding(t) else observed)
    assert is_legacy_alias(legacy) is (legacy != str(t))


@st.composite
def decimal_values(draw: st.DrawFn) -> tuple[int, int, list[decimal.Decimal | None]]:
    precision = draw(st.integers(1, 76))
    # pyarrow's Python-to-decimal conversion refuses scale > precision (a limit of the
    # converter, not of the type), so values are drawn for scale <= precision
    scale = draw(st.integers(-20, precision))
    # pyarrow's converter also builds the whole (unscaled * 10**-scale) integer first, so
    # with negative scales the value itself must fit the width
    digits = min(precision, (38 if precision <= 38 else 76) + min(scale, 0))
    bound = 10**digits - 1
    unscaled = draw(st.lists(st.none() | st.integers(-bound, bound), max_size=8))
    # string construction is exact (scaleb would round to the context's 28 digits)
    values = [None if u is None else decimal.Decimal(f"{u}E{-scale}") for u in unscaled]
    return precision, scale, values


@settings(deadline=None)
@given(decimal_values())
def test_decimal_promotion_keeps_precision_scale_and_values(
    case: tuple[int, int, list[decimal.Decimal | None]],
) -> None:
    """Every output encoding of decimal:p:s holds exactly the stored values (the check that
    would have caught pyiceberg's scale bug)."""
    precision, scale, values = case
    t = Decimal(precision, scale)
    reference = pa.decimal256(precision, scale)  # pyarrow formats every scale of it
    for stored_type in (pa.decimal128(min(precision, 38), scale), reference):
        if not accepts_input(t, stored_type):
            continue
        stored = pa.array(values, stored_type)
        for encoding in output_encodings(t):
            out = output_type_of(t, encoding)
            assert (out.precision, out.scale) == (precision, scale)
            assert encoding_of_layout(t, out) == encoding
            promoted = stored.cast(out)
            assert promoted.type == out
            assert promoted.cast(reference).to_pylist() == values
