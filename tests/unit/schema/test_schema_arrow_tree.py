"""Arrow schema <-> Lance field tree: ids, parents, paths, metadata, extensions, round trips."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.schema.arrow import (
    arrow_type_of,
    assign_new_ids,
    field_from_arrow,
    field_to_arrow,
    schema_from_arrow,
    schema_to_arrow,
)
from lance_semantic.schema.field import ENCODING, Field, TableSchema

S = pa.struct


class MyExt(pa.ExtensionType):
    """A registered Python extension type with non-empty serialized metadata."""

    def __init__(self) -> None:
        super().__init__(pa.int32(), "test.my_ext")

    def __arrow_ext_serialize__(self) -> bytes:
        return b"meta\x00x"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> MyExt:
        return cls()


try:
    pa.register_extension_type(MyExt())
except pa.ArrowKeyError:  # registered by another test module already
    pass


def rows(ts: TableSchema) -> list[tuple[str, int, int, str, bool]]:
    return [(f.path, f.id, f.parent_id, f.logical_type, f.nullable) for f in ts]


def test_ids_are_assigned_in_pre_order() -> None:
    schema = pa.schema(
        [
            ("a", pa.int32()),
            ("s", S([("x", pa.int8()), ("t", S([("u", pa.string())]))])),
            ("l", pa.list_(S([("a", pa.list_(pa.int64())), ("b", pa.int8())]))),
            ("b", pa.int8()),
        ]
    )
    assert rows(schema_from_arrow(schema)) == [
        ("a", 0, -1, "int32", True),
        ("s", 1, -1, "struct", True),
        ("s.x", 2, 1, "int8", True),
        ("s.t", 3, 1, "struct", True),
        ("s.t.u", 4, 3, "string", True),
        ("l", 5, -1, "list.struct", True),
        ("l.item", 6, 5, "struct", True),
        ("l.item.a", 7, 6, "list", True),
        ("l.item.a.item", 8, 7, "int64", True),
        ("l.item.b", 9, 6, "int8", True),
        ("b", 10, -1, "int8", True),
    ]


def test_first_id_offsets_every_id() -> None:
    ts = schema_from_arrow(pa.schema([("a", pa.int8()), ("s", S([("x", pa.int8())]))]), first_id=7)
    assert [(f.id, f.parent_id) for f in ts] == [(7, -1), (8, -1), (9, 8)]
    assert ts.max_field_id == 9


def test_map_children_are_entries_key_value() -> None:
    ts = schema_from_arrow(pa.schema([("m", pa.map_(pa.string(), pa.list_(pa.int8())))]))
    assert rows(ts) == [
        ("m", 0, -1, "map", True),
        ("m.entries", 1, 0, "struct", False),
        ("m.entries.key", 2, 1, "string", False),
        ("m.entries.value", 3, 1, "list", True),
        ("m.entries.value.item", 4, 3, "int8", True),
    ]
    assert [f.encoding for f in ts] == [
        ENCODING[e] for e in ("PLAIN", "NONE", "VAR_BINARY", "PLAIN", "PLAIN")
    ]


def test_list_child_keeps_its_name_nullability_and_metadata() -> None:
    item = pa.field("element", pa.int32(), nullable=False, metadata={"a": "b"})
    ts = schema_from_arrow(pa.schema([("l", pa.list_(item))]))
    child = ts.field("l.element")
    assert (child.id, child.nullable, dict(child.metadata)) == (1, False, {"a": b"b"})
    assert schema_to_arrow(ts).field("l").type.value_field.equals(item, check_metadata=True)


def test_fixed_size_list_of_struct_has_a_child_with_the_arrow_item_name() -> None:
    el = pa.field("el", S([("x", pa.int8())]), nullable=False, metadata={"q": "r"})
    ts = schema_from_arrow(pa.schema([("f", pa.list_(el, 2))]))
    assert rows(ts) == [
        ("f", 0, -1, "fixed_size_list:struct:2", True),
        ("f.el", 1, 0, "struct", False),
        ("f.el.x", 2, 1, "int8", True),
    ]
    assert schema_to_arrow(ts).field("f").type == pa.list_(el, 2)


def test_fixed_size_list_of_primitives_has_no_child() -> None:
    ts = schema_from_arrow(pa.schema([("v", pa.list_(pa.list_(pa.float32(), 2), 3))]))
    assert rows(ts) == [("v", 0, -1, "fixed_size_list:fixed_size_list:float:2:3", True)]


def test_dictionary_fields_have_an_empty_dictionary() -> None:
    ts = schema_from_arrow(
        pa.schema([("d", pa.dictionary(pa.int16(), pa.string())), ("i", pa.int8())])
    )
    d, i = ts.fields
    assert (d.logical_type, d.encoding, d.dictionary) == (
        "dict:string:int16:false",
        ENCODING["DICTIONARY"],
        (0, 0),
    )
    assert i.dictionary is None


def test_field_and_schema_metadata_are_kept_byte_for_byte() -> None:
    schema = pa.schema(
        [
            pa.field("a", pa.int8(), metadata={"k": "v", "é": "caf\u00e9"}),
            pa.field(
                "s", S([pa.field("x", pa.int8(), metadata={"inner": "1"})]), metadata={"o": ""}
            ),
        ],
        metadata={"owner": "tests", "empty": ""},
    )
    ts = schema_from_arrow(schema)
    assert dict(ts.field("a").metadata) == {"k": b"v", "é": "café".encode()}
    assert dict(ts.field("s.x").metadata) == {"inner": b"1"}
    assert dict(ts.field("s").metadata) == {"o": b""}
    assert dict(ts.metadata) == {"owner": b"tests", "empty": b""}
    back = schema_to_arrow(ts)
    assert back.equals(schema, check_metadata=True)
    assert back.field("s").type.field("x").metadata == {b"inner": b"1"}


def test_non_utf8_metadata_is_refused_like_pylance() -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        schema_from_arrow(pa.schema([pa.field("a", pa.int8(), metadata={"k": b"\xff"})]))
    assert info.value.field_path == "a"
    with pytest.raises(UnsupportedTypeError):
        schema_from_arrow(pa.schema([("a", pa.int8())], metadata={"k": b"\xff\x00"}))


def test_uuid_extension_records_name_and_metadata() -> None:
    ts = schema_from_arrow(pa.schema([pa.field("u", pa.uuid(), metadata={"k": "v"})]))
    u = ts.field("u")
    assert (u.logical_type, u.extension_name, u.encoding) == (
        "fixed_size_binary:16",
        "arrow.uuid",
        ENCODING["PLAIN"],
    )
    assert dict(u.metadata) == {
        "k": b"v",
        "ARROW:extension:name": b"arrow.uuid",
        "ARROW:extension:metadata": b"",
    }
    back = schema_to_arrow(ts).field("u")
    assert back.type == pa.uuid()
    assert back.metadata == {b"k": b"v"}  # the extension keys live in the type again


def test_python_extension_type_round_trips_with_its_serialized_metadata() -> None:
    ts = schema_from_arrow(pa.schema([("e", MyExt()), ("l", pa.list_(MyExt()))]))
    e = ts.field("e")
    assert (e.logical_type, e.extension_name) == ("int32", "test.my_ext")
    assert e.metadata["ARROW:extension:metadata"] == b"meta\x00x"
    assert ts.field("l.item").extension_name == "test.my_ext"
    back = schema_to_arrow(ts)
    assert back.field("e").type == MyExt()
    assert back.field("l").type == pa.list_(MyExt())


def test_canonical_extension_metadata_is_read_through_the_c_interface() -> None:
    tensor = pa.fixed_shape_tensor(pa.int8(), [2, 2])
    f = schema_from_arrow(pa.schema([("t", tensor)])).field("t")
    assert f.logical_type == "fixed_size_list:int8:4"
    assert f.extension_name == "arrow.fixed_shape_tensor"
    assert b'"shape":[2,2]' in f.metadata["ARROW:extension:metadata"]
    assert arrow_type_of(f) == tensor


def test_unregistered_extension_stays_storage_plus_metadata() -> None:
    meta = {"ARROW:extension:name": "nobody.registered", "ARROW:extension:metadata": "m"}
    schema = pa.schema([pa.field("c", pa.string(), metadata=meta)])
    ts = schema_from_arrow(schema)
    assert ts.field("c").extension_name == "nobody.registered"
    assert schema_to_arrow(ts).equals(schema, check_metadata=True)


def test_extension_name_alone_is_enough_to_read_back() -> None:
    f = Field("u", 0, -1, "fixed_size_binary:16", extension_name="arrow.uuid", path="u")
    assert arrow_type_of(f) == pa.uuid()


def test_blob_v2_field_tree_matches_pylance() -> None:
    """facts §10: logical struct, encoding NONE, both extension keys, the logical children."""
    from lance.blob import blob_field

    f = schema_from_arrow(pa.schema([blob_field("b")])).fields[0]
    assert (f.logical_type, f.encoding, f.extension_name) == ("struct", 0, "lance.blob.v2")
    assert dict(f.metadata) == {
        "ARROW:extension:name": b"lance.blob.v2",
        "ARROW:extension:metadata": b"",
    }
    assert [(c.name, c.id, c.logical_type) for c in f.children] == [
        ("data", 1, "large_binary"),
        ("uri", 2, "string"),
        ("position", 3, "uint64"),
        ("size", 4, "uint64"),
    ]


def test_blob_v1_field_keeps_large_binary_and_its_marker() -> None:
    field = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    f = schema_from_arrow(pa.schema([field])).fields[0]
    assert (f.logical_type, dict(f.metadata)) == ("large_binary", {"lance-encoding:blob": b"true"})


@pytest.mark.parametrize(
    "field",
    [
        pa.field("b", pa.binary(), metadata={"lance-encoding:blob": "true"}),
        pa.field(
            "b",
            S([("data", pa.large_binary())]),
            metadata={"ARROW:extension:name": "lance.blob.v2"},
        ),
    ],
    ids=str,
)
def test_blob_columns_in_undefined_layouts_are_refused(field: pa.Field) -> None:
    with pytest.raises(UnsupportedTypeError, match="blob"):
        schema_from_arrow(pa.schema([field]))


@pytest.mark.parametrize(
    ("field", "names"),
    [
        (
            Field("b", 0, -1, "struct", extension_name="lance.blob.v2", path="b"),
            ["kind", "position", "size", "blob_id", "blob_uri"],
        ),
        (
            Field("b", 0, -1, "large_binary", metadata={"lance-encoding:blob": b"true"}, path="b"),
            ["position", "size"],
        ),
    ],
    ids=["v2", "v1"],
)
def test_blob_fields_read_back_as_pylance_descriptors(field: Field, names: list[str]) -> None:
    out = field_to_arrow(field)
    assert [c.name for c in out.type] == names
    assert out.metadata[b"lance-encoding:blob"] == b"true"


@pytest.mark.parametrize(
    "field",
    [
        pa.field("j", pa.json_()),
        pa.field("j", pa.json_(pa.large_string())),
        pa.field("j", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"}),
    ],
    ids=str,
)
def test_json_columns_are_stored_under_lance_json(field: pa.Field) -> None:
    """arrow.json text and pre-encoded lance.json both become logical ``json`` with the
    lance.json extension keys (facts §9), and read back as arrow.json text."""
    f = schema_from_arrow(pa.schema([field])).fields[0]
    assert (f.logical_type, f.extension_name) == ("json", "lance.json")
    assert dict(f.metadata) == {
        "ARROW:extension:name": b"lance.json",
        "ARROW:extension:metadata": b"",
    }
    assert field_to_arrow(f).type == pa.json_(pa.string())


def test_binary_with_lance_json_is_not_json() -> None:
    with pytest.raises(UnsupportedTypeError):
        schema_from_arrow(
            pa.schema([pa.field("j", pa.binary(), metadata={"ARROW:extension:name": "lance.json"})])
        )


def test_nested_unsupported_type_names_the_deepest_path() -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        schema_from_arrow(pa.schema([("s", S([("l", pa.list_(pa.decimal32(5, 2)))]))]))
    assert info.value.field_path == "s.l.item"


def test_round_trip_normalizes_like_pylance() -> None:
    schema = pa.schema(
        [
            ("sv", pa.string_view()),
            ("bv", pa.binary_view()),
            ("d", pa.dictionary(pa.int8(), pa.string(), ordered=True)),
            ("f", pa.list_(pa.field("el", pa.int8(), nullable=False, metadata={"x": "y"}), 2)),
            (
                "m",
                pa.map_(
                    pa.field("k", pa.string(), nullable=False),
                    pa.field("v", pa.int8(), nullable=False),
                ),
            ),
        ]
    )
    got = schema_to_arrow(schema_from_arrow(schema))
    expected = pa.schema(
        [
            ("sv", pa.string()),
            ("bv", pa.binary()),
            ("d", pa.dictionary(pa.int8(), pa.string())),
            ("f", pa.list_(pa.int8(), 2)),
            ("m", pa.map_(pa.string(), pa.field("value", pa.int8(), nullable=False))),
        ]
    )
    assert got.equals(expected, check_metadata=True)
    assert got.field("f").type.value_field.metadata is None
    assert got.field("m").type.key_field.name == "key"
    assert got.field("d").type.ordered is False


def test_non_nullable_fields_round_trip() -> None:
    schema = pa.schema(
        [
            pa.field("a", pa.int32(), nullable=False),
            pa.field("s", S([pa.field("x", pa.int8(), nullable=False)]), nullable=False),
            pa.field("d", pa.dictionary(pa.int8(), pa.string()), nullable=False),
        ]
    )
    ts = schema_from_arrow(schema)
    assert [f.nullable for f in ts] == [False, False, False, False]
    assert schema_to_arrow(ts).equals(schema, check_metadata=True)


def test_duplicate_and_dotted_top_level_names_are_refused() -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        schema_from_arrow(pa.schema([("a", pa.int8()), ("a", pa.int16())]))
    assert info.value.field_path == "a"
    with pytest.raises(UnsupportedTypeError):
        schema_from_arrow(pa.schema([("a.b", pa.int8())]))
    # pylance accepts duplicate member names inside a struct, and an empty name
    ts = schema_from_arrow(
        pa.schema([("s", S([("x", pa.int8()), ("x", pa.int16())])), ("", pa.int8())])
    )
    assert [f.id for f in ts] == [0, 1, 2, 3]


PK = "lance-schema:unenforced-primary-key"


@pytest.mark.parametrize(
    "metadata, is_pk, position",
    [
        ({PK: "true"}, True, 0),
        ({PK: "1"}, True, 0),
        ({PK: "YES"}, True, 0),
        ({PK: "on"}, True, 0),
        ({PK: "false"}, False, 0),
        ({PK: "true", PK + ":position": "2"}, True, 2),
        ({PK + ":position": "2"}, True, 2),
        ({PK + ":position": "0"}, True, 0),
        ({PK + ":position": "abc"}, False, 0),
        ({PK + ":position": "-1"}, False, 0),
    ],
)
def test_unenforced_primary_key_follows_pylance(
    metadata: dict[str, str], is_pk: bool, position: int
) -> None:
    f = schema_from_arrow(
        pa.schema([pa.field("c", pa.int32(), nullable=False, metadata=metadata)])
    ).fields[0]
    assert (f.unenforced_primary_key, f.unenforced_primary_key_position) == (is_pk, position)


def test_clustering_key_position() -> None:
    key = "lance-schema:unenforced-clustering-key:position"
    f = schema_from_arrow(pa.schema([pa.field("c", pa.int32(), metadata={key: "3"})])).fields[0]
    assert f.unenforced_clustering_key_position == 3


@pytest.mark.parametrize(
    "field, path",
    [
        (pa.field("c", pa.int32(), metadata={PK: "true"}), "c"),
        (
            pa.field("s", S([pa.field("x", pa.int32(), nullable=False, metadata={PK: "true"})])),
            "s.x",
        ),
        (pa.field("s", S([("x", pa.int8())]), nullable=False, metadata={PK: "true"}), "s"),
        (
            pa.field(
                "l",
                pa.list_(pa.field("item", pa.int32(), nullable=False, metadata={PK: "1"})),
                nullable=False,
            ),
            "l.item",
        ),
    ],
)
def test_invalid_primary_keys_are_refused(field: pa.Field, path: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        schema_from_arrow(pa.schema([field]))
    assert info.value.field_path == path


def test_assign_new_ids_for_added_columns() -> None:
    new = assign_new_ids(pa.schema([("n", pa.int8()), ("s", S([("x", pa.int8())]))]), 12)
    assert [(f.path, f.id, f.parent_id) for f in new] == [("n", 12, -1), ("s", 12 + 1, -1)]
    assert [(c.path, c.id, c.parent_id) for c in new[1].children] == [("s.x", 14, 13)]


def test_field_from_arrow_uses_the_counter_and_parent() -> None:
    ids = itertools.count(40)
    f = field_from_arrow(pa.field("x", pa.list_(pa.int8())), ids=ids, parent_id=3, parent_path="s")
    assert [(g.path, g.id, g.parent_id) for g in f.walk()] == [("s.x", 40, 3), ("s.x.item", 41, 40)]
    assert next(ids) == 42


def test_table_schema_from_flat_list_gives_the_same_tree() -> None:
    ts = schema_from_arrow(
        pa.schema([("s", S([("x", pa.int8()), ("l", pa.list_(pa.int8()))])), ("a", pa.int8())])
    )
    flat = [
        Field(f.name, f.id, f.parent_id, f.logical_type, f.nullable, f.metadata)
        for f in ts.flatten()
    ]
    rebuilt = TableSchema.from_flat(flat, ts.metadata)
    assert schema_to_arrow(rebuilt).equals(schema_to_arrow(ts), check_metadata=True)
    assert [f.path for f in rebuilt] == [f.path for f in ts]


@pytest.mark.parametrize(
    "field",
    [
        Field("l", 0, -1, "list", path="l"),
        Field(
            "m",
            0,
            -1,
            "map",
            children=(Field("entries", 1, 0, "struct", path="m.entries"),),
            path="m",
        ),
        Field("f", 0, -1, "fixed_size_list:struct:2", path="f"),
    ],
    ids=lambda f: f.logical_type,
)
def test_nested_fields_without_their_children_are_refused(field: Field) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        arrow_type_of(field)
    assert info.value.field_path.startswith(field.path)
