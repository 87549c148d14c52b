"""Legacy append compatibility; each expectation mirrors an observed pylance 14 append."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.errors import SchemaMismatchError, UnsupportedTypeError
from lance_semantic.schema.arrow import schema_from_arrow
from lance_semantic.schema.compatibility import ABSENT, check_appendable_legacy, match_input_fields
from lance_semantic.schema.datafile import data_file_field_ids

S = pa.struct
XY = S([("x", pa.int8()), ("y", pa.int8())])
BASE = pa.schema(
    [
        pa.field("a", pa.int32(), nullable=False),
        pa.field("b", pa.string()),
        pa.field("s", XY),
        pa.field("l", pa.list_(pa.int8())),
    ]
)
TABLE = schema_from_arrow(BASE)


def with_field(i: int, field: pa.Field) -> pa.Schema:
    return BASE.set(i, field)


ACCEPTED: dict[str, pa.Schema] = {
    "same": BASE,
    "nullable_input_for_non_nullable_field": pa.schema([f.with_nullable(True) for f in BASE]),
    "non_nullable_input_for_nullable_field": with_field(
        1, pa.field("b", pa.string(), nullable=False)
    ),
    "string_view_for_string": with_field(1, pa.field("b", pa.string_view())),
    "list_item_non_nullable": with_field(
        3, pa.field("l", pa.list_(pa.field("item", pa.int8(), nullable=False)))
    ),
    "metadata_differs": pa.schema([f.with_metadata({"q": "r"}) for f in BASE], metadata={"x": "y"}),
}

#: name -> (input schema, field_path, table_type, input_type)
REFUSED: dict[str, tuple[pa.Schema, str, str, str]] = {
    "a_int64": (with_field(0, pa.field("a", pa.int64())), "a", "int32", "int64"),
    "b_large_string": (
        with_field(1, pa.field("b", pa.large_string())),
        "b",
        "string",
        "large_string",
    ),
    "b_dictionary": (
        with_field(1, pa.field("b", pa.dictionary(pa.int32(), pa.string()))),
        "b",
        "string",
        "dictionary<values=string, indices=int32, ordered=0>",
    ),
    "s_x_int16": (
        with_field(2, pa.field("s", S([("x", pa.int16()), ("y", pa.int8())]))),
        "s.x",
        "int8",
        "int16",
    ),
    "s_extra_member": (
        with_field(2, pa.field("s", S([("x", pa.int8()), ("y", pa.int8()), ("z", pa.int8())]))),
        "s.z",
        ABSENT,
        "int8",
    ),
    "l_element": (
        with_field(3, pa.field("l", pa.list_(pa.field("element", pa.int8())))),
        "l.element",
        ABSENT,
        "int8",
    ),
    "l_large_list": (
        with_field(3, pa.field("l", pa.large_list(pa.int8()))),
        "l",
        "list<item: int8>",
        "large_list<item: int8>",
    ),
    "l_int16": (with_field(3, pa.field("l", pa.list_(pa.int16()))), "l.item", "int8", "int16"),
    "struct_vs_int": (with_field(2, pa.field("s", pa.int8())), "s", str(XY), "int8"),
    "extra_column": (BASE.append(pa.field("z", pa.int8())), "z", ABSENT, "int8"),
    "missing_column": (BASE.remove(3), "l", "list<item: int8>", ABSENT),
    "missing_non_nullable": (BASE.remove(0), "a", "int32", ABSENT),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_appends(name: str) -> None:
    check_appendable_legacy(TABLE, ACCEPTED[name])


@pytest.mark.parametrize("name", REFUSED)
def test_refused_appends_name_the_deepest_field(name: str) -> None:
    schema, path, table_type, input_type = REFUSED[name]
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(TABLE, schema)
    assert (info.value.field_path, info.value.table_type, info.value.input_type) == (
        path,
        table_type,
        input_type,
    )
    assert isinstance(info.value, ValueError)


def test_column_and_member_order_may_differ_and_fields_follow_input_order() -> None:
    # pylance wrote DataFile.fields [1, 0, 6, 4, 3] for this append (input order kept)
    schema = pa.schema(
        [
            BASE.field("b"),
            BASE.field("a"),
            BASE.field("l"),
            pa.field("s", S([("y", pa.int8()), ("x", pa.int8())])),
        ]
    )
    matched = match_input_fields(TABLE, schema)
    assert [f.name for f in matched] == ["b", "a", "l", "s"]
    assert data_file_field_ids(matched, (2, 2)) == ([1, 0, 6, 4, 3], [0, 1, 2, 3, 4])


def test_missing_nullable_fields_when_allowed_like_pylance() -> None:
    subset = pa.schema([BASE.field("a"), BASE.field("b")])
    with pytest.raises(SchemaMismatchError):
        check_appendable_legacy(TABLE, subset)
    matched = match_input_fields(TABLE, subset, allow_missing_nullable=True)
    assert data_file_field_ids(matched, (2, 2)) == ([0, 1], [0, 1])
    s_subset = with_field(2, pa.field("s", S([("x", pa.int8())])))
    assert data_file_field_ids(
        match_input_fields(TABLE, s_subset, allow_missing_nullable=True), (2, 2)
    )[0] == [0, 1, 3, 6]
    # a missing non-nullable field is still refused
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(TABLE, BASE.remove(0), allow_missing_nullable=True)
    assert info.value.field_path == "a"
    # a struct with none of its members is refused (pylance fails on it)
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(
            TABLE, with_field(2, pa.field("s", S([]))), allow_missing_nullable=True
        )
    assert info.value.field_path == "s"


def test_extension_types_must_match() -> None:
    uuid_table = schema_from_arrow(pa.schema([("u", pa.uuid())]))
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(uuid_table, pa.schema([("u", pa.binary(16))]))
    assert (info.value.table_type, info.value.input_type) == (
        "extension<arrow.uuid>",
        "fixed_size_binary[16]",
    )
    with pytest.raises(SchemaMismatchError):
        check_appendable_legacy(
            schema_from_arrow(pa.schema([("u", pa.binary(16))])), pa.schema([("u", pa.uuid())])
        )
    check_appendable_legacy(uuid_table, pa.schema([("u", pa.uuid())]))


def test_timezones_and_dictionary_keys_must_match_exactly() -> None:
    table = schema_from_arrow(
        pa.schema([("t", pa.timestamp("s", "UTC")), ("d", pa.dictionary(pa.int32(), pa.string()))])
    )
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(
            table, pa.schema([("t", pa.timestamp("s", "+00:00")), table_field_d()])
        )
    assert info.value.field_path == "t"
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(
            table,
            pa.schema(
                [("t", pa.timestamp("s", "UTC")), ("d", pa.dictionary(pa.int8(), pa.string()))]
            ),
        )
    assert info.value.field_path == "d"
    ordered = pa.schema(
        [
            ("t", pa.timestamp("s", "UTC")),
            ("d", pa.dictionary(pa.int32(), pa.string(), ordered=True)),
        ]
    )
    check_appendable_legacy(table, ordered)


def table_field_d() -> pa.Field:
    return pa.field("d", pa.dictionary(pa.int32(), pa.string()))


def test_map_member_names_must_match() -> None:
    table = schema_from_arrow(pa.schema([("m", pa.map_(pa.string(), pa.int8()))]))
    renamed = pa.map_(pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int8()))
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(table, pa.schema([("m", renamed)]))
    assert info.value.field_path == "m.entries.k"


def test_fixed_size_list_item_names_matter_only_for_structs() -> None:
    table = schema_from_arrow(pa.schema([("f", pa.list_(pa.int8(), 1)), ("g", pa.list_(XY, 1))]))
    ok = pa.schema(
        [("f", pa.list_(pa.field("el", pa.int8(), nullable=False), 1)), ("g", pa.list_(XY, 1))]
    )
    check_appendable_legacy(table, ok)
    bad = pa.schema([("f", pa.list_(pa.int8(), 1)), ("g", pa.list_(pa.field("el", XY), 1))])
    with pytest.raises(SchemaMismatchError) as info:
        check_appendable_legacy(table, bad)
    assert info.value.field_path == "g.el"


def test_unsupported_input_types_raise_unsupported_type() -> None:
    with pytest.raises(UnsupportedTypeError):
        check_appendable_legacy(TABLE, with_field(0, pa.field("a", pa.decimal32(5, 2))))
