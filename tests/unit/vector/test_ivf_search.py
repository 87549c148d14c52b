"""The parts of IVF search that need no index files: probe counts, pylance's exact distances,
the partition cache's bound."""

from __future__ import annotations

import numpy as np
import pytest

from lance_semantic.vector import Partition, PartitionCache, exact_distances, probe_count
from lance_semantic.vector.ivf_search import _adaptive, _top


def test_explicit_nprobes_is_exact_and_capped() -> None:
    assert probe_count(8, nprobes=3, minimum_nprobes=None, maximum_nprobes=None) == (3, 3)
    assert probe_count(8, nprobes=30, minimum_nprobes=5, maximum_nprobes=1) == (8, 8)


def test_minimum_and_maximum_bound_the_adaptive_count() -> None:
    assert probe_count(8, nprobes=None, minimum_nprobes=None, maximum_nprobes=None) == (1, 8)
    assert probe_count(8, nprobes=None, minimum_nprobes=2, maximum_nprobes=None, adaptive=5) == (
        5,
        8,
    )
    assert probe_count(8, nprobes=None, minimum_nprobes=7, maximum_nprobes=4, adaptive=5) == (
        4,
        4,
    )


def test_adaptive_rule() -> None:
    d = np.array([1.0, 1.1, 1.2, 1.25, 1.3, 1.4, 2, 3, 4, 5, 6, 7, 8, 9], np.float32)
    assert _adaptive(10, "dot", d) == len(d)  # dot: every partition
    assert _adaptive(1, "l2", d) == 5  # the floor for k = 1
    assert _adaptive(10, "l2", d) == 6
    assert _adaptive(11, "l2", d) == 11
    wide = np.linspace(1.0, 1.3, 20, dtype=np.float32)
    assert _adaptive(1, "l2", wide) == int((wide <= 1.21).sum())
    assert _adaptive(100, "cosine", wide) == 20


def test_exact_distances_are_pylance_s() -> None:
    x = np.array([[1, 0], [0, 2], [3, 4]], np.float32)
    q = np.array([1, 1], np.float32)
    assert exact_distances(x, q, "l2").tolist() == [1.0, 2.0, 13.0]
    assert exact_distances(x, q, "dot").tolist() == [0.0, -1.0, -6.0]  # 1 - q.x
    np.testing.assert_allclose(
        exact_distances(x, q, "cosine"),
        1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.sqrt(2)),
        rtol=1e-5,
    )
    with pytest.raises(ValueError, match="^metric:"):
        exact_distances(x, q, "hamming")


def test_top_orders_by_distance_then_address_nan_last() -> None:
    addresses = np.array([5, 4, 3, 2, 1, 0], np.uint64)
    distances = np.array([1.0, np.nan, 1.0, 0.5, 2.0, 1.0], np.float32)
    assert addresses[_top(addresses, distances, 4)].tolist() == [2, 0, 3, 5]
    assert addresses[_top(addresses, distances, 6)].tolist()[-1] == 4  # the NaN


def test_cache_is_bounded_and_counts() -> None:
    cache = PartitionCache(capacity_bytes=100)
    part = Partition(np.zeros(4, np.uint64), np.zeros((4, 4), np.uint8))  # 48 bytes
    for key in range(3):
        assert cache.get(key) is None
        cache.put(key, part)
    assert len(cache) == 2 and cache.size_bytes == 96 and cache.reads == 3
    assert cache.get(0) is None and cache.get(2) is part and cache.hits == 1
    cache.put("big", Partition(np.zeros(20, np.uint64), np.zeros((20, 1), np.uint8)))
    assert cache.get("big") is None  # larger than the cache: not kept
    cache.clear()
    assert len(cache) == 0 and cache.size_bytes == 0
