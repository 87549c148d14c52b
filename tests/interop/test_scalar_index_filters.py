"""Filters through pylance's BTREE / BITMAP / LABEL_LIST indices (issue 31 item 1).

pylance builds the indices on a legacy table of four fragments (int, float, date,
timestamp and string columns under BTREE; a string and a small int column under BITMAP;
a list of strings under LABEL_LIST; nulls in each, NaN in the float); then it appends a
fragment (not indexed) and deletes rows in every fragment. For a generated set of filters (=, IN,
ranges, BETWEEN, IS [NOT] NULL, array_has_any / array_has_all, with AND / OR / NOT, mixed
with an unindexed column), our rows through the indices (``to_table``, ``to_batches``,
``count_rows``, ``LanceFragment`` reads) equal our unindexed scan (order included) and
pylance's rows; and the filters an index can answer selectively are answered by it (the
scanner's ``_scalar_choice`` names the index), with fewer rows read.
"""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_semantic as ls
from lance_semantic.errors import CorruptTableError
from lance_semantic.read import indexed_filter
from lance_semantic.scalar import clear_kept_indices

pytestmark = pytest.mark.interop

ROWS, ADDED, PER_FILE = 12_000, 2_000, 3_000
DELETED = "id % 13 = 5 OR id IN (7, 3001, 6002, 12001)"
_RNG = np.random.default_rng(3131)
_DAY0 = datetime.date(2020, 1, 1)


def _table(lo: int, hi: int) -> pa.Table:
    rng = np.random.default_rng(lo)
    n = hi - lo
    ids = np.arange(lo, hi)
    i = rng.integers(0, 1_000, n)
    f = rng.random(n).round(3)
    f[ids % 501 == 0] = np.nan
    days = rng.integers(0, 400, n)
    labels = [[f"l{x}" for x in rng.integers(0, 8, rng.integers(0, 4))] for _ in range(n)]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "i": pa.array(i, pa.int64(), mask=ids % 97 == 3),
            "f": pa.array(f, pa.float64(), mask=ids % 89 == 1),
            "d": pa.array(
                [_DAY0 + datetime.timedelta(days=int(x)) for x in days],
                pa.date32(),
                mask=ids % 83 == 2,
            ),
            "s": pa.array([f"s{x}" for x in rng.integers(0, 40, n)], mask=ids % 61 == 0),
            "c": pa.array(rng.integers(0, 30, n).astype(np.int32), mask=ids % 71 == 0),
            "lab": pa.array(
                [None if k % 53 == 0 else v for k, v in zip(ids, labels, strict=True)],
                pa.list_(pa.string()),
            ),
            "u": pa.array(rng.integers(0, 100, n), pa.int64()),
            "ts": pa.array(
                [datetime.datetime(2021, 1, 1) + datetime.timedelta(minutes=int(x)) for x in days],
                pa.timestamp("us"),
                mask=ids % 79 == 4,
            ),
            "name": pa.array([f"n{x:05d}" for x in rng.integers(0, 9_000, n)], mask=ids % 67 == 0),
        }
    )


INDICES = {"i": "BTREE", "f": "BTREE", "d": "BTREE", "s": "BITMAP", "c": "BITMAP"}
INDICES["lab"] = "LABEL_LIST"
INDICES["name"] = "BTREE"
INDICES["ts"] = "BTREE"

#: (filter, the indices that must answer it; empty: the planner may scan)
FILTERS: list[tuple[str, tuple[str, ...]]] = [
    ("i = 17", ("i_idx",)),
    ("17 = i", ("i_idx",)),
    ("i IN (1, 2, 3, 500, 999, 1001)", ("i_idx",)),
    ("i < 20", ("i_idx",)),
    ("i <= 20", ("i_idx",)),
    ("i > 980", ("i_idx",)),
    ("i >= 990", ("i_idx",)),
    ("i BETWEEN 100 AND 130", ("i_idx",)),
    ("i IS NULL", ("i_idx",)),
    ("i IS NOT NULL", ()),
    ("i = NULL", ()),
    ("i <> 5 AND i < 10", ("i_idx",)),
    ("NOT (i > 30) AND i >= 0", ()),
    ("i NOT IN (1, 2) AND i < 5", ("i_idx",)),
    ("i NOT BETWEEN 5 AND 990", ()),
    ("i = 17 AND u < 50", ("i_idx",)),
    ("i = 17 OR u < 3", ()),
    ("i = 17 OR i = 800 OR s = 's3'", ("i_idx", "s_idx")),
    ("(i < 10 OR i > 995) AND s IS NOT NULL", ("i_idx", "s_idx")),
    ("f < 0.01", ("f_idx",)),
    ("f >= 0.995", ("f_idx",)),
    ("f = 0.5", ("f_idx",)),
    ("f BETWEEN 0.2 AND 0.21", ("f_idx",)),
    ("f IS NULL", ("f_idx",)),
    ("isnan(f)", ()),
    ("d = date '2020-02-01'", ("d_idx",)),
    ("d < date '2020-01-10'", ("d_idx",)),
    ("d BETWEEN date '2020-06-01' AND date '2020-06-20'", ("d_idx",)),
    ("d IS NULL", ("d_idx",)),
    ("s = 's7'", ("s_idx",)),
    ("s IN ('s1', 's2')", ("s_idx",)),
    ("s > 's38' AND s < 's4'", ("s_idx",)),
    ("s IS NULL", ("s_idx",)),
    ("s = 's7' AND c = 3", ("s_idx", "c_idx")),
    ("c = 3", ("c_idx",)),
    ("c IN (4, 5) AND i < 500", ("c_idx",)),
    ("c < 2 OR c IS NULL", ()),
    ("NOT (c <> 3)", ()),
    ("array_has_any(lab, ['l1'])", ()),
    ("array_has_all(lab, ['l1', 'l2', 'l3'])", ("lab_idx",)),
    ("array_has(lab, 'l4') AND c = 1", ("lab_idx", "c_idx")),
    ("lab IS NULL", ("lab_idx",)),
    ("lab IS NULL AND i > 500", ("lab_idx",)),
    ("u < 2", ()),
    ("ts = timestamp '2021-01-01 00:07:00'", ("ts_idx",)),
    ("ts BETWEEN timestamp '2021-01-01 01:00:00' AND timestamp '2021-01-01 01:30:00'", ("ts_idx",)),
    ("ts < timestamp '2021-01-01 00:03:00.5'", ("ts_idx",)),
    ("name = 'n00042'", ("name_idx",)),
    ("name IN ('n00001', 'n08000', 'zz')", ("name_idx",)),
    ("name BETWEEN 'n01000' AND 'n01100'", ("name_idx",)),
    ("name < 'n00100' OR name IS NULL", ("name_idx",)),
    ("name > 'n08950' AND NOT (name = 'n08990')", ("name_idx",)),
]
_NAMES = [f for f, _ in FILTERS]


@pytest.fixture(scope="module")
def uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(Path(tmp_path_factory.mktemp("scalar")) / "t.lance")
    lance.write_dataset(_table(0, ROWS), path, max_rows_per_file=PER_FILE)
    ds = lance.dataset(path)
    for column, kind in INDICES.items():
        ds.create_scalar_index(column, kind)
    lance.write_dataset(_table(ROWS, ROWS + ADDED), path, mode="append")
    lance.dataset(path).delete(DELETED)
    clear_kept_indices()
    return path


@pytest.fixture
def every_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selections of any size are read through the indices (not only selective ones)."""
    monkeypatch.setattr(indexed_filter, "SELECTIVE", 1.0)


def _canon(t: pa.Table) -> pa.Table:
    """``t`` with its NaNs as -1 (NaN never equals NaN in ``Table.equals``)."""
    for i, field in enumerate(t.schema):
        if pa.types.is_floating(field.type):
            col = t.column(i)
            t = t.set_column(i, field.name, pc.if_else(pc.is_nan(col), -1.0, col))
    return t.combine_chunks()


def _same(a: pa.Table, b: pa.Table) -> bool:
    return a.schema.equals(b.schema) and _canon(a).equals(_canon(b))


def _by_id(t: pa.Table) -> pa.Table:
    return t.sort_by("id")


@pytest.mark.parametrize(("filter", "used"), FILTERS, ids=_NAMES)
@pytest.mark.usefixtures("every_selection")
def test_rows_equal_an_unindexed_scan_and_pylance(
    uri: str, filter: str, used: tuple[str, ...]
) -> None:
    ds = ls.dataset(uri)
    theirs = lance.dataset(uri).to_table(filter=filter)
    ours = ds.to_table(filter=filter)
    scanned = ds.to_table(filter=filter, use_scalar_index=False)
    assert _same(ours, scanned), filter  # the same rows in the same order
    assert _same(_by_id(ours), _by_id(theirs)), filter
    batches = list(ds.to_batches(filter=filter, batch_size=333))
    assert all(b.num_rows <= 333 for b in batches)
    assert _same(pa.Table.from_batches(batches, schema=ours.schema), ours)
    assert ds.count_rows(filter) == ours.num_rows == lance.dataset(uri).count_rows(filter)
    choice = ds.scanner(filter=filter)._scalar_choice()
    if used:
        assert choice is not None, filter
        assert set(used) <= set(choice.indices), (filter, choice.indices)
    assert ds.scanner(filter=filter, use_scalar_index=False)._scalar_choice() is None


@pytest.mark.parametrize(
    "filter", ["i = 17", "s = 's7' AND u > 10", "array_has_all(lab, ['l1', 'l2', 'l3'])"]
)
@pytest.mark.usefixtures("every_selection")
def test_columns_windows_row_addresses_and_fragments(uri: str, filter: str) -> None:
    ds, theirs = ls.dataset(uri), lance.dataset(uri)
    kw = {"columns": ["u", "id"], "with_row_address": True}
    ours = ds.to_table(filter=filter, **kw)
    assert ours.equals(ds.to_table(filter=filter, use_scalar_index=False, **kw))
    assert _by_id(ours).equals(_by_id(theirs.to_table(filter=filter, **kw)))
    window = ds.to_table(filter=filter, offset=3, limit=5)
    assert _same(window, ds.to_table(filter=filter, use_scalar_index=False).slice(3, 5))
    assert ds.scanner(filter=filter, limit=4).count_rows() == min(4, ours.num_rows)
    for ours_f, theirs_f in zip(ds.get_fragments(), theirs.get_fragments(), strict=True):
        got = ours_f.to_table(filter=filter)
        assert _same(_by_id(got), _by_id(theirs_f.to_table(filter=filter))), ours_f.fragment_id
        assert ours_f.count_rows(filter) == got.num_rows


def test_deleted_rows_never_come_back(uri: str) -> None:
    ds = ls.dataset(uri)
    for filter in ("id = 7", "id IN (3001, 6002)", "i = 17 AND id % 13 = 5"):
        assert ds.to_table(filter=filter).num_rows == 0
    # the deleted rows are in the index: the selection holds them, the reads drop them
    gone = lance.dataset(uri).to_table(filter=None).num_rows
    assert ds.count_rows() == gone


def test_the_index_reads_few_rows_and_counts_read_none(uri: str) -> None:
    clear_kept_indices()
    ds = ls.dataset(uri)
    choice = ds.scanner(filter="i = 17")._scalar_choice()
    assert choice is not None and choice.complete and choice.indices == ("i_idx",)
    assert choice.selected < 40 and choice.covered == ROWS
    (btree,) = [ix for ix in _opened(ds, "i")]
    assert btree.pages_read <= 2  # one 4096-row page (two at a boundary) of page_data
    # a count over a complete selection needs no rows: the appended fragment is scanned
    frag_rows = [f.count_rows("i = 17") for f in ds.get_fragments()]
    assert ds.count_rows("i = 17") == sum(frag_rows)
    unselective = ds.scanner(filter="i > 10")._scalar_choice()
    assert unselective is None  # most rows: scanned
    assert ds.scanner(filter="i < 20")._scalar_choice() is None  # 2% of the rows: scanned
    assert ds.scanner(filter="i < 5")._scalar_choice() is not None  # 0.5%: through it
    # an IN list meets a page per value, whatever the pages' other rows: through the index
    assert ds.scanner(filter="i IN (1, 400, 999)")._scalar_choice() is not None


@pytest.mark.parametrize(
    "filter", ["c < 15", "s <> 's3'", "lab IS NOT NULL", "i > 100", "i IS NOT NULL"]
)
def test_counts_of_complete_selections_come_from_the_indices(uri: str, filter: str) -> None:
    """However many rows match: a count over a filter the bitmaps answer exactly reads no
    rows. A wide BTREE comparison is not looked up at all (its pages hold more rows than a
    scan of the column reads), nor a complement (it keeps the null rows: not exact)."""
    ds = ls.dataset(uri)
    assert ds.scanner(filter=filter)._scalar_choice() is None  # rows: too many to take
    (btree,) = _opened(ds, "i")
    pages = btree.pages_read  # type: ignore[attr-defined]
    choice = ds.scanner(filter=filter)._scalar_choice(count_only=True)
    if filter in ("s <> 's3'", "i > 100"):
        assert choice is None
    else:
        assert choice is not None and choice.complete
    if filter == "i > 100":
        assert btree.pages_read == pages  # type: ignore[attr-defined]
    assert ds.count_rows(filter) == lance.dataset(uri).count_rows(filter)
    assert ds.scanner(filter=filter).count_rows() == ds.count_rows(filter)
    assert ds.count_rows(filter) == ds.scanner(filter=filter, use_scalar_index=False).count_rows()


def _opened(ds: ls.Dataset, column: str) -> list[object]:
    from lance_semantic.manifest import index_entries
    from lance_semantic.scalar import open_scalar_index

    snap = ds._snapshot()
    fid = snap.semantic_schema.field(column).id
    return [
        open_scalar_index(snap.store, e)
        for e in index_entries(snap.manifest.index_section)
        if e.fields == (fid,)
    ]


@pytest.mark.usefixtures("every_selection")
def test_fragments_outside_the_index_are_scanned(uri: str) -> None:
    """A fragment outside the index's bitmap is scanned: its rows come back."""
    ds = ls.dataset(uri)
    new = ds.to_table(filter="id >= 12000 AND i < 20")
    every = ds.to_table(filter="i < 20")
    assert ds.scanner(filter="i < 20")._scalar_choice() is not None
    assert new.num_rows and _same(new, every.filter(pc.field("id") >= 12000))


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Floats the engine orders by IEEE total order (-0.0 < 0.0, NaN above everything)
    under a BTREE and a BITMAP, and a fragment of one value only."""
    path = str(Path(tmp_path_factory.mktemp("edges")) / "t.lance")
    special = [np.nan, 1.0, -0.0, 0.0, None, np.inf, -np.inf, 2.5]
    table = pa.table(
        {
            "id": pa.array(np.arange(6_000), pa.int64()),
            "f": pa.array(special * 750, pa.float64()),
            "g": pa.array(special * 750, pa.float64()),
            "c": pa.array([1] * 3_000 + [1, 2] * 1_500, pa.int32()),
        }
    )
    lance.write_dataset(table, path, max_rows_per_file=3_000)
    ds = lance.dataset(path)
    ds.create_scalar_index("f", "BTREE")
    ds.create_scalar_index("g", "BITMAP")
    ds.create_scalar_index("c", "BITMAP")
    return path


@pytest.mark.parametrize("column", ["f", "g"])
@pytest.mark.parametrize(
    "op", ["= 0.0", "= -0.0", "< 0.0", "<= -0.0", "> 1.0", ">= 2.5", "< 'Infinity'", "<> 1.0"]
)
@pytest.mark.usefixtures("every_selection")
def test_float_edges_equal_the_scan(edges: str, column: str, op: str) -> None:
    filter = f"{column} {op}" if "Infinity" not in op else f"{column} < CAST('Infinity' AS DOUBLE)"
    ds = ls.dataset(edges)
    ours = ds.to_table(filter=filter)
    assert _same(ours, ds.to_table(filter=filter, use_scalar_index=False)), filter
    assert _same(_by_id(ours), _by_id(lance.dataset(edges).to_table(filter=filter))), filter
    assert ds.count_rows(filter) == lance.dataset(edges).count_rows(filter)
    choice = ds.scanner(filter=filter)._scalar_choice()
    assert choice is not None or "<>" in op, filter


@pytest.mark.usefixtures("every_selection")
def test_a_fragment_of_one_value(edges: str) -> None:
    ds = ls.dataset(edges)
    for filter in ("c = 1", "c = 2", "c IN (1, 2)", "c IS NULL"):
        assert ds.count_rows(filter) == lance.dataset(edges).count_rows(filter)
        assert _same(ds.to_table(filter=filter), ds.to_table(filter=filter, use_scalar_index=False))


@pytest.mark.parametrize(
    "where", ["i = 17", "s = 's7' AND c < 9 AND u < 50", "i IN (3, 4) OR i IS NULL"]
)
def test_deletes_through_the_index_equal_pylances(uri: str, tmp_path: Path, where: str) -> None:
    """A delete finds its rows through the index (when selective) and deletes what
    pylance's delete deletes on a copy."""
    ours_uri, theirs_uri = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    shutil.copytree(uri, ours_uri)
    shutil.copytree(uri, theirs_uri)
    ds = ls.dataset(ours_uri)
    assert ds.scanner(filter=where)._scalar_choice() is not None
    ds.delete(where)
    lance.dataset(theirs_uri).delete(where)
    ours = ls.dataset(ours_uri).to_table(use_scalar_index=False)
    assert _same(ours, lance.dataset(theirs_uri).to_table())
    assert ls.dataset(ours_uri).count_rows(where) == 0
    assert lance.dataset(ours_uri).count_rows(where) == 0  # (pylance reads our delete)


def test_tables_with_stable_row_ids_scan(tmp_path: Path) -> None:
    """Their indices hold row ids, not addresses: not read yet, the filter scans."""
    path = str(tmp_path / "stable.lance")
    lance.write_dataset(_table(0, 4_000), path, max_rows_per_file=2_000, enable_stable_row_ids=True)
    lance.dataset(path).create_scalar_index("i", "BTREE")
    lance.dataset(path).delete("id % 7 = 1")
    ds = ls.dataset(path)
    assert ds.scanner(filter="i = 17")._scalar_choice() is None
    for filter in ("i = 17", "i < 3 OR i IS NULL"):
        assert _same(
            _by_id(ds.to_table(filter=filter)), _by_id(lance.dataset(path).to_table(filter=filter))
        )
        assert ds.count_rows(filter) == lance.dataset(path).count_rows(filter)


def test_a_missing_index_file_is_named(uri: str, tmp_path: Path) -> None:
    """A BTREE whose page file is gone: the filter through it names the file (the scan
    without the index still reads)."""
    copy = str(tmp_path / "copy.lance")
    shutil.copytree(uri, copy)
    ds = ls.dataset(copy)
    (entry,) = [e for e in ds.list_indices() if e["name"] == "i_idx"]
    page_data = Path(copy) / "_indices" / entry["uuid"] / "page_data.lance"
    page_data.unlink()
    clear_kept_indices()
    with pytest.raises(CorruptTableError, match="page_data.lance"):
        ds.to_table(filter="i = 17")
    assert ds.to_table(filter="i = 17", use_scalar_index=False).num_rows
