"""DataFile.fields / column_indices per data storage version (facts §4, confirmed by pylance)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.schema.arrow import schema_from_arrow
from lance_semantic.schema.datafile import check_storage_version_support, data_file_field_ids
from lance_semantic.schema.field import Field

S = pa.struct
XY = S([("x", pa.int8()), ("y", pa.int8())])

#: name -> (schema, {version: fields}); every expectation was observed with pylance 14.0.2
CASES: dict[str, tuple[pa.Schema, dict[tuple[int, int], list[int]]]] = {
    "prim_struct": (
        pa.schema([("a", pa.int32()), ("s", XY), ("b", pa.int8())]),
        {(2, 0): [0, 1, 2, 3, 4], (2, 1): [0, 2, 3, 4], (2, 2): [0, 2, 3, 4], (2, 3): [0, 2, 3, 4]},
    ),
    "list": (pa.schema([("l", pa.list_(pa.int32()))]), {(2, 0): [0, 1], (2, 2): [1]}),
    "list_struct_list": (
        pa.schema([("l", pa.list_(S([("a", pa.list_(pa.int64())), ("b", pa.int8())])))]),
        {(2, 0): [0, 1, 2, 3, 4], (2, 1): [3, 4], (2, 3): [3, 4]},
    ),
    "map": (pa.schema([("m", pa.map_(pa.string(), pa.int64()))]), {(2, 2): [2, 3], (2, 3): [2, 3]}),
    "fsl_struct": (pa.schema([("f", pa.list_(XY, 2))]), {(2, 0): [0], (2, 2): [2, 3]}),
    "fsl": (
        pa.schema(
            [("f", pa.list_(pa.float32(), 2)), ("g", pa.list_(pa.list_(pa.float32(), 2), 2))]
        ),
        {(2, 0): [0, 1], (2, 1): [0, 1], (2, 2): [0, 1]},
    ),
    "empty_struct": (
        pa.schema([("a", pa.int8()), ("e", S([])), ("b", pa.int8())]),
        {(2, 0): [0, 1, 2], (2, 1): [0, 1, 2], (2, 2): [0, 1, 2]},
    ),
    "nested_empty": (pa.schema([("s", S([("e", S([])), ("x", pa.int8())]))]), {(2, 1): [1, 2]}),
    "large_list_struct": (
        pa.schema([("l", pa.large_list(S([("x", pa.int8())])))]),
        {(2, 0): [0, 1, 2], (2, 1): [2]},
    ),
    "list_fsl_struct": (
        pa.schema([("l", pa.list_(pa.list_(S([("x", pa.int8())]), 2)))]),
        {(2, 0): [0, 1], (2, 3): [3]},
    ),
    "struct_fsl_struct": (
        pa.schema([("s", S([("f", pa.list_(XY, 2)), ("z", pa.int8())]))]),
        {(2, 0): [0, 1, 5], (2, 2): [3, 4, 5]},
    ),
    "mix": (
        pa.schema(
            [
                ("a", pa.int64()),
                ("s", XY),
                ("f", pa.list_(XY, 2)),
                ("l", pa.list_(pa.int64())),
                ("m", pa.map_(pa.string(), pa.int64())),
            ]
        ),
        {(2, 2): [0, 2, 3, 6, 7, 9, 12, 13]},
    ),
    "two_structs": (
        pa.schema([("s", S([("x", pa.int8())])), ("t", S([("y", pa.int8())])), ("a", pa.int8())]),
        {(2, 1): [1, 3, 4]},
    ),
}


@pytest.mark.parametrize(
    "name, version",
    [(n, v) for n, (_, by_version) in CASES.items() for v in by_version],
    ids=lambda x: x if isinstance(x, str) else f"{x[0]}.{x[1]}",
)
def test_data_file_field_ids(name: str, version: tuple[int, int]) -> None:
    schema, by_version = CASES[name]
    fields, indices = data_file_field_ids(schema_from_arrow(schema).fields, version)
    assert fields == by_version[version]
    assert indices == list(range(len(fields)))


def test_legacy_files_list_every_id_without_column_indices() -> None:
    ts = schema_from_arrow(
        pa.schema([("a", pa.int8()), ("s", XY), ("l", pa.list_(S([("x", pa.int8())])))])
    )
    assert data_file_field_ids(ts.fields, (0, 2)) == ([0, 1, 2, 3, 4, 5, 6], [])


def test_fields_follow_the_given_column_order() -> None:
    ts = schema_from_arrow(pa.schema([("a", pa.int8()), ("b", pa.int8()), ("c", pa.int8())]))
    reordered = [ts.field("c"), ts.field("b"), ts.field("a")]
    assert data_file_field_ids(reordered, (2, 2)) == ([2, 1, 0], [0, 1, 2])


def test_blob_v2_struct_is_one_column() -> None:
    kids = tuple(
        Field(n, i, 1, lt, path=f"b.{n}")
        for i, (n, lt) in enumerate(
            [
                ("data", "large_binary"),
                ("uri", "string"),
                ("position", "uint64"),
                ("size", "uint64"),
            ],
            start=2,
        )
    )
    blob = Field("b", 1, -1, "struct", extension_name="lance.blob.v2", children=kids, path="b")
    a = Field("a", 0, -1, "int32", path="a")
    assert data_file_field_ids([a, blob], (2, 2)) == ([0, 1], [0, 1])
    with pytest.raises(UnsupportedTypeError):
        check_storage_version_support([blob], (2, 1))


def test_unknown_versions_are_refused() -> None:
    with pytest.raises(UnsupportedTypeError):
        data_file_field_ids([Field("a", 0, -1, "int8", path="a")], (3, 0))


@pytest.mark.parametrize(
    "arrow_type, refused_at",
    [
        (pa.map_(pa.string(), pa.int8()), [(0, 2), (2, 0), (2, 1)]),
        (pa.list_(XY, 2), [(0, 2), (2, 1)]),
        (S([("f", pa.list_(XY, 2))]), [(0, 2), (2, 1)]),
        (pa.list_(pa.int8()), []),
    ],
    ids=str,
)
def test_storage_version_support(
    arrow_type: pa.DataType, refused_at: list[tuple[int, int]]
) -> None:
    fields = schema_from_arrow(pa.schema([("c", arrow_type)])).fields
    for version in [(0, 2), (2, 0), (2, 1), (2, 2), (2, 3)]:
        if version in refused_at:
            with pytest.raises(UnsupportedTypeError):
                check_storage_version_support(fields, version)
        else:
            check_storage_version_support(fields, version)
