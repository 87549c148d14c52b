"""Spec "Output Encoding" with view layouts: a column read as ``utf8_view`` / ``binary_view``
(recorded at creation from a view input, or set with ``set_output_encoding``; top level, a
struct child, a list item) works in every operation that filters, takes or joins rows --
filtered reads, ``count_rows(filter)``, ``take``, ``update``, ``merge_insert`` (as payload
and as key) and ``add_columns`` (SQL and batch functions).

pyarrow has no filter / take / join kernel for views: these tests fail if any of them
reaches a kernel in a view layout. Each test runs for every placement of the view (the
generator below) on a flagged table of three fragments in three input layouts, with a
deletion file, and checks values against a model and that reads return the view layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_semantic as ls

Row = dict[str, Any]


@dataclass(frozen=True)
class Placement:
    """Where the view sits in column ``v`` and what the operations do with it."""

    name: str
    path: str  # the field whose output encoding is the view
    encoding: str
    value: Callable[[int], Any]  # v of row id i
    arrow_type: Callable[[str], pa.DataType]  # the input type in a layout: view / plain / large
    predicate: str  # SQL over v; true for ids 3, 7 and 13 only
    update_sql: str  # SQL giving a new v from v
    update_model: Callable[[Any], Any]
    add_sql: str  # SQL over v for add_columns (DataFusion's concat treats null as empty)
    add_model: Callable[[Any], Any]
    keyable: bool  # a top-level column: can be a merge key


def _text(kind: str, view: pa.DataType, plain: pa.DataType, large: pa.DataType) -> pa.DataType:
    return {"view": view, "plain": plain, "large": large}[kind]


def _s(kind: str) -> pa.DataType:
    return _text(kind, pa.string_view(), pa.string(), pa.large_string())


def _b(kind: str) -> pa.DataType:
    return _text(kind, pa.binary_view(), pa.binary(), pa.large_binary())


PLACEMENTS = [
    Placement(
        "utf8_view",
        "v",
        "utf8_view",
        lambda i: None if i % 5 == 0 else f"s{i}",
        _s,
        "v IN ('s3', 's7', 's13')",
        "concat(v, '!')",
        lambda v: v + "!",
        "concat(v, '+')",
        lambda v: (v or "") + "+",
        True,
    ),
    Placement(
        "binary_view",
        "v",
        "binary_view",
        lambda i: None if i % 5 == 0 else b"b%d" % i,
        _b,
        "v IN (X'6233', X'6237', X'623133')",
        "concat(v, X'21')",
        lambda v: v + b"!",
        "concat(v, X'2b')",
        lambda v: (v or b"") + b"+",
        True,
    ),
    Placement(
        "struct_child",
        "v.x",
        "utf8_view",
        lambda i: {"x": None if i % 5 == 0 else f"x{i}", "y": i},
        lambda kind: pa.struct([("x", _s(kind)), ("y", pa.int64())]),
        "v.x IN ('x3', 'x7', 'x13')",
        "named_struct('x', concat(v.x, '!'), 'y', v.y)",
        lambda v: {"x": v["x"] + "!", "y": v["y"]},
        "concat(v.x, '+')",
        lambda v: (v["x"] or "") + "+",
        False,
    ),
    Placement(
        "list_item",
        "v.item",
        "utf8_view",
        lambda i: None if i % 5 == 0 else [f"l{i}", None if i % 3 == 0 else f"m{i}"],
        lambda kind: pa.list_(_s(kind)),
        "array_has(v, 'l3') OR array_has(v, 'l7') OR array_has(v, 'l13')",
        "array_append(v, 'new')",
        lambda v: [*v, "new"],
        "array_append(v, '+')",
        lambda v: [*(v or []), "+"],
        False,
    ),
]
ORIGINS = ["recorded_at_create", "set_output_encoding"]
PICKED = {3, 7, 13}  # the rows each predicate selects (before the deletions)
DELETED = {4, 15}


def _rows(place: Placement, ids: list[int], kind: str, tag: str = "") -> pa.Table:
    values = [place.value(i) for i in ids]
    if tag:  # other values of the same shape, for merge sources
        values = [_retag(v, tag) for v in values]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(values, place.arrow_type(kind)),
            "p": pa.array([i * 10 for i in ids], pa.int64()),
        }
    )


def _retag(v: Any, tag: str) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        return v + tag
    if isinstance(v, bytes):
        return v + tag.encode()
    if isinstance(v, dict):
        return {"x": _retag(v["x"], tag), "y": v["y"]}
    return [_retag(x, tag) for x in v]


def _view_type(place: Placement) -> pa.DataType:
    return place.arrow_type("view")


Table = tuple[ls.Dataset, Placement, dict[int, Row]]
CASES = [(p, o) for p in PLACEMENTS for o in ORIGINS]


def _case_id(case: tuple[Placement, str]) -> str:
    return f"{case[0].name}-{case[1]}"


@pytest.fixture(params=CASES, ids=_case_id)
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Table:
    place, origin = request.param
    return _make(tmp_path, place, origin)


def _make(tmp_path: Path, place: Placement, origin: str) -> Table:
    """A flagged table of ids 0..29 in three fragments (created in the view layout, or in the
    plain one with the view set afterwards; then appended in the view and the 64-bit
    layouts), rows 4 and 15 deleted; with the model of its rows."""
    first = "view" if origin == "recorded_at_create" else "plain"
    ds = ls.write_dataset(
        _rows(place, list(range(10)), first), str(tmp_path / "t"), data_storage_version="2.3"
    )
    if origin == "set_output_encoding":
        assert ds.semantic_schema.field(place.path).output_encoding is None
        ds.set_output_encoding(place.path, place.encoding)
    assert ds.semantic_schema.field(place.path).output_encoding == place.encoding
    ds.insert(_rows(place, list(range(10, 20)), "view"))
    ds.insert(_rows(place, list(range(20, 30)), "large"))
    ds.delete(" OR ".join(f"id = {i}" for i in sorted(DELETED)))
    assert len(ds.get_fragments()) == 3
    model = {i: {"id": i, "v": place.value(i), "p": i * 10} for i in range(30) if i not in DELETED}
    _check(ds, place, model)
    return ds, place, model


#: another (non-view) output encoding of the view's field
OTHER = {"utf8_view": "large_utf8", "binary_view": "large_binary"}


def _check(ds: ls.Dataset, place: Placement, model: dict[int, Row]) -> None:
    ds = ls.dataset(ds.uri)
    assert ds.schema.field("v").type == _view_type(place)
    got = ds.to_table()
    assert got.schema.field("v").type == _view_type(place)
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == [model[i] for i in sorted(model)]


def _live(model: dict[int, Row]) -> list[Row]:
    return [model[i] for i in sorted(model)]  # table order: ids were written in order


# ---- reads ----------------------------------------------------------------------------------


def test_output_encoding_view_layouts_in_filtered_reads(table: Any) -> None:
    ds, place, model = table
    picked = [model[i] for i in sorted(PICKED - DELETED)]
    got = ds.to_table(filter=place.predicate)
    assert got.schema.field("v").type == _view_type(place)
    assert got.to_pylist() == picked
    got = ds.to_table(filter="id > 5", limit=4, offset=2)
    assert got.to_pylist() == [r for r in _live(model) if r["id"] > 5][2:6]
    column = place.path if place.name == "struct_child" else "v"
    got = ds.to_table(columns=[column], filter=place.predicate)
    if place.name == "struct_child":  # a nested path is a flat column, in its view layout
        assert got.schema.field("v.x").type == pa.string_view()
        assert got.column("v.x").to_pylist() == [r["v"]["x"] for r in picked]
    else:
        assert got.column("v").to_pylist() == [r["v"] for r in picked]
    batches = list(ds.to_batches(filter="id >= 2 AND id < 25", batch_size=3))
    assert all(b.schema.field("v").type == _view_type(place) for b in batches)
    rows = [r for b in batches for r in b.to_pylist()]
    assert rows == [r for r in _live(model) if 2 <= r["id"] < 25]
    got = ds.to_table(filter=pc.field("id") >= 20)
    assert got.to_pylist() == [r for r in _live(model) if r["id"] >= 20]
    # a filter together with an override to another layout
    other = ds.to_table(
        filter=place.predicate, output_encodings={place.path: OTHER[place.encoding]}
    )
    assert other.to_pylist() == picked


def test_output_encoding_view_layouts_in_count_rows(table: Any) -> None:
    ds, place, model = table
    assert ds.count_rows(place.predicate) == len(PICKED - DELETED)
    assert ds.count_rows("id > 5") == sum(1 for i in model if i > 5)
    assert ds.get_fragments()[1].count_rows(place.predicate) == 1  # id 13


def test_output_encoding_view_layouts_in_take(table: Any) -> None:
    ds, place, model = table
    live = _live(model)
    indices = [27, 0, 13, 13, 5, len(live) - 1]
    got = ds.take(indices)
    assert got.schema.field("v").type == _view_type(place)
    assert got.to_pylist() == [live[i] for i in indices]
    got = ds.take(indices, columns=["v"])
    assert got.column("v").to_pylist() == [live[i]["v"] for i in indices]
    if place.name == "struct_child":  # take keeps the enclosing struct (as pylance's take)
        got = ds.take(indices, columns=["v.x"])
        assert got.schema.field("v").type == pa.struct([("x", pa.string_view())])
        assert got.column("v").to_pylist() == [{"x": live[i]["v"]["x"]} for i in indices]
    got = ds.take(indices, columns={"w": "v", "q": "p + 1"})
    assert got.schema.field("w").type == _view_type(place)
    assert got.to_pylist() == [{"w": live[i]["v"], "q": live[i]["p"] + 1} for i in indices]
    frag = ds.get_fragments()[2]
    got = frag.take([3, 0])
    assert got.schema.field("v").type == _view_type(place)
    assert got.column("id").to_pylist() == [23, 20]


# ---- mutations ------------------------------------------------------------------------------


def test_output_encoding_view_layouts_in_update(table: Any) -> None:
    ds, place, model = table
    res = ds.update({"v": place.update_sql, "p": "p + 1"}, where=place.predicate)
    assert res.num_rows_updated == len(PICKED - DELETED)
    for i in PICKED - DELETED:
        model[i] = {"id": i, "v": place.update_model(model[i]["v"]), "p": model[i]["p"] + 1}
    _check(ds, place, model)
    # rows rewritten whole keep their view column's values (nulls included)
    res = ds.update({"p": "p * 2"}, where="id >= 18")
    assert res.num_rows_updated == sum(1 for i in model if i >= 18)
    for i in model:
        if i >= 18:
            model[i] = {**model[i], "p": model[i]["p"] * 2}
    _check(ds, place, model)
    assert ds.semantic_schema.field(place.path).output_encoding == place.encoding


def test_output_encoding_view_layouts_in_merge_insert_payload(table: Any) -> None:
    ds, place, model = table
    ids = [3, 7, 8, 10, 40, 41]
    source = _rows(place, ids, "view", tag="n")
    b = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    res = b.when_not_matched_by_source_delete(place.predicate).execute(source)
    assert (res.num_inserted_rows, res.num_updated_rows, res.num_deleted_rows) == (2, 4, 1)
    for r in source.to_pylist():
        model[r["id"]] = r
    del model[13]  # matched by the predicate, not by the source
    _check(ds, place, model)
    # a source with only some columns: the others keep the target's values
    ds = ls.dataset(ds.uri)
    partial = _rows(place, [1, 2, 50], "plain", tag="q").select(["v", "id"])
    b = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    res = b.execute(partial)
    assert (res.num_inserted_rows, res.num_updated_rows) == (1, 2)
    for r in partial.to_pylist():
        model[r["id"]] = {**model.get(r["id"], {"p": None}), **r}
    _check(ds, place, model)
    # a condition over the matched pairs
    ds = ls.dataset(ds.uri)
    cond = _rows(place, [5, 6], "view", tag="c")
    cond = cond.set_column(2, "p", pa.array([0, 1000], pa.int64()))
    b = ds.merge_insert("id").when_matched_update_all(condition="source.p > target.p")
    assert b.execute(cond).num_updated_rows == 1
    model[6] = cond.to_pylist()[1]
    _check(ds, place, model)


@pytest.mark.parametrize("keys", [["v"], ["v", "id"]], ids=["v", "v+id"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0].keyable], ids=_case_id)
def test_output_encoding_view_layouts_in_merge_insert_key(
    tmp_path: Path, case: tuple[Placement, str], keys: list[str]
) -> None:
    """The view column as the merge key (a top-level column): keys match by value, for a
    source in the view layout and one in the plain layout."""
    ds, place, model = _make(tmp_path, *case)
    ids = [3, 8, 22, 60]  # 60 is new; the others match the target's values
    source = _rows(place, ids, "view").set_column(2, "p", pa.array([-1, -2, -3, -4], pa.int64()))
    b = ds.merge_insert(keys).when_matched_update_all().when_not_matched_insert_all()
    res = b.execute(source)
    assert (res.num_inserted_rows, res.num_updated_rows) == (1, 3)
    for r in source.to_pylist():
        model[r["id"]] = r
    _check(ds, place, model)
    ds = ls.dataset(ds.uri)
    plain = _rows(place, [9, 61], "plain").set_column(2, "p", pa.array([-9, -61], pa.int64()))
    b = ds.merge_insert(keys).when_matched_update_all().when_not_matched_insert_all()
    res = b.execute(plain)
    assert (res.num_inserted_rows, res.num_updated_rows) == (1, 1)
    for r in plain.to_pylist():
        model[r["id"]] = r
    _check(ds, place, model)


# ---- add_columns ----------------------------------------------------------------------------


def test_output_encoding_view_layouts_in_add_columns(table: Any) -> None:
    ds, place, model = table
    ds.add_columns({"w": place.add_sql})
    got = ls.dataset(ds.uri).to_table(columns=["id", "w"])
    assert got.column("w").to_pylist() == [place.add_model(r["v"]) for r in _live(model)]

    def copy(batch: pa.RecordBatch) -> pa.RecordBatch:
        return pa.record_batch([batch.column("v")], names=["u"])

    ds.add_columns(copy, read_columns=["v"])
    ds = ls.dataset(ds.uri)
    assert ds.schema.field("u").type == _view_type(place)  # the function's layout, recorded
    got = ds.to_table(columns=["id", "u"], filter=place.predicate)
    assert got.schema.field("u").type == _view_type(place)
    assert got.column("u").to_pylist() == [model[i]["v"] for i in sorted(PICKED - DELETED)]
    assert ds.to_table().column("u").to_pylist() == [r["v"] for r in _live(model)]
