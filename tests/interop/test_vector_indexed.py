"""``nearest`` through a vector index (issue 30 items 1-2 joined).

pylance builds an IVF_FLAT or IVF_PQ index (or we build an IVF_PQ one with
``create_index``) on a legacy table of three fragments; then pylance appends rows (an
unindexed fragment) and deletes some. The same ``nearest`` (explicit ``nprobes`` and
``refine_factor``, default probing, a prefilter and a postfilter, ``fast_search`` on and
off, ``use_index`` on and off, one query and three) through pylance and through us gives
the same rows in the same order and the same ``_distance`` to float tolerance. Small tables
(5k rows x 16 dims, 4 partitions) keep this quick.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import NotSupportedYetError
from lance_semantic.vector import default_partition_cache

pytestmark = pytest.mark.interop

ROWS, ADDED, DIM, PER_FILE, PARTITIONS = 4_500, 500, 16, 1_500, 4
_RNG = np.random.default_rng(3030)
VECTORS = _RNG.standard_normal((ROWS + ADDED, DIM)).astype(np.float32)
QUERIES = (VECTORS[[11, 2_222, 4_700]] + np.float32(0.05)).astype(np.float32)
DELETED = "id % 9 = 4 OR id IN (11, 2222)"
BUILDS = ["pylance IVF_FLAT", "pylance IVF_PQ", "ours IVF_PQ"]


def _table(lo: int, hi: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(np.arange(lo, hi), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(VECTORS[lo:hi].ravel()), DIM),
        }
    )


def _build(uri: str, build: str, *, append: bool = True, metric: str = "l2") -> None:
    lance.write_dataset(_table(0, ROWS), uri, max_rows_per_file=PER_FILE)
    who, kind = build.split()
    extra: dict[str, Any] = {"num_sub_vectors": 4} if kind == "IVF_PQ" else {}
    if who == "ours":
        ls.dataset(uri).create_index("vec", kind, metric=metric, num_partitions=PARTITIONS, **extra)
    else:
        lance.dataset(uri).create_index(
            "vec", kind, metric=metric, num_partitions=PARTITIONS, **extra
        )
    if append:
        lance.write_dataset(_table(ROWS, ROWS + ADDED), uri, mode="append")
    lance.dataset(uri).delete(DELETED)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("indexed")
    out = {}
    for build in BUILDS:
        uri = str(root / build.replace(" ", "_"))
        _build(uri, build)
        out[build] = uri
    return out


def _assert_same(ours: pa.Table, theirs: pa.Table, rtol: float = 1e-4) -> None:
    """The same rows in the same order (except where distances tie to within ``rtol``)
    and the same distances."""
    assert ours.column_names == theirs.column_names
    assert ours.num_rows == theirs.num_rows, (ours["id"], theirs["id"])
    d = theirs["_distance"].to_numpy()
    np.testing.assert_allclose(ours["_distance"].to_numpy(), d, rtol=rtol, atol=1e-5)
    a, b = ours["id"].to_numpy(), theirs["id"].to_numpy()
    for i in np.flatnonzero(a != b):
        tied = np.abs(d - d[i]) <= rtol * max(abs(float(d[i])), 1.0)
        assert a[i] in b[tied] or i == len(b) - 1, f"row {i}: {a[i]} for {b[i]} at {d[i]}"
    if "query_index" in theirs.column_names:
        assert ours["query_index"].equals(theirs["query_index"])


def _same(uri: str, **kwargs: Any) -> pa.Table:
    theirs = lance.dataset(uri).to_table(columns=["id"], **kwargs)
    ours = ls.dataset(uri).to_table(columns=["id"], **kwargs)
    _assert_same(ours, theirs)
    return ours


SEARCHES = [
    {"nprobes": 1},
    {"nprobes": 2, "refine_factor": 3},
    {},  # pylance's default probing
    {"nprobes": 1, "use_index": False},
]
FILTERS = [
    {},
    {"filter": "id % 2 = 0", "prefilter": True},
    {"filter": "id % 2 = 0", "prefilter": False},
    {"fast_search": True},
]


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("queries", [1, 3])
def test_nearest_equals_pylance(tables: dict[str, str], build: str, queries: int) -> None:
    uri = tables[build]
    q = QUERIES[0] if queries == 1 else QUERIES
    for search in SEARCHES:
        for scan in FILTERS:
            near = {"column": "vec", "q": q, "k": 10, **search}
            got = _same(uri, nearest=near, **scan)
            ids = got["id"].to_numpy()
            assert not ((ids % 9 == 4) | np.isin(ids, [11, 2222])).any()  # deleted rows
            if "fast_search" in scan and search.get("use_index") is False:
                assert got.num_rows == 0  # (pylance: nothing indexed is searched)
            elif "filter" not in scan:
                assert got.num_rows == 10 * queries


def test_index_rows_get_exact_distances_beside_flat_fragments(tables: dict[str, str]) -> None:
    """Beside an unindexed fragment the IVF_PQ rows carry exact distances (pylance's plan
    computes them again before merging); with fast_search the index's own PQ distances."""
    uri = tables["pylance IVF_PQ"]
    near = {"column": "vec", "q": QUERIES[1], "k": 5, "nprobes": 1}
    merged = ls.dataset(uri).to_table(columns=["id", "vec"], nearest=near)
    vectors = np.stack(merged["vec"].to_numpy(zero_copy_only=False))
    exact = ((vectors - QUERIES[1]) ** 2).sum(axis=1)
    np.testing.assert_allclose(merged["_distance"].to_numpy(), exact, rtol=1e-5, atol=1e-5)
    fast = ls.dataset(uri).to_table(columns=["id", "vec"], nearest=near, fast_search=True)
    vectors = np.stack(fast["vec"].to_numpy(zero_copy_only=False))
    exact = ((vectors - QUERIES[1]) ** 2).sum(axis=1)
    assert not np.allclose(fast["_distance"].to_numpy(), exact, rtol=1e-3)
    assert set(fast["id"].to_pylist()) <= set(range(ROWS))  # the indexed fragments alone


def test_a_fully_indexed_table_and_a_delta_segment(tmp_path: Path) -> None:
    """No unindexed fragment: the index's distances; after pylance's
    ``optimize_indices(num_indices_to_merge=0)`` the appended rows are a delta segment of
    the same index, searched with it."""
    uri = str(tmp_path / "full")
    _build(uri, "pylance IVF_PQ", append=False)
    for search in SEARCHES[:3]:
        _same(uri, nearest={"column": "vec", "q": QUERIES[0], "k": 10, **search})
    lance.write_dataset(_table(ROWS, ROWS + ADDED), uri, mode="append")
    lance.dataset(uri).optimize.optimize_indices(num_indices_to_merge=0)
    assert len(lance.dataset(uri).describe_indices()[0].segments) == 2
    for search in SEARCHES[:3]:
        for scan in FILTERS[:2]:
            _same(uri, nearest={"column": "vec", "q": QUERIES[2], "k": 10, **search}, **scan)


def test_metrics_other_than_the_index_s(tmp_path: Path) -> None:
    """A cosine index: without ``metric`` the search is through it (cosine); with
    ``metric="l2"`` pylance falls back to a flat search, and so do we."""
    uri = str(tmp_path / "cosine")
    _build(uri, "pylance IVF_PQ", metric="cosine")
    for metric in ({}, {"metric": "cosine"}, {"metric": "l2"}, {"metric": "dot"}):
        _same(uri, nearest={"column": "vec", "q": QUERIES[0], "k": 8, "nprobes": 2, **metric})


def test_an_index_we_do_not_read_is_ignored(tmp_path: Path) -> None:
    """An IVF_HNSW_SQ index (not read here) is not used: the search is flat, pylance's
    answer with ``use_index=False``, and fast_search finds nothing."""
    uri = str(tmp_path / "hnsw")
    lance.write_dataset(_table(0, 2_000), uri).create_index("vec", "IVF_HNSW_SQ", num_partitions=2)
    near = {"column": "vec", "q": QUERIES[0], "k": 6}
    theirs = lance.dataset(uri).to_table(columns=["id"], nearest={**near, "use_index": False})
    _assert_same(ls.dataset(uri).to_table(columns=["id"], nearest=near), theirs)
    assert ls.dataset(uri).to_table(columns=["id"], nearest=near, fast_search=True).num_rows == 0


def test_our_index_on_a_flagged_table(tmp_path: Path) -> None:
    """A flagged table (pylance refuses it) with our IVF_FLAT index probed whole: the exact
    nearest rows (a numpy oracle), deleted rows skipped, appended rows searched flat."""
    uri = str(tmp_path / "flagged")
    ds = ls.write_dataset(_table(0, 3_000), uri, semantic_types=True, max_rows_per_file=PER_FILE)
    ds.create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
    ls.write_dataset(_table(3_000, 3_500), uri, mode="append")
    ds = ls.dataset(uri)
    ds.delete("id % 5 = 0")
    ds = ls.dataset(uri)
    q = VECTORS[1_234] + np.float32(0.1)
    got = ds.to_table(columns=["id"], nearest={"column": "vec", "q": q, "k": 7, "nprobes": 4})
    ids = np.arange(3_500)
    ids = ids[ids % 5 != 0]
    dists = ((VECTORS[ids] - q) ** 2).sum(axis=1)
    order = np.argsort(dists, kind="stable")[:7]
    assert got["id"].to_pylist() == ids[order].tolist()
    np.testing.assert_allclose(got["_distance"].to_numpy(), dists[order], rtol=1e-5)


def test_chosen_fragments(tables: dict[str, str], tmp_path: Path) -> None:
    """``fragments=`` with an index: only the chosen fragments' rows are candidates (a
    copy of the table keeps pylance's and our runs apart)."""
    uri = str(tmp_path / "copy")
    shutil.copytree(tables["pylance IVF_FLAT"], uri)
    ds = ls.dataset(uri)
    chosen = [ds.get_fragment(1), ds.get_fragment(3)]
    near = {"column": "vec", "q": QUERIES[0], "k": 10, "nprobes": 4}
    got = ds.scanner(columns=["id"], nearest=near, fragments=chosen).to_table()
    ids = np.concatenate([np.arange(PER_FILE, 2 * PER_FILE), np.arange(ROWS, ROWS + ADDED)])
    ids = ids[(ids % 9 != 4) & (ids != 11) & (ids != 2222)]
    dists = ((VECTORS[ids] - QUERIES[0]) ** 2).sum(axis=1)
    order = np.argsort(dists, kind="stable")[:10]
    assert got["id"].to_pylist() == ids[order].tolist()


def test_an_index_of_a_table_with_stable_row_ids_is_not_used(tmp_path: Path) -> None:
    """Its index holds row ids, not addresses (after a compaction they differ): not read
    yet, so the search is exact (pylance's rows with every partition probed) and
    fast_search is refused."""
    uri = str(tmp_path / "stable")
    ds = lance.write_dataset(
        _table(0, 3_000), uri, max_rows_per_file=1_000, enable_stable_row_ids=True
    )
    ds.delete("id < 10")
    ds.optimize.compact_files(target_rows_per_fragment=3_000)
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
    near = {"column": "vec", "q": QUERIES[0], "k": 5, "nprobes": PARTITIONS}
    _same(uri, nearest=near)
    with pytest.raises(NotSupportedYetError, match="stable row ids"):
        ls.dataset(uri).to_table(columns=["id"], nearest=near, fast_search=True)


def test_partitions_are_read_lazily_and_results_stream(tmp_path: Path) -> None:
    """A search with nprobes=1 reads one partition (through the partition cache: a second
    search reads none); to_batches streams the same rows in batches of batch_size; a
    fragment's search through the index keeps that fragment's rows alone."""
    uri = str(tmp_path / "lazy")
    _build(uri, "pylance IVF_FLAT")
    cache = default_partition_cache()
    near = {"column": "vec", "q": QUERIES[1], "k": 7, "nprobes": 1}
    ds = ls.dataset(uri)
    reads, hits = cache.reads, cache.hits
    first = ds.to_table(columns=["id"], nearest=near, fast_search=True)
    assert (cache.reads - reads, cache.hits - hits) == (1, 0)
    batches = list(ds.to_batches(columns=["id"], nearest=near, fast_search=True, batch_size=3))
    assert [b.num_rows for b in batches] == [3, 3, 1]
    assert (cache.reads - reads, cache.hits - hits) == (1, 1)
    assert pa.Table.from_batches(batches).equals(first)
    mine = ds.get_fragment(1).to_table(columns=["id"], nearest={**near, "nprobes": PARTITIONS})
    ids = np.arange(PER_FILE, 2 * PER_FILE)
    ids = ids[(ids % 9 != 4) & (ids != 2222)]
    dists = ((VECTORS[ids] - QUERIES[1]) ** 2).sum(axis=1)
    assert mine["id"].to_pylist() == ids[np.argsort(dists, kind="stable")[:7]].tolist()


@pytest.mark.parametrize(
    ("kind", "metric", "ranges"),
    [
        ("IVF_PQ", "dot", [(None, 0.0), (2.0, None)]),
        ("IVF_SQ", "cosine", [(0.5, None), (None, 0.9)]),
        ("IVF_FLAT", "l2", [(None, 8.0), (2.0, 12.0)]),
    ],
)
def test_distance_range_through_an_index(
    tmp_path: Path, kind: str, metric: str, ranges: list[tuple[float | None, float | None]]
) -> None:
    """``distance_range`` acts inside the index search, as pylance's: rows outside it take
    no place among the k (with refine too); other kinds and metrics than the tests above."""
    uri = str(tmp_path / "ranged")
    _build(uri, f"pylance {kind}", metric=metric)
    for distance_range in ranges:
        for search in ({"nprobes": 2}, {"nprobes": 1, "refine_factor": 2}, {}):
            near = {"column": "vec", "q": QUERIES[0], "k": 10, "distance_range": distance_range}
            for scan in ({}, {"fast_search": True}):
                _same(uri, nearest={**near, **search}, **scan)
