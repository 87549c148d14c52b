"""Engines over ``ls.Dataset``: DuckDB's replacement scans and
``polars.scan_pyarrow_dataset`` push their projection and filter into our scan, and every
result equals what the same engine gives over pylance's dataset of the same (legacy)
table; ``pa.table(ds)`` and ``pl.DataFrame(ds)`` read through ``__arrow_c_stream__``;
``scanner(with_row_id=True)`` numbers rows as pylance does across fragments with
deletions; on a flagged table the output encodings (a field's entry, or the scanner's
override) reach the engines.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import lance
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_semantic as ls
from lance_semantic.errors import NotSupportedYetError
from lance_semantic.storage.datafile import DataFileReader

pytestmark = pytest.mark.interop

scanner_module = importlib.import_module("lance_semantic.dataset.scanner")
datafile_module = importlib.import_module("lance_semantic.storage.datafile")
dataset_module = importlib.import_module("lance_semantic.dataset.reads")  # Dataset's read verbs

N = 300


def _legacy_table() -> pa.Table:
    i = np.arange(N)
    return pa.table(
        {
            "id": pa.array(i, pa.int64()),
            "i": pa.array(i % 50, pa.int32()),
            "f": pa.array(i * 0.25),
            "s": pa.array([None if k % 17 == 0 else f"s{k % 23}" for k in range(N)]),
            "b": pa.array([k % 3 == 0 for k in range(N)]),
            "ts": pa.array(
                [datetime(2024, 1, 1 + k % 28, k % 24) for k in range(N)], pa.timestamp("us")
            ),
            "d": pa.array([date(2023, 1 + k % 12, 1) for k in range(N)], pa.date32()),
            "dec": pa.array([Decimal(k) / 4 for k in range(N)], pa.decimal128(10, 2)),
            "st": pa.StructArray.from_arrays(
                [pa.array(i % 7), pa.array([f"y{k}" for k in range(N)])], names=["x", "y"]
            ),
            "l": pa.array([list(range(k % 4)) for k in range(N)], pa.list_(pa.int64())),
        }
    )


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A table pylance wrote: fragments of 40 rows, deletion files in several of them (one
    fragment deleted whole)."""
    uri = str(tmp_path_factory.mktemp("engines") / "legacy.lance")
    lance.write_dataset(_legacy_table(), uri, max_rows_per_file=40, data_storage_version="2.2")
    ds = lance.dataset(uri)
    ds.delete("id % 11 = 4")
    ds.delete("id >= 80 AND id < 120")
    return uri


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What our scan is asked for: ``plan_scan``'s columns and filter (wherever it is called
    from), and the columns read from each data file."""
    seen: list[dict[str, Any]] = []
    plan_scan = scanner_module.plan_scan

    def spy_plan(table: Any, request: Any, **kwargs: Any) -> Any:
        plan = plan_scan(table, request, **kwargs)
        seen.append(
            {"columns": request.columns, "filter": request.filter, "schema": plan.output_schema}
        )
        return plan

    monkeypatch.setattr(scanner_module, "plan_scan", spy_plan)
    monkeypatch.setattr(dataset_module, "plan_scan", spy_plan)
    for method in ("read", "read_all", "take"):
        original = getattr(DataFileReader, method)

        def spy_read(self: Any, columns: Any, *a: Any, _original: Any = original) -> Any:
            seen.append({"read": tuple(columns or ())})
            return _original(self, columns, *a)

        monkeypatch.setattr(DataFileReader, method, spy_read)
    read_whole = datafile_module.read_whole

    def spy_whole(requests: Any) -> Any:
        seen.extend({"read": tuple(columns or ())} for _, columns, _ in requests)
        return read_whole(requests)

    monkeypatch.setattr(datafile_module, "read_whole", spy_whole)
    return seen


def _plans(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in seen if "columns" in s]


def _read_columns(seen: list[dict[str, Any]]) -> set[str]:
    return {c for s in seen if "read" in s for c in s["read"]}


def _same(got: pa.Table, want: pa.Table) -> None:
    assert got.schema.remove_metadata().equals(want.schema.remove_metadata()), (
        got.schema,
        want.schema,
    )
    assert got.to_pylist() == want.to_pylist()


# ---- DuckDB ----------------------------------------------------------------------------------

QUERIES = [
    "SELECT * FROM ds ORDER BY id",
    "SELECT s, f FROM ds WHERE i > 40 ORDER BY id",
    "SELECT id, s FROM ds WHERE s = 's3' OR s IS NULL ORDER BY id",
    "SELECT id FROM ds WHERE i IN (1, 2, 30) AND b ORDER BY id",
    "SELECT id, ts FROM ds WHERE ts >= TIMESTAMP '2024-01-20 05:00:00' ORDER BY id",
    "SELECT id, dec FROM ds WHERE dec BETWEEN 10.5 AND 20 ORDER BY id",
    "SELECT id, d FROM ds WHERE d < DATE '2023-04-01' ORDER BY id",
    "SELECT st.x AS x, l FROM ds WHERE id % 5 = 1 ORDER BY id",
    "SELECT s, count(*) AS n, sum(f) AS total FROM ds WHERE i < 25 GROUP BY s ORDER BY s",
    "SELECT count(*) AS n FROM ds",
    "SELECT id FROM ds WHERE s LIKE 's1%' ORDER BY id LIMIT 7",
]


@pytest.mark.parametrize("query", QUERIES)
def test_duckdb_results_equal_pylance(legacy: str, query: str) -> None:
    ds = ls.dataset(legacy)
    got = duckdb.sql(query).to_arrow_table()
    ds = lance.dataset(legacy)  # noqa: F841  (the same name, now pylance's dataset)
    want = duckdb.sql(query).to_arrow_table()
    assert got.num_rows > 0
    _same(got, want)


def test_duckdb_pushes_projection_and_filter(legacy: str, spy: list[dict[str, Any]]) -> None:
    ds = ls.dataset(legacy)  # noqa: F841  (DuckDB finds it by name)
    got = duckdb.sql("SELECT s FROM ds WHERE i > 40 AND f < 60").fetchall()
    plans = _plans(spy)
    assert len(plans) == 1
    assert plans[0]["columns"] == ["s"]
    flt = plans[0]["filter"]
    assert isinstance(flt, pc.Expression)
    # DuckDB's own Arrow expression, unchanged: ((i > 40) and (f < 60))
    assert flt.equals((pc.field("i") > pa.scalar(40, pa.int32())) & (pc.field("f") < 60.0))
    # only the selected and the filtered columns are read from the data files
    assert _read_columns(spy) == {"s", "i", "f"}
    want = [(f"s{k % 23}" if k % 17 else None,) for k in range(N)]
    live = [k for k in range(N) if k % 11 != 4 and not 80 <= k < 120 and k % 50 > 40 and k < 240]
    assert sorted(got, key=str) == sorted([want[k] for k in live], key=str)


def test_duckdb_pushes_a_filter_on_a_struct_child(legacy: str, spy: list[dict[str, Any]]) -> None:
    """A nested reference is pushed down and evaluated here (pylance 14 refuses it: "nested
    references in pushdown filters not yet supported"); only ``id`` and ``st`` are read."""
    ds = ls.dataset(legacy)  # noqa: F841
    got = duckdb.sql("SELECT id FROM ds WHERE st.x = 3 ORDER BY id").to_arrow_table()
    (plan,) = _plans(spy)
    assert plan["columns"] == ["id"] and plan["filter"].equals(pc.field("st", "x") == 3)
    assert _read_columns(spy) == {"id", "st"}
    want = lance.dataset(legacy).to_table(columns=["id"], filter="st.x = 3")
    assert got.column("id").to_pylist() == want.column("id").to_pylist() != []


def test_duckdb_reads_a_scanner_with_row_ids(legacy: str) -> None:
    query = "SELECT _rowid, id FROM sc WHERE id % 7 = 0 ORDER BY id"
    sc = ls.dataset(legacy).scanner(columns=["id"], with_row_id=True)
    got = duckdb.sql(query).to_arrow_table()
    sc = lance.dataset(legacy).scanner(columns=["id"], with_row_id=True)  # noqa: F841
    _same(got, duckdb.sql(query).to_arrow_table())


# ---- Polars and pyarrow ------------------------------------------------------------------------


def _polars(ds: Any) -> pl.DataFrame:
    return (
        pl.scan_pyarrow_dataset(ds)
        .filter((pl.col("i") > 40) & (pl.col("s") != "s5"))
        .select("id", "s", "dec")
        .collect()
    )


def test_polars_scan_pushes_projection_and_filter(legacy: str, spy: list[dict[str, Any]]) -> None:
    got = _polars(ls.dataset(legacy))
    plans = _plans(spy)
    assert len(plans) == 1
    assert set(plans[0]["columns"]) == {"id", "s", "dec", "i"}  # Polars adds the filter's
    assert isinstance(plans[0]["filter"], pc.Expression)
    assert "i" in str(plans[0]["filter"]) and "s5" in str(plans[0]["filter"])
    assert _read_columns(spy) == {"id", "s", "dec", "i"}
    want = _polars(lance.dataset(legacy))
    assert got.height > 0 and got.equals(want)
    assert got.schema == want.schema


def test_polars_head_pushes_the_projection(legacy: str, spy: list[dict[str, Any]]) -> None:
    got = pl.scan_pyarrow_dataset(ls.dataset(legacy)).select("s").head(5).collect()
    assert _plans(spy)[0]["columns"] == ["s"] and _read_columns(spy) == {"s"}
    assert got.equals(pl.scan_pyarrow_dataset(lance.dataset(legacy)).select("s").head(5).collect())


def test_arrow_c_stream_readers_equal_pylance(legacy: str) -> None:
    ds, want = ls.dataset(legacy), lance.dataset(legacy).to_table()
    _same(pa.table(ds), want)
    _same(pa.RecordBatchReader.from_stream(ds).read_all(), want)
    assert pl.DataFrame(ds).equals(pl.from_arrow(want))
    assert pl.from_arrow(ds.scanner(columns=["s"]).to_reader()).equals(
        pl.from_arrow(want.select(["s"]))
    )


def test_polars_from_arrow_treats_both_datasets_alike(legacy: str) -> None:
    """``pl.from_arrow`` takes pyarrow objects by type (tables, batches, arrays, iterables of
    batches): a pyarrow dataset is none of them, pylance's no more than ours."""
    outcomes = []
    for ds in (ls.dataset(legacy), lance.dataset(legacy)):
        try:
            outcomes.append(pl.from_arrow(ds).shape)  # type: ignore[union-attr]
        except TypeError:
            outcomes.append("TypeError")
    assert outcomes[0] == outcomes[1]


# ---- the scanner against pylance's ---------------------------------------------------------------

FILTERS: dict[str, Any] = {
    "none": None,
    "sql": "i % 4 = 1 AND s IS NOT NULL",
    "arrow": (pc.field("i") > 30) | pc.field("s").is_null(),
    "one row": "id = 203",
}


@pytest.mark.parametrize("window", [(None, None), (9, None), (None, 25), (6, 31)], ids=str)
@pytest.mark.parametrize("columns", [None, ["s", "st"], []], ids=str)
@pytest.mark.parametrize("flt", list(FILTERS))
def test_scanner_with_row_id_equals_pylance(
    legacy: str, flt: str, columns: list[str] | None, window: tuple[int | None, int | None]
) -> None:
    limit, offset = window
    kwargs: dict[str, Any] = dict(columns=columns, filter=FILTERS[flt], limit=limit, offset=offset)
    sc = ls.dataset(legacy).scanner(with_row_id=True, batch_size=16, **kwargs)
    want = lance.dataset(legacy).scanner(with_row_id=True, **kwargs).to_table()
    got = sc.to_table()
    _same(got, want)
    assert sc.projected_schema.remove_metadata().equals(want.schema.remove_metadata())
    batches = list(sc.to_batches())
    assert all(0 < b.num_rows <= 16 for b in batches)
    assert sum(b.num_rows for b in batches) == want.num_rows
    assert sc.count_rows() == want.num_rows
    rowaddr = ls.dataset(legacy).scanner(with_row_address=True, **kwargs).to_table()
    pylance_addr = lance.dataset(legacy).scanner(with_row_address=True, **kwargs).to_table()
    _same(rowaddr, pylance_addr)


def test_row_ids_of_a_table_with_stable_row_ids(tmp_path: Path) -> None:
    """Stable row ids are not read here: ``with_row_id`` refuses; the addresses are pylance's."""
    uri = str(tmp_path / "stable.lance")
    lance.write_dataset(
        pa.table({"a": np.arange(20)}), uri, max_rows_per_file=6, enable_stable_row_ids=True
    )
    lance.dataset(uri).delete("a % 5 = 2")
    with pytest.raises(NotSupportedYetError, match="stable row ids"):
        ls.dataset(uri).scanner(with_row_id=True)
    got = ls.dataset(uri).scanner(with_row_address=True).to_table()
    _same(got, lance.dataset(uri).to_table(with_row_address=True))


def test_pylance_options_the_scanner_ignores_give_the_same_rows(legacy: str) -> None:
    options = dict(
        batch_readahead=2, fragment_readahead=1, scan_in_order=True, late_materialization=False
    )
    got = ls.dataset(legacy).scanner(columns=["id"], filter="i > 3", **options).to_table()
    _same(got, lance.dataset(legacy).scanner(columns=["id"], filter="i > 3", **options).to_table())


# ---- output encodings reach the engines ----------------------------------------------------------


@pytest.fixture
def flagged(tmp_path: Path) -> ls.Dataset:
    """``name`` created from large_string (its entry: large_utf8), ``tag`` set to utf8_view,
    and a later fragment of ``name`` in the default layout."""
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": pa.array(["ann", "bob", "cy"], pa.large_string()),
            "tag": ["x", "y", "x"],
        }
    )
    ds = ls.write_dataset(data, tmp_path / "flagged.lance", data_storage_version="2.3")
    ds.insert(pa.table({"id": [4], "name": ["dee"], "tag": ["z"]}))
    return ds.set_output_encoding("tag", "utf8_view")


def _batch_types(monkeypatch: pytest.MonkeyPatch) -> list[pa.Schema]:
    """The schemas of the batches our scans hand out."""
    seen: list[pa.Schema] = []
    run_scan = scanner_module.run_scan

    def spy(*a: Any, **k: Any) -> Iterator[pa.RecordBatch]:
        for batch in run_scan(*a, **k):
            seen.append(batch.schema)
            yield batch

    monkeypatch.setattr(scanner_module, "run_scan", spy)
    monkeypatch.setattr(dataset_module, "run_scan", spy)
    return seen


def test_a_fields_output_encoding_reaches_duckdb_polars_and_pyarrow(
    flagged: ls.Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = flagged
    assert ds.schema.field("name").type == pa.large_string()
    assert ds.schema.field("tag").type == pa.string_view()
    types = _batch_types(monkeypatch)
    got = duckdb.sql("SELECT name, tag FROM ds WHERE id >= 2 ORDER BY id").fetchall()
    assert got == [("bob", "y"), ("cy", "x"), ("dee", "z")]
    assert types and all(s.field("name").type == pa.large_string() for s in types)
    assert all(s.field("tag").type == pa.string_view() for s in types)
    types.clear()
    frame = pl.scan_pyarrow_dataset(ds).filter(pl.col("tag") == "x").select("name").collect()
    assert frame["name"].to_list() == ["ann", "cy"]
    assert types and all(s.field("name").type == pa.large_string() for s in types)
    table = pa.table(ds)
    assert table.schema.field("name").type == pa.large_string()
    assert table.schema.field("tag").type == pa.string_view()
    assert table.column("name").to_pylist() == ["ann", "bob", "cy", "dee"]


def test_the_scanners_override_reaches_duckdb_and_pyarrow(flagged: ls.Dataset) -> None:
    sc = flagged.scanner(columns=["name"], filter="id > 1", output_encodings={"name": "utf8_view"})
    assert sc.projected_schema.field("name").type == pa.string_view()
    assert duckdb.sql("SELECT name FROM sc ORDER BY name").fetchall() == [
        ("bob",),
        ("cy",),
        ("dee",),
    ]
    table = pa.table(sc)
    assert table.schema.field("name").type == pa.string_view()
    assert pl.DataFrame(sc)["name"].to_list() == ["bob", "cy", "dee"]
    dictionary = flagged.scanner(columns=["tag"], output_encodings={"tag": "dictionary:int8:utf8"})
    assert pa.types.is_dictionary(pa.table(dictionary).schema.field("tag").type)
    assert sorted(duckdb.sql("SELECT tag FROM dictionary").fetchall()) == [
        ("x",),
        ("x",),
        ("y",),
        ("z",),
    ]
