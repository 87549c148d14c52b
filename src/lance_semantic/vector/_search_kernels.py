"""numba kernels of the IVF search (layer L3; imports numba).

Private to :mod:`lance_semantic.vector.ivf_search`, which imports this module through its
kernel gate (announced before the first compile, cached on disk in the user-wide folder of
:mod:`lance_semantic.codecs._kernel_cache`, keyed by this file's text). Each kernel scores
the rows of one partition against the query and keeps the best of them in a bounded max-heap
that lives across the partitions of a query (``heap_key``, ``heap_dist``, ``heap_addr``, its
``size`` passed in and returned), so the candidates of all the partitions probed are never
materialised:

``flat_scan``  exact distances on the stored float32 vectors (squared L2, ``1 - cos``,
               ``1 - q·x``)
``pq_scan``    PQ asymmetric distances: the partition's ``[m][256]`` table (of the residual
               ``q - centroid`` for l2 / cosine, of ``q`` for dot) built in the call, then
               summed sub-vector by sub-vector in order, as the reference sums them
``sq_scan``    8-bit SQ distances on the codes (l2 / cosine) or the decoded values (dot)

Rows are kept when ``keep[i]`` (``use_keep``), when their distance is inside
``[lo, hi)`` (``has_lo`` / ``has_hi``); the heap orders (distance, row address) pairs with
NaN ranked as +inf (``heap_key``) while ``heap_dist`` holds the distance itself; a row worse
than the worst kept of a full heap is dropped before any call. Each kernel
returns ``(size, kept)``: the heap's new size and how many of the partition's rows passed
the filters. Every array argument is C-contiguous of the dtype named, so each kernel has one
signature. No ``fastmath``: the sums are those of the reference's order where it matters.
"""

from __future__ import annotations

import numpy as np

from ..codecs._kernel_jit import cached_jit
from .ivf_search import KERNEL_CACHE

__all__ = ["flat_scan", "pq_scan", "sq_scan"]

#: numpy's error model: a division by zero is inf or NaN (a zero vector under cosine), as
#: the reference computes it
_jit = cached_jit(KERNEL_CACHE, error_model="numpy")
#: the row distances of the flat kernel: summed in SIMD lanes (the reference's numpy sums
#: are vectorised too; the sums may differ from it in the last bits)
_fjit = cached_jit(KERNEL_CACHE, error_model="numpy", fastmath=True)


@_fjit
def _l2_row(x: np.ndarray, i: int, q: np.ndarray) -> np.float32:  # pragma: no cover - compiled
    acc = np.float32(0.0)
    for j in range(q.shape[0]):
        t = x[i, j] - q[j]
        acc += t * t
    return acc


@_fjit
def _dot_row(
    x: np.ndarray, i: int, q: np.ndarray
) -> tuple[np.float32, np.float32]:  # pragma: no cover - compiled
    """(x_i · q, x_i · x_i)"""
    dot = np.float32(0.0)
    xx = np.float32(0.0)
    for j in range(q.shape[0]):
        v = x[i, j]
        dot += v * q[j]
        xx += v * v
    return dot, xx


@_jit
def _push(
    key: np.float32,
    dist: np.float32,
    addr: np.uint64,
    heap_key: np.ndarray,
    heap_dist: np.ndarray,
    heap_addr: np.ndarray,
    size: int,
) -> int:  # pragma: no cover - compiled
    """Offer (key, addr) to the max-heap of capacity ``len(heap_key)``; its new size."""
    cap = heap_key.shape[0]
    if size < cap:  # sift up
        i = size
        while i > 0:
            parent = (i - 1) // 2
            pk, pa = heap_key[parent], heap_addr[parent]
            if pk > key or (pk == key and pa > addr):
                break
            heap_key[i], heap_dist[i], heap_addr[i] = pk, heap_dist[parent], pa
            i = parent
        heap_key[i], heap_dist[i], heap_addr[i] = key, dist, addr
        return size + 1
    rk, ra = heap_key[0], heap_addr[0]
    if key > rk or (key == rk and addr >= ra):
        return size  # not better than the worst kept
    i = 0  # sift down from the root
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size:
            ck, ca = heap_key[child], heap_addr[child]
            rk2, ra2 = heap_key[right], heap_addr[right]
            if rk2 > ck or (rk2 == ck and ra2 > ca):
                child = right
        ck, ca = heap_key[child], heap_addr[child]
        if key > ck or (key == ck and addr > ca):
            break
        heap_key[i], heap_dist[i], heap_addr[i] = ck, heap_dist[child], ca
        i = child
    heap_key[i], heap_dist[i], heap_addr[i] = key, dist, addr
    return size


@_jit
def flat_scan(
    x: np.ndarray,
    addr: np.ndarray,
    keep: np.ndarray,
    use_keep: bool,
    q: np.ndarray,
    metric: int,
    lo: float,
    hi: float,
    has_lo: bool,
    has_hi: bool,
    heap_key: np.ndarray,
    heap_dist: np.ndarray,
    heap_addr: np.ndarray,
    size: int,
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Rows of ``x`` (float32 ``[n, d]``) against ``q`` (float32 ``[d]``): ``metric`` 0
    squared L2, 1 ``1 - cos``, 2 ``1 - q·x``."""
    n = x.shape[0]
    qq = np.float32(0.0)
    for j in range(q.shape[0]):
        qq += q[j] * q[j]
    qnorm = np.float32(np.sqrt(qq))
    flo, fhi = np.float32(lo), np.float32(hi)  # compared in float32, as the reference
    inf, cap = np.float32(np.inf), heap_key.shape[0]
    kept = 0
    one = np.float32(1.0)
    for i in range(n):
        if use_keep and not keep[i]:
            continue
        if metric == 0:
            d = _l2_row(x, i, q)
        else:
            dot, xx = _dot_row(x, i, q)
            if metric == 2:
                d = one - dot
            else:
                d = one - dot / (qnorm * np.float32(np.sqrt(xx)))
        if (has_lo and not d >= flo) or (has_hi and not d < fhi):
            continue  # outside the distance range (NaN too)
        kept += 1
        ranked = inf if np.isnan(d) else d
        if size == cap and ranked > heap_key[0]:
            continue  # worse than the worst kept: most rows end here
        size = _push(ranked, d, addr[i], heap_key, heap_dist, heap_addr, size)
    return size, kept


@_jit
def pq_scan(
    codes: np.ndarray,
    addr: np.ndarray,
    keep: np.ndarray,
    use_keep: bool,
    codebook: np.ndarray,
    key: np.ndarray,
    use_dot: bool,
    table: np.ndarray,
    acc: np.ndarray,
    lo: float,
    hi: float,
    has_lo: bool,
    has_hi: bool,
    heap_key: np.ndarray,
    heap_dist: np.ndarray,
    heap_addr: np.ndarray,
    size: int,
) -> tuple[int, int]:  # pragma: no cover - compiled
    """PQ codes (uint8 ``[m, n]``, sub-vector major) against ``key`` (float32 ``[d]``: the
    residual for l2 / cosine, the query for dot) through ``codebook`` (float32
    ``[m, d/m, 256]``: the index's ``[m, 256, d/m]`` transposed, so that the table's 256
    entries are computed side by side, each summed over its sub-vector in order);
    ``table`` (float32 ``[m, 256]``) and ``acc`` (float32, at least ``n``) are scratch."""
    m, n = codes.shape
    sub, kk = codebook.shape[1], codebook.shape[2]
    one = np.float32(1.0)
    row = np.empty(kk, np.float32)  # one sub-vector's entries, summed side by side
    for s in range(m):
        row[:] = np.float32(0.0)
        for j in range(sub):
            kj = key[s * sub + j]
            if use_dot:
                for c in range(kk):
                    row[c] += codebook[s, j, c] * kj
            else:
                for c in range(kk):
                    u = codebook[s, j, c] - kj
                    row[c] += u * u
        for c in range(kk):
            table[s, c] = one - row[c] if use_dot else row[c]
    for i in range(n):
        acc[i] = np.float32(0.0)
    for s in range(m):  # summed in sub-vector order, as the reference
        for i in range(n):
            acc[i] += table[s, codes[s, i]]
    shift = np.float32(m - 1) if use_dot else np.float32(0.0)
    flo, fhi = np.float32(lo), np.float32(hi)  # compared in float32, as the reference
    inf, cap = np.float32(np.inf), heap_key.shape[0]
    kept = 0
    for i in range(n):
        if use_keep and not keep[i]:
            continue
        d = acc[i] - shift if use_dot else acc[i]
        if (has_lo and not d >= flo) or (has_hi and not d < fhi):
            continue  # outside the distance range (NaN too)
        kept += 1
        ranked = inf if np.isnan(d) else d
        if size == cap and ranked > heap_key[0]:
            continue  # worse than the worst kept: most rows end here
        size = _push(ranked, d, addr[i], heap_key, heap_dist, heap_addr, size)
    return size, kept


@_jit
def sq_scan(
    codes: np.ndarray,
    addr: np.ndarray,
    keep: np.ndarray,
    use_keep: bool,
    qv: np.ndarray,
    use_dot: bool,
    start: float,
    step: float,
    scale: float,
    lo: float,
    hi: float,
    has_lo: bool,
    has_hi: bool,
    heap_key: np.ndarray,
    heap_dist: np.ndarray,
    heap_addr: np.ndarray,
    size: int,
) -> tuple[int, int]:  # pragma: no cover - compiled
    """SQ codes (uint8 ``[n, d]``): for l2 / cosine ``qv`` is the quantized query (float32)
    and the distance ``Σ (code - qv)² · scale``; for dot ``qv`` is the query and the
    distance ``1 - q·(start + code · step)``."""
    n, dim = codes.shape
    f_start, f_step, f_scale = np.float32(start), np.float32(step), np.float32(scale)
    one = np.float32(1.0)
    flo, fhi = np.float32(lo), np.float32(hi)  # compared in float32, as the reference
    inf, cap = np.float32(np.inf), heap_key.shape[0]
    kept = 0
    for i in range(n):
        if use_keep and not keep[i]:
            continue
        acc = np.float32(0.0)
        if use_dot:
            for j in range(dim):
                acc += (f_start + np.float32(codes[i, j]) * f_step) * qv[j]
            d = one - acc
        else:
            for j in range(dim):
                t = np.float32(codes[i, j]) - qv[j]
                acc += t * t
            d = acc * f_scale
        if (has_lo and not d >= flo) or (has_hi and not d < fhi):
            continue  # outside the distance range (NaN too)
        kept += 1
        ranked = inf if np.isnan(d) else d
        if size == cap and ranked > heap_key[0]:
            continue  # worse than the worst kept: most rows end here
        size = _push(ranked, d, addr[i], heap_key, heap_dist, heap_addr, size)
    return size, kept
