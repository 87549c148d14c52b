"""What a search through an IVF index asks of S3 (a real SeaweedFS server behind the
recording proxy, tests/s3/faulty_proxy.py): each index file is opened once per handle, and
a warm query re-reads nothing it has read."""

from __future__ import annotations

from collections import Counter

import lance
import numpy as np
import pyarrow as pa
from tests.s3.faulty_proxy import FaultyProxy

import lance_semantic as ls

ROWS, DIM, K = 4000, 16, 10


def _nearest(q: np.ndarray) -> dict[str, object]:
    return {"column": "vec", "q": q, "k": K, "nprobes": 3}


def test_an_ivf_search_opens_each_index_file_once_and_a_warm_query_rereads_nothing(
    s3_uri: str, s3_options: dict[str, str], s3_proxy: FaultyProxy
) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    table = pa.table(
        {
            "id": np.arange(ROWS),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM),
        }
    )
    pds = lance.write_dataset(table, s3_uri, storage_options=s3_options)
    pds.create_index("vec", "IVF_PQ", num_partitions=8, num_sub_vectors=4)
    queries = rng.standard_normal((2, DIM)).astype(np.float32)
    theirs = lance.dataset(s3_uri, storage_options=s3_options)

    ds = ls.dataset(s3_uri, storage_options=s3_proxy.storage_options(s3_options))
    runs = []
    for q in queries:
        with s3_proxy.recording() as requests:
            got = ds.to_table(columns=["id"], nearest=_nearest(q))
            s3_proxy.settle()
            runs.append(list(requests))
        want = theirs.to_table(columns=["id"], nearest=_nearest(q))
        assert got.column("id").to_pylist() == want.column("id").to_pylist()
        np.testing.assert_allclose(
            got.column("_distance").to_numpy(), want.column("_distance").to_numpy(), rtol=1e-5
        )

    first, warm = runs
    index_files = {r.key for r in first if "/_indices/" in r.key}
    assert {k.rsplit("/", 1)[1] for k in index_files} == {"index.idx", "auxiliary.idx"}
    heads = Counter(r.key for r in first if r.method == "HEAD")
    assert all(heads[k] <= 1 for k in index_files), heads
    # the warm query: no file opened again, no byte range asked for twice
    assert [r.describe() for r in warm if r.method == "HEAD"] == []
    reads = Counter((r.key, r.range) for r in first + warm if r.method == "GET")
    assert [k for k, n in reads.items() if n > 1 and "/_indices/" in k[0]] == []
