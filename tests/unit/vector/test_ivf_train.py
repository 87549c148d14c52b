"""The IVF training kernels (vector/ivf_train.py, vector/_ivf_kernels.py) against numpy
references on small inputs, deterministic with a seed."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from lance_semantic.vector import ivf_train


def _data(n: int = 2000, d: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((8, d)) * 4
    return (centers[rng.integers(8, size=n)] + rng.standard_normal((n, d))).astype(np.float32)


def _l2(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    return ((x[:, None, :].astype(np.float64) - c[None].astype(np.float64)) ** 2).sum(-1)


def test_assignment_is_the_nearest_centroid_by_l2_and_by_dot() -> None:
    x = _data()
    c = x[:37].copy()
    labels, dists = ivf_train.assign_partitions(x, c)
    ref = _l2(x, c)
    assert (labels == ref.argmin(1)).mean() > 0.999  # float32 ties aside
    np.testing.assert_allclose(dists, ref.min(1), rtol=1e-4, atol=1e-3)
    labels, dists = ivf_train.assign_partitions(x, c, "dot")
    dot = x.astype(np.float64) @ c.T.astype(np.float64)
    assert (labels == dot.argmax(1)).mean() > 0.999
    np.testing.assert_allclose(dists, -dot.max(1), rtol=1e-4, atol=1e-3)


def test_assignment_takes_read_only_and_strided_input() -> None:
    x = np.asfortranarray(_data(300))
    x.flags.writeable = False
    labels, _ = ivf_train.assign_partitions(x, x[:5])
    assert (labels == _l2(x, x[:5]).argmin(1)).all()


def test_kmeans_is_deterministic_and_a_local_optimum() -> None:
    x = _data()
    a = ivf_train.train_kmeans(x, 8, seed=3)
    b = ivf_train.train_kmeans(x, 8, seed=3)
    np.testing.assert_array_equal(a.centroids, b.centroids)
    labels = _l2(x, a.centroids).argmin(1)
    # a Lloyd fixed point: each centroid is the mean of its rows, the loss their distances
    means = np.stack([x[labels == c].mean(0) for c in range(8)])
    np.testing.assert_allclose(a.centroids, means, atol=1e-3)
    assert a.loss == pytest.approx(_l2(x, a.centroids).min(1).sum(), rel=1e-4)
    # eight well separated blobs: k-means++ finds them (loss near n * d)
    assert a.loss < 1.2 * x.shape[0] * x.shape[1]


def test_kmeans_refuses_more_centroids_than_rows() -> None:
    with pytest.raises(ValueError, match="3 rows into 4"):
        ivf_train.train_kmeans(_data(3), 4)


def test_pq_codebook_and_codes() -> None:
    x = _data(1500, 16)
    book = ivf_train.train_pq(x, 4, seed=5)
    assert book.shape == (4, 256, 4) and book.dtype == np.float32
    codes = ivf_train.pq_encode(x, book)
    assert codes.shape == (1500, 4) and codes.dtype == np.uint8
    for s in range(4):
        ref = _l2(x[:, s * 4 : (s + 1) * 4], book[s]).argmin(1)
        assert (codes[:, s] == ref).mean() > 0.999
    # the reconstruction is much closer than the vectors' spread
    rebuilt = np.concatenate([book[s][codes[:, s]] for s in range(4)], axis=1)
    assert ((rebuilt - x) ** 2).sum(1).mean() < 0.2 * ((x - x.mean(0)) ** 2).sum(1).mean()
    with pytest.raises(
        ValueError, match=r"dimension \(16\) must be divisible by num_sub_vectors \(5\)"
    ):
        ivf_train.train_pq(x, 5)


def test_sq_codes_floor_between_the_bounds() -> None:
    x = _data(500)
    start, end = ivf_train.sq_bounds(x)
    assert (start, end) == (float(x.min()), float(x.max()))
    codes = ivf_train.sq_encode(x, start, end)
    ref = np.clip(np.floor((x.astype(np.float64) - start) / (end - start) * 255), 0, 255)
    assert (codes == ref).mean() > 0.999
    assert ivf_train.sq_encode(np.array([[start - 1, end + 1]]), start, end).tolist() == [[0, 255]]


def test_normalize_makes_unit_rows_and_keeps_zero_rows() -> None:
    out = ivf_train.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_warm_up_names_every_kernel_and_a_compile_is_announced(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    took = ivf_train.warm_up()
    assert set(took) == {
        "assign",
        "seed_distances",
        "seed_pick",
        "accumulate",
        "pq_encode",
        "sq_encode",
    }
    # a fresh gate that believes nothing is cached announces before its first "compile"
    fresh = ivf_train.KernelGate(
        ivf_train._load,
        ivf_train._GATE._warm,
        kernels=ivf_train._KERNELS,
        cache=ivf_train.KERNEL_CACHE,
        owner="vector search",
    )
    fresh.reference_bytes = 0
    monkeypatch.setattr(ivf_train.KERNEL_CACHE, "is_cached", lambda kernel: False)
    with caplog.at_level(logging.WARNING, logger="lance_semantic"):
        assert fresh.kernels_for("assign", 1) is not None
    assert [r.getMessage() for r in caplog.records][0].startswith(
        "lance-semantic: compiling vector search's partition assignment"
    )
    assert str(ivf_train.KERNEL_CACHE.cache_dir().name).startswith("numba-")


def test_the_bounded_kmeans_step_gives_the_full_scans_labels() -> None:
    """k-means' assignment step skips rows by Hamerly's bound: after the centroids move,
    the rows it keeps and the rows it rescans get the labels of a full scan."""
    x = _data(3000, 8)
    kern = ivf_train._kernels("assign")
    c = x[:32].copy()
    n = len(x)
    labels, dists, lower = np.empty(n, np.int32), np.empty(n, np.float32), np.zeros(n)
    kern.assign_bounded(x, c, ivf_train._half_gaps(c), labels, dists, lower, True)
    for step in range(5):
        before = c.copy()
        c += np.random.default_rng(step).standard_normal(c.shape).astype(np.float32) * 0.05
        ivf_train._lower_bounds(lower, labels, before, c)
        kern.assign_bounded(x, c, ivf_train._half_gaps(c), labels, dists, lower, False)
        ref = _l2(x, c)
        assert (labels == ref.argmin(1)).mean() > 0.999
        np.testing.assert_allclose(dists, ref[np.arange(n), labels], rtol=1e-4, atol=1e-3)
