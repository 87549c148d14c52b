"""Filtered scans read the filter's columns first and the other columns only for matching
rows; unfiltered scans read fragments concurrently.

The class is tested as a matrix: filter selectivity x projection x layout (one fragment, many
fragments) x deletions x window size (the default, and windows and evaluations of a few rows,
so one fragment spans many windows and one evaluation many fragments). Legacy tables are
compared with pylance's answer on the same table; flagged tables (output encodings, json,
blob v2) with our own unfiltered read filtered afterwards.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

import lance_semantic as ls

fs = importlib.import_module("lance_semantic.read.row_streams")

N = 600

SELECTIVITY = {
    "none": "i < -1",
    "one": "id = 5",
    "few": "i % 97 = 3",
    "most": "i % 5 <> 0",
    "all": "i >= 0",
    "nulls": "s IS NULL OR i < 3",
}
PROJECTIONS = {
    "all": None,
    "not filtered": ["s"],
    "only filtered": ["i"],
    "nested": ["st.y", "lst"],
    "struct": ["id", "st"],
}


def _legacy_table(n: int = N) -> pa.Table:
    i = np.arange(n)
    s = pa.array([None if k % 13 == 0 else f"s{k}" * (k % 4) for k in range(n)])
    st = pa.StructArray.from_arrays(
        [pa.array(i.astype(np.int32)), pa.array([f"y{k}" for k in range(n)])], names=["x", "y"]
    )
    lst = pa.array([list(range(k % 5)) for k in range(n)], pa.list_(pa.int64()))
    d = pa.array([f"d{k % 7}" for k in range(n)]).dictionary_encode()
    return pa.table({"id": i, "i": i, "s": s, "st": st, "lst": lst, "d": d})


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], str]:
    out = {}
    root = tmp_path_factory.mktemp("late")
    for layout, per_file in (("one fragment", N), ("many fragments", 37)):
        for deletions in (False, True):
            uri = str(root / f"{layout.replace(' ', '_')}_{deletions}")
            lance.write_dataset(
                _legacy_table(), uri, max_rows_per_file=per_file, data_storage_version="2.2"
            )
            if deletions:
                ds = lance.dataset(uri)
                ds.delete("i % 11 = 4")
                ds.delete("i >= 74 AND i < 111")  # whole fragments of the many-fragment layout
            out[(layout, deletions)] = uri
    return out


@pytest.fixture(params=["default windows", "small windows"])
def windows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "small windows":
        monkeypatch.setattr(fs, "WINDOW_ROWS", 16)
        monkeypatch.setattr(fs, "EVAL_ROWS", 50)
    return str(request.param)


def _same(got: pa.Table, want: pa.Table) -> None:
    assert got.schema.remove_metadata().equals(want.schema.remove_metadata()), (
        got.schema,
        want.schema,
    )
    assert got.num_rows == want.num_rows
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("windows", ["default windows", "small windows"], indirect=True)
@pytest.mark.parametrize("deletions", [False, True], ids=["no deletions", "deletions"])
@pytest.mark.parametrize("layout", ["one fragment", "many fragments"])
@pytest.mark.parametrize("projection", PROJECTIONS)
@pytest.mark.parametrize("selectivity", SELECTIVITY)
def test_filtered_scan_matches_pylance(
    tables: dict, selectivity: str, projection: str, layout: str, deletions: bool, windows: str
) -> None:
    uri = tables[(layout, deletions)]
    flt, columns = SELECTIVITY[selectivity], PROJECTIONS[projection]
    got = ls.dataset(uri).to_table(columns=columns, filter=flt)
    _same(got, lance.dataset(uri).to_table(columns=columns, filter=flt))
    batches = list(ls.dataset(uri).to_batches(columns=columns, filter=flt, batch_size=7))
    assert all(0 < b.num_rows <= 7 for b in batches)
    assert sum(b.num_rows for b in batches) == got.num_rows


@pytest.mark.parametrize("windows", ["default windows", "small windows"], indirect=True)
@pytest.mark.parametrize("deletions", [False, True], ids=["no deletions", "deletions"])
@pytest.mark.parametrize("layout", ["one fragment", "many fragments"])
@pytest.mark.parametrize("selectivity", SELECTIVITY)
def test_count_rows_with_filter_matches_pylance(
    tables: dict, selectivity: str, layout: str, deletions: bool, windows: str
) -> None:
    uri = tables[(layout, deletions)]
    flt = SELECTIVITY[selectivity]
    assert ls.dataset(uri).count_rows(flt) == lance.dataset(uri).count_rows(flt)


@pytest.mark.parametrize("windows", ["default windows", "small windows"], indirect=True)
@pytest.mark.parametrize("deletions", [False, True], ids=["no deletions", "deletions"])
@pytest.mark.parametrize("layout", ["one fragment", "many fragments"])
@pytest.mark.parametrize(
    ("limit", "offset"), [(5, None), (None, 7), (4, 40), (1000, 3), (3, 1000), (0, 2)]
)
@pytest.mark.parametrize("flt", [None, "i % 3 = 1", "s IS NOT NULL"])
def test_limit_and_offset_match_pylance(
    tables: dict,
    flt: str | None,
    limit: int | None,
    offset: int | None,
    layout: str,
    deletions: bool,
    windows: str,
) -> None:
    uri = tables[(layout, deletions)]
    kw: dict[str, Any] = {"filter": flt, "limit": limit, "offset": offset}
    got = ls.dataset(uri).to_table(columns=["id", "s", "st"], **kw)
    _same(got, lance.dataset(uri).to_table(columns=["id", "s", "st"], **kw))


def test_only_the_filter_columns_are_read_before_the_filter(
    tables: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selective filter takes the other columns of the matching rows only; ``count_rows``
    reads the filter's columns and nothing else."""
    from lance_semantic.storage import datafile
    from lance_semantic.storage.datafile import DataFileReader

    reads: list[tuple[str, tuple[str, ...]]] = []
    read_all, take = DataFileReader.read_all, DataFileReader.take
    read_whole = datafile.read_whole

    def spy_read_all(self: Any, columns: Any, start: int, n: int) -> Any:
        reads.append(("range", tuple(columns or ())))
        return read_all(self, columns, start, n)

    def spy_take(self: Any, columns: Any, rows: Any) -> Any:
        reads.append(("take", tuple(columns or ())))
        return take(self, columns, rows)

    def spy_whole(requests: Any) -> Any:
        reads.extend(("range", tuple(columns or ())) for _, columns, _ in requests)
        return read_whole(requests)

    monkeypatch.setattr(DataFileReader, "read_all", spy_read_all)
    monkeypatch.setattr(DataFileReader, "take", spy_take)
    monkeypatch.setattr(datafile, "read_whole", spy_whole)
    uri = tables[("many fragments", True)]
    ls.dataset(uri).count_rows("i % 7 = 0")
    assert reads and {cols for _, cols in reads} == {("i",)}
    reads.clear()
    got = ls.dataset(uri).to_table(columns=["s", "st"], filter="id = 5")
    assert got.num_rows == 1
    ranges = [c for kind, c in reads if kind == "range"]
    takes = [c for kind, c in reads if kind == "take"]
    assert set(ranges) == {("id",)}
    assert takes == [("s", "st")]  # only the fragment holding the row


def test_empty_table_and_no_fragments(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_legacy_table().slice(0, 0), uri)
    ds = ls.dataset(uri)
    assert ds.to_table(filter="i > 3").num_rows == 0
    assert ds.to_table(filter="i > 3").schema.names == ds.schema.names
    assert ds.count_rows("i > 3") == 0


def test_a_filter_over_thousands_of_terms_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch, tables: dict
) -> None:
    from lance_semantic.query import expressions

    calls = []
    parse = expressions.parse_expression

    def counting(df: Any, sql: str) -> Any:
        calls.append(sql)
        return parse(df, sql)

    monkeypatch.setattr(expressions, "parse_expression", counting)
    flt = " OR ".join(f"i = {k}" for k in range(0, 2000, 3))
    uri = tables[("many fragments", True)]
    got = ls.dataset(uri).to_table(columns=["id"], filter=flt, batch_size=16)
    _same(got, lance.dataset(uri).to_table(columns=["id"], filter=flt))
    assert len(calls) <= 2  # the plan's type check and the scan, not once per fragment


# ---- flagged tables: filtered read == unfiltered read filtered afterwards ----------------
def _flagged_table(n: int = 300) -> pa.Table:
    i = np.arange(n)
    return pa.table(
        {
            "i": i,
            "ls": pa.array([f"v{k}" for k in range(n)], pa.large_string()),
            "sv": pa.array([f"w{k}" for k in range(n)], pa.string_view()),
            "dict": pa.array([f"d{k % 5}" for k in range(n)]).dictionary_encode(),
            "ll": pa.array([[k] * (k % 3) for k in range(n)], pa.large_list(pa.int32())),
            "doc": pa.array([f'{{"k": {k}}}' for k in range(n)], pa.json_(pa.string())),
        }
    )


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, str]:
    out = {}
    for many in (False, True):
        uri = str(tmp_path_factory.mktemp("flagged") / "t")
        ls.write_dataset(
            _flagged_table(), uri, data_storage_version="2.3", max_rows_per_file=23 if many else 300
        )
        ds = ls.dataset(uri)
        ds.delete("i % 9 = 2")
        out[many] = uri
    return out


@pytest.mark.parametrize("windows", ["default windows", "small windows"], indirect=True)
@pytest.mark.parametrize("many", [False, True], ids=["one fragment", "many fragments"])
@pytest.mark.parametrize("columns", [None, ["ls", "sv"], ["dict", "ll"], ["doc"], ["sv", "i"]])
@pytest.mark.parametrize("flt", ["i % 17 = 3", "i >= 40", "i < 0"])
@pytest.mark.parametrize("encodings", [None, {"ls": "utf8_view", "dict": "utf8"}])
def test_flagged_filtered_read_equals_the_unfiltered_read_filtered(
    flagged: dict,
    many: bool,
    columns: list | None,
    flt: str,
    encodings: dict | None,
    windows: str,
) -> None:
    ds = ls.dataset(flagged[many])
    assert ds.semantic_types
    cols = None if columns is None else [*columns, "i"] if "i" not in columns else columns
    every = ds.to_table(columns=cols, output_encodings=encodings)
    k = int(flt.split()[-1])
    ivals = every["i"].to_numpy()
    keep = {"i % 17 = 3": ivals % 17 == k, "i >= 40": ivals >= k, "i < 0": ivals < k}[flt]
    if columns is not None and "i" not in columns:
        every = every.drop_columns(["i"])
    # (Arrow has no filter kernel for views: compared as Python rows)
    want = [row for row, k in zip(every.to_pylist(), keep, strict=True) if k]
    got = ds.to_table(columns=columns, filter=flt, output_encodings=encodings)
    assert got.schema.equals(every.schema, check_metadata=True)
    assert got.to_pylist() == want


def test_blob_columns_through_late_materialisation(tmp_path: Path) -> None:
    n = 50
    values = [None if k % 7 == 0 else bytes([k]) * k for k in range(n)]
    schema = pa.schema([pa.field("i", pa.int64()), blob_field("clip")])
    table = pa.table({"i": pa.array(range(n)), "clip": blob_array(values)}, schema=schema)
    uri = str(tmp_path / "b")
    ls.write_dataset(table, uri, data_storage_version="2.2", max_rows_per_file=9)
    ds = ls.dataset(uri)
    ds.delete("i = 12")
    every = ds.to_table()
    for flt in ("i % 4 = 1", "i > 5"):
        ivals = every["i"].to_numpy()
        keep = ivals % 4 == 1 if "%" in flt else ivals > 5
        got = ds.to_table(filter=flt)
        assert got.equals(every.filter(pa.array(keep)))
        assert (
            ds.to_table(columns=["clip"], filter=flt)
            .column("clip")
            .equals(every.filter(pa.array(keep)).column("clip"))
        )


@pytest.mark.parametrize("name", ["naïve", "größe", "two words"])
def test_a_filter_on_a_column_with_an_unusual_name_reads_it(tmp_path: Path, name: str) -> None:
    uri = str(tmp_path / "t")
    table = pa.table({"id": pa.array(range(40)), name: pa.array(range(40, 80))})
    lance.write_dataset(table, uri, max_rows_per_file=9)
    quoted = f"`{name}`" if " " in name else name
    flt = f"{quoted} % 3 = 1"
    for columns in (None, ["id"]):
        got = ls.dataset(uri).to_table(columns=columns, filter=flt)
        _same(got, lance.dataset(uri).to_table(columns=columns, filter=flt))
    assert ls.dataset(uri).count_rows(flt) == lance.dataset(uri).count_rows(flt)


@pytest.mark.parametrize("windows", ["default windows", "small windows"], indirect=True)
@pytest.mark.parametrize("deletions", [False, True], ids=["no deletions", "deletions"])
@pytest.mark.parametrize("layout", ["one fragment", "many fragments"])
@pytest.mark.parametrize("projection", ["all", "only filtered", "nested", "none"])
@pytest.mark.parametrize("selectivity", SELECTIVITY)
@pytest.mark.parametrize("option", ["with_row_address", "with_row_id"])
def test_row_addresses_of_filtered_rows_match_pylance(
    tables: dict,
    selectivity: str,
    projection: str,
    layout: str,
    deletions: bool,
    windows: str,
    option: str,
) -> None:
    """The filter's columns are read without addresses; those of the matching rows are
    worked out after the filter from the deletion vector (every path: one filter over
    every column, rows taken, ranges read, most rows matching)."""
    uri = tables[(layout, deletions)]
    flt = SELECTIVITY[selectivity]
    columns = [] if projection == "none" else PROJECTIONS[projection]
    kw: dict[str, Any] = {"columns": columns, "filter": flt, option: True}
    _same(ls.dataset(uri).to_table(**kw), lance.dataset(uri).to_table(**kw))
