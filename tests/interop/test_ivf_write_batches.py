"""vector/ivf_write.py writes ``auxiliary.idx`` in batches of whole partitions: the file's
rows do not depend on the batch size (IVF_PQ's codes are transposed per partition, so a
batch must never cut one), nor on whether the builder was told the row count first."""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.vector import ivf_write

N, D, P, M = 4000, 16, 6, 4
RNG = np.random.default_rng(21)
ROWS = (RNG.standard_normal((N, D)) + RNG.integers(4, size=(N, 1))).astype(np.float32)
CENTROIDS = ROWS[:P].copy()
BOOK = RNG.standard_normal((M, 256, D // M)).astype(np.float32)


def _aux_rows(tmp_path: Path, name: str, kind: str) -> pa.Table:
    uri = str(tmp_path / name)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(ROWS.ravel()), D)
    lance.write_dataset(pa.table({"id": np.arange(N), "v": vec}), uri, max_rows_per_file=N // 2)
    options = {"num_partitions": P, "ivf_centroids": CENTROIDS}
    if kind == "IVF_PQ":
        options |= {"num_sub_vectors": M, "pq_codebook": BOOK}
    ls.dataset(uri).create_index("v", kind, **options)
    uuid = lance.dataset(uri).describe_indices()[0].segments[0].uuid
    return LanceFileReader(f"{uri}/_indices/{uuid}/auxiliary.idx").read_all().to_table()


def test_batch_bounds_keep_partitions_whole() -> None:
    counts = np.array([0, 5, 70000, 0, 3, 65533, 2, 0], np.int64)
    bounds = ivf_write._batch_bounds(counts)
    assert bounds == [(0, 3), (3, 6), (6, 8)]
    assert ivf_write._batch_bounds(np.zeros(3, np.int64)) == []


@pytest.mark.parametrize("kind", ["IVF_PQ", "IVF_FLAT", "IVF_SQ"])
def test_the_rows_do_not_depend_on_the_batch_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    whole = _aux_rows(tmp_path, "whole.lance", kind)
    monkeypatch.setattr(ivf_write, "_ROWS_PER_BATCH", 300)
    reserve = ivf_write.IvfBuilder.reserve

    def grow(self: ivf_write.IvfBuilder, rows: int) -> None:  # not told the count: grows
        if self.num_rows or rows < N:
            reserve(self, rows)

    monkeypatch.setattr(ivf_write.IvfBuilder, "reserve", grow)
    small = _aux_rows(tmp_path, "small.lance", kind)
    assert small.num_rows == whole.num_rows == N
    for name in whole.column_names:
        assert small[name].combine_chunks().equals(whole[name].combine_chunks()), name
