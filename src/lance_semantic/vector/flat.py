"""Exact (flat) vector search kernels (layer L3): distances of a batch of vectors to the
queries, and a bounded top-k per query kept while the batches stream.

Distances are those pylance returns in ``_distance`` (float32): squared L2, ``1 - cos``,
``1 - dot`` (measured: pylance 14 adds the 1) and, for ``uint8`` vectors, the number of
differing bits. A NaN distance (a zero vector under cosine, a NaN query) is never a
neighbour, as in pylance. Ties are broken by row address, which is the order pylance
returns them in without an index.

>>> import numpy as np
>>> vectors = np.array([[0, 0], [3, 4], [1, 0]], dtype=np.float32)
>>> top = TopK(1, 2)
>>> top.push(distances(vectors, np.zeros((1, 2), np.float32), "l2"), np.arange(3, dtype=np.uint64))
>>> addresses, dists = top.result(0)
>>> addresses.tolist(), dists.tolist()
([0, 2], [0.0, 1.0])
"""

from __future__ import annotations

import numpy as np

from .metrics import Metric

__all__ = ["distances", "batch_candidates", "Candidates", "TopK"]

#: set bits of every byte value
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def distances(vectors: np.ndarray, queries: np.ndarray, metric: Metric) -> np.ndarray:
    """The ``(queries, vectors)`` float32 distances of ``vectors`` (``(n, dim)``) to each
    of ``queries`` (``(m, dim)``) under ``metric``."""
    if metric == "hamming":
        bits = vectors.astype(np.uint8, copy=False)
        out = np.empty((len(queries), len(bits)), dtype=np.float32)
        for i, one in enumerate(queries.astype(np.uint8, copy=False)):
            out[i] = _POPCOUNT[np.bitwise_xor(bits, one)].sum(axis=1, dtype=np.uint32)
        return out
    # float16 vectors are computed in float32; float64 in float64, then rounded (as pylance)
    work = np.float64 if vectors.dtype == np.float64 else np.float32
    x: np.ndarray = vectors.astype(work, copy=False)
    q: np.ndarray = queries.astype(work, copy=False)
    if metric == "l2":
        if len(q) == 1:  # direct: exact zeros, no cancellation
            diff = x - q[0]
            return np.einsum("ij,ij->i", diff, diff).astype(np.float32).reshape(1, -1)
        out = q @ x.T  # |x|^2 - 2 x.q + |q|^2, in place
        out *= -2
        out += np.einsum("ij,ij->i", x, x)
        out += np.einsum("ij,ij->i", q, q)[:, None]
        np.maximum(out, 0, out=out)
        return out.astype(np.float32, copy=False)
    dots = q @ x.T
    if metric == "dot":
        return (1 - dots).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    qnorms = np.sqrt(np.einsum("ij,ij->i", q, q))
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 - dots / (qnorms[:, None] * norms)).astype(np.float32)


#: one batch's candidates: per query, the addresses (uint64) and distances (float32) kept
Candidates = list[tuple[np.ndarray, np.ndarray]]


def batch_candidates(
    dists: np.ndarray,
    addresses: np.ndarray,
    k: int,
    distance_range: tuple[float | None, float | None] | None = None,
    bound: np.ndarray | None = None,
) -> Candidates:
    """Per query, the rows of one batch that can be among its ``k`` nearest: ``dists`` is
    ``(queries, n)``, ``addresses`` the rows' ``n`` addresses. Distances outside
    ``distance_range`` (lower inclusive, upper exclusive) and NaN are dropped, and those
    above ``bound`` (per query: the k-th distance found so far, :attr:`TopK.bound`); of
    the rest the ``k`` smallest are kept with every tie of the k-th (at least ``k`` when
    there are). Vectorised over the queries, so that it can run on the reading threads."""
    valid = ~np.isnan(dists)
    if bound is not None:
        valid &= dists <= bound[:, None]
    if distance_range is not None:
        lo, hi = distance_range
        if lo is not None:
            valid &= dists >= lo
        if hi is not None:
            valid &= dists < hi
    if dists.shape[1] > k:
        over = np.flatnonzero(np.count_nonzero(valid, axis=1) > k)  # the others keep all
        if len(over):
            ranked = np.where(valid[over], dists[over], np.inf)
            cut = np.partition(ranked, k - 1, axis=1)[:, k - 1 : k]
            valid[over] &= dists[over] <= cut
    return [(addresses[row], dists[i][row]) for i, row in enumerate(valid)]


class TopK:
    """The ``k`` nearest (address, distance) pairs of each of ``queries`` queries seen so
    far; memory is bounded by ``k`` plus one batch, whatever the table's size.

    ``distance_range`` (lower inclusive, upper exclusive) keeps only the distances inside
    it, before the k nearest are chosen, as pylance."""

    __slots__ = ("k", "distance_range", "bound", "_dists", "_addrs")

    def __init__(
        self, queries: int, k: int, distance_range: tuple[float | None, float | None] | None = None
    ) -> None:
        self.k = k
        self.distance_range = distance_range
        self._dists = [np.empty(0, np.float32) for _ in range(queries)]
        self._addrs = [np.empty(0, np.uint64) for _ in range(queries)]
        #: per query, the k-th distance found so far (inf until k are found): a row
        #: farther than it cannot be among the k nearest. It only decreases, so a reader
        #: on another thread that sees an older value keeps a few more candidates.
        self.bound = np.full(queries, np.inf, dtype=np.float32)

    def push(self, dists: np.ndarray, addresses: np.ndarray) -> None:
        """Merge one batch: ``dists`` is ``(queries, n)``, ``addresses`` the rows' ``n``
        addresses (uint64)."""
        self.merge(batch_candidates(dists, addresses, self.k, self.distance_range, self.bound))

    def merge(self, candidates: Candidates) -> None:
        """Merge one batch's :func:`batch_candidates` (computed with this ``k`` and
        ``distance_range``)."""
        for i, (a, d) in enumerate(candidates):
            if not len(d):
                continue
            d = np.concatenate([self._dists[i], d])
            a = np.concatenate([self._addrs[i], a])
            self._dists[i], self._addrs[i] = _smallest(d, a, self.k)
            if len(self._dists[i]) == self.k:
                self.bound[i] = self._dists[i].max()

    def result(self, query: int) -> tuple[np.ndarray, np.ndarray]:
        """The addresses and distances of ``query``'s nearest rows, nearest first (ties
        by address)."""
        d, a = self._dists[query], self._addrs[query]
        order = np.lexsort((a, d))
        return a[order], d[order]


def _smallest(d: np.ndarray, a: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest distances (ties at the boundary: the lowest addresses)."""
    if len(d) <= k:
        return d, a
    cut = np.partition(d, k - 1)[k - 1]
    chosen = np.flatnonzero(d <= cut)
    if len(chosen) > k:
        order = np.lexsort((a[chosen], d[chosen]))[:k]
        chosen = chosen[order]
    return d[chosen], a[chosen]
