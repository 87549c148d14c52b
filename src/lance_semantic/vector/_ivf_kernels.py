"""numba kernels of IVF training and encoding (layer L3; imports numba).

Private to :mod:`lance_semantic.vector.ivf_train`, which imports this module through its
kernel gate (announced before the first compile, cached on disk in the user-wide folder of
:mod:`lance_semantic.codecs._kernel_cache`, keyed by this file's text). Every array argument is
a writable, C-contiguous array of the dtype named, so each kernel has one signature:

``assign``          nearest centroid of every row (squared L2, or the largest dot product)
``assign_bounded``  a k-means step of ``assign`` (L2) skipping rows that cannot move (Hamerly)
``seed_distances``  k-means++: lower every row's distance to its nearest chosen centroid
``seed_pick``       k-means++: the row where the running sum of those distances passes a target
``accumulate``      k-means update: per-centroid sums (float64) and counts of the rows
``pq_encode``       the nearest codeword of every sub-vector (codes ``uint8``)
``sq_encode``       ``floor((x - start) / (end - start) * 255)`` clipped to ``[0, 255]``

The row loops of ``assign``, ``seed_distances`` (large inputs), ``pq_encode`` and
``sq_encode`` run in parallel (``prange``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..codecs._kernel_jit import cached_jit
from .ivf_train import KERNEL_CACHE

__all__ = [
    "assign",
    "assign_bounded",
    "seed_distances",
    "seed_pick",
    "accumulate",
    "pq_encode",
    "sq_encode",
]

_jit = cached_jit(KERNEL_CACHE)
_pjit = cached_jit(KERNEL_CACHE, parallel=True, fastmath=True)


@_pjit
def assign(
    data: np.ndarray,
    centroids: np.ndarray,
    use_dot: bool,
    labels: np.ndarray,
    dists: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``labels[i]`` = the centroid nearest row ``i`` of ``data`` (float32 ``[n, d]``) among
    ``centroids`` (float32 ``[k, d]``); ``dists[i]`` its squared L2 distance, or for
    ``use_dot`` the negated dot product (the largest dot product is the nearest).

    Rows go four at a time, so each centroid value loaded serves four rows (1.7x faster at
    128 dimensions than one row at a time; the same sums, so the same results)."""
    n, d = data.shape
    k = centroids.shape[0]
    sign = np.float32(-1.0) if use_dot else np.float32(1.0)
    for b in prange((n + 3) // 4):
        i0 = b * 4
        rows = min(4, n - i0)
        # rows past the end repeat the last row (their results are not stored)
        r1 = i0 + min(1, rows - 1)
        r2 = i0 + min(2, rows - 1)
        r3 = i0 + min(3, rows - 1)
        b0 = b1 = b2 = b3 = np.float32(np.inf)
        a0 = a1 = a2 = a3 = 0
        for c in range(k):
            s0 = s1 = s2 = s3 = np.float32(0.0)
            if use_dot:
                for j in range(d):
                    v = centroids[c, j]
                    s0 += data[i0, j] * v
                    s1 += data[r1, j] * v
                    s2 += data[r2, j] * v
                    s3 += data[r3, j] * v
            else:
                for j in range(d):
                    v = centroids[c, j]
                    t0 = data[i0, j] - v
                    t1 = data[r1, j] - v
                    t2 = data[r2, j] - v
                    t3 = data[r3, j] - v
                    s0 += t0 * t0
                    s1 += t1 * t1
                    s2 += t2 * t2
                    s3 += t3 * t3
            s0 *= sign
            s1 *= sign
            s2 *= sign
            s3 *= sign
            if s0 < b0:
                b0, a0 = s0, c
            if s1 < b1:
                b1, a1 = s1, c
            if s2 < b2:
                b2, a2 = s2, c
            if s3 < b3:
                b3, a3 = s3, c
        labels[i0] = a0
        dists[i0] = b0
        if rows > 1:
            labels[i0 + 1] = a1
            dists[i0 + 1] = b1
        if rows > 2:
            labels[i0 + 2] = a2
            dists[i0 + 2] = b2
        if rows > 3:
            labels[i0 + 3] = a3
            dists[i0 + 3] = b3


@_pjit
def assign_bounded(
    data: np.ndarray,
    centroids: np.ndarray,
    half_gap: np.ndarray,
    labels: np.ndarray,
    dists: np.ndarray,
    lower: np.ndarray,
    full: bool,
) -> None:  # pragma: no cover - compiled
    """One k-means assignment step (squared L2) that skips the rows whose centroid cannot
    have changed (Hamerly's bound; the same labels as a full scan, float ties aside).

    ``half_gap[c]`` (float64 ``[k]``) is half the distance from centroid ``c`` to its nearest
    other centroid; ``lower[i]`` (float64 ``[n]``) a lower bound of the distance from row
    ``i`` to every centroid but ``labels[i]`` (the caller lowers it by how far the centroids
    moved). A row whose distance to its own centroid is at most the larger of the two keeps
    its label; any other row (every row when ``full``) is compared with every centroid, and
    gets its nearest (``labels``, ``dists`` its squared distance) and the distance to the
    second nearest as its new ``lower``. ``dists`` is always the squared distance to the
    row's centroid (the loss)."""
    n, d = data.shape
    k = centroids.shape[0]
    for i in prange(n):
        if not full:
            a = labels[i]
            s = np.float32(0.0)
            for j in range(d):
                t = data[i, j] - centroids[a, j]
                s += t * t
            bound = max(half_gap[a], lower[i])
            if np.sqrt(np.float64(s)) <= bound:
                dists[i] = s
                continue
        b1 = np.float32(np.inf)
        b2 = np.float32(np.inf)
        arg = 0
        for c in range(k):
            s = np.float32(0.0)
            for j in range(d):
                t = data[i, j] - centroids[c, j]
                s += t * t
            if s < b1:
                b2 = b1
                b1 = s
                arg = c
            elif s < b2:
                b2 = s
        labels[i] = arg
        dists[i] = b1
        lower[i] = np.sqrt(np.float64(b2))


@_pjit
def seed_distances(
    data: np.ndarray, center: np.ndarray, min_d: np.ndarray, wide: bool
) -> float:  # pragma: no cover - compiled
    """Lower ``min_d[i]`` (float64) to the squared L2 distance (a float32 sum: it only
    weighs the k-means++ draw) of row ``i`` to ``center`` (float32 ``[d]``); the new sum
    of ``min_d``. ``wide``: the rows in parallel (for large inputs; below that, starting a
    parallel region costs more than it saves, more so on a loaded machine). The total is one
    serial loop either way, so it does not depend on the thread count."""
    n, d = data.shape
    if wide:
        for i in prange(n):
            acc = np.float32(0.0)
            for j in range(d):
                t = data[i, j] - center[j]
                acc += t * t
            if acc < min_d[i]:
                min_d[i] = acc
    else:
        for i in range(n):
            acc = np.float32(0.0)
            for j in range(d):
                t = data[i, j] - center[j]
                acc += t * t
            if acc < min_d[i]:
                min_d[i] = acc
    total = 0.0
    for i in range(n):
        total += min_d[i]
    return total


@_jit
def seed_pick(min_d: np.ndarray, target: float) -> int:  # pragma: no cover - compiled
    """The first row ``i`` whose running sum of ``min_d`` (float64) exceeds ``target`` (the
    last row if none does)."""
    run = 0.0
    n = min_d.shape[0]
    for i in range(n):
        run += min_d[i]
        if run > target:
            return i
    return n - 1


@_jit
def accumulate(
    data: np.ndarray, labels: np.ndarray, sums: np.ndarray, counts: np.ndarray
) -> None:  # pragma: no cover - compiled
    """Add every row of ``data`` to ``sums[labels[i]]`` (float64 ``[k, d]``) and count it
    in ``counts`` (int64 ``[k]``)."""
    n, d = data.shape
    for i in range(n):
        c = labels[i]
        counts[c] += 1
        for j in range(d):
            sums[c, j] += data[i, j]


@_pjit
def pq_encode(
    data: np.ndarray, codebook: np.ndarray, codes: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``codes[i, s]`` = the codeword of ``codebook[s]`` (float32 ``[m, K, d/m]``) nearest
    (squared L2) sub-vector ``s`` of row ``i`` of ``data`` (float32 ``[n, d]``)."""
    n = data.shape[0]
    m, kk, ds = codebook.shape
    for i in prange(n):
        for s in range(m):
            base = s * ds
            best = np.float32(np.inf)
            arg = 0
            for c in range(kk):
                acc = np.float32(0.0)
                for j in range(ds):
                    t = data[i, base + j] - codebook[s, c, j]
                    acc += t * t
                if acc < best:
                    best = acc
                    arg = c
            codes[i, s] = arg


@_pjit
def sq_encode(
    data: np.ndarray, start: float, end: float, codes: np.ndarray
) -> None:  # pragma: no cover - compiled
    """8-bit scalar quantization of ``data`` (float32 ``[n, d]``) between ``start`` and
    ``end`` into ``codes`` (uint8 ``[n, d]``), as pylance 14 (floor, clipped)."""
    n, d = data.shape
    span = end - start
    scale = 255.0 / span if span > 0 else 0.0
    for i in prange(n):
        for j in range(d):
            v = np.floor((np.float64(data[i, j]) - start) * scale)
            if v < 0.0:
                v = 0.0
            elif v > 255.0:
                v = 255.0
            codes[i, j] = np.uint8(v)
