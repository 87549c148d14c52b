"""Spec validation bullet four: nested json (struct<json>, list<struct<json>>,
map<string, json>) writes JSONB and reads back as arrow.json through create, append, update,
merge-insert and take; the json failure row names the field path and the row."""

from __future__ import annotations

import os
from pathlib import Path

import lance
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls

J = pa.json_()


def _json(values: list[str | None]) -> pa.Array:
    return pa.ExtensionArray.from_storage(J, pa.array(values, pa.string()))


def _table(ids: list[int], tag: str) -> pa.Table:
    n = len(ids)
    docs = [f'{{"id": {i}, "tag": "{tag}", "v": [1, 2.5]}}' for i in ids]
    st = pa.StructArray.from_arrays([_json(docs)], fields=[pa.field("doc", J)])
    items = pa.StructArray.from_arrays([_json(docs)], fields=[pa.field("doc", J)])
    lst = pa.ListArray.from_arrays(pa.array(range(0, n + 1), pa.int32()), items)
    keys = pa.array(["k"] * n)
    mp = pa.MapArray.from_arrays(pa.array(range(0, n + 1), pa.int32()), keys, _json(docs))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": st, "l": lst, "m": mp})


def _expected(i: int, tag: str) -> str:
    return f'{{"id":{i},"tag":"{tag}","v":[1,2.5]}}'


@pytest.fixture(params=["2.2", "2.3"], ids=["legacy", "flagged"])
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_validation_nested_json_through_create_append_update_merge_and_take(
    tmp_path: Path, version: str
) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_table([0, 1], "a"), uri, data_storage_version=version)
    assert ds.semantic_types == (version == "2.3")
    ds.insert(_table([2, 3], "b"))
    # stored as JSONB (large_binary) with the lance.json keys, at every depth
    for name in os.listdir(os.path.join(uri, "data")):
        schema = lance.file.LanceFileReader(os.path.join(uri, "data", name)).metadata().schema
        doc = schema.field("s").type.field("doc")
        assert doc.type == pa.large_binary()
        assert doc.metadata[b"ARROW:extension:name"] == b"lance.json"
        assert schema.field("m").type.item_type == pa.large_binary()
    got = ds.to_table()
    assert got.schema.field("s").type.field("doc").type == pa.json_(pa.string())
    assert [r["doc"] for r in got.column("s").to_pylist()] == [
        _expected(0, "a"),
        _expected(1, "a"),
        _expected(2, "b"),
        _expected(3, "b"),
    ]
    assert got.column("l").to_pylist()[3] == [{"doc": _expected(3, "b")}]
    assert got.column("m").to_pylist()[2] == [("k", _expected(2, "b"))]
    # update: an SQL expression that builds a struct with a json child is validated and stored
    ds.update({"s": """named_struct('doc', '{"id": 9, "tag": "u", "v": []}')"""}, where="id = 1")
    row = ds.to_table(filter="id = 1").column("s").to_pylist()[0]
    assert row == {"doc": '{"id":9,"tag":"u","v":[]}'}
    with pytest.raises(ls.InvalidJsonError) as err:
        ds.update({"s": "named_struct('doc', '{not json')"}, where="id = 2")
    assert err.value.field_path == "s.doc"
    # merge_insert with nested json
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        _table([3, 4], "m")
    )
    got = ds.to_table().sort_by("id")
    assert got.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert got.column("m").to_pylist()[4] == [("k", _expected(4, "m"))]
    # take keeps arrow.json text; lance.json returns the stored JSONB on flagged tables
    taken = ds.take([0], columns=["s"])
    assert taken.schema.field("s").type.field("doc").type == pa.json_(pa.string())
    if version == "2.3":
        raw = ds.to_table(columns=["s"], output_encodings={"s.doc": "lance.json"})
        assert raw.schema.field("s").type.field("doc").type == pa.large_binary()


def test_failure_invalid_json_names_field_and_row_and_writes_nothing(
    tmp_path: Path, version: str
) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_table([0], "a"), uri, data_storage_version=version)
    files = set(os.listdir(os.path.join(uri, "data")))
    bad = _table([1, 2], "b").set_column(
        1,
        "s",
        pa.StructArray.from_arrays(
            [_json(['{"ok": 1}', '{"a": 1, "a": 2}'])], fields=[pa.field("doc", J)]
        ),
    )
    with pytest.raises(ls.InvalidJsonError) as err:
        ds.insert(bad)
    assert (err.value.field_path, err.value.row) == ("s.doc", 1)
    assert set(os.listdir(os.path.join(uri, "data"))) == files
    assert ls.dataset(uri).version == 1


def test_lance_json_input_is_checked_and_stored_unchanged(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(
        pa.table({"j": _json(['{"b": 2, "a": 1}'])}), uri, data_storage_version="2.3"
    )
    jsonb = ds.to_table(output_encodings={"j": "lance.json"}).column("j").combine_chunks()
    field = pa.field("j", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"})
    ds.insert(pa.Table.from_arrays([jsonb], schema=pa.schema([field])))
    assert ds.to_table().column("j").to_pylist() == ['{"a":1,"b":2}'] * 2
    garbage = pa.array([b"\x00\x01garbage"], pa.large_binary())
    with pytest.raises(ls.InvalidJsonError) as err:
        ds.insert(pa.Table.from_arrays([garbage], schema=pa.schema([field])))
    assert (err.value.field_path, err.value.row) == ("j", 0)


def test_sql_filters_see_json_as_text(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(pa.table({"j": _json(['{"a":1}', "[2]"])}), uri)
    assert ds.count_rows(filter="""j = '{"a":1}'""") == 1
    assert ds.to_table(filter="j LIKE '[%'").column("j").to_pylist() == ["[2]"]


def test_json_survives_compaction_rename_and_add_columns(tmp_path: Path, version: str) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(
        pa.table({"i": [1, 2], "j": _json(['{"a":1}', "[1]"])}), uri, data_storage_version=version
    )
    ds.insert(pa.table({"i": [3], "j": _json(['{"z":true}'])}))
    ds.optimize.compact_files()
    assert len(ds.get_fragments()) == 1
    ds.alter_columns({"path": "j", "name": "j2"})
    ds.add_columns([pa.field("k", J)])
    got = ds.to_table()
    assert got.schema.field("j2").type == pa.json_(pa.string())
    assert got.schema.field("j2").metadata in (None, {})
    assert got.column("j2").to_pylist() == ['{"a":1}', "[1]", '{"z":true}']
    assert got.column("k").to_pylist() == [None, None, None]
    if version == "2.2":  # pylance reads the compacted legacy table the same
        assert (
            lance.dataset(uri).to_table().column("j2").to_pylist() == got.column("j2").to_pylist()
        )


@pytest.mark.interop
def test_legacy_json_data_files_are_byte_identical_to_pylances(tmp_path: Path) -> None:
    """Facts §9: a json column we write in a legacy table holds exactly pylance's JSONB, and
    each library reads the other's table identically."""
    docs = ['{"b": [1, 2.5, -3], "a": {"x": null}}', None, '"\\u00e9\\n"', "1e16", "[]"]
    table = pa.table({"j": _json(docs)})
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ls.write_dataset(table, ours)
    lance.write_dataset(table, theirs)

    def stored(uri: str) -> pa.ChunkedArray:
        (name,) = os.listdir(os.path.join(uri, "data"))
        path = os.path.join(uri, "data", name)
        return lance.file.LanceFileReader(path).read_all().to_table().column("j")

    assert stored(ours).equals(stored(theirs))
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert ls.dataset(theirs).to_table().equals(lance.dataset(theirs).to_table())
