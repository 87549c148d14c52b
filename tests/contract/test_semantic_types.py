"""Spec "Semantic Types", "Schema Compatibility", "Data Files and the Physical Schema",
"Contract and Invariants", "Failure Semantics" and "Compatibility and Migration" (feature
flag, enablement), one test per rule."""

from __future__ import annotations

import dataclasses
import os
from decimal import Decimal
from pathlib import Path

import lance
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.manifest.codec import decode_manifest_file, encode_manifest_file
from lance_semantic.schema.field import TableSchema
from lance_semantic.write import boundary


def data_files(uri: Path) -> set[str]:
    d = uri / "data"
    return set(os.listdir(d)) if d.exists() else set()


def file_types(uri: Path) -> dict[str, list[pa.DataType]]:
    return {
        name: lance.file.LanceFileReader(str(uri / "data" / name)).metadata().schema.types
        for name in data_files(uri)
    }


def flagged(tmp_path: Path, table: pa.Table, name: str = "t") -> ls.Dataset:
    return ls.write_dataset(table, str(tmp_path / name), data_storage_version="2.3")


# ---- feature flag and enablement ------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "opt", "expected"),
    [
        ("2.3", None, True),
        ("2.2", None, False),
        ("2.1", True, True),
        ("2.0", True, True),
        ("2.3", False, False),
    ],
)
def test_enablement_new_tables_on_2_3_set_the_flag_unless_opted_out(
    tmp_path: Path, version: str, opt: bool | None, expected: bool
) -> None:
    ds = ls.write_dataset(
        pa.table({"a": [1]}), str(tmp_path / "t"), data_storage_version=version, semantic_types=opt
    )
    assert ds.semantic_types is expected
    bits = ls.FLAG_SEMANTIC_TYPES if expected else 0
    assert ds.feature_flags.reader & ls.FLAG_SEMANTIC_TYPES == bits
    assert ds.feature_flags.writer & ls.FLAG_SEMANTIC_TYPES == bits
    assert ls.dataset(str(tmp_path / "t")).semantic_types is expected


def test_feature_flag_once_set_remains_set_through_appends_and_overwrites(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"a": ["x"]}))
    ds.insert(pa.table({"a": ["y"]}))
    assert ds.semantic_types
    ds = ls.write_dataset(
        pa.table({"a": ["z"]}), str(tmp_path / "t"), mode="overwrite", semantic_types=False
    )
    assert ds.semantic_types and ds.version == 3
    assert ds.to_table().column("a").to_pylist() == ["z"]


def test_new_writer_on_legacy_table_never_sets_the_flag_implicitly(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(
        pa.table({"a": ["x"]}), uri, data_storage_version="2.3", semantic_types=False
    )
    ds.insert(pa.table({"a": ["y"]}))
    ds = ls.write_dataset(pa.table({"a": ["z"]}), uri, mode="overwrite")
    assert not ds.semantic_types and ds.data_storage_version == "2.3"
    # asking for 2.3 (or semantic_types=True) on an overwrite is an explicit request
    ds = ls.write_dataset(pa.table({"a": ["w"]}), uri, mode="overwrite", data_storage_version="2.3")
    assert ds.semantic_types


def test_older_clients_reject_flagged_tables_with_the_unsupported_error(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"a": ["x"]}))
    with pytest.raises(Exception, match="cannot be read by this version of Lance"):
        lance.dataset(ds.uri)
    # appends are refused too: pylance checks the writer flags before committing
    with pytest.raises(Exception, match="(?i)not supported|cannot be (read|written)"):
        lance.write_dataset(pa.table({"a": ["y"]}), ds.uri, mode="append")
    assert ls.dataset(ds.uri).version == 1


# ---- representation-only types: appends of any accepted layout -----------------------------

STRING_LAYOUTS = [
    pa.array(["a", None, "ccc"], pa.string()),
    pa.array(["d", "ee", None], pa.large_string()),
    pa.array(["f", "g", "h"], pa.string_view()),
    pa.array(["i", "i", None]).dictionary_encode().cast(pa.dictionary(pa.int16(), pa.string())),
    pa.array(["j", "k", "j"])
    .dictionary_encode()
    .cast(pa.dictionary(pa.int32(), pa.large_string())),
]
BINARY_LAYOUTS = [
    pa.array([b"a", None], pa.binary()),
    pa.array([b"\x00b", b""], pa.large_binary()),
    pa.array([b"c", b"d"], pa.binary_view()),
    pa.array([b"e", b"e"], pa.binary()).dictionary_encode(),
]
LIST_LAYOUTS = [
    pa.array([[1, 2], None], pa.list_(pa.int64())),
    pa.array([[3], []], pa.large_list(pa.int64())),
    pa.array([[4, None]], pa.list_(pa.field("l", pa.int64()))),  # DuckDB names its item "l"
]
DECIMAL_LAYOUTS = [
    pa.array([Decimal("1.25"), None], pa.decimal128(10, 2)),
    pa.array([Decimal("-99999999.99")], pa.decimal256(10, 2)),
]


def _values(arr: pa.Array) -> list[object]:
    return arr.to_pylist()


@pytest.mark.parametrize(
    ("layouts", "default"),
    [
        (STRING_LAYOUTS, pa.string()),
        (BINARY_LAYOUTS, pa.binary()),
        (LIST_LAYOUTS, pa.list_(pa.int64())),
        (DECIMAL_LAYOUTS, pa.decimal128(10, 2)),
    ],
    ids=["string", "binary", "list", "decimal"],
)
def test_representation_only_types_accept_every_layout_across_fragments(
    tmp_path: Path, layouts: list[pa.Array], default: pa.DataType
) -> None:
    first = pa.table({"c": layouts[0]})
    ds = flagged(tmp_path, first)
    for arr in layouts[1:]:
        ds.insert(pa.table({"c": arr}))
    assert ds.version == len(layouts)
    assert len(ds.get_fragments()) == len(layouts)
    got = ds.to_table()
    assert got.schema.field("c").type == default  # created from the default layout
    expected = [v for arr in layouts for v in _values(arr)]
    assert got.column("c").to_pylist() == expected
    # each data file keeps its own layout (views are written as their non-view layout)
    stored = sorted(str(t[0]) for t in file_types(tmp_path / "t").values())
    non_view = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}
    assert stored == sorted(str(non_view.get(a.type, a.type)) for a in layouts)


def test_data_file_schema_records_the_exact_physical_layout(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"s": pa.array(["a"], pa.string())}))
    ds.insert(
        pa.table(
            {"s": pa.array(["b"]).dictionary_encode().cast(pa.dictionary(pa.int16(), pa.string()))}
        )
    )
    types = {str(t[0]) for t in file_types(tmp_path / "t").values()}
    assert types == {"string", "dictionary<values=string, indices=int16, ordered=0>"}
    # the table schema holds the semantic type only
    assert ds.semantic_schema.field("s").logical_type == "string"


def test_schema_compatibility_decimal256_appends_to_decimal_10_2(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"d": pa.array([Decimal("1.00")], pa.decimal128(10, 2))}))
    ds.insert(pa.table({"d": pa.array([Decimal("2.50")], pa.decimal256(10, 2))}))
    assert ds.to_table().column("d").to_pylist() == [Decimal("1.00"), Decimal("2.50")]
    assert ds.semantic_schema.field("d").logical_type == "decimal:10:2"


def test_schema_compatibility_decimal128_12_2_into_decimal_10_2_fails(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"d": pa.array([Decimal("1.00")], pa.decimal128(10, 2))}))
    before = data_files(tmp_path / "t")
    with pytest.raises(ls.SchemaMismatchError) as err:
        ds.insert(pa.table({"d": pa.array([Decimal("1.00")], pa.decimal128(12, 2))}))
    assert (err.value.field_path, err.value.table_type, err.value.input_type) == (
        "d",
        "decimal:10:2",
        "decimal:12:2",
    )
    assert ls.dataset(ds.uri).version == 1 and data_files(tmp_path / "t") == before


def test_schema_compatibility_nested_children_compare_semantic_types(tmp_path: Path) -> None:
    st = pa.struct([("x", pa.string()), ("n", pa.int32())])
    ds = flagged(tmp_path, pa.table({"s": pa.array([{"x": "a", "n": 1}], st)}))
    large = pa.struct([("n", pa.int32()), ("x", pa.large_string())])  # other order, other layout
    ds.insert(pa.table({"s": pa.array([{"x": "b", "n": 2}], large)}))
    assert ds.to_table().column("s").to_pylist() == [{"x": "a", "n": 1}, {"x": "b", "n": 2}]
    assert ds.schema.field("s").type == st


def test_schema_compatibility_polars_large_types_and_column_order(tmp_path: Path) -> None:
    ds = flagged(tmp_path, pa.table({"a": [1], "s": ["x"], "l": pa.array([["p"]])}))
    polars_like = pa.table(
        {
            "l": pa.array([["q"]], pa.large_list(pa.large_string())),
            "s": pa.array(["y"], pa.large_string()),
            "a": [2],
        }
    )
    ds.insert(polars_like)
    ds.insert(pa.table({"a": [3]}))  # missing nullable columns read as null
    assert ds.to_table().to_pydict() == {
        "a": [1, 2, 3],
        "s": ["x", "y", None],
        "l": [["p"], ["q"], None],
    }


def test_legacy_tables_keep_the_legacy_rule(tmp_path: Path) -> None:
    ds = ls.write_dataset(pa.table({"s": pa.array(["a"], pa.string())}), str(tmp_path / "t"))
    with pytest.raises(ls.SchemaMismatchError) as err:
        ds.insert(pa.table({"s": pa.array(["b"], pa.large_string())}))
    assert (err.value.field_path, err.value.table_type, err.value.input_type) == (
        "s",
        "string",
        "large_string",
    )


# ---- failure semantics ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "data", "path", "semantic", "input_type"),
    [
        (
            pa.table({"s": ["a"]}),
            pa.table({"s": pa.array([1], pa.int64())}),
            "s",
            "string",
            "int64",
        ),
        (
            pa.table({"l": pa.array([["a"]])}),
            pa.table({"l": pa.array([[1]], pa.list_(pa.int32()))}),
            "l.item",
            "string",
            "int32",
        ),
        (
            pa.table({"t": pa.array([1], pa.timestamp("us"))}),
            pa.table({"t": pa.array([1], pa.timestamp("ms"))}),
            "t",
            "timestamp:us:-",
            "timestamp:ms:-",
        ),
        (
            pa.table({"s": pa.array([{"x": "a"}])}),
            pa.table({"s": pa.array([{"x": b"a"}])}),
            "s.x",
            "string",
            "binary",
        ),
        (pa.table({"b": [b"x"]}), pa.table({"b": ["x"]}), "b", "binary", "string"),
    ],
    ids=[
        "int64-into-string",
        "list-of-int-into-list-of-string",
        "timestamp-unit",
        "struct-child",
        "string-into-binary",
    ],
)
def test_failure_input_type_not_accepted_fails_before_any_file_is_written(
    tmp_path: Path, table: pa.Table, data: pa.Table, path: str, semantic: str, input_type: str
) -> None:
    ds = flagged(tmp_path, table)
    before = data_files(tmp_path / "t")
    with pytest.raises(ls.UnsupportedInputTypeError) as err:
        ds.insert(data)
    e = err.value
    assert (e.field_path, e.semantic_type, e.input_type) == (path, semantic, input_type)
    assert isinstance(e, TypeError)
    assert data_files(tmp_path / "t") == before
    assert ls.dataset(ds.uri).version == 1


def test_failure_array_in_another_layout_is_an_invariant_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = flagged(tmp_path, pa.table({"s": ["a"]}))
    real = boundary._convert

    def wrong(arr: pa.Array, tf: object) -> tuple[pa.Array, bool]:
        out, large = real(arr, tf)
        return out.cast(pa.large_string()), large  # not what the file declares

    monkeypatch.setattr(boundary, "_convert", wrong)
    before = data_files(tmp_path / "t")
    with pytest.raises(ls.InvariantViolationError) as err:
        ds.insert(pa.table({"s": pa.array(["b"], pa.string())}))
    e = err.value
    assert (e.field_path, e.expected_layout, e.actual_layout) == ("s", "string", "large_string")
    assert (e.expected_extension, e.actual_extension) == (None, None)
    assert data_files(tmp_path / "t") == before and ls.dataset(ds.uri).version == 1


# ---- reads ------------------------------------------------------------------------------------


def test_reads_return_the_default_output_layout_from_any_file_layout(tmp_path: Path) -> None:
    ds = flagged(
        tmp_path,
        pa.table(
            {
                "s": pa.array(["a"], pa.string()),
                "d": pa.array([Decimal("1")], pa.decimal128(10, 0)),
                "w": pa.array([Decimal("1")], pa.decimal256(40, 0)),
                "l": pa.array([[1]], pa.list_(pa.int8())),
            }
        ),
    )
    ds.insert(
        pa.table(
            {
                "s": pa.array(["b"]).dictionary_encode(),
                "d": pa.array([Decimal("2")], pa.decimal256(10, 0)),
                "w": pa.array([Decimal("2")], pa.decimal256(40, 0)),
                "l": pa.array([[2]], pa.large_list(pa.int8())),
            }
        )
    )
    got = ds.to_table()
    assert got.schema == pa.schema(
        [
            ("s", pa.string()),
            ("d", pa.decimal128(10, 0)),
            ("w", pa.decimal256(40, 0)),
            ("l", pa.list_(pa.int8())),
        ]
    )
    assert got.to_pydict() == {
        "s": ["a", "b"],
        "d": [Decimal("1"), Decimal("2")],
        "w": [Decimal("1"), Decimal("2")],
        "l": [[1], [2]],
    }


def test_legacy_alias_in_flagged_table_reads_as_canonical_type_with_implied_encoding(
    tmp_path: Path,
) -> None:
    ds = flagged(tmp_path, pa.table({"s": pa.array(["a"], pa.string())}))
    # rewrite the table schema's logical_type to the legacy alias, as an older writer would
    versions = tmp_path / "t" / "_versions"
    name = next(n for n in os.listdir(versions) if n.endswith(".manifest"))
    m = decode_manifest_file((versions / name).read_bytes())
    f = dataclasses.replace(m.schema.fields[0], logical_type="large_string")
    patched = dataclasses.replace(m, schema=TableSchema.of([f], m.schema.metadata))
    (versions / name).write_bytes(encode_manifest_file(patched, None))
    ds = ls.dataset(ds.uri)
    assert ds.semantic_schema.field("s").logical_type == "large_string"
    assert ds.schema.field("s").type == pa.large_string()
    assert ds.to_table().column("s").type == pa.large_string()
    ds.insert(pa.table({"s": pa.array(["b"], pa.string())}))  # still a string column
    assert ds.to_table().column("s").to_pylist() == ["a", "b"]
