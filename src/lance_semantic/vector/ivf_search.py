"""Search an open IVF index as pylance 14 does (layer L3).

Steps, as measured against pylance 14.0.2 (and read in Lance's ``io/exec/knn.rs``,
``index/vector/ivf/v2.rs``, ``vector/{pq,sq,flat}/storage.rs``):

1. **Query.** For cosine the query is normalized (the index holds normalized vectors).
2. **Partitions.** The distance from the query to every centroid (squared L2 for l2 and
   cosine, ``1 - q·c`` for dot), partitions nearest first (ties by partition id).
3. **Probes.** ``nprobes`` given: exactly that many (at most all). Otherwise pylance 14's
   adaptive count as fitted to its measured behaviour (at least ``minimum_nprobes``, at most
   ``maximum_nprobes``), then more, nearest first, while fewer than ``k`` candidates were
   found: see :func:`probe_count` for the rule and where it differs from pylance's.
4. **Distances per partition** (each partition keeps its ``k · refine_factor`` best):

   - FLAT: exact, on the stored vectors (normalized for cosine): squared L2, ``1 - cos``,
     ``1 - q·x``;
   - PQ: asymmetric distance tables over the sub-vectors of the residual ``q - centroid`` for
     l2 and cosine (squared L2; for cosine that is the L2 of normalized vectors, so about twice
     ``1 - cos``, as pylance returns it), of ``q`` itself for dot (``Σ (1 - q_j·c_j) - (m-1)``);
   - SQ (8 bits, ``code = floor((x - start) / (end - start) · 255)``): l2 / cosine on the codes,
     the query quantized the same way (truncated, saturated to 0..255), scaled by
     ``((end - start) / 255)²``; dot as ``1 - q·x̂`` with ``x̂ = start + code·(end-start)/255``.

5. **Top candidates** by (distance, row address), as pylance's TopK sort.
6. **Refine** (``refine_factor`` given): the ``k · refine_factor`` best candidates are
   re-ranked by the exact distance on the raw vectors (``raw_vectors(row_addresses)``), and the
   ``k`` best kept.

Steps 4 and 5 run in numba kernels (:mod:`~lance_semantic.vector._search_kernels`: each
partition scored and its rows offered to one bounded top-k heap per query, the probed
partitions' candidates never materialised), loaded through a kernel gate like the JSON
codec's: the numpy code here is the reference, used for the first searches of a process
(about :data:`~lance_semantic.codecs._kernel_gate.REFERENCE_SECONDS_CACHED` of work when the
kernels are in the disk cache, more when they would be compiled), then the kernels, announced
on the ``lance_semantic`` logger before their first compile; :func:`warm_up` loads or compiles
them ahead (``lance-semantic warm-up``). Both give the same rows; distances may differ in the
last bits (the kernels sum in row order).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.typing as npt

from ..codecs._kernel_cache import KernelCache
from ..codecs._kernel_gate import Kernel, KernelGate
from .flat import distances
from .ivf_files import IvfIndex, Partition
from .metrics import Metric, canonical_metric

__all__ = [
    "IvfSearchResult",
    "centroid_distances",
    "exact_distances",
    "probe_count",
    "search_ivf",
    "search_ivf_segments",
    "warm_up",
    "KERNEL_CACHE",
]

F32 = npt.NDArray[np.float32]
RawVectors = Callable[[npt.NDArray[np.uint64]], npt.ArrayLike]
RowFilter = Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.bool_]]
DistanceRange = tuple[float | None, float | None]


@dataclass(frozen=True, slots=True)
class IvfSearchResult:
    """The nearest rows found: ``row_addresses`` (uint64) and ``distances`` (float32),
    nearest first, and the partitions searched (in the order searched)."""

    row_addresses: npt.NDArray[np.uint64]
    distances: F32
    partitions: tuple[int, ...]


#: the disk cache of the search kernels (keyed by the text of ``_search_kernels.py``)
KERNEL_CACHE = KernelCache("_search_kernels", (Path(__file__).with_name("_search_kernels.py"),))
#: what each kernel is, its compile time on two cores (measured) and the rows a second the
#: reference scores (measured, conservative: numpy's per-partition overhead dominates)
_KERNELS: Mapping[str, Kernel] = {
    "flat_scan": Kernel("IVF_FLAT scorer", 2, 5_000_000),
    "pq_scan": Kernel("IVF_PQ scorer", 2, 3_000_000),
    "sq_scan": Kernel("IVF_SQ scorer", 2, 5_000_000),
}
_KERNEL_OF = {"IVF_FLAT": "flat_scan", "IVF_PQ": "pq_scan", "IVF_SQ": "sq_scan"}
_METRIC_CODE: Mapping[str, int] = {"l2": 0, "cosine": 1, "dot": 2}


def _load() -> ModuleType:
    return importlib.import_module("lance_semantic.vector._search_kernels")


def _heap(cap: int) -> tuple[F32, F32, npt.NDArray[np.uint64]]:
    return np.empty(cap, np.float32), np.empty(cap, np.float32), np.empty(cap, np.uint64)


_NO_KEEP = np.zeros(0, dtype=np.bool_)


def _warm_flat(k: ModuleType) -> None:  # (the signatures real calls use)
    x, addr, tail = np.zeros((2, 2), np.float32), np.arange(2, dtype=np.uint64), _warm_tail()
    k.flat_scan(x, addr, _NO_KEEP, False, x[0], 0, *tail)


def _warm_pq(k: ModuleType) -> None:
    codes, addr, tail = np.zeros((2, 2), np.uint8), np.arange(2, dtype=np.uint64), _warm_tail()
    book, key = np.zeros((2, 1, 256), np.float32), np.zeros(2, np.float32)
    table, acc = np.empty((2, 256), np.float32), np.empty(2, np.float32)
    k.pq_scan(codes, addr, _NO_KEEP, False, book, key, False, table, acc, *tail)


def _warm_sq(k: ModuleType) -> None:
    codes, addr, tail = np.zeros((2, 2), np.uint8), np.arange(2, dtype=np.uint64), _warm_tail()
    k.sq_scan(codes, addr, _NO_KEEP, False, np.zeros(2, np.float32), False, 0.0, 1.0, 1.0, *tail)


def _warm_tail() -> tuple[object, ...]:
    return (0.0, 0.0, False, False, *_heap(1), 0)


_GATE = KernelGate(
    _load,
    {"flat_scan": _warm_flat, "pq_scan": _warm_pq, "sq_scan": _warm_sq},
    kernels=_KERNELS,
    cache=KERNEL_CACHE,
    owner="vector search",
)


def warm_up() -> dict[str, float]:
    """Load the IVF search kernels from the disk cache, or compile them there now; seconds
    each took."""
    return _GATE.warm_up()


def _normalized(v: F32) -> F32:
    norm = np.float32(np.sqrt(np.dot(v, v)))
    return v if norm == 0 else (v / norm).astype(np.float32)


def centroid_distances(index: IvfIndex, q: F32) -> F32:
    """Distance of the (already normalized for cosine) query to each centroid."""
    c = index.centroids
    if index.metric == "dot":
        return (np.float32(1.0) - c @ q).astype(np.float32)
    diff = c - q
    return np.einsum("ij,ij->i", diff, diff).astype(np.float32)


def exact_distances(vectors: F32, q: F32, metric: Metric) -> F32:
    """pylance's exact distance of each row of ``vectors`` to ``q`` (not normalized): the
    distances of exact search (:func:`~lance_semantic.vector.flat.distances`) for one query."""
    if metric == "hamming":
        raise ValueError(f"metric: {metric!r} is not a float-vector metric")
    out: F32 = distances(vectors, np.asarray(q).reshape(1, -1), metric)[0]
    return out


def _partition_distances(index: IvfIndex, pid: int, part: Partition, q: F32) -> F32:
    x = part.payload
    if index.kind == "IVF_FLAT":
        return exact_distances(x, q, index.metric)
    if index.kind == "IVF_PQ":
        assert index.codebook is not None
        m, _, sub = index.codebook.shape
        key = q - index.centroids[pid] if index.metric != "dot" else q
        key = key.reshape(m, sub)
        if index.metric == "dot":
            table = np.float32(1.0) - np.einsum("mcs,ms->mc", index.codebook, key)
        else:
            diff = index.codebook - key[:, None, :]
            table = np.einsum("mcs,mcs->mc", diff, diff)
        table = table.astype(np.float32)
        # summed sub-vector by sub-vector, in order (as pylance sums them)
        dist = np.zeros(x.shape[1], dtype=np.float32)
        for j in range(m):
            dist += table[j].take(x[j])
        if index.metric == "dot":
            dist = dist - np.float32(m - 1)
        return dist.astype(np.float32)
    assert index.sq_bounds is not None
    start, end = index.sq_bounds
    span = end - start
    if index.metric == "dot":
        decoded = (np.float32(start) + x.astype(np.float32) * np.float32(span / 255.0)).astype(
            np.float32
        )
        return (np.float32(1.0) - decoded @ q).astype(np.float32)
    diff = x.astype(np.float32) - _sq_query(q, start, span)
    codes = np.einsum("ij,ij->i", diff, diff).astype(np.float32)
    scale = np.float32(span) ** 2 / np.float32(255.0) ** 2
    return (codes * scale).astype(np.float32)


def _sq_query(q: F32, start: float, span: float) -> F32:
    """The query quantized as the SQ codes are (truncated, saturated to 0..255)."""
    if span == 0:
        return np.zeros(q.shape, dtype=np.float32)
    scaled = (q.astype(np.float64) - start) * 255.0 / span
    return np.clip(np.trunc(np.nan_to_num(scaled)), 0, 255).astype(np.float32)


def _top(addresses: npt.NDArray[np.uint64], distances: F32, n: int) -> npt.NDArray[np.intp]:
    """Positions of the ``n`` smallest (distance, address) pairs, in order (NaN last)."""
    d = distances
    if np.isnan(d).any():
        d = np.where(np.isnan(d), np.float32(np.inf), d)
    if 0 < n < len(d) // 4:
        cut = d[np.argpartition(d, n - 1)[:n]].max()
        chosen = np.flatnonzero(d <= cut)
    else:
        chosen = np.arange(len(d))
    order = np.lexsort((addresses[chosen], d[chosen]))
    return chosen[order[:n]]


#: pylance 14's default probing, as measured (k -> (partitions searched at least, centroid
#: distance ratio to the nearest up to which partitions are searched)): see probe_count
_ADAPTIVE_STEPS: tuple[tuple[int, int, float], ...] = ((1, 5, 1.21), (10, 6, 1.265))
_ADAPTIVE_REST: tuple[int, float] = (11, 1.33)


def _adaptive(k: int, metric: Metric, sorted_distances: F32) -> int:
    """How many partitions pylance 14 searches first for a query of ``k`` with no
    ``nprobes``, as fitted to its measured behaviour (see :func:`probe_count`)."""
    count = len(sorted_distances)
    if metric == "dot" or count == 0:
        return count
    floor, factor = _ADAPTIVE_REST
    for top_k, steps_floor, steps_factor in _ADAPTIVE_STEPS:
        if k <= top_k:
            floor, factor = steps_floor, steps_factor
            break
    nearest = float(sorted_distances[0])
    within = int(np.searchsorted(sorted_distances, nearest * factor, side="right"))
    return min(count, max(floor, within))


def probe_count(
    num_partitions: int,
    *,
    nprobes: int | None,
    minimum_nprobes: int | None,
    maximum_nprobes: int | None,
    adaptive: int | None = None,
) -> tuple[int, int]:
    """(partitions searched first, most partitions searched) for a query.

    ``nprobes`` sets both, as pylance's ``nprobes`` (at most all partitions). Otherwise at
    most ``maximum_nprobes`` (default all) partitions are searched, and first
    ``max(minimum_nprobes, adaptive)``: then more, nearest first, one at a time, only while
    fewer than ``k`` candidates were found (pylance searches several at a time there).

    ``adaptive`` is pylance 14's default widening, which its public source (November 2025:
    ``early_pruning`` in ``io/exec/knn.rs``, factors 0.6 / 7 / 81 of the nearest centroid
    distance, at least 1 partition) does not describe: pylance 14.0.2 searched far more. Its
    rule was fitted here from ``analyze_plan``'s ``partitions_searched`` on random tables
    (8k-20k rows × 16-32 dims, 16-64 partitions): for **dot**, every partition; for **l2**,
    the partitions whose squared centroid distance is at most 1.21 (k = 1), 1.265
    (k ≤ 10) or 1.33 (k > 10) times the nearest one's, and at least 5, 6 or 11 of them. That
    gave pylance's count for every one of 144 queries at 16 dims and for 36 of 40 at 32 dims
    (the rest within a few partitions; the results were the same for 39 of those 40).

    For **cosine** the same rule is used, but pylance 14 differs there (at 8k × 16 dims, 16
    and 48 partitions: typically 3 partitions where this searches 5 for k = 1, 8 where this
    searches 6 for k = 10, 7-9 where this searches 11 for k = 50; the same results for 8 of
    20 queries): its default results on cosine indices can differ; with an explicit
    ``nprobes`` they agree."""
    if nprobes is not None:
        n = min(nprobes, num_partitions)
        return n, n
    top = num_partitions if maximum_nprobes is None else min(maximum_nprobes, num_partitions)
    floor = max(minimum_nprobes or 1, adaptive or 0)
    return min(floor, top), top


def _checked_positive(value: int | None, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected a positive integer, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name}: must be a positive integer, got {value}")


def search_ivf(
    index: IvfIndex,
    q: npt.ArrayLike,
    k: int,
    *,
    metric: str | None = None,
    nprobes: int | None = None,
    minimum_nprobes: int | None = None,
    maximum_nprobes: int | None = None,
    refine_factor: int | None = None,
    raw_vectors: RawVectors | None = None,
    row_filter: RowFilter | None = None,
) -> IvfSearchResult:
    """The ``k`` nearest rows to ``q`` through ``index``, as pylance's ``nearest`` with the
    same ``nprobes`` and ``refine_factor`` finds them.

    ``metric``, when given, must be the index's (``ValueError`` otherwise: the caller searches
    flat for another metric). ``refine_factor`` re-ranks the ``k * refine_factor`` best
    candidates by exact distance on the vectors ``raw_vectors(row_addresses)`` returns
    (``[n, d]``, in the order asked); required with ``refine_factor``. ``row_filter`` (row
    addresses -> bool mask of the rows to keep: deleted rows, a prefilter) is applied in each
    partition before its top candidates are taken, as pylance's prefilter."""
    return search_ivf_segments(
        [index],
        q,
        k,
        metric=metric,
        nprobes=nprobes,
        minimum_nprobes=minimum_nprobes,
        maximum_nprobes=maximum_nprobes,
        refine_factor=refine_factor,
        raw_vectors=raw_vectors,
        row_filter=row_filter,
    )


def _query(segments: Sequence[IvfIndex], q: npt.ArrayLike, metric: str | None) -> F32:
    if not segments:
        raise ValueError("segments: no index segment to search")
    first = segments[0]
    for index in segments:
        if index.metric != first.metric or index.dimension != first.dimension:
            raise ValueError(
                f"segments: {index.name!r} ({index.metric}, {index.dimension} dims) differs "
                f"from {first.name!r} ({first.metric}, {first.dimension} dims)"
            )
    if metric is not None and canonical_metric(metric) != first.metric:
        raise ValueError(
            f"metric: the index {first.name!r} was built for {first.metric!r}, not {metric!r}"
        )
    query = np.asarray(q)
    if query.ndim != 1 or query.shape[0] != first.dimension:
        raise ValueError(
            f"q: expected a vector of {first.dimension} values, got shape {query.shape}"
        )
    if not np.issubdtype(query.dtype, np.number) or np.issubdtype(query.dtype, np.complexfloating):
        raise TypeError(f"q: expected numbers, got {query.dtype}")
    return query.astype(np.float32)


def _probe_order(
    index: IvfIndex,
    key: F32,
    k: int,
    probes: tuple[int | None, int | None, int | None],
) -> tuple[npt.NDArray[np.intp], int, int]:
    """The partitions nearest first, how many are searched first and at most."""
    nprobes, minimum_nprobes, maximum_nprobes = probes
    to_centroids = centroid_distances(index, key)
    order = np.argsort(to_centroids, kind="stable")
    adaptive = None if nprobes is not None else _adaptive(k, index.metric, to_centroids[order])
    first, top = probe_count(
        index.num_partitions,
        nprobes=nprobes,
        minimum_nprobes=minimum_nprobes,
        maximum_nprobes=maximum_nprobes,
        adaptive=adaptive,
    )
    return order, first, top


def _candidates(
    index: IvfIndex,
    key: F32,
    k: int,
    wanted: int,
    probes: tuple[int | None, int | None, int | None],
    row_filter: RowFilter | None,
    distance_range: DistanceRange | None = None,
) -> tuple[npt.NDArray[np.uint64], F32, tuple[int, ...]]:
    """The ``wanted`` best candidates of one segment, and the partitions searched: the
    partitions searched first are read together (``IvfIndex.partitions``), then scored by
    the kernels (or the reference, see the module's docstring)."""
    order, first, top = _probe_order(index, key, k, probes)
    rows = int(index.lengths[order[:first]].sum())
    kernels = _GATE.kernels_for(_KERNEL_OF[index.kind], max(rows, 1))
    parts = index.partitions([int(pid) for pid in order[:first]])
    if kernels is not None:
        return _kernel_candidates(
            kernels, index, key, k, wanted, (order, first, top), parts, row_filter, distance_range
        )
    found_addresses: list[npt.NDArray[np.uint64]] = [np.empty(0, np.uint64)]
    found_distances: list[F32] = [np.empty(0, np.float32)]
    searched: list[int] = []
    found = 0
    for rank in range(top):
        if rank >= first and found >= k:
            break
        pid = int(order[rank])
        searched.append(pid)
        part = parts[rank] if rank < first else index.partition(pid)
        addresses, distances = part.row_addresses, _partition_distances(index, pid, part, key)
        if row_filter is not None and len(addresses):
            keep = np.asarray(row_filter(addresses), dtype=bool)
            addresses, distances = addresses[keep], distances[keep]
        if distance_range is not None and len(addresses):
            keep = _in_range(distances, distance_range)
            addresses, distances = addresses[keep], distances[keep]
        best = _top(addresses, distances, wanted)
        found_addresses.append(addresses[best])
        found_distances.append(distances[best])
        found += len(best)
    addresses = np.concatenate(found_addresses)
    distances = np.concatenate(found_distances)
    best = _top(addresses, distances, wanted)
    return addresses[best], distances[best], tuple(searched)


Scan = Callable[[int, Partition, npt.NDArray[np.bool_], bool, int], tuple[int, int]]


def _scanner(
    kernels: ModuleType,
    index: IvfIndex,
    key: F32,
    heap: tuple[F32, F32, npt.NDArray[np.uint64]],
    distance_range: DistanceRange | None,
) -> Scan:
    """``scan(pid, partition, keep, use_keep, size) -> (size, kept)``: the partition's rows
    offered to ``heap`` by the index kind's kernel."""
    lo, hi = distance_range if distance_range is not None else (None, None)
    tail = (
        0.0 if lo is None else float(lo),
        0.0 if hi is None else float(hi),
        lo is not None,
        hi is not None,
        *heap,
    )
    key = np.ascontiguousarray(key, dtype=np.float32)
    if index.kind == "IVF_FLAT":
        code = _METRIC_CODE[index.metric]

        def flat(
            pid: int, part: Partition, keep: npt.NDArray[np.bool_], use: bool, size: int
        ) -> tuple[int, int]:
            x, a = part.payload, part.row_addresses
            return kernels.flat_scan(x, a, keep, use, key, code, *tail, size)

        return flat
    if index.kind == "IVF_PQ":
        assert index.codebook is not None
        book = np.ascontiguousarray(index.codebook.transpose(0, 2, 1))  # [m, d/m, 256]
        dot = index.metric == "dot"
        table = np.empty((book.shape[0], book.shape[2]), np.float32)
        acc = np.empty(int(index.lengths.max(initial=0)), np.float32)

        def pq(
            pid: int, part: Partition, keep: npt.NDArray[np.bool_], use: bool, size: int
        ) -> tuple[int, int]:
            # the residual to the partition's centroid for l2 / cosine, the query for dot
            sub = key if dot else key - index.centroids[pid]
            return kernels.pq_scan(
                part.payload, part.row_addresses, keep, use, book, sub, dot, table, acc, *tail, size
            )

        return pq
    assert index.sq_bounds is not None
    start, end = index.sq_bounds
    span, dot = end - start, index.metric == "dot"
    scale = float(np.float32(span) ** 2 / np.float32(255.0) ** 2)
    qv = key if dot else _sq_query(key, start, span)

    def sq(
        pid: int, part: Partition, keep: npt.NDArray[np.bool_], use: bool, size: int
    ) -> tuple[int, int]:
        x, a = part.payload, part.row_addresses
        return kernels.sq_scan(
            x, a, keep, use, qv, dot, float(start), span / 255.0, scale, *tail, size
        )

    return sq


def _kernel_candidates(
    kernels: ModuleType,
    index: IvfIndex,
    key: F32,
    k: int,
    wanted: int,
    probing: tuple[npt.NDArray[np.intp], int, int],
    parts: Sequence[Partition],
    row_filter: RowFilter | None,
    distance_range: DistanceRange | None,
) -> tuple[npt.NDArray[np.uint64], F32, tuple[int, ...]]:
    """:func:`_candidates` through the kernels: one heap of the ``wanted`` best (distance,
    row address) pairs over the partitions probed, the same rows as the reference's."""
    order, first, top = probing
    heap = _heap(wanted)
    scan = _scanner(kernels, index, key, heap, distance_range)
    # the row filter runs once over the partitions searched first, each then takes its slice
    keeps: list[npt.NDArray[np.bool_]] = []
    if row_filter is not None and parts:
        ends = np.cumsum([len(p.row_addresses) for p in parts])
        kept_all = row_filter(np.concatenate([p.row_addresses for p in parts]))
        keeps = np.split(np.ascontiguousarray(kept_all, dtype=np.bool_), ends[:-1])
    searched: list[int] = []
    found = size = 0
    for rank in range(top):
        if rank >= first and found >= k:
            break
        pid = int(order[rank])
        searched.append(pid)
        part = parts[rank] if rank < first else index.partition(pid)
        if not len(part.row_addresses):
            continue
        keep, use = _NO_KEEP, False
        if row_filter is not None:
            mask = keeps[rank] if rank < first else row_filter(part.row_addresses)
            keep, use = np.ascontiguousarray(mask, dtype=np.bool_), True
        size, kept = scan(pid, part, keep, use, size)
        found += min(kept, wanted)
    keys, dists, addrs = heap[0][:size], heap[1][:size], heap[2][:size]
    ranked = np.lexsort((addrs, keys))
    return addrs[ranked], dists[ranked], tuple(searched)


def _in_range(distances: F32, distance_range: DistanceRange) -> npt.NDArray[np.bool_]:
    """Distances inside ``distance_range`` (lower inclusive, upper exclusive)."""
    keep = np.ones(len(distances), dtype=bool)
    lo, hi = distance_range
    if lo is not None:
        keep &= distances >= lo
    if hi is not None:
        keep &= distances < hi
    return keep


def search_ivf_segments(
    segments: Sequence[IvfIndex],
    q: npt.ArrayLike,
    k: int,
    *,
    metric: str | None = None,
    nprobes: int | None = None,
    minimum_nprobes: int | None = None,
    maximum_nprobes: int | None = None,
    refine_factor: int | None = None,
    raw_vectors: RawVectors | None = None,
    row_filter: RowFilter | None = None,
    distance_range: DistanceRange | None = None,
) -> IvfSearchResult:
    """:func:`search_ivf` over the segments of one index (the entries of one name: the
    index and its deltas, as ``optimize_indices(num_indices_to_merge=0)`` leaves them), as
    pylance searches them: each segment probes its own nearest partitions, the candidates of
    all are merged by (distance, row address), then refined. ``partitions`` of the result
    lists each segment's partitions in turn.

    ``distance_range`` (lower inclusive, upper exclusive; ``None`` for no bound) keeps, in
    each partition, only the rows whose index distance is inside it before its best are
    taken, as pylance's ``nearest`` ``distance_range`` through an index (measured: rows
    outside it do not take a place among the k); refined distances are checked again."""
    for value, name in ((k, "k"), (nprobes, "nprobes"), (minimum_nprobes, "minimum_nprobes")):
        _checked_positive(value, name)
    _checked_positive(maximum_nprobes, "maximum_nprobes")
    _checked_positive(refine_factor, "refine_factor")
    query = _query(segments, q, metric)
    if refine_factor is not None and raw_vectors is None:
        raise ValueError("raw_vectors: needed to refine (refine_factor is set)")
    index_metric = segments[0].metric
    key = _normalized(query) if index_metric == "cosine" else query
    wanted = k * (refine_factor or 1)
    probes = (nprobes, minimum_nprobes, maximum_nprobes)
    found = [
        _candidates(index, key, k, wanted, probes, row_filter, distance_range) for index in segments
    ]
    addresses = np.concatenate([f[0] for f in found])
    distances = np.concatenate([f[1] for f in found])
    searched = tuple(pid for f in found for pid in f[2])
    best = _top(addresses, distances, wanted)
    addresses, distances = addresses[best], distances[best]
    if refine_factor is not None and raw_vectors is not None and len(addresses):
        raw = np.asarray(raw_vectors(addresses), dtype=np.float32)
        if raw.shape != (len(addresses), segments[0].dimension):
            raise ValueError(
                f"raw_vectors: returned shape {raw.shape} for {len(addresses)} rows "
                f"of {segments[0].dimension} values"
            )
        distances = exact_distances(raw, query, index_metric)
        if distance_range is not None:
            keep = _in_range(distances, distance_range)
            addresses, distances = addresses[keep], distances[keep]
        best = _top(addresses, distances, k)
        addresses, distances = addresses[best], distances[best]
    return IvfSearchResult(addresses, distances, searched)
