"""Unit tests for lance_semantic.read.plan: file columns matched to table fields by field id
at every depth (renamed and dropped struct members), and the array rebuilds that apply it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from lance_semantic.manifest.model import DataFile
from lance_semantic.read.plan import (
    Retag,
    id_entries,
    merge_parts,
    plan_data_file,
    retag_array,
)
from lance_semantic.schema.arrow import schema_from_arrow
from lance_semantic.schema.datafile import data_file_field_ids
from lance_semantic.schema.field import TableSchema

VERSIONS = [(2, 0), (2, 1), (2, 2)]

ITEM = pa.struct([("u", pa.int32()), ("v", pa.string())])
S = pa.struct(
    [
        ("x", pa.int64()),
        ("y", pa.string()),
        ("z", pa.struct([("p", pa.int32()), ("q", pa.int32())])),
    ]
)
FILE = pa.schema(
    [
        ("a", pa.int32()),
        ("s", S),
        ("l", pa.list_(ITEM)),
        ("b", pa.string()),
    ]
)
WITH_MAP = FILE.append(pa.field("m", pa.map_(pa.string(), ITEM)))
WITH_FSL = FILE.append(pa.field("f", pa.list_(ITEM, 2)))


def _data_file(table: TableSchema, version: tuple[int, int]) -> DataFile:
    ids, ci = data_file_field_ids(table.fields, version)
    return DataFile("f.lance", tuple(ids), tuple(ci), *version)


def _renamed(table: TableSchema, path: str, name: str) -> TableSchema:
    fid = table.field(path).id
    flat = [replace(f, name=name) if f.id == fid else f for f in table.flatten()]
    return TableSchema.from_flat(flat, table.metadata)


def _dropped(table: TableSchema, *paths: str) -> TableSchema:
    gone = {f.id for p in paths for f in table.field(p).walk()}
    return TableSchema.from_flat([f for f in table.flatten() if f.id not in gone], table.metadata)


def _plan(file: pa.Schema, version: tuple[int, int], change: Any = None) -> Any:
    """Plan a file written with ``file`` against the table after ``change``."""
    written = schema_from_arrow(file)
    df = _data_file(written, version)
    table = written if change is None else change(written)
    return plan_data_file(table, df, file), table


# ---- id bookkeeping -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "file"),
    [(v, f) for v in [*VERSIONS, (2, 3)] for f in [FILE, WITH_FSL]]
    + [(v, WITH_MAP) for v in [(2, 2), (2, 3)]],  # 2.0 and 2.1 store no maps
)
def test_unchanged_table_needs_no_retag(version: tuple[int, int], file: pa.Schema) -> None:
    plan, table = _plan(file, version)
    assert plan.retag == {}
    assert plan.columns == {f.id: f.name for f in table.fields}


@pytest.mark.parametrize("version", VERSIONS)
def test_entries_match_data_file_ids(version: tuple[int, int]) -> None:
    table = schema_from_arrow(WITH_FSL)
    ids, _ = data_file_field_ids(table.fields, version)
    assert sum(id_entries(f, *version) for f in WITH_FSL) == len(ids)


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_member_takes_the_table_name(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _renamed(t, "s.x", "x2"))
    s = table.field("s")
    assert plan.columns[s.id] == "s"  # top-level name of the file column
    retag = plan.retag[s.id]
    assert retag.type.names == ["x2", "y", "z"]
    assert retag.keep == (0, 1, 2) and retag.inner == (None, None, None)
    assert set(plan.retag) == {s.id}


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_deep_member(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _renamed(t, "s.z.p", "p2"))
    retag = plan.retag[table.field("s").id]
    assert retag.type.names == ["x", "y", "z"]
    assert retag.inner[:2] == (None, None)
    z = retag.inner[2]
    assert z is not None and z.type.names == ["p2", "q"]


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_list_item_member(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _renamed(t, "l.item.u", "u2"))
    retag = plan.retag[table.field("l").id]
    assert retag.type == pa.list_(pa.struct([("u2", pa.int32()), ("v", pa.string())]))


@pytest.mark.parametrize("version", [(2, 2), (2, 3)])
def test_renamed_map_value_member(version: tuple[int, int]) -> None:
    plan, table = _plan(WITH_MAP, version, lambda t: _renamed(t, "m.entries.value.u", "u2"))
    retag = plan.retag[table.field("m").id]
    assert retag.type.item_type.names == ["u2", "v"]
    assert retag.type.key_type == pa.string()


@pytest.mark.parametrize("version", [(2, 1), (2, 2)])
def test_renamed_fixed_size_list_item_member(version: tuple[int, int]) -> None:
    plan, table = _plan(WITH_FSL, version, lambda t: _renamed(t, "f.item.u", "u2"))
    retag = plan.retag[table.field("f").id]
    assert retag.type == pa.list_(pa.field("item", pa.struct([("u2", pa.int32()), ITEM[1]])), 2)


def test_fixed_size_list_of_struct_is_one_id_in_2_0() -> None:
    """2.0 stores no ids for the members: they are read as stored."""
    plan, table = _plan(WITH_FSL, (2, 0), lambda t: _renamed(t, "f.item.u", "u2"))
    assert table.field("f").id not in plan.retag
    assert plan.columns[table.field("b").id] == "b"  # ids after it still line up


@pytest.mark.parametrize("version", VERSIONS)
def test_dropped_member_is_removed(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _dropped(t, "s.x"))
    retag = plan.retag[table.field("s").id]
    assert retag.type.names == ["y", "z"] and retag.keep == (1, 2)


@pytest.mark.parametrize("version", VERSIONS)
def test_dropped_member_name_reused(version: tuple[int, int]) -> None:
    """``s.x`` dropped, ``s.y`` renamed to ``x``: the stored ``x`` must not be read as it."""
    plan, table = _plan(FILE, version, lambda t: _renamed(_dropped(t, "s.x"), "s.y", "x"))
    retag = plan.retag[table.field("s").id]
    assert retag.keep == (1, 2)
    assert [(f.name, f.type) for f in retag.type][:1] == [("x", pa.string())]


@pytest.mark.parametrize("version", VERSIONS)
def test_dropped_nested_struct(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _dropped(t, "s.z"))
    assert plan.retag[table.field("s").id].type.names == ["x", "y"]


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_top_level_field_is_found_by_id(version: tuple[int, int]) -> None:
    plan, table = _plan(FILE, version, lambda t: _renamed(t, "s", "t"))
    assert plan.columns[table.field("t").id] == "s"
    assert plan.retag == {}


@pytest.mark.parametrize("version", VERSIONS)
def test_swapped_member_names(version: tuple[int, int]) -> None:
    def swap(t: TableSchema) -> TableSchema:
        return _renamed(_renamed(_renamed(t, "s.x", "tmp"), "s.y", "x"), "s.tmp", "y")

    plan, table = _plan(FILE, version, swap)
    retag = plan.retag[table.field("s").id]
    assert [(f.name, f.type) for f in retag.type][:2] == [("y", pa.int64()), ("x", pa.string())]


# ---- rebuilding arrays ------------------------------------------------------------------------


def _s_array() -> pa.Array:
    rows = [
        {"x": 1, "y": "a", "z": {"p": 1, "q": 2}},
        None,
        {"x": 3, "y": None, "z": None},
        {"x": 4, "y": "d", "z": {"p": None, "q": 5}},
    ]
    return pa.array(rows, S)


def _rename_keys(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {names.get(k, k): _rename_keys(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_keys(v, names) for v in value]
    return value


@pytest.mark.parametrize("sliced", [False, True])
def test_retag_struct_array(sliced: bool) -> None:
    plan, table = _plan(
        FILE, (2, 2), lambda t: _renamed(_renamed(_dropped(t, "s.y"), "s.x", "x2"), "s.z.q", "q2")
    )
    retag = plan.retag[table.field("s").id]
    arr = _s_array()
    if sliced:
        arr = arr.slice(1, 3)
    got = retag_array(arr, retag)
    assert got.type == retag.type
    got.validate(full=True)
    expected = [
        None if r is None else {"x2": r["x"], "z": _rename_keys(r["z"], {"q": "q2"})}
        for r in arr.to_pylist()
    ]
    assert got.to_pylist() == expected


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("sliced", [False, True])
def test_retag_list_of_struct_array(large: bool, sliced: bool) -> None:
    file = pa.schema([("l", pa.large_list(ITEM) if large else pa.list_(ITEM))])
    plan, table = _plan(file, (2, 1), lambda t: _renamed(t, "l.item.u", "u2"))
    rows = [[{"u": 1, "v": "a"}], None, [], [{"u": None, "v": "b"}, None, {"u": 3, "v": None}]]
    arr = pa.array(rows, file.field("l").type)
    if sliced:
        arr = arr.slice(1)
    got = retag_array(arr, plan.retag[table.field("l").id])
    got.validate(full=True)
    assert got.to_pylist() == _rename_keys(arr.to_pylist(), {"u": "u2"})
    assert got.null_count == arr.null_count


@pytest.mark.parametrize("sliced", [False, True])
def test_retag_map_array(sliced: bool) -> None:
    file = pa.schema([("m", pa.map_(pa.string(), ITEM))])
    plan, table = _plan(file, (2, 2), lambda t: _dropped(t, "m.entries.value.v"))
    rows = [[("k", {"u": 1, "v": "a"})], None, [], [("j", None), ("i", {"u": 2, "v": "c"})]]
    arr = pa.array(rows, file.field("m").type)
    if sliced:
        arr = arr.slice(1)
    got = retag_array(arr, plan.retag[table.field("m").id])
    got.validate(full=True)
    expected = [
        None if r is None else [(k, None if v is None else {"u": v["u"]}) for k, v in r]
        for r in arr.to_pylist()
    ]
    assert got.to_pylist() == expected


@pytest.mark.parametrize("sliced", [False, True])
def test_retag_fixed_size_list_array(sliced: bool) -> None:
    file = pa.schema([("f", pa.list_(ITEM, 2))])
    plan, table = _plan(file, (2, 2), lambda t: _renamed(t, "f.item.v", "v2"))
    rows = [[{"u": 1, "v": "a"}, {"u": 2, "v": "b"}], None, [{"u": 3, "v": None}, None]]
    arr = pa.array(rows, file.field("f").type)
    if sliced:
        arr = arr.slice(1)
    got = retag_array(arr, plan.retag[table.field("f").id])
    got.validate(full=True)
    assert got.to_pylist() == _rename_keys(arr.to_pylist(), {"v": "v2"})


def test_retag_to_an_empty_struct_keeps_validity() -> None:
    arr = pa.array([{"x": 1}, None, {"x": 2}], pa.struct([("x", pa.int8())])).slice(1)
    got = retag_array(arr, Retag(pa.struct([]), (), ()))
    assert got.type == pa.struct([]) and got.to_pylist() == [None, {}]


# ---- members spread over several data files ---------------------------------------------------


def test_merge_structs_from_two_files() -> None:
    old = pa.array(
        [{"y": "a", "z": {"p": 1}}, None, {"y": None, "z": None}, {"y": "d", "z": {"p": 4}}],
        pa.struct([("y", pa.string()), ("z", pa.struct([("p", pa.int32())]))]),
    )
    new = pa.array(
        [{"x": 1, "z": {"q": 10}}, None, {"x": 3, "z": None}, {"x": 4, "z": {"q": 40}}],
        pa.struct([("x", pa.int16()), ("z", pa.struct([("q", pa.int8())]))]),
    )
    got = merge_parts([old, new])
    got.validate(full=True)
    assert got.type.names == ["y", "z", "x"]
    assert got.to_pylist() == [
        {"y": "a", "z": {"p": 1, "q": 10}, "x": 1},
        None,
        {"y": None, "z": None, "x": 3},
        {"y": "d", "z": {"p": 4, "q": 40}, "x": 4},
    ]


def test_merge_takes_members_null_where_their_file_has_a_null_struct() -> None:
    old = pa.array([{"y": "a"}, {"y": "b"}], pa.struct([("y", pa.string())]))
    new = pa.StructArray.from_arrays(
        [pa.array([1, 2], pa.int16())], names=["x"], mask=pa.array([False, True])
    )
    assert merge_parts([old, new]).to_pylist() == [{"y": "a", "x": 1}, {"y": "b", "x": None}]


@pytest.mark.parametrize("large", [False, True])
def test_merge_lists_of_structs(large: bool) -> None:
    make = pa.large_list if large else pa.list_
    old = pa.array(
        [[{"v": "a"}], [{"v": "b"}, {"v": "c"}], None, []],
        make(pa.struct([("v", pa.string())])),
    )
    # a later file writes deleted rows (here the second) as null lists
    new = pa.array([[{"u": 1}], None, None, []], make(pa.struct([("u", pa.int64())])))
    got = merge_parts([old, new])
    got.validate(full=True)
    assert got.to_pylist() == [
        [{"v": "a", "u": 1}],
        [{"v": "b", "u": None}, {"v": "c", "u": None}],
        None,
        [],
    ]
    sliced = merge_parts([old.slice(1), new.slice(1)])
    assert sliced.to_pylist() == got.to_pylist()[1:]


def test_merge_of_one_part_is_that_part() -> None:
    arr = _s_array()
    assert merge_parts([arr]) is arr
