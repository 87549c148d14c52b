"""The flat search kernels: distances against their definitions, and the streaming top-k
against a full sort of every distance (ties by address, NaN never kept, distance_range
before the k nearest)."""

from __future__ import annotations

import numpy as np
import pytest

from lance_semantic.vector import TopK, distances

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("queries", [1, 4])
def test_distances_match_their_definitions(dtype: type, queries: int) -> None:
    x = RNG.standard_normal((300, 24)).astype(dtype)
    q = RNG.standard_normal((queries, 24)).astype(np.float32)
    xd, qd = x.astype(np.float64), q.astype(np.float64)
    want = {
        "l2": ((xd[None, :, :] - qd[:, None, :]) ** 2).sum(axis=2),
        "dot": 1 - qd @ xd.T,
        "cosine": 1
        - (qd @ xd.T) / np.outer(np.linalg.norm(qd, axis=1), np.linalg.norm(xd, axis=1)),
    }
    for metric, expected in want.items():
        got = distances(x, q, metric)  # type: ignore[arg-type]
        assert got.dtype == np.float32 and got.shape == (queries, 300)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


def test_l2_of_a_vector_to_itself_is_zero() -> None:
    x = RNG.standard_normal((50, 32)).astype(np.float32)
    assert distances(x, x[3:4], "l2")[0, 3] == 0.0
    assert (distances(x, x[:5], "l2") >= 0).all()


def test_hamming_counts_differing_bits() -> None:
    x = RNG.integers(0, 256, (100, 8), dtype=np.uint8)
    q = RNG.integers(0, 256, (3, 8), dtype=np.uint8)
    expected = np.unpackbits(x[None, :, :] ^ q[:, None, :], axis=2).sum(axis=2)
    np.testing.assert_array_equal(distances(x, q, "hamming"), expected)


def test_cosine_of_a_zero_vector_is_nan() -> None:
    x = np.array([[0.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    got = distances(x, np.array([[1.0, 0.0]], np.float32), "cosine")
    assert np.isnan(got[0, 0]) and got[0, 1] == 0.0


def _streamed(d: np.ndarray, k: int, size: int, bounds: tuple | None = None) -> TopK:
    top = TopK(len(d), k, bounds)
    addresses = np.arange(d.shape[1], dtype=np.uint64)
    for lo in range(0, d.shape[1], size):
        top.push(d[:, lo : lo + size], addresses[lo : lo + size])
    return top


@pytest.mark.parametrize("size", [1, 7, 64, 1000])
@pytest.mark.parametrize("k", [1, 5, 40])
def test_top_k_equals_a_full_sort(size: int, k: int) -> None:
    d = RNG.integers(0, 20, (3, 500)).astype(np.float32)  # many ties
    d[1, ::9] = np.nan
    top = _streamed(d, k, size)
    for i in range(3):
        keep = np.flatnonzero(~np.isnan(d[i]))
        order = keep[np.lexsort((keep, d[i][keep]))][:k]
        addresses, dists = top.result(i)
        assert addresses.tolist() == order.tolist()
        np.testing.assert_array_equal(dists, d[i][order])


def test_distance_range_filters_before_the_k_nearest() -> None:
    d = np.arange(100, dtype=np.float32)[None, :]
    addresses, dists = _streamed(d, 5, 16, (10.0, 13.0)).result(0)
    assert dists.tolist() == [10.0, 11.0, 12.0]  # lower bound kept, upper bound not
    assert _streamed(d, 3, 16, (50.0, None)).result(0)[1].tolist() == [50.0, 51.0, 52.0]
    assert _streamed(d, 3, 16, (None, 1.0)).result(0)[1].tolist() == [0.0]
    assert len(_streamed(d, 3, 16, (5.0, 1.0)).result(0)[0]) == 0


def test_top_k_memory_is_bounded() -> None:
    top = _streamed(RNG.random((2, 5000)).astype(np.float32), 10, 100)
    assert all(len(top.result(i)[0]) == 10 for i in range(2))
    assert all(len(a) <= 10 for a in top._addrs)
