"""Exact (flat) vector search (``nearest=``) against stock pylance 14 as the oracle, on legacy
tables without an index written by either library: the same rows (ids, in order), the same
``_distance`` to float tolerance, the same Arrow schema and column order, for each metric,
1-D and 2-D ``q``, prefilter both ways, limit / offset, row ids and addresses, SQL
projections, deleted rows and null vectors, float16 / float64 / uint8 vectors; a flagged
table (which pylance cannot open) against a numpy exact oracle; and each bad input with
pylance's error class and a message naming the argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import NotSupportedYetError

pytestmark = pytest.mark.interop

ROWS, DIM, PER_FILE = 2_000, 16, 700
RNG = np.random.default_rng(30)
VECTORS = RNG.standard_normal((ROWS, DIM)).astype(np.float32)
BITS = RNG.integers(0, 256, (ROWS, 4), dtype=np.uint8)
NULL_ROWS = np.arange(5, ROWS, 101)  # null vectors: never returned
DELETED = "id % 13 = 4"  # deleted rows: never returned


def _fsl(values: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    flat = pa.array(values.ravel())
    return pa.FixedSizeListArray.from_arrays(
        flat, values.shape[1], mask=None if mask is None else pa.array(mask)
    )


def _data() -> pa.Table:
    nulls = np.zeros(ROWS, dtype=bool)
    nulls[NULL_ROWS] = True
    return pa.table(
        {
            "id": np.arange(ROWS),
            "v": _fsl(VECTORS, nulls),
            "h": _fsl(VECTORS.astype(np.float16)),
            "w": _fsl(VECTORS.astype(np.float64)),
            "b": _fsl(BITS),
            "s": [f"s{i}" for i in range(ROWS)],
        }
    )


@pytest.fixture(scope="module", params=["written_by_pylance", "written_by_us"])
def uri(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("vectors") / "t.lance")
    if request.param == "written_by_pylance":
        lance.write_dataset(_data(), path, max_rows_per_file=PER_FILE).delete(DELETED)
    else:
        ls.write_dataset(_data(), path, max_rows_per_file=PER_FILE).delete(DELETED)
    return path


def _same(uri: str, **kwargs: Any) -> pa.Table:
    """Our result of ``to_table(**kwargs)``, checked equal to pylance's."""
    theirs = lance.dataset(uri).to_table(**kwargs)
    ours = ls.dataset(uri).to_table(**kwargs)
    assert ours.schema.equals(theirs.schema), (ours.schema, theirs.schema)
    assert ours.column_names == theirs.column_names
    rest = [c for c in theirs.column_names if c != "_distance"]
    assert ours.select(rest).equals(theirs.select(rest))
    np.testing.assert_allclose(
        ours["_distance"].to_numpy(), theirs["_distance"].to_numpy(), rtol=2e-3, atol=1e-3
    )
    return ours


def _q(n: int = 1) -> np.ndarray:
    return VECTORS[7] if n == 1 else VECTORS[10 : 10 + n] + np.float32(0.01)


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot", "Euclidean"])
@pytest.mark.parametrize("queries", [1, 3])
def test_each_metric_1d_and_2d(uri: str, metric: str, queries: int) -> None:
    near = {"column": "v", "q": _q(queries), "k": 9, "metric": metric}
    got = _same(uri, columns=["id", "s"], nearest=near)
    assert got.num_rows == 9 * queries
    assert (got.column_names[0] == "query_index") is (queries > 1)


def test_default_columns_and_default_k(uri: str) -> None:
    got = _same(uri, nearest={"column": "v", "q": _q()})
    assert got.num_rows == 10 and got.column_names[-1] == "_distance"


def test_hamming_on_uint8_vectors(uri: str) -> None:
    for metric in (None, "hamming"):
        near = {"column": "b", "q": BITS[3], "k": 6, "metric": metric}
        _same(uri, columns=["id"], nearest=near)
    _same(uri, columns=["id"], nearest={"column": "b", "q": BITS[3:6], "k": 4})


@pytest.mark.parametrize("column", ["h", "w"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_float16_and_float64_vectors(uri: str, column: str, metric: str) -> None:
    _same(uri, columns=["id"], nearest={"column": column, "q": _q(2), "k": 5, "metric": metric})


@pytest.mark.parametrize("prefilter", [False, True])
@pytest.mark.parametrize("queries", [1, 2])
def test_prefilter_and_postfilter(uri: str, prefilter: bool, queries: int) -> None:
    near = {"column": "v", "q": _q(queries), "k": 12}
    got = _same(uri, columns=["id"], filter="id % 3 = 0", prefilter=prefilter, nearest=near)
    ids = np.asarray(got["id"])
    assert (ids % 3 == 0).all()
    if prefilter:  # the k nearest rows that pass the filter
        assert got.num_rows == 12 * queries
    else:  # the k nearest, then the filter: fewer remain
        assert got.num_rows < 12 * queries


@pytest.mark.parametrize(("limit", "offset"), [(3, None), (None, 4), (5, 2), (0, None), (7, 30)])
def test_limit_and_offset_over_the_result(uri: str, limit: int | None, offset: int | None) -> None:
    for q in (_q(1), _q(3)):
        near = {"column": "v", "q": q, "k": 8}
        _same(uri, columns=["id"], limit=limit, offset=offset, nearest=near)


def test_row_ids_addresses_and_columns(uri: str) -> None:
    near = {"column": "v", "q": _q(2), "k": 6}
    got = _same(uri, columns=["s"], with_row_id=True, with_row_address=True, nearest=near)
    assert got.column_names == ["query_index", "s", "_distance", "_rowid", "_rowaddr"]
    _same(uri, columns=["v", "id"], with_row_address=True, nearest=near)
    _same(uri, columns=["_distance", "id"], nearest={"column": "v", "q": _q(), "k": 4})
    _same(uri, columns=[], nearest={"column": "v", "q": _q(), "k": 4})


def test_sql_projections(uri: str) -> None:
    near = {"column": "v", "q": _q(), "k": 5}
    _same(uri, columns={"twice": "id * 2", "name": "s"}, nearest=near)
    _same(uri, columns={"twice": "id * 2"}, filter="id > 100", prefilter=True, nearest=near)


def test_distance_range_and_large_k(uri: str) -> None:
    for bounds in [(20.0, None), (None, 18.0), (15.0, 25.0), (5.0, 1.0)]:
        near = {"column": "v", "q": _q(), "k": 7, "distance_range": bounds}
        _same(uri, columns=["id"], nearest=near)
    got = _same(uri, columns=["id"], nearest={"column": "v", "q": _q(2), "k": 5_000})
    live = ls.dataset(uri).count_rows("v IS NOT NULL")
    assert got.num_rows == 2 * live


def test_deleted_rows_and_null_vectors_never_returned(uri: str) -> None:
    ds = ls.dataset(uri)
    got = ds.to_table(columns=["id"], nearest={"column": "v", "q": _q(), "k": ROWS})
    ids = np.asarray(got["id"])
    assert not np.isin(ids, NULL_ROWS).any()
    assert not (ids % 13 == 4).any()
    oracle = _oracle(VECTORS, _q(), "l2")
    alive = [i for i in oracle if i % 13 != 4 and i not in set(NULL_ROWS.tolist())]
    assert ids.tolist() == alive


def test_streams_and_scanner_agree(uri: str) -> None:
    ds = ls.dataset(uri)
    near = {"column": "v", "q": _q(3), "k": 7}
    whole = ds.to_table(columns=["id"], nearest=near)
    batches = list(ds.to_batches(columns=["id"], batch_size=4, nearest=near))
    assert max(b.num_rows for b in batches) == 4
    assert pa.Table.from_batches(batches).equals(whole)
    sc = ds.scanner(columns=["id"], nearest=near)
    assert sc.projected_schema.equals(whole.schema)
    assert sc.to_table().equals(whole) and sc.count_rows() == whole.num_rows
    assert sc.to_reader().read_all().equals(whole)
    assert sc.head(5).equals(whole.slice(0, 5))


def test_chosen_fragments_are_searched_alone(uri: str) -> None:
    """pylance refuses nearest over a fragment scan (and its fragment reads have no
    nearest); here the search covers those fragments only."""
    ds = ls.dataset(uri)
    second = ds.get_fragments()[1]
    got = ds.scanner(
        columns=["id"], fragments=[second], nearest={"column": "v", "q": _q(), "k": 5}
    ).to_table()
    ids = set(range(PER_FILE, 2 * PER_FILE)) - set(NULL_ROWS.tolist())
    expected = [i for i in _oracle(VECTORS, _q(), "l2") if i in ids and i % 13 != 4][:5]
    assert got["id"].to_pylist() == expected
    near = {"column": "v", "q": _q(), "k": 5}
    assert second.to_table(columns=["id"], nearest=near).equals(got)
    batches = list(second.to_batches(columns=["id"], batch_size=2, nearest=near))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert pa.Table.from_batches(batches).equals(got)
    odd = second.to_table(columns=["id"], filter="id % 2 = 1", prefilter=True, nearest=near)
    assert (
        odd["id"].to_pylist()
        == [i for i in _oracle(VECTORS, _q(), "l2") if i in ids and i % 13 != 4 and i % 2][:5]
    )


def test_fast_search_without_an_index_returns_nothing(uri: str) -> None:
    _same(uri, columns=["id"], fast_search=True, nearest={"column": "v", "q": _q(), "k": 5})


# ---- a flagged table (pylance refuses it): a numpy exact oracle ----------------------------


class _Embedding(pa.ExtensionType):
    def __init__(self, dim: int) -> None:
        super().__init__(pa.list_(pa.float32(), dim), "tests.vector_flat.embedding")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> Any:
        return cls(storage_type.list_size)


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ls.Dataset]:
    pa.register_extension_type(_Embedding(DIM))
    try:
        plain = _fsl(VECTORS)
        data = pa.table(
            {
                "id": np.arange(ROWS),
                "v": plain,
                "e": pa.ExtensionArray.from_storage(_Embedding(DIM), plain),
                "s": pa.array([f"s{i}" for i in range(ROWS)], pa.large_string()),
            }
        )
        path = tmp_path_factory.mktemp("flagged") / "t.lance"
        ds = ls.write_dataset(data, str(path), semantic_types=True, max_rows_per_file=PER_FILE)
        ds.delete("id % 11 = 0")
        assert ds.semantic_types
        yield ds
    finally:
        pa.unregister_extension_type("tests.vector_flat.embedding")


def _oracle(vectors: np.ndarray, q: np.ndarray, metric: str) -> list[int]:
    """Row offsets by exact distance (ties by offset)."""
    x, qq = vectors.astype(np.float64), q.astype(np.float64)
    if metric == "l2":
        d = ((x - qq) ** 2).sum(axis=1)
    elif metric == "dot":
        d = 1 - x @ qq
    else:
        d = 1 - x @ qq / (np.linalg.norm(x, axis=1) * np.linalg.norm(qq))
    return np.lexsort((np.arange(len(d)), d)).tolist()


@pytest.mark.parametrize("column", ["v", "e"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_flagged_table_against_numpy(flagged: ls.Dataset, column: str, metric: str) -> None:
    qs = _q(2)
    near = {"column": column, "q": qs, "k": 6, "metric": metric}
    got = flagged.to_table(columns=["id", "s", column], with_row_id=True, nearest=near)
    assert got.column_names == ["query_index", "id", "s", column, "_distance", "_rowid"]
    assert got.schema.field("s").type == pa.large_string()  # the output layout recorded
    assert got.schema.field(column).type == flagged.schema.field(column).type
    for i, q in enumerate(qs):
        mine = got.filter(np.asarray(got["query_index"]) == i)
        expected = [r for r in _oracle(VECTORS, q, metric) if r % 11 != 0][:6]
        assert mine["id"].to_pylist() == expected
        x = VECTORS[expected].astype(np.float64)
        if metric == "l2":
            want = ((x - q) ** 2).sum(axis=1)
        elif metric == "dot":
            want = 1 - x @ q
        else:
            want = 1 - x @ q / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        np.testing.assert_allclose(mine["_distance"].to_numpy(), want, rtol=1e-4, atol=1e-4)
    post = flagged.to_table(columns=["id"], filter="id < 1000", nearest=near)
    pre = flagged.to_table(columns=["id"], filter="id < 1000", prefilter=True, nearest=near)
    assert post.num_rows <= pre.num_rows == 12
    assert set(post["id"].to_pylist()) <= set(pre["id"].to_pylist())


# ---- bad input: pylance's error class, a message naming the argument ------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"nearest": {"column": "v", "q": VECTORS[0][:4]}}, ValueError, "q"),
        ({"nearest": {"column": "v", "q": VECTORS[:2, :4]}}, ValueError, "q"),
        ({"nearest": {"column": "v", "q": "abc"}}, TypeError, "q"),
        ({"nearest": {"column": "v", "q": [[1.0] * DIM, [1.0] * 3]}}, ValueError, "q"),
        ({"nearest": {"column": "v", "q": np.zeros((1, 1, DIM))}}, ValueError, "q"),
        ({"nearest": {"column": "v", "q": _q(), "k": 0}}, ValueError, "k"),
        ({"nearest": {"column": "v", "q": _q(), "k": -2}}, ValueError, "k"),
        ({"nearest": {"column": "v", "q": _q(), "k": 2.5}}, TypeError, "k"),
        ({"nearest": {"column": "v", "q": _q(), "k": "a"}}, ValueError, "k"),
        ({"nearest": {"column": "v", "q": _q(), "nprobes": 0}}, ValueError, "nprobes"),
        ({"nearest": {"column": "v", "q": _q(), "nprobes": -1}}, ValueError, "nprobes"),
        ({"nearest": {"column": "v", "q": _q(), "minimum_nprobes": 0}}, ValueError, "minimum"),
        (
            {"nearest": {"column": "v", "q": _q(), "minimum_nprobes": 5, "maximum_nprobes": 2}},
            ValueError,
            "maximum_nprobes",
        ),
        ({"nearest": {"column": "v", "q": _q(), "refine_factor": 0}}, ValueError, "refine"),
        ({"nearest": {"column": "v", "q": _q(), "ef": 0}}, ValueError, "ef"),
        ({"nearest": {"column": "v", "q": _q(), "use_index": "x"}}, TypeError, "use_index"),
        ({"nearest": {"column": "v", "q": _q(), "metric": "foo"}}, ValueError, "metric"),
        ({"nearest": {"column": "v", "q": _q(), "metric": "hamming"}}, ValueError, "metric"),
        ({"nearest": {"column": "b", "q": BITS[0], "metric": "l2"}}, ValueError, "metric"),
        ({"nearest": {"column": "v", "q": _q(), "distance_range": (1.0,)}}, ValueError, "range"),
        ({"nearest": {"column": "v", "q": _q(), "distance_range": ("a", 1)}}, TypeError, "range"),
        ({"nearest": {"column": "v", "q": _q(), "approx_mode": "x"}}, ValueError, "approx_mode"),
        ({"nearest": {"column": "v", "q": _q(), "query_parallelism": -2}}, ValueError, "query"),
        ({"nearest": {"column": "v", "q": _q(), "search_effort": 2.0}}, ValueError, "effort"),
        ({"nearest": {"column": "s", "q": _q()}}, TypeError, "'s'"),
        ({"nearest": {"column": "id", "q": _q()}}, TypeError, "'id'"),
        ({"nearest": {"column": "nosuch", "q": _q()}}, ValueError, "nosuch"),
        ({"nearest": {"column": 3, "q": _q()}}, TypeError, "column"),
        ({"nearest": {"q": _q()}}, TypeError, "column"),
        ({"nearest": {"column": "v"}}, TypeError, "'q'"),
        ({"nearest": {"column": "v", "q": _q(), "foo": 1}}, TypeError, "foo"),
        ({"nearest": [1, 2]}, TypeError, "nearest"),
        ({"nearest": {"column": "v", "q": _q()}, "prefilter": "x"}, TypeError, "prefilter"),
        ({"nearest": {"column": "v", "q": _q()}, "fast_search": "x"}, TypeError, "fast_search"),
    ],
)
def test_bad_input_names_the_argument(
    uri: str, kwargs: dict[str, Any], error: type[Exception], names: str
) -> None:
    with pytest.raises(error):
        lance.dataset(uri).to_table(**kwargs)
    ds = ls.dataset(uri)
    for call in (ds.to_table, ds.scanner, ds.to_batches):
        with pytest.raises(error) as err:
            call(**kwargs)
        assert (
            names in str(err.value)
            and "nearest" in str(err.value)
            or names
            in {
                "prefilter",
                "fast_search",
            }
        ), str(err.value)


def test_batch_search_on_a_table_with_query_index(tmp_path: Path) -> None:
    data = pa.table({"query_index": np.arange(50), "v": _fsl(VECTORS[:50])})
    for i, write in enumerate((lance.write_dataset, ls.write_dataset)):
        write(data, str(tmp_path / f"t{i}"))
        near = {"column": "v", "q": VECTORS[:2], "k": 2}
        with pytest.raises(ValueError, match="query_index"):
            lance.dataset(str(tmp_path / f"t{i}")).to_table(nearest=near)
        with pytest.raises(ValueError, match="query_index"):
            ls.dataset(str(tmp_path / f"t{i}")).to_table(nearest=near)
        _same(str(tmp_path / f"t{i}"), nearest={"column": "v", "q": VECTORS[0], "k": 3})


def test_multivector_columns_are_not_supported_yet(tmp_path: Path) -> None:
    multi = pa.array([[[1.0, 2.0]], [[3.0, 4.0]]], pa.list_(pa.list_(pa.float32(), 2)))
    ds = ls.write_dataset(pa.table({"m": multi}), str(tmp_path / "m"))
    with pytest.raises(NotSupportedYetError, match="multivector"):
        ds.to_table(nearest={"column": "m", "q": [1.0, 2.0]})


def test_a_table_with_an_index_without_use_index_is_searched_exactly(tmp_path: Path) -> None:
    """pylance's IVF_FLAT index over some fragments (another appended after it): with
    ``use_index=False`` our search is exact, as pylance's; through the index (every
    partition probed: exact too) and with ``fast_search`` (the indexed fragments alone) it
    gives pylance's rows (tests/interop/test_vector_indexed.py has the rest)."""
    uri = str(tmp_path / "indexed")
    lance.write_dataset(_data().slice(0, 1_000), uri).create_index(
        "v", "IVF_FLAT", num_partitions=4
    )
    lance.write_dataset(_data().slice(1_000, 500), uri, mode="append")
    near = {"column": "v", "q": _q(2), "k": 8}
    for options in ({"use_index": False}, {"nprobes": 4}):
        _same(uri, columns=["id"], nearest={**near, **options})
    _same(uri, columns=["id"], fast_search=True, nearest={**near, "nprobes": 4})


def test_reads_only_the_vector_column_then_takes_the_results(
    uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search streams the vector column alone, in bounded ranges; the result rows'
    other columns are taken by address, from the fragments holding them only."""
    from lance_semantic.read import vector_search
    from lance_semantic.storage import datafile
    from lance_semantic.storage.datafile import DataFileReader

    reads: list[tuple[str, tuple[str, ...], int]] = []
    read_all, read, take = DataFileReader.read_all, DataFileReader.read, DataFileReader.take
    read_whole = datafile.read_whole

    def spy_read_all(self: Any, columns: Any, start: int, n: int) -> Any:
        reads.append(("range", tuple(columns or ()), n))
        return read_all(self, columns, start, n)

    def spy_read(self: Any, columns: Any, start: int, n: int, batch: int) -> Any:
        reads.append(("range", tuple(columns or ()), n))
        return read(self, columns, start, n, batch)

    def spy_take(self: Any, columns: Any, rows: Any) -> Any:
        reads.append(("take", tuple(columns or ()), len(rows)))
        return take(self, columns, rows)

    def spy_whole(requests: Any) -> Any:
        reads.extend(("range", tuple(c or ()), -1) for _, c, _ in requests)
        return read_whole(requests)

    monkeypatch.setattr(DataFileReader, "read_all", spy_read_all)
    monkeypatch.setattr(DataFileReader, "read", spy_read)
    monkeypatch.setattr(DataFileReader, "take", spy_take)
    monkeypatch.setattr(datafile, "read_whole", spy_whole)
    monkeypatch.setattr(vector_search, "SCAN_ROWS", 256)
    got = ls.dataset(uri).to_table(columns=["id", "s"], nearest={"column": "v", "q": _q(), "k": 3})
    assert got.num_rows == 3
    ranges = [(c, n) for kind, c, n in reads if kind == "range"]
    takes = [(c, n) for kind, c, n in reads if kind == "take"]
    assert {c for c, _ in ranges} == {("v",)} and max(n for _, n in ranges) <= 256
    frags = {int(i) // PER_FILE for i in got["id"].to_pylist()}
    assert [c for c, _ in takes] == [("id", "s")] * len(frags)
    assert sum(n for _, n in takes) == 3
