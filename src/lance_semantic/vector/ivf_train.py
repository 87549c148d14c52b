"""Training of IVF indices as pylance 14 builds them (layer L3): k-means centroids, PQ
codebooks, SQ bounds, and the assignment of rows to partitions.

pylance's defaults: ``max_iters`` 50 and ``sample_rate`` 256 (k-means trains on at most
``num_partitions * 256`` sampled rows; PQ on at most ``2**num_bits * 256``). k-means is
seeded with k-means++ and stops when the loss improves by less than 1e-4 of itself. PQ
trains one k-means of ``2**num_bits`` centroids per sub-vector over the residuals (vector
minus its partition's centroid) for l2 and cosine, over the vectors for dot; SQ bounds are
the smallest and largest value of the sample. Cosine normalises every vector first (pylance
stores and partitions the unit vectors).

The loops run in numba (:mod:`~lance_semantic.vector._ivf_kernels`), compiled on first use
with a line on the ``lance_semantic`` logger and cached on disk like the JSON codec's
kernels (:mod:`lance_semantic.codecs._kernel_gate`); :func:`warm_up` compiles them ahead.

>>> import numpy as np
>>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
>>> model = train_kmeans(x, 4, seed=1)
>>> model.centroids.shape, bool(model.loss > 0)
((4, 8), True)
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from ..codecs._kernel_cache import KernelCache
from ..codecs._kernel_gate import Kernel, KernelGate
from .metrics import Metric

__all__ = [
    "KMeansModel",
    "train_kmeans",
    "assign_partitions",
    "train_pq",
    "pq_encode",
    "sq_bounds",
    "sq_encode",
    "normalize",
    "warm_up",
    "DEFAULT_MAX_ITERS",
    "DEFAULT_SAMPLE_RATE",
]

F32 = npt.NDArray[np.float32]

DEFAULT_MAX_ITERS = 50
DEFAULT_SAMPLE_RATE = 256
#: k-means stops when the loss improves by less than this fraction of itself
TOLERANCE = 1e-4

_KERNELS: Mapping[str, Kernel] = {
    "assign": Kernel("partition assignment", 15, 1),
    "seed_distances": Kernel("k-means++ seeding", 5, 1),
    "seed_pick": Kernel("k-means++ draw", 3, 1),
    "accumulate": Kernel("k-means update", 5, 1),
    "pq_encode": Kernel("PQ encoder", 15, 1),
    "sq_encode": Kernel("SQ encoder", 10, 1),
}


#: the disk cache of the kernels (keyed by the text of ``_ivf_kernels.py``)
KERNEL_CACHE = KernelCache("_ivf_kernels", (Path(__file__).with_name("_ivf_kernels.py"),))


def _load() -> ModuleType:
    return importlib.import_module("lance_semantic.vector._ivf_kernels")


def _tiny() -> tuple[F32, F32]:
    return np.zeros((2, 2), np.float32), np.ones((1, 2), np.float32)


def _warm_assign(k: ModuleType) -> None:
    """``assign`` and ``assign_bounded`` (k-means' step), compiled as one kernel."""
    data, cent = _tiny()
    k.assign(data, cent, False, np.empty(2, np.int32), np.empty(2, np.float32))
    gap, lower = np.zeros(1), np.zeros(2)
    k.assign_bounded(data, cent, gap, np.zeros(2, np.int32), np.empty(2, np.float32), lower, True)


def _warm_seed(k: ModuleType) -> None:
    data, cent = _tiny()
    k.seed_distances(data, cent[0].copy(), np.full(2, np.inf), False)


def _warm_pick(k: ModuleType) -> None:
    k.seed_pick(np.ones(2), 0.5)


def _warm_accumulate(k: ModuleType) -> None:
    data, _ = _tiny()
    k.accumulate(data, np.zeros(2, np.int32), np.zeros((1, 2)), np.zeros(1, np.int64))


def _warm_pq(k: ModuleType) -> None:
    data, _ = _tiny()
    k.pq_encode(data, np.zeros((2, 2, 1), np.float32), np.empty((2, 2), np.uint8))


def _warm_sq(k: ModuleType) -> None:
    data, _ = _tiny()
    k.sq_encode(data, -1.0, 1.0, np.empty((2, 2), np.uint8))


_GATE = KernelGate(
    _load,
    {
        "assign": _warm_assign,
        "seed_distances": _warm_seed,
        "seed_pick": _warm_pick,
        "accumulate": _warm_accumulate,
        "pq_encode": _warm_pq,
        "sq_encode": _warm_sq,
    },
    kernels=_KERNELS,
    cache=KERNEL_CACHE,
    owner="vector search",
)
_GATE.reference_bytes = 0  # no reference implementation: every call runs the kernel


def _kernels(kernel: str) -> Any:
    module = _GATE.kernels_for(kernel, 1)
    assert module is not None
    return module


def warm_up() -> dict[str, float]:
    """Load the IVF training kernels from the disk cache, or compile them there now;
    seconds each took."""
    return _GATE.warm_up()


def _f32(x: npt.ArrayLike) -> F32:
    """``x`` as a writable C-contiguous float32 array (the kernels' one signature)."""
    arr = np.asarray(x, dtype=np.float32)
    if not arr.flags.c_contiguous or not arr.flags.writeable:
        arr = np.array(arr, dtype=np.float32, order="C", copy=True)
    return arr


def normalize(x: npt.ArrayLike) -> F32:
    """Every row scaled to unit L2 norm (a zero row stays zero), as cosine needs."""
    arr = np.array(x, dtype=np.float32, order="C", copy=True)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    np.divide(arr, norms, out=arr, where=norms > 0)
    return arr


@dataclass(frozen=True, slots=True)
class KMeansModel:
    """Trained centroids (float32 ``[k, d]``) and the final loss: the sum over the training
    rows of the squared L2 distance to their centroid (the negated dot product for dot)."""

    centroids: F32
    loss: float


#: k-means++ seeds inputs of at least this many values with the rows in parallel
WIDE_SEEDING = 1 << 22


def _kmeans_pp(data: F32, k: int, rng: np.random.Generator) -> F32:
    wide = data.size >= WIDE_SEEDING
    kern = _kernels("seed_distances")
    _kernels("seed_pick")  # (the same module: loaded, or compiled with its notice)
    n = data.shape[0]
    centroids = np.empty((k, data.shape[1]), np.float32)
    centroids[0] = data[rng.integers(n)]
    min_d = np.full(n, np.inf)
    total = kern.seed_distances(data, centroids[0].copy(), min_d, wide)
    for c in range(1, k):
        if total > 0:
            pick = int(kern.seed_pick(min_d, rng.random() * total))
        else:
            pick = int(rng.integers(n))
        centroids[c] = data[pick]
        total = kern.seed_distances(data, centroids[c].copy(), min_d, wide)
    return centroids


#: k-means bounds its assignment step (Hamerly) when centroids x dimension reach this
BOUNDED_WORK = 1 << 14


def _half_gaps(centroids: F32) -> npt.NDArray[np.float64]:
    """Half the distance from each centroid to its nearest other one (float64; a hair
    smaller than exact, so rounding never lets a row keep a centroid it should leave)."""
    c = centroids.astype(np.float64)
    k = len(c)
    if k < 2:
        return np.full(k, np.inf)
    norms = np.einsum("ij,ij->i", c, c)
    sq = norms[:, None] + norms[None, :] - 2.0 * (c @ c.T)
    np.fill_diagonal(sq, np.inf)
    gaps: npt.NDArray[np.float64] = 0.5 * np.sqrt(np.maximum(sq.min(axis=1), 0.0))
    return gaps * (1.0 - 1e-6)


def _lower_bounds(
    lower: npt.NDArray[np.float64], labels: npt.NDArray[np.int32], before: F32, after: F32
) -> None:
    """Lower every row's bound to the other centroids by the farthest any of them moved."""
    moved = np.sqrt(((after.astype(np.float64) - before) ** 2).sum(axis=1))
    if len(moved) < 2:
        return
    top = int(np.argmax(moved))
    second = float(np.partition(moved, -2)[-2])
    lower -= np.where(labels == top, second, float(moved[top]))


def train_kmeans(
    data: npt.ArrayLike,
    k: int,
    *,
    metric: Metric = "l2",
    max_iters: int = DEFAULT_MAX_ITERS,
    seed: int | None = None,
) -> KMeansModel:
    """k-means (k-means++ seeding, Lloyd iterations) of the rows of ``data`` into ``k``
    centroids; ``metric`` "dot" assigns by the largest dot product, every other by squared
    L2 (cosine: the caller normalises the rows). An emptied cluster takes the row farthest
    from its centroid."""
    x = _f32(data)
    n = x.shape[0]
    if not 0 < k <= n:
        raise ValueError(f"k-means of {n} rows into {k} centroids")
    rng = np.random.default_rng(seed)
    centroids = _kmeans_pp(x, k, rng)
    use_dot = metric == "dot"
    k_assign = _kernels("assign")
    k_acc = _kernels("accumulate")
    labels = np.empty(n, np.int32)
    dists = np.empty(n, np.float32)
    lower = np.zeros(n, np.float64)  # (L2) distance bound to the other centroids
    previous = np.inf
    loss = np.inf
    # the bound pays for itself when a full scan is long (k * d large: IVF's centroids);
    # a PQ sub-vector's 256 x d/m scan is quicker in assign's four-rows-at-a-time loop
    bounded = not use_dot and k * x.shape[1] >= BOUNDED_WORK
    for it in range(max(1, max_iters)):
        if not bounded:
            k_assign.assign(x, centroids, use_dot, labels, dists)
        else:
            k_assign.assign_bounded(
                x, centroids, _half_gaps(centroids), labels, dists, lower, it == 0
            )
        loss = float(dists.sum(dtype=np.float64))
        sums = np.zeros((k, x.shape[1]), np.float64)
        counts = np.zeros(k, np.int64)
        k_acc.accumulate(x, labels, sums, counts)
        full = counts > 0
        before = centroids.copy()
        centroids[full] = (sums[full] / counts[full, None]).astype(np.float32)
        for c in np.flatnonzero(~full):
            far = int(np.argmax(dists))
            centroids[c] = x[far]
            dists[far] = -np.inf
        if bounded:
            _lower_bounds(lower, labels, before, centroids)
        if abs(previous - loss) <= TOLERANCE * abs(loss):
            break
        previous = loss
    k_assign.assign(x, centroids, use_dot, labels, dists)
    return KMeansModel(centroids, float(dists.sum(dtype=np.float64)))


def assign_partitions(
    data: npt.ArrayLike, centroids: F32, metric: Metric = "l2"
) -> tuple[npt.NDArray[np.int32], F32]:
    """The nearest centroid of every row (int32) and its distance (float32)."""
    x = _f32(data)
    labels = np.empty(x.shape[0], np.int32)
    dists = np.empty(x.shape[0], np.float32)
    _kernels("assign").assign(x, _f32(centroids), metric == "dot", labels, dists)
    return labels, dists


def train_pq(
    data: npt.ArrayLike,
    num_sub_vectors: int,
    *,
    num_bits: int = 8,
    max_iters: int = DEFAULT_MAX_ITERS,
    seed: int | None = None,
) -> F32:
    """A PQ codebook, float32 ``[num_sub_vectors, 2**num_bits, d / num_sub_vectors]``: one
    k-means of each sub-vector of the rows of ``data`` (squared L2). Fewer rows than
    codewords: the missing codewords repeat rows."""
    x = _f32(data)
    n, d = x.shape
    if d % num_sub_vectors:
        raise ValueError(
            f"dimension ({d}) must be divisible by num_sub_vectors ({num_sub_vectors})"
        )
    ds = d // num_sub_vectors
    kk = 1 << num_bits
    rng = np.random.default_rng(seed)
    book = np.empty((num_sub_vectors, kk, ds), np.float32)
    for s in range(num_sub_vectors):
        sub = np.ascontiguousarray(x[:, s * ds : (s + 1) * ds])
        if n >= kk:
            model = train_kmeans(sub, kk, max_iters=max_iters, seed=int(rng.integers(1 << 31)))
            book[s] = model.centroids
        else:
            book[s] = sub[rng.integers(n, size=kk)]
    return book


def pq_encode(data: npt.ArrayLike, codebook: F32) -> npt.NDArray[np.uint8]:
    """The PQ codes (uint8 ``[n, num_sub_vectors]``) of the rows of ``data``."""
    x = _f32(data)
    codes = np.empty((x.shape[0], codebook.shape[0]), np.uint8)
    _kernels("pq_encode").pq_encode(x, _f32(codebook), codes)
    return codes


def sq_bounds(data: npt.ArrayLike) -> tuple[float, float]:
    """SQ bounds: the smallest and largest value of ``data`` (0, 0 when it is empty), in
    the values' own float type (pylance's bounds of a float64 column are float64 values)."""
    x = np.asarray(data)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float32)
    if x.size == 0:
        return 0.0, 0.0
    return float(x.min()), float(x.max())


def sq_encode(data: npt.ArrayLike, start: float, end: float) -> npt.NDArray[np.uint8]:
    """8-bit SQ codes (uint8 ``[n, d]``) of the rows of ``data`` between the bounds."""
    x = _f32(data)
    codes = np.empty(x.shape, np.uint8)
    _kernels("sq_encode").sq_encode(x, float(start), float(end), codes)
    return codes
