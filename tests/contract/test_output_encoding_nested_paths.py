"""Spec "Output Encoding: for nested types, each child field carries its own entry", for the
children of maps, by the paths DESIGN.md §3 names: ``<map>.key`` / ``<map>.value`` (the
stored tree's long form ``<map>.entries.key`` / ``.value`` stays an alias), nested
(``s.m.value``) and inside a list (``l.item.value``), wherever a field path is taken."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main

MAP = pa.map_(pa.string(), pa.string())

#: short path -> the Field.path it names
PATHS = {
    "m.key": "m.entries.key",
    "m.value": "m.entries.value",
    "s.m.key": "s.m.entries.key",
    "s.m.value": "s.m.entries.value",
    "l.item.key": "l.item.entries.key",
    "l.item.value": "l.item.entries.value",
}


def _make(tmp_path: Path) -> ls.Dataset:
    table = pa.table(
        {
            "m": pa.array([[("k", "v")], None], MAP),
            "s": pa.array([{"m": [("a", "b")]}, {"m": []}], pa.struct([("m", MAP)])),
            "l": pa.array([[[("x", "y")]], [[], None]], pa.list_(MAP)),
        }
    )
    return ls.write_dataset(table, str(tmp_path / "t"), data_storage_version="2.3")


def _part_type(t: pa.Schema, short: str) -> pa.DataType:
    """The Arrow type of the map part ``short`` in a read's schema."""
    *head, part = short.split(".")
    dt = t.field(head[0]).type
    for name in head[1:]:
        dt = dt.value_type if name == "item" else dt.field(name).type
    return dt.key_type if part == "key" else dt.item_type


@pytest.mark.parametrize("short", list(PATHS))
def test_map_parts_resolve_by_key_and_value_and_the_long_form(tmp_path: Path, short: str) -> None:
    ds = _make(tmp_path)
    schema = ds.semantic_schema
    assert schema.field(short).path == PATHS[short]
    assert schema.field(PATHS[short]) == schema.field(short)


@pytest.mark.parametrize("spelling", ["short", "long"])
@pytest.mark.parametrize("short", list(PATHS))
def test_read_overrides_of_map_parts(tmp_path: Path, short: str, spelling: str) -> None:
    ds = _make(tmp_path)
    path = short if spelling == "short" else PATHS[short]
    want = ds.to_table()
    got = ds.to_table(output_encodings={path: "large_utf8"})
    assert _part_type(got.schema, short) == pa.large_string()
    assert got.to_pylist() == want.to_pylist()
    for other in set(PATHS) - {short}:  # only the named part changes
        assert _part_type(got.schema, other) == pa.string()
    batches = list(ds.to_batches(output_encodings={path: "utf8_view"}, batch_size=1))
    assert all(_part_type(b.schema, short) == pa.string_view() for b in batches)
    took = ds.take([1, 0], output_encodings={path: "dictionary:int8:utf8"})
    assert _part_type(took.schema, short) == pa.dictionary(pa.int8(), pa.string())
    assert took.to_pylist() == [want.to_pylist()[1], want.to_pylist()[0]]
    frag = ds.get_fragments()[0]
    assert _part_type(frag.take([0], output_encodings={path: "large_utf8"}).schema, short) == (
        pa.large_string()
    )


@pytest.mark.parametrize("short", list(PATHS))
def test_set_output_encoding_of_map_parts(tmp_path: Path, short: str) -> None:
    ds = _make(tmp_path)
    ds.set_output_encoding(short, "large_utf8")
    reopened = ls.dataset(ds.uri)
    assert reopened.semantic_schema.field(PATHS[short]).output_encoding == "large_utf8"
    assert _part_type(reopened.schema, short) == pa.large_string()
    assert _part_type(reopened.to_table().schema, short) == pa.large_string()
    ds.set_output_encoding(PATHS[short], None)  # the long form names the same field
    assert ls.dataset(ds.uri).semantic_schema.field(short).output_encoding is None


def test_cli_set_output_encoding_of_a_map_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _make(tmp_path)
    assert main(["set-output-encoding", ds.uri, "s.m.value", "utf8_view"]) == 0
    assert _part_type(ls.dataset(ds.uri).schema, "s.m.value") == pa.string_view()
    capsys.readouterr()
    assert main(["set-output-encoding", ds.uri, "s.m.valu", "utf8_view"]) == 1
    assert "s.m.valu" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["m.valu", "m.item", "s.m.entries.nope", "l.value", "m.key.x"])
def test_failure_unknown_map_paths_name_the_path(tmp_path: Path, path: str) -> None:
    ds = _make(tmp_path)
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.to_table(output_encodings={path: "utf8"})
    assert err.value.field_path == path
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.take([0], output_encodings={path: "utf8"})
    assert err.value.field_path == path
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.set_output_encoding(path, "utf8")
    assert err.value.field_path == path
    with pytest.raises(KeyError, match=path):
        ds.semantic_schema.field(path)
    assert ls.dataset(ds.uri).version == 1


def test_failure_invalid_encoding_of_a_map_part_names_the_path_as_given(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.to_table(output_encodings={"m.value": "large_list"})
    assert (err.value.field_path, err.value.encoding) == ("m.value", "large_list")
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.set_output_encoding("l.item.key", "decimal128")
    assert err.value.field_path == "l.item.key"
    # two spellings of one field asking for different encodings
    with pytest.raises(ls.InvalidOutputEncodingError):
        ds.to_table(output_encodings={"m.value": "utf8", "m.entries.value": "large_utf8"})
    same = ds.to_table(output_encodings={"m.value": "large_utf8", "m.entries.value": "large_utf8"})
    assert _part_type(same.schema, "m.value") == pa.large_string()
