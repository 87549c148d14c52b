"""Spec "Output Encoding" with view layouts over a column some fragment does not hold: a
``utf8_view`` / ``binary_view`` output layout (recorded at creation from a view input, set
with ``set_output_encoding``, or requested by a read) on a column an older fragment lacks
(added by ``add_columns`` without data) or on a struct member an append left out, in
fragments that have deletions, reads as nulls of the view layout on every read path.

pyarrow has no filter / take kernel for views: the null-filled column of such a fragment
must not reach one in a view layout. Each read path runs for every placement of the view
(top level, struct member, list item, map value), both ways of missing and every origin of
the view, on a flagged table of two small fragments without the column (read together)
and one with it, each with deletions; values are checked against a model, and every
returned batch holds the view layout.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lance_semantic as ls

Row = dict[str, Any]


@dataclass(frozen=True)
class Placement:
    """Where the view sits in the column's type, and the values of rows that hold it."""

    name: str
    view: pa.DataType  # the type with the view in it
    plain: pa.DataType  # the same type with a plain layout where the view is
    suffix: str  # the view field's path below the column ("" / ".c" / ".item" / ".value")
    encoding: str
    value: Callable[[int], Any]


PLACEMENTS = [
    Placement(
        "utf8_view",
        pa.string_view(),
        pa.string(),
        "",
        "utf8_view",
        lambda i: None if i % 5 == 0 else f"s{i}",
    ),
    Placement(
        "binary_view",
        pa.binary_view(),
        pa.binary(),
        "",
        "binary_view",
        lambda i: None if i % 5 == 0 else b"b%d" % i,
    ),
    Placement(
        "struct_member",
        pa.struct([("n", pa.int64()), ("c", pa.string_view())]),
        pa.struct([("n", pa.int64()), ("c", pa.string())]),
        ".c",
        "utf8_view",
        lambda i: None if i % 5 == 0 else {"n": i, "c": None if i % 3 == 0 else f"c{i}"},
    ),
    Placement(
        "list_item",
        pa.list_(pa.string_view()),
        pa.list_(pa.string()),
        ".item",
        "utf8_view",
        lambda i: None if i % 5 == 0 else [f"l{i}", None, f"m{i}"][: i % 4],
    ),
    Placement(
        "map_value",
        pa.map_(pa.string(), pa.binary_view()),
        pa.map_(pa.string(), pa.binary()),
        ".value",
        "binary_view",
        lambda i: None if i % 5 == 0 else [("k", b"v%d" % i), ("z", None)][: i % 3],
    ),
]

#: how the fragments lack the view: the whole column ``v`` (added later, without data; in
#: fragments of one data file, or of two after an ``add_columns`` of ``w``), or member
#: ``v.c`` of ``struct<a, c>``, which the older fragments' appends left out
MISSING = ["added_column", "added_column_two_files", "struct_member_left_out"]
#: where the view layout comes from
ORIGINS = ["recorded", "set_output_encoding", "requested"]

OLD = list(range(0, 8))  # two fragments of 4 rows without the view column / member
NEW = list(range(8, 14))  # one fragment with it
DELETED = [1, 6, 9, 12]  # in every fragment


@dataclass(frozen=True)
class Table:
    ds: ls.Dataset
    encodings: dict[str, str] | None  # the read's output_encodings
    out_type: pa.DataType  # the type of ``v`` every read returns
    model: list[Row]  # the live rows, in table order


def _added(missing: str) -> bool:
    return missing.startswith("added_column")


def _column_type(place: Placement, missing: str, view: bool) -> pa.DataType:
    inner = place.view if view else place.plain
    if _added(missing):
        return inner
    return pa.struct([("a", pa.int64()), ("c", inner)])


def _value(place: Placement, missing: str, i: int, held: bool) -> Any:
    """``v`` of row ``i`` (``held``: in a fragment that holds the view column / member)."""
    if _added(missing):
        return place.value(i) if held else None
    return {"a": i, "c": place.value(i) if held else None}


def _view_path(place: Placement, missing: str) -> str:
    return ("v" if _added(missing) else "v.c") + place.suffix


def _make(root: Path, place: Placement, missing: str, origin: str) -> Table:
    uri = str(root / f"{place.name}-{missing}-{origin}")
    view = origin == "recorded"
    column = _column_type(place, missing, view)
    ids = pa.array(OLD, pa.int64())
    if _added(missing):
        ds = ls.write_dataset(pa.table({"id": ids}), uri, semantic_types=True, max_rows_per_file=4)
        if missing == "added_column_two_files":
            ds.add_columns({"w": "id * 2"})
        ds.add_columns(pa.field("v", column))
    else:
        full = pa.table(
            {"id": pa.array([100], pa.int64()), "v": pa.array([{"a": 0, "c": None}], column)}
        )
        ds = ls.write_dataset(full, uri, semantic_types=True)
        ds.delete("id = 100")  # the table's schema is struct<a, c>; no fragment is left
        assert ds.count_rows() == 0
        left_out = pa.array([{"a": i} for i in OLD], pa.struct([("a", pa.int64())]))
        ds.insert(pa.table({"id": ids, "v": left_out}), max_rows_per_file=4)
    new = {
        "id": pa.array(NEW, pa.int64()),
        "v": pa.array([_value(place, missing, i, True) for i in NEW], column),
    }
    if missing == "added_column_two_files":
        new = {"id": new["id"], "w": pa.array([i * 2 for i in NEW], pa.int64()), "v": new["v"]}
    ds.insert(pa.table(new))
    ds.delete(" OR ".join(f"id = {i}" for i in DELETED))
    path = _view_path(place, missing)
    encodings = None
    if origin == "set_output_encoding":
        ds.set_output_encoding(path, place.encoding)
    elif origin == "requested":
        encodings = {path: place.encoding}
    if origin != "requested":
        assert ds.semantic_schema.field(path).output_encoding == place.encoding
    ds = ls.dataset(uri)
    frags = ds.get_fragments()
    assert [f.physical_rows for f in frags] == [4, 4, 6]
    assert all(f.metadata.deletion_file is not None for f in frags)
    model = [
        {"id": i, "v": _value(place, missing, i, i in NEW)} for i in OLD + NEW if i not in DELETED
    ]
    if missing == "added_column_two_files":
        assert all(len(f.metadata.files) == 2 for f in frags[:2])
        model = [{"id": r["id"], "w": r["id"] * 2, "v": r["v"]} for r in model]
    return Table(ds, encodings, _column_type(place, missing, True), model)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Placement, str, str], Table]:
    """Each case's table, built once for the module (the reads do not change it)."""
    root = tmp_path_factory.mktemp("views_over_missing")
    built: dict[tuple[str, str, str], Table] = {}

    def get(place: Placement, missing: str, origin: str) -> Table:
        key = (place.name, missing, origin)
        if key not in built:
            built[key] = _make(root, place, missing, origin)
        return built[key]

    return get


# ---- read paths: each returns what it read, and the model rows it should be ----------------


def _batches(got: Any) -> list[pa.RecordBatch]:
    """The batches a read returned (a table, a reader or an iterator of batches)."""
    return got.to_batches() if isinstance(got, pa.Table) else list(got)


Read = Callable[[Table], tuple[Any, list[Row]]]


def _in_fragment(t: Table, k: int) -> list[Row]:
    frag = t.ds.get_fragments()[k]
    first = sum(f.physical_rows for f in t.ds.get_fragments()[:k])
    ids = set((OLD + NEW)[first : first + frag.physical_rows])
    return [r for r in t.model if r["id"] in ids]


def _sample(t: Table) -> tuple[Any, list[Row]]:
    random.seed(28)
    got = t.ds.sample(5, randomize_order=False)
    random.seed(28)
    picked = sorted(random.sample(range(len(t.model)), 5))
    return got, [t.model[i] for i in picked]


def _with_encodings(t: Table, call: Callable[..., Any], *a: Any, **kw: Any) -> Any:
    if t.encodings:
        kw["output_encodings"] = t.encodings
    return call(*a, **kw)


READS: dict[str, Read] = {
    "to_table": lambda t: (_with_encodings(t, t.ds.to_table), t.model),
    "columns_v": lambda t: (_with_encodings(t, t.ds.to_table, columns=["v"]), t.model),
    "columns_v_id": lambda t: (
        _with_encodings(t, t.ds.to_table, columns=["v", "id"]),
        t.model,
    ),
    "sql_projection": lambda t: (
        _with_encodings(t, t.ds.to_table, columns={"id": "id", "v": "v"}),
        t.model,
    ),
    "to_batches": lambda t: (_with_encodings(t, t.ds.to_batches, batch_size=3), t.model),
    "filter_id": lambda t: (
        _with_encodings(t, t.ds.to_table, filter="id > 2"),
        [r for r in t.model if r["id"] > 2],
    ),
    "filter_v_is_null": lambda t: (
        _with_encodings(t, t.ds.to_table, filter="v IS NULL"),
        [r for r in t.model if r["v"] is None],
    ),
    "limit_offset": lambda t: (
        _with_encodings(t, t.ds.to_table, limit=4, offset=2),
        t.model[2:6],
    ),
    "with_row_id": lambda t: (
        _with_encodings(t, t.ds.to_table, with_row_id=True),
        t.model,
    ),
    "scanner_filter_limit_offset_row_id": lambda t: (
        _with_encodings(
            t, t.ds.scanner, filter="id > 0", limit=5, offset=1, with_row_id=True
        ).to_table(),
        [r for r in t.model if r["id"] > 0][1:6],
    ),
    "scanner_to_reader": lambda t: (
        _with_encodings(t, t.ds.scanner, batch_size=2).to_reader(),
        t.model,
    ),
    "scanner_take": lambda t: (
        _with_encodings(t, t.ds.scanner).take([0, 3, 4, len(t.model) - 1]),
        [t.model[i] for i in (0, 3, 4, len(t.model) - 1)],
    ),
    "scanner_head": lambda t: (_with_encodings(t, t.ds.scanner).head(4), t.model[:4]),
    "take": lambda t: (
        _with_encodings(t, t.ds.take, [len(t.model) - 1, 0, 2, 5]),
        [t.model[i] for i in (len(t.model) - 1, 0, 2, 5)],
    ),
    "head": lambda t: (_with_encodings(t, t.ds.head, 5), t.model[:5]),
    "fragment_to_table": lambda t: (
        _with_encodings(t, t.ds.get_fragments()[1].to_table),
        _in_fragment(t, 1),
    ),
    "fragment_to_batches": lambda t: (
        _with_encodings(t, t.ds.get_fragments()[0].to_batches, batch_size=1),
        _in_fragment(t, 0),
    ),
    "fragment_filter": lambda t: (
        _with_encodings(t, t.ds.get_fragments()[1].to_table, filter="id > 4"),
        [r for r in _in_fragment(t, 1) if r["id"] > 4],
    ),
    "fragment_take": lambda t: (
        _with_encodings(t, t.ds.get_fragments()[1].take, [0, 2]),
        [_in_fragment(t, 1)[i] for i in (0, 2)],
    ),
}


CASES = [(p, m, o) for p in PLACEMENTS for m in MISSING for o in ORIGINS]


def _case_id(case: tuple[Placement, str, str]) -> str:
    return "-".join([case[0].name, case[1], case[2]])


@pytest.mark.parametrize("read", list(READS), ids=list(READS))
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_views_over_a_column_a_fragment_lacks(
    tables: Callable[..., Table], case: tuple[Placement, str, str], read: str
) -> None:
    t = tables(*case)
    got, expected = READS[read](t)
    batches = _batches(got)
    for b in batches:
        assert b.schema.field("v").type == t.out_type
        assert ("_rowid" in b.schema.names) == ("row_id" in read)
    keys = [k for k in ("id", "v") if k in batches[0].schema.names] if batches else ["id", "v"]
    rows = [{k: r[k] for k in keys} for b in batches for r in b.to_pylist()]
    assert rows == [{k: r[k] for k in keys} for r in expected]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_views_over_a_column_a_fragment_lacks_counts_and_samples(
    tables: Callable[..., Table], case: tuple[Placement, str, str]
) -> None:
    t = tables(*case)
    assert t.ds.count_rows() == len(t.model)
    assert t.ds.count_rows("v IS NULL") == sum(r["v"] is None for r in t.model)
    assert t.ds.get_fragments()[0].count_rows("v IS NULL") == len(_in_fragment(t, 0)) * (
        _added(case[1])
    )
    got, expected = _sample(t)
    if t.encodings:  # sample takes no encodings: the recorded (or default) layout
        assert [r["id"] for r in got.to_pylist()] == [r["id"] for r in expected]
        return
    assert got.schema.field("v").type == t.out_type
    assert got.to_pylist() == expected


# ---- mutations, which read the rows they rewrite ------------------------------------------


def _mutate(t: Table, mutation: str) -> list[Row]:
    """Runs ``mutation`` on ``t``'s table; the live rows it leaves, sorted by id."""
    ds, model = t.ds, t.model
    if mutation == "update_other_column":
        ds.update({"id": "id + 100"}, where="id > 2")
        out = [{**r, "id": r["id"] + 100} if r["id"] > 2 else r for r in model]
    elif mutation == "update_view_column":
        ds.update({"v": "v"}, where="id > 2")
        out = model
    elif mutation == "merge_insert":
        source = ds.to_table(filter="id > 2")
        builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
        builder.execute(source)
        out = model
    elif mutation == "add_columns_sql":
        ds.add_columns({"x": "v IS NULL"})
        out = [{**r, "x": r["v"] is None} for r in model]
    elif mutation == "add_columns_function":

        def null(batch: pa.RecordBatch) -> pa.RecordBatch:
            return pa.record_batch([batch["v"].is_null()], names=["x"])

        ds.add_columns(null, read_columns=["v"])
        out = [{**r, "x": r["v"] is None} for r in model]
    elif mutation == "delete_by_view_column":
        ds.delete("v IS NULL AND id > 4")
        out = [r for r in model if not (r["v"] is None and r["id"] > 4)]
    else:
        assert mutation == "compact_files"
        ds.optimize.compact_files()
        out = model
    return sorted(out, key=lambda r: r["id"])


MUTATIONS = [
    "update_other_column",
    "update_view_column",
    "merge_insert",
    "add_columns_sql",
    "add_columns_function",
    "delete_by_view_column",
    "compact_files",
]


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("missing", MISSING)
@pytest.mark.parametrize("place", PLACEMENTS, ids=[p.name for p in PLACEMENTS])
def test_views_over_a_column_a_fragment_lacks_in_mutations(
    tmp_path: Path, place: Placement, missing: str, mutation: str
) -> None:
    t = _make(tmp_path, place, missing, "recorded")
    expected = _mutate(t, mutation)
    got = ls.dataset(t.ds.uri).to_table()
    assert got.schema.field("v").type == t.out_type
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == expected
