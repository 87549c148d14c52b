"""``read.fragment_reader.per_fragment`` cuts the batches ``read_together`` returns back into each
fragment's rows, whatever the batches' boundaries: one batch per fragment, runs joined into
one batch, runs cut into several, empty fragments anywhere."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lance_semantic.read.fragment_reader import per_fragment


@pytest.mark.parametrize("seed", range(40))
def test_every_fragment_gets_exactly_its_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = [int(n) for n in rng.integers(0, 6, size=int(rng.integers(1, 20)))]
    values = np.arange(sum(counts))
    cuts = sorted({int(c) for c in rng.integers(0, len(values) + 1, size=rng.integers(0, 6))})
    if seed % 3 == 0:  # a batch per fragment, as fragments output as read give
        cuts = list(np.cumsum(counts)[:-1])
    edges = [0, *cuts, len(values)]
    spans = zip(edges[:-1], edges[1:], strict=True)
    batches = [pa.record_batch({"v": values[lo:hi]}) for lo, hi in spans if hi > lo]
    got = per_fragment(batches, counts)
    assert [sum(b.num_rows for b in bs) for bs in got] == counts
    flat = [v for bs in got for b in bs for v in b.column("v").to_pylist()]
    assert flat == values.tolist()
    if seed % 3 == 0:  # each fragment's own batch, not a copy or a slice of it
        own = [bs for bs in got if bs]
        assert len(own) == len(batches)
        assert all(len(bs) == 1 and bs[0] is b for bs, b in zip(own, batches, strict=True))
