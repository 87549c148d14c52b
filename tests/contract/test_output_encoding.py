"""Spec "Output Encoding" and its failure rows: recording at creation, selection order
(request override > field entry > type default), lossless conversion on read, overflow,
invalid and unknown values, metadata-only updates."""

from __future__ import annotations

import dataclasses
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.codecs import convert
from lance_semantic.manifest.codec import decode_manifest_file, encode_manifest_file
from lance_semantic.schema.field import TableSchema, freeze_metadata

KEYS = [
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
]


def make(tmp_path: Path, table: pa.Table) -> ls.Dataset:
    return ls.write_dataset(table, str(tmp_path / "t"), data_storage_version="2.3")


def data_files(ds: ls.Dataset) -> set[str]:
    return set(os.listdir(os.path.join(ds.uri, "data")))


# ---- validation bullet 3, whole -------------------------------------------------------------


def test_validation_appends_of_every_string_layout_and_reads_follow_encoding(
    tmp_path: Path,
) -> None:
    """On a flagged table, appends of Utf8, LargeUtf8, Utf8View and Dictionary data to one
    string column succeed across fragments. Reads return the recorded output encoding, and
    request overrides change it."""
    ds = make(tmp_path, pa.table({"s": pa.array(["a", None], pa.large_string())}))
    assert ds.semantic_schema.field("s").logical_type == "string"
    assert ds.semantic_schema.field("s").output_encoding == "large_utf8"
    ds.insert(pa.table({"s": pa.array(["b"], pa.string())}))
    ds.insert(pa.table({"s": pa.array(["c", "dd"], pa.string_view())}))
    ds.insert(pa.table({"s": pa.array(["e", "e"]).dictionary_encode()}))
    assert len(ds.get_fragments()) == 4
    expected = ["a", None, "b", "c", "dd", "e", "e"]
    got = ds.to_table()
    assert got.schema.field("s").type == pa.large_string()  # the recorded encoding
    assert ds.schema.field("s").type == pa.large_string()
    assert got.column("s").to_pylist() == expected
    for enc, typ in [
        ("utf8", pa.string()),
        ("utf8_view", pa.string_view()),
        ("dictionary:int16:utf8", pa.dictionary(pa.int16(), pa.string())),
    ]:
        over = ds.to_table(output_encodings={"s": enc})
        assert over.schema.field("s").type == typ
        assert over.column("s").to_pylist() == expected
    # appends never change the recorded entry
    assert ls.dataset(ds.uri).semantic_schema.field("s").output_encoding == "large_utf8"


def test_output_encoding_recorded_only_when_the_input_differs_from_the_default(
    tmp_path: Path,
) -> None:
    ds = make(
        tmp_path,
        pa.table(
            {
                "u": pa.array(["a"], pa.string()),
                "v": pa.array(["a"], pa.string_view()),
                "k": pa.array(["a"])
                .dictionary_encode()
                .cast(pa.dictionary(pa.int16(), pa.string())),
                "b": pa.array([b"a"], pa.large_binary()),
                "l": pa.array([[1]], pa.large_list(pa.int8())),
                "d": pa.array([Decimal("1")], pa.decimal256(10, 0)),
                "w": pa.array([Decimal("1")], pa.decimal256(40, 0)),
                "i": pa.array([1], pa.int32()),
            }
        ),
    )
    got = {f.path: f.output_encoding for f in ds.semantic_schema}
    assert got == {
        "u": None,
        "v": "utf8_view",
        "k": "dictionary:int16:utf8",
        "b": "large_binary",
        "l": "large_list",
        "l.item": None,
        "d": "decimal256",
        "w": None,
        "i": None,
    }
    assert ds.to_table().schema == pa.schema(
        [
            ("u", pa.string()),
            ("v", pa.string_view()),
            ("k", pa.dictionary(pa.int16(), pa.string())),
            ("b", pa.large_binary()),
            ("l", pa.large_list(pa.int8())),
            ("d", pa.decimal256(10, 0)),
            ("w", pa.decimal256(40, 0)),
            ("i", pa.int32()),
        ]
    )


def test_nested_children_carry_their_own_output_encoding(tmp_path: Path) -> None:
    st = pa.struct([("x", pa.large_string()), ("y", pa.string())])
    table = pa.table(
        {
            "s": pa.array([{"x": "a", "y": "b"}], st),
            "l": pa.array([["p", "q"]], pa.list_(pa.large_string())),
            "m": pa.array([[("k", "v")]], pa.map_(pa.string(), pa.large_string())),
        }
    )
    ds = make(tmp_path, table)
    enc = {f.path: f.output_encoding for f in ds.semantic_schema}
    assert enc["s.x"] == "large_utf8" and enc["s.y"] is None
    assert enc["l.item"] == "large_utf8" and enc["m.entries.value"] == "large_utf8"
    assert ds.to_table().schema.field("s").type == st
    overrides = {"s.x": "utf8_view", "l.item": "dictionary:int8:utf8", "m.entries.value": "utf8"}
    got = ds.to_table(output_encodings=overrides)
    assert got.schema.field("s").type == pa.struct([("x", pa.string_view()), ("y", pa.string())])
    item = got.schema.field("l").type.value_type
    assert item == pa.dictionary(pa.int8(), pa.string())
    assert got.schema.field("m").type.item_type == pa.string()
    assert got.column("s").to_pylist() == [{"x": "a", "y": "b"}]
    assert got.column("l").to_pylist() == [["p", "q"]]
    assert got.column("m").to_pylist() == [[("k", "v")]]


def test_decimal256_hint_at_low_precision_and_override_to_decimal128(tmp_path: Path) -> None:
    ds = make(tmp_path, pa.table({"d": pa.array([Decimal("-12.34")], pa.decimal256(9, 2))}))
    ds.insert(pa.table({"d": pa.array([Decimal("0.01")], pa.decimal128(9, 2))}))
    assert ds.to_table().schema.field("d").type == pa.decimal256(9, 2)
    over = ds.to_table(output_encodings={"d": "decimal128"})
    assert over.schema.field("d").type == pa.decimal128(9, 2)
    assert over.column("d").to_pylist() == [Decimal("-12.34"), Decimal("0.01")]


@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("value", ["utf8", "large_utf8"])
def test_dictionary_outputs_with_every_key_width(
    tmp_path: Path, key: pa.DataType, value: str
) -> None:
    ds = make(tmp_path, pa.table({"s": ["a", "b", None, "a"]}))
    ds.insert(pa.table({"s": pa.array(["c"], pa.large_string())}))
    got = ds.to_table(output_encodings={"s": f"dictionary:{key}:{value}"})
    vt = pa.string() if value == "utf8" else pa.large_string()
    assert got.schema.field("s").type == pa.dictionary(key, vt)
    assert got.column("s").to_pylist() == ["a", "b", None, "a", "c"]


def test_binary_and_list_outputs(tmp_path: Path) -> None:
    ds = make(
        tmp_path,
        pa.table(
            {
                "b": pa.array([b"x", None], pa.binary()),
                "l": pa.array([[1, 2], []], pa.list_(pa.int16())),
            }
        ),
    )
    ds.insert(
        pa.table(
            {
                "b": pa.array([b"y"], pa.binary_view()),
                "l": pa.array([[3]], pa.large_list(pa.int16())),
            }
        )
    )
    for enc, typ in [
        ("large_binary", pa.large_binary()),
        ("binary_view", pa.binary_view()),
        ("dictionary:uint16:binary", pa.dictionary(pa.uint16(), pa.binary())),
    ]:
        got = ds.to_table(columns=["b"], output_encodings={"b": enc})
        assert got.schema.field("b").type == typ
        assert got.column("b").to_pylist() == [b"x", None, b"y"]
    got = ds.to_table(columns=["l"], output_encodings={"l": "large_list"})
    assert got.schema.field("l").type == pa.large_list(pa.int16())
    assert got.column("l").to_pylist() == [[1, 2], [], [3]]


def test_take_and_fragment_reads_accept_output_encodings(tmp_path: Path) -> None:
    ds = make(tmp_path, pa.table({"s": ["a", "b", "c"]}))
    ds.insert(pa.table({"s": pa.array(["d"], pa.large_string())}))
    got = ds.take([3, 0], output_encodings={"s": "large_utf8"})
    assert got.schema.field("s").type == pa.large_string()
    assert got.column("s").to_pylist() == ["d", "a"]
    frag = ds.get_fragments()[1]
    got = frag.take([0], output_encodings={"s": "utf8_view"})
    assert got.schema.field("s").type == pa.string_view() and got.column("s").to_pylist() == ["d"]
    got = frag.to_table(output_encodings={"s": "dictionary:int8:utf8"})
    assert got.column("s").to_pylist() == ["d"]
    batches = list(ds.to_batches(output_encodings={"s": "large_utf8"}, batch_size=2))
    assert all(b.schema.field("s").type == pa.large_string() for b in batches)


# ---- invalid and unknown values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "encoding"),
    [
        ("d", "decimal128"),
        ("s", "large_list"),
        ("s", "dictionary:float32:utf8"),
        ("i", "large_utf8"),
        ("s", "dictionary:int8:binary"),
        ("s", "nonsense"),
    ],
)
def test_failure_invalid_output_encoding_fails_the_schema_update_and_commits_nothing(
    tmp_path: Path, column: str, encoding: str
) -> None:
    ds = make(
        tmp_path,
        pa.table(
            {
                "d": pa.array([Decimal("1")], pa.decimal256(40, 0)),
                "s": ["a"],
                "i": pa.array([1], pa.int32()),
            }
        ),
    )
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.set_output_encoding(column, encoding)
    assert (err.value.field_path, err.value.encoding) == (column, encoding)
    assert isinstance(err.value, ValueError)
    assert ls.dataset(ds.uri).version == 1


def test_invalid_request_override_raises_naming_the_path_and_value(tmp_path: Path) -> None:
    ds = make(tmp_path, pa.table({"s": ["a"]}))
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.to_table(output_encodings={"s": "large_list"})
    assert (err.value.field_path, err.value.encoding) == ("s", "large_list")
    with pytest.raises(ls.InvalidOutputEncodingError):
        ds.take([0], output_encodings={"nope": "utf8"})


def _set_raw_entry(ds: ls.Dataset, path: str, value: bytes) -> ls.Dataset:
    versions = os.path.join(ds.uri, "_versions")
    name = sorted(n for n in os.listdir(versions) if n.endswith(".manifest"))[0]  # V2: newest
    full = os.path.join(versions, name)
    with open(full, "rb") as fh:
        m = decode_manifest_file(fh.read())
    flat = []
    for f in m.schema.flatten():
        if f.path == path:
            md = dict(f.metadata)
            md["lance-schema:output-encoding"] = value
            f = dataclasses.replace(f, metadata=freeze_metadata(md))
        flat.append(f)
    patched = dataclasses.replace(m, schema=TableSchema.from_flat(flat, m.schema.metadata))
    with open(full, "wb") as out:
        out.write(encode_manifest_file(patched, None))
    return ls.dataset(ds.uri)


@pytest.mark.parametrize("entry", [b"utf16", b"large_list", b"dictionary:int8:binary", b""])
def test_failure_unrecognised_field_entry_reads_with_the_default(
    tmp_path: Path, entry: bytes
) -> None:
    ds = make(tmp_path, pa.table({"s": ["a", "b"]}))
    ds = _set_raw_entry(ds, "s", entry)
    assert ds.semantic_schema.field("s").output_encoding == entry.decode()
    got = ds.to_table()
    assert got.schema.field("s").type == pa.string()
    assert got.column("s").to_pylist() == ["a", "b"]


# ---- metadata-only updates ----------------------------------------------------------------


def test_set_output_encoding_is_metadata_only(tmp_path: Path) -> None:
    ds = make(tmp_path, pa.table({"s": ["a", "b"]}))
    ds.insert(pa.table({"s": pa.array(["c"], pa.large_string())}))
    files = data_files(ds)
    ds.set_output_encoding("s", "utf8_view")
    assert ds.version == 3 and data_files(ds) == files
    reopened = ls.dataset(ds.uri)
    assert reopened.schema.field("s").type == pa.string_view()
    assert reopened.to_table().column("s").to_pylist() == ["a", "b", "c"]
    ds.set_output_encoding("s", None)
    assert ds.version == 4 and data_files(ds) == files
    assert ls.dataset(ds.uri).semantic_schema.field("s").output_encoding is None
    assert ls.dataset(ds.uri).schema.field("s").type == pa.string()


def test_set_output_encoding_on_a_legacy_table_is_refused(tmp_path: Path) -> None:
    ds = ls.write_dataset(pa.table({"s": ["a"]}), str(tmp_path / "t"))
    with pytest.raises(ls.InvalidOutputEncodingError):
        ds.set_output_encoding("s", "large_utf8")
    assert ls.dataset(ds.uri).version == 1


# ---- overflow ----------------------------------------------------------------------------------


def test_overflow_emits_smaller_batches_when_each_value_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = [f"{i:04d}" * 5 for i in range(50)]  # 20 bytes each, 1000 in all
    ds = make(tmp_path, pa.table({"s": pa.array(values, pa.large_string())}))
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 100)
    batches = list(ds.to_batches(output_encodings={"s": "utf8"}))
    assert len(batches) > 1
    for b in batches:
        assert b.schema.field("s").type == pa.string()
        assert sum(len(v) for v in b.column("s").to_pylist()) <= 100
    assert [v for b in batches for v in b.column("s").to_pylist()] == values
    assert ds.take([49, 0], output_encodings={"s": "utf8"}).column("s").to_pylist() == [
        values[49],
        values[0],
    ]


def test_overflow_of_a_single_value_raises_naming_field_size_and_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = make(tmp_path, pa.table({"s": pa.array(["x" * 10, "y" * 500], pa.large_string())}))
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 100)
    with pytest.raises(ls.OutputEncodingOverflowError) as err:
        ds.to_table(output_encodings={"s": "utf8"})
    e = err.value
    assert (e.field_path, e.value_size, e.requested_encoding) == ("s", 500, "utf8")
    assert "large_utf8" in str(e) and "utf8_view" in str(e)
    # the suggested layouts hold it
    assert ds.to_table(output_encodings={"s": "utf8_view"}).column("s").to_pylist()[1] == "y" * 500


def test_dictionary_key_too_narrow_emits_smaller_batches(tmp_path: Path) -> None:
    values = [f"v{i}" for i in range(300)]
    ds = make(tmp_path, pa.table({"s": values}))
    batches = list(ds.to_batches(output_encodings={"s": "dictionary:int8:utf8"}))
    assert len(batches) >= 3  # int8 keys hold 128 distinct values per batch
    assert all(len(b.column("s").dictionary) <= 128 for b in batches)
    assert [v for b in batches for v in b.column("s").to_pylist()] == values


def test_nested_overflow_splits_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [[f"{i:03d}" * 4] * 2 for i in range(20)]  # 24 bytes a row
    ds = make(tmp_path, pa.table({"l": pa.array(rows, pa.list_(pa.large_string()))}))
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 50)
    batches = list(ds.to_batches(output_encodings={"l.item": "utf8"}))
    assert len(batches) > 1
    assert [v for b in batches for v in b.column("l").to_pylist()] == rows


# Every kind of overflow names what overflowed: bytes of a string or binary value, items of a
# list value, distinct values of a dictionary; the requested encoding as requested (the
# dictionary, not its value layout); and a hint that holds the value.
OVERFLOWS = [
    # (column, request path, request, value_size, unit, hint, wrong words)
    (
        pa.array(["a", "b" * 500], pa.large_string()),
        "c",
        "utf8",
        500,
        "bytes",
        "large_utf8 / utf8_view",
        "binary",
    ),
    (
        pa.array([b"a", b"b" * 500], pa.large_binary()),
        "c",
        "binary",
        500,
        "bytes",
        "large_binary / binary_view",
        "utf8",
    ),
    (
        pa.array(["a", "b" * 500], pa.large_string()),
        "c",
        "dictionary:int32:utf8",
        500,
        "bytes",
        "dictionary:int32:large_utf8",
        "binary",
    ),
    (
        pa.array([b"a", b"b" * 500], pa.large_binary()),
        "c",
        "dictionary:int16:binary",
        500,
        "bytes",
        "dictionary:int16:large_binary",
        "utf8",
    ),
    (
        pa.array([[1], list(range(500))], pa.large_list(pa.int32())),
        "c",
        "list",
        500,
        "items",
        "large_list",
        "utf8",
    ),
    (
        pa.array([["a"], [f"v{i}" for i in range(300)]], pa.list_(pa.string())),
        "c.item",
        "dictionary:int8:utf8",
        300,
        "distinct values",
        "dictionary:int32:utf8",
        "bytes",
    ),
    (
        pa.array([["a"], [f"v{i}" for i in range(300)]], pa.list_(pa.string())),
        "c.item",
        "dictionary:uint8:large_utf8",
        300,
        "distinct values",
        "dictionary:int32:large_utf8",
        "bytes",
    ),
]


@pytest.mark.parametrize("column,path,request_,size,unit,hint,wrong", OVERFLOWS)
def test_output_encoding_overflow_names_size_unit_and_requested_encoding(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    column: pa.Array,
    path: str,
    request_: str,
    size: int,
    unit: str,
    hint: str,
    wrong: str,
) -> None:
    ds = make(tmp_path, pa.table({"c": column}))
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 100)
    for read in (
        lambda: ds.to_table(output_encodings={path: request_}),
        lambda: ds.take([1], output_encodings={path: request_}),
        lambda: list(ds.to_batches(output_encodings={path: request_}, batch_size=1)),
    ):
        with pytest.raises(ls.OutputEncodingOverflowError) as err:
            read()
        e = err.value
        assert (e.field_path, e.value_size, e.unit, e.requested_encoding) == (
            path,
            size,
            unit,
            request_,
        )
        message = str(e)
        assert f"{size} {unit}" in message and hint in message
        assert wrong not in message and " 0 " not in message
    # the first row alone fits the request; rows are split, never truncated
    assert ds.take([0], output_encodings={path: request_}).column("c").to_pylist() == [
        column[0].as_py()
    ]


@pytest.mark.slow
def test_real_offsets_over_2_gib(tmp_path: Path) -> None:
    """Over 2^31 - 1 bytes of real strings: utf8 reads split batches, nothing truncated."""
    chunk = "x" * (1 << 20)
    n = 2100  # 2.05 GiB
    arr = pa.array([chunk] * n, pa.large_string())
    ds = make(tmp_path, pa.table({"s": arr}))
    total, rows = 0, 0
    for b in ds.to_batches(output_encodings={"s": "utf8"}, batch_size=4096):
        assert b.schema.field("s").type == pa.string()
        rows += b.num_rows
        total += sum(len(v) for v in b.column("s").to_pylist())
    assert rows == n and total == n * len(chunk)
