"""Schema evolution on tables with semantic types (spec "Output Encoding": a column created by
add column or alter type records its input layout; "Changing the entry is a metadata-only
schema update"; "Extension Semantic Types": metadata survives schema evolution; "Metadata
only: output encodings and extension metadata never require rewriting data files")."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.commit.committer import load_manifest
from lance_semantic.errors import ColumnNotFoundError, SchemaEvolutionError
from lance_semantic.manifest.codec import decode_transaction
from lance_semantic.manifest.flags import FLAG_SEMANTIC_TYPES
from lance_semantic.storage.object_store import open_store

BBOX = {"ARROW:extension:name": "example.bbox", "ARROW:extension:metadata": '{"crs":"EPSG:4326"}'}
BBOX_BYTES = {k: v.encode() for k, v in BBOX.items()}


def make(tmp_path: Path, n: int = 10) -> ls.Dataset:
    """A flagged table of 3 fragments, one with deleted rows."""
    schema = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("s", pa.string()),
            pa.field("d", pa.decimal128(10, 2)),
            pa.field("l", pa.list_(pa.string())),
            pa.field("box", pa.list_(pa.float32(), 4), metadata=BBOX),
            pa.field("tag", pa.int32(), metadata={**BBOX, "other": "x"}),
        ]
    )
    table = pa.table(
        {
            "a": list(range(n)),
            "s": [f"s{i}" for i in range(n)],
            "d": [Decimal(i) / 4 for i in range(n)],
            "l": [[f"x{i}"] * (i % 3) if i % 5 else None for i in range(n)],
            "box": [[float(i)] * 4 for i in range(n)],
            "tag": list(range(n)),
        },
        schema=schema,
    )
    ds = ls.write_dataset(
        table, str(tmp_path / "t"), data_storage_version="2.3", max_rows_per_file=4
    )
    assert ds.semantic_types
    ds.delete("a = 1 or a = 2")
    return ds


def data_files(ds: ls.Dataset) -> set[str]:
    return set(os.listdir(os.path.join(ds.uri, "data")))


def operation(ds: ls.Dataset) -> str:
    name = ds.manifest.transaction_file
    with open(os.path.join(ds.uri, "_transactions", name), "rb") as fh:
        return type(decode_transaction(fh.read()).operation).__name__


def file_schema(ds: ls.Dataset, fragment: int = 0) -> pa.Schema:
    path = ds.manifest.fragments[fragment].files[-1].path
    return LanceFileReader(os.path.join(ds.uri, "data", path)).metadata().schema


def live(ds: ls.Dataset, column: str) -> list[object]:
    return ds.to_table(columns=[column]).column(0).to_pylist()


# ---- add columns: the input layout is recorded -----------------------------------------------


def test_add_columns_in_mixed_layouts_records_output_encodings(tmp_path: Path) -> None:
    ds = make(tmp_path)
    before = ds.to_table()

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        a = batch["a"].to_pylist()
        return pa.record_batch(
            {
                "big": pa.array([f"v{i}" for i in a], pa.large_string()),
                "view": pa.array([f"w{i}" for i in a], pa.string_view()),
                "cat": pa.array([f"c{i % 2}" for i in a]).dictionary_encode(),
                "wide": pa.array([Decimal(i) for i in a], pa.decimal256(10, 2)),
                "ll": pa.array([[i] for i in a], pa.large_list(pa.int64())),
                "plain": pa.array(a, pa.int64()),
            }
        )

    ds.add_columns(udf, read_columns=["a"])
    schema = ds.semantic_schema
    expected = {
        "big": ("string", "large_utf8"),
        "view": ("string", "utf8_view"),
        "cat": ("string", "dictionary:int32:utf8"),
        "wide": ("decimal:10:2", "decimal256"),
        "ll": ("list", "large_list"),
        "plain": ("int64", None),
    }
    assert {
        n: (schema.field(n).logical_type, schema.field(n).output_encoding) for n in expected
    } == expected
    # reads return the layouts the columns were computed in
    out = ds.to_table()
    assert out.schema.field("big").type == pa.large_string()
    assert out.schema.field("view").type == pa.string_view()
    assert out.schema.field("cat").type == pa.dictionary(pa.int32(), pa.string())
    assert out.schema.field("wide").type == pa.decimal256(10, 2)
    assert out.schema.field("ll").type == pa.large_list(pa.int64())
    a = before.column("a").to_pylist()
    assert out.column("big").to_pylist() == [f"v{i}" for i in a]
    assert out.column("cat").to_pylist() == [f"c{i % 2}" for i in a]
    assert out.column("wide").to_pylist() == [Decimal(i) for i in a]
    # the data files keep the layouts (a view is stored as a non-view layout)
    physical = file_schema(ds)
    assert physical.field("big").type == pa.large_string()
    assert physical.field("view").type == pa.string()
    assert physical.field("cat").type == pa.dictionary(pa.int32(), pa.string())
    assert physical.field("wide").type == pa.decimal256(10, 2)
    assert physical.field("ll").type == pa.large_list(pa.int64())
    assert operation(ds) == "Merge"
    # one new data file per fragment, exactly as many rows as the fragment holds
    for frag in ds.manifest.fragments:
        path = os.path.join(ds.uri, "data", frag.files[-1].path)
        assert LanceFileReader(path).metadata().num_rows == frag.physical_rows


def test_add_sql_columns_follow_the_read_layout(tmp_path: Path) -> None:
    ds = make(tmp_path)
    ds.set_output_encoding("s", "large_utf8")
    ds.add_columns({"up": "upper(s)", "twice": "a * 2", "k": "'lit'"})
    schema = ds.semantic_schema
    assert schema.field("up").logical_type == "string"
    assert schema.field("up").output_encoding == "large_utf8"
    assert ds.schema.field("twice").type == pa.int32()
    assert not schema.field("k").nullable
    assert live(ds, "up") == [s.upper() for s in live(ds, "s")]


def test_add_all_null_columns_records_layout_without_writing(tmp_path: Path) -> None:
    ds = make(tmp_path)
    files = data_files(ds)
    ds.add_columns([pa.field("n", pa.large_string()), pa.field("box2", pa.int64(), metadata=BBOX)])
    assert data_files(ds) == files
    assert ds.semantic_schema.field("n").output_encoding == "large_utf8"
    assert ds.semantic_schema.field("box2").extension_name == "example.bbox"
    assert ds.schema.field("n").type == pa.large_string()
    assert live(ds, "n") == [None] * ds.count_rows()


def test_add_columns_keeps_rows_aligned_with_deletions(tmp_path: Path) -> None:
    ds = make(tmp_path)
    ds.add_columns({"a2": "a + 100"})
    assert live(ds, "a2") == [a + 100 for a in live(ds, "a")]
    ds.delete("a = 7")
    assert live(ds, "a2") == [a + 100 for a in live(ds, "a")]
    assert ds.take([0, 4]).column("a2").to_pylist() == [100, 106]  # a: 0 3 4 5 6 8 9


# ---- alter within one semantic type: metadata only -------------------------------------------


@pytest.mark.parametrize(
    ("path", "data_type", "encoding"),
    [
        ("s", pa.large_string(), "large_utf8"),
        ("s", pa.dictionary(pa.int16(), pa.string()), "dictionary:int16:utf8"),
        ("s", pa.string_view(), "utf8_view"),
        ("d", pa.decimal256(10, 2), "decimal256"),
        ("l", pa.large_list(pa.string()), "large_list"),
    ],
)
def test_alter_within_a_semantic_type_is_metadata_only(
    tmp_path: Path, path: str, data_type: pa.DataType, encoding: str
) -> None:
    ds = make(tmp_path)
    files, ids = data_files(ds), [f.id for f in ds.semantic_schema]
    fragments = ds.manifest.fragments
    values = live(ds, path)
    ds.alter_columns({"path": path, "data_type": data_type})
    assert data_files(ds) == files  # nothing written
    assert ds.manifest.fragments == fragments
    assert [f.id for f in ds.semantic_schema] == ids
    assert ds.semantic_schema.field(path).output_encoding == encoding
    assert operation(ds) == "Project"
    assert ds.schema.field(path).type == data_type
    got = ds.to_table(columns=[path]).column(0)
    assert got.type == data_type
    assert got.to_pylist() == values
    # back to the default: the entry goes away
    default = {"s": pa.string(), "d": pa.decimal128(10, 2), "l": pa.list_(pa.string())}[path]
    ds.alter_columns({"path": path, "data_type": default})
    assert ds.semantic_schema.field(path).output_encoding is None
    assert data_files(ds) == files


def test_alter_within_type_and_rename_in_one_commit(tmp_path: Path) -> None:
    ds = make(tmp_path)
    version, files = ds.version, data_files(ds)
    ds.alter_columns({"path": "l", "data_type": pa.large_list(pa.large_string()), "name": "L"})
    assert ds.version == version + 1 and data_files(ds) == files
    field = ds.semantic_schema.field("L")
    assert field.output_encoding == "large_list"
    assert field.children[0].output_encoding == "large_utf8"
    assert ds.schema.field("L").type == pa.large_list(pa.large_string())


# ---- alter across semantic types: a rewrite under new ids ------------------------------------


def test_alter_across_semantic_types_gets_new_field_ids(tmp_path: Path) -> None:
    ds = make(tmp_path)
    old = {n: ds.semantic_schema.field(n).id for n in ("a", "d")}
    values = {n: live(ds, n) for n in ("a", "d")}
    high = max(f.id for f in ds.semantic_schema)
    files = data_files(ds)
    ds.alter_columns(
        {"path": "a", "data_type": pa.int64()}, {"path": "d", "data_type": pa.decimal128(12, 2)}
    )
    schema = ds.semantic_schema
    assert schema.field("a").id == high + 1 and schema.field("d").id == high + 2
    assert schema.field("a").logical_type == "int64"
    assert schema.field("d").logical_type == "decimal:12:2"
    assert not {old["a"], old["d"]} & {f.id for f in schema}
    assert operation(ds) == "Merge"
    assert len(data_files(ds) - files) == len(ds.manifest.fragments)
    assert live(ds, "a") == values["a"]
    assert live(ds, "d") == values["d"]
    assert ds.schema.field("d").type == pa.decimal128(12, 2)


def test_alter_to_another_type_records_the_requested_layout(tmp_path: Path) -> None:
    """int32 -> large_string is refused like pylance; decimal(10,2) -> decimal256(40,2) is a
    new semantic type whose default layout is decimal256 (nothing recorded)."""
    ds = make(tmp_path)
    with pytest.raises(SchemaEvolutionError):
        ds.alter_columns({"path": "a", "data_type": pa.large_string()})
    ds.alter_columns({"path": "d", "data_type": pa.decimal256(40, 2)})
    field = ds.semantic_schema.field("d")
    assert field.logical_type == "decimal:40:2" and field.output_encoding is None
    assert ds.schema.field("d").type == pa.decimal256(40, 2)


# ---- extension metadata survives every change ------------------------------------------------


def test_extension_metadata_survives_rename_nullability_and_type_change(tmp_path: Path) -> None:
    ds = make(tmp_path)
    boxes = live(ds, "box")
    ds.alter_columns({"path": "box", "name": "bbox"}, {"path": "tag", "nullable": False})
    assert dict(ds.semantic_schema.field("bbox").metadata) == BBOX_BYTES
    assert dict(ds.semantic_schema.field("tag").metadata) == {**BBOX_BYTES, "other": b"x"}
    ds.alter_columns(
        {"path": "bbox", "data_type": pa.list_(pa.float64(), 4)},
        {"path": "tag", "data_type": pa.int64(), "nullable": True},
    )
    for name, metadata in (("bbox", BBOX_BYTES), ("tag", {**BBOX_BYTES, "other": b"x"})):
        field = ds.semantic_schema.field(name)
        assert dict(field.metadata) == metadata
        assert field.extension_name == "example.bbox"
        assert ds.schema.field(name).metadata == {k.encode(): v for k, v in metadata.items()}
    assert ds.semantic_schema.field("bbox").logical_type == "fixed_size_list:double:4"
    assert live(ds, "bbox") == boxes
    # the data file of the rewritten column carries the extension too
    physical = file_schema(ds).field("bbox")
    assert physical.metadata[b"ARROW:extension:name"] == b"example.bbox"
    ds.drop_columns(["tag"])
    assert dict(ds.semantic_schema.field("bbox").metadata) == BBOX_BYTES


def test_extension_metadata_on_a_new_column(tmp_path: Path) -> None:
    ds = make(tmp_path)
    field = pa.field("b2", pa.list_(pa.float32(), 4), metadata=BBOX)

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([batch["box"]], schema=pa.schema([field]))

    ds.add_columns(udf, read_columns=["box"])
    assert dict(ds.semantic_schema.field("b2").metadata) == BBOX_BYTES
    assert live(ds, "b2") == live(ds, "box")


# ---- errors and the flag ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "error"),
    [
        (lambda ds: ds.alter_columns({"path": "zz", "data_type": pa.int64()}), ColumnNotFoundError),
        (lambda ds: ds.drop_columns(["box.zz"]), ColumnNotFoundError),
        (lambda ds: ds.alter_columns({"path": "s", "data_type": pa.int64()}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "a", "data_type": pa.int8()}), SchemaEvolutionError),
        (lambda ds: ds.add_columns({"s": "a"}), SchemaEvolutionError),
    ],
)
def test_errors_commit_nothing(tmp_path: Path, op: object, error: type[Exception]) -> None:
    ds = make(tmp_path, n=300)
    version, files = ds.version, data_files(ds)
    with pytest.raises(error):
        op(ds)  # type: ignore[operator]
    assert ds.version == version
    assert ls.dataset(ds.uri).version == version
    assert data_files(ds) == files


def test_flag_is_kept_and_stock_pylance_still_refuses(tmp_path: Path) -> None:
    ds = make(tmp_path)
    ds.add_columns({"x": "a"})
    ds.alter_columns({"path": "x", "data_type": pa.int64()}, {"path": "s", "name": "S"})
    ds.drop_columns(["x"])
    assert ls.dataset(ds.uri).semantic_types
    manifest = load_manifest(open_store(ds.uri))
    assert manifest.reader_feature_flags & FLAG_SEMANTIC_TYPES
    with pytest.raises((OSError, ValueError), match="cannot be read"):
        lance.dataset(ds.uri).to_table()
