"""pylance's IVF index of a table on S3 (a real SeaweedFS server), opened and searched through
the object store: the same top-k as pylance's nearest, partitions read on demand."""

from __future__ import annotations

import lance
import numpy as np
import pyarrow as pa

import lance_semantic as ls
from lance_semantic.manifest import index_entries
from lance_semantic.vector import PartitionCache, open_ivf_index, search_ivf

ROWS, DIM = 3000, 16


def test_ivf_pq_on_s3_equals_pylance(s3_uri: str, s3_options: dict[str, str]) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    table = pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)})
    pds = lance.write_dataset(table, s3_uri, storage_options=s3_options)
    pds.create_index("vec", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
    ds = ls.dataset(s3_uri, storage_options=s3_options)
    (entry,) = index_entries(ds._manifest.index_section)
    cache = PartitionCache()
    index = open_ivf_index(ds._store, entry, cache=cache)
    assert index is not None and cache.reads == 0
    q = rng.standard_normal(DIM).astype(np.float32)
    ours = search_ivf(index, q, 10, nprobes=2)
    theirs = lance.dataset(s3_uri, storage_options=s3_options).to_table(
        nearest={"column": "vec", "q": q, "k": 10, "nprobes": 2},
        with_row_address=True,
        columns=[],
    )
    assert ours.row_addresses.tolist() == theirs.column("_rowaddr").to_pylist()
    np.testing.assert_allclose(ours.distances, theirs.column("_distance").to_numpy(), rtol=1e-5)
    assert cache.reads == 2
