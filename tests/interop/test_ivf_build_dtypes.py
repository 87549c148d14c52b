"""``create_index`` over ``fixed_size_list<float16>`` and ``<float64>`` vectors
(dataset/indices/create.py, vector/ivf_write.py): the index files hold what pylance 14
writes for such a column (the column's type for the IVF_FLAT vectors, the centroids and the
PQ codebook; SQ bounds of the column's values), pylance answers through our index as through
its own, and we answer through pylance's as pylance does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.vector import decode_ivf, decode_tensor

N, D, CLUSTERS, P = 3000, 16, 20, 4
RNG = np.random.default_rng(12)
CENTERS = RNG.standard_normal((CLUSTERS, D)) * 3
ROWS = CENTERS[RNG.integers(CLUSTERS, size=N)] + RNG.standard_normal((N, D))
QUERIES = CENTERS[RNG.integers(CLUSTERS, size=30)] + RNG.standard_normal((30, D))
OPTIONS: dict[str, dict[str, Any]] = {
    "IVF_FLAT": {"num_partitions": P},
    "IVF_PQ": {"num_partitions": P, "num_sub_vectors": 4},
    "IVF_SQ": {"num_partitions": P},
}
CASES = [(dt, kind) for dt in (np.float16, np.float64) for kind in OPTIONS]


def _twins(tmp_path: Path, dtype: type, kind: str) -> tuple[str, str]:
    """One table per library's index: ours built by lance-semantic, theirs by pylance."""
    x = ROWS.astype(dtype)
    table = pa.table(
        {"id": np.arange(N), "v": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), D)}
    )
    ours, theirs = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    for uri in (ours, theirs):
        lance.write_dataset(table, uri, max_rows_per_file=N // 2)
    ls.dataset(ours).create_index("v", kind, **OPTIONS[kind])
    lance.dataset(theirs).create_index("v", kind, **OPTIONS[kind])
    return ours, theirs


def _files(uri: str) -> tuple[LanceFileReader, LanceFileReader]:
    uuid = lance.dataset(uri).describe_indices()[0].segments[0].uuid
    folder = f"{uri}/_indices/{uuid}"
    return LanceFileReader(f"{folder}/index.idx"), LanceFileReader(f"{folder}/auxiliary.idx")


def _layout(uri: str) -> dict[str, Any]:
    """What the index files say about types: the code column's type, the centroids' and
    the codebook's tensor data types, and the storage metadata's keys."""
    index, aux = _files(uri)
    centroids = decode_ivf(bytes(index.read_global_buffer(1))).centroids_tensor
    assert centroids is not None
    schema = aux.metadata().schema
    meta = json.loads(json.loads(schema.metadata[b"storage_metadata"])[0])
    out = {
        "code": str(schema.field(1).type),
        "centroids": (centroids.data_type, centroids.shape),
        "storage_keys": sorted(meta),
    }
    if "codebook_position" in meta:
        book = decode_tensor(bytes(aux.read_global_buffer(meta["codebook_position"])))
        out["codebook"] = (book.data_type, book.shape)
    return out


def _answers(ds: Any, q: np.ndarray, **nearest: Any) -> tuple[list[int], list[float]]:
    query = {"column": "v", "q": q, "k": 10, **nearest}
    out = ds.to_table(columns=["id"], nearest=query)
    return out["id"].to_pylist(), out["_distance"].to_pylist()


def _clear_cut(dists: list[float], tol: float) -> int:
    """How many leading rows lie clearly below the k-th distance, ending at a gap of
    more than ``tol`` from the next row: a row set that rounding cannot reorder."""
    cut = sum(d < dists[-1] - tol for d in dists)
    while 0 < cut < len(dists) and dists[cut] - dists[cut - 1] <= tol:
        cut -= 1
    return cut


def _recall(ds: Any) -> float:
    hits = 0
    for q in QUERIES:
        exact, _ = _answers(ds, q, use_index=False)
        got, _ = _answers(ds, q, nprobes=P)
        hits += len(set(exact) & set(got))
    return hits / (10 * len(QUERIES))


@pytest.mark.parametrize(("dtype", "kind"), CASES, ids=[f"{d.__name__}-{k}" for d, k in CASES])
def test_the_files_hold_the_columns_type_as_pylances_do(
    tmp_path: Path, dtype: type, kind: str
) -> None:
    ours, theirs = _twins(tmp_path, dtype, kind)
    mine, pylances = _layout(ours), _layout(theirs)
    assert mine == pylances
    if kind == "IVF_FLAT":
        assert mine["code"] == f"fixed_size_list<item: {pa.from_numpy_dtype(dtype)}>[{D}]"
    assert mine["centroids"][0] == {np.float16: 1, np.float64: 3}[dtype]
    # pylance lists our index with every row
    stats = lance.dataset(ours).stats.index_stats("v_idx")
    assert stats["num_indexed_rows"] == N
    assert stats["indices"][0]["index_type"] == kind


@pytest.mark.parametrize(("dtype", "kind"), CASES, ids=[f"{d.__name__}-{k}" for d, k in CASES])
def test_each_library_answers_through_the_others_index(
    tmp_path: Path, dtype: type, kind: str
) -> None:
    ours, theirs = _twins(tmp_path, dtype, kind)
    queries = QUERIES.astype(dtype)
    if kind == "IVF_PQ":
        # codebooks are trained: compare recall at every probe, not the rows
        assert _recall(lance.dataset(ours)) >= _recall(lance.dataset(theirs)) - 0.1
        for q in queries[:5]:
            ids, dists = _answers(lance.dataset(theirs), q, nprobes=P)
            got, got_d = _answers(ls.dataset(theirs), q, nprobes=P)
            np.testing.assert_allclose(got_d, dists, rtol=2e-3, atol=2e-3)
            # distances within float16 PQ's rounding (our kernels sum in another order)
            # may swap a tie anywhere: the rows agree as sets up to each clear gap
            cut = _clear_cut(dists, 2e-3)
            assert set(got[:cut]) == set(ids[:cut])
        return
    # IVF_FLAT keeps the vectors, IVF_SQ codes them between the column's bounds: probing
    # every partition, each library answers exactly as pylance over its own index
    for q in queries[:10]:
        want, want_d = _answers(lance.dataset(theirs), q, nprobes=P)
        for reader, uri in ((lance, ours), (ls, theirs), (ls, ours)):
            got, got_d = _answers(reader.dataset(uri), q, nprobes=P)
            np.testing.assert_allclose(got_d, want_d, rtol=1e-4, atol=1e-4)
            # SQ distances tie often (256 levels): the rows up to the last distance agree
            cut = _clear_cut(want_d, 1e-3)
            assert set(got[:cut]) == set(want[:cut]), (reader.__name__, uri)


@pytest.mark.parametrize("dtype", [np.float16, np.float64], ids=["float16", "float64"])
def test_sq_bounds_and_codes_are_pylances(tmp_path: Path, dtype: type) -> None:
    ours, theirs = _twins(tmp_path, dtype, "IVF_SQ")
    tables = []
    for uri in (ours, theirs):
        _, aux = _files(uri)
        meta = json.loads(json.loads(aux.metadata().schema.metadata[b"storage_metadata"])[0])
        rows = aux.read_all().to_table()
        order = np.argsort(rows["_rowid"].to_numpy())
        codes = np.stack(rows["__sq_code"].to_numpy(zero_copy_only=False))[order]
        tables.append((meta["bounds"], codes))
    (mine_bounds, mine), (their_bounds, theirs_codes) = tables
    assert mine_bounds == their_bounds
    assert (mine == theirs_codes).mean() > 0.999
