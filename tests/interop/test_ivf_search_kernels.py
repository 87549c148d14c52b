"""The IVF search's numba kernels (vector/_search_kernels.py) against its numpy reference
and pylance (issue 30 item 7): the same rows as the reference, in the same order, for every
index kind and metric, with refine, a prefilter, a distance range and the default probes;
the partitions a search reads first are read at once. Small tables (6k rows × 16 dims,
3 fragments, 8 partitions, pylance's indices) keep this quick.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lance
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.codecs._kernel_gate import KernelGate
from lance_semantic.errors import CorruptTableError
from lance_semantic.manifest import index_entries
from lance_semantic.vector import (
    IvfIndex,
    IvfSearchResult,
    PartitionCache,
    ivf_search,
    open_ivf_index,
    search_ivf,
    warm_up_search_kernels,
)

pytestmark = pytest.mark.interop

ROWS, DIM, PER_FILE, PARTITIONS = 6000, 16, 2000, 8
KINDS = ["IVF_FLAT", "IVF_PQ", "IVF_SQ"]
METRICS = ["l2", "cosine", "dot"]
_RNG = np.random.default_rng(31)
VECTORS = _RNG.standard_normal((ROWS, DIM)).astype(np.float32)
QUERIES = np.vstack([_RNG.standard_normal((3, DIM)), np.zeros((1, DIM))]).astype(np.float32)


def _raw(addresses: npt.NDArray[np.uint64]) -> npt.NDArray[np.float32]:
    a = addresses.astype(np.int64)
    return VECTORS[(a >> 32) * PER_FILE + (a & 0xFFFFFFFF)]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """(kind, metric) -> uri of a table with that index, built by pylance."""
    root = tmp_path_factory.mktemp("ivf-kernels")
    data = pa.table(
        {
            "id": pa.array(np.arange(ROWS), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(VECTORS.ravel()), DIM),
        }
    )
    out = {}
    for kind in KINDS:
        for metric in METRICS:
            uri = str(root / f"{kind}_{metric}.lance")
            ds = lance.write_dataset(data, uri, max_rows_per_file=PER_FILE)
            extra = {"num_sub_vectors": 4} if kind == "IVF_PQ" else {}
            ds.create_index("vec", kind, metric=metric, num_partitions=PARTITIONS, **extra)
            out[kind, metric] = uri
    return out


def _gate(reference: bool) -> KernelGate:
    """A fresh gate of the search kernels: the reference on every call, or the kernels."""
    fresh = KernelGate(
        ivf_search._load,
        {
            "flat_scan": ivf_search._warm_flat,
            "pq_scan": ivf_search._warm_pq,
            "sq_scan": ivf_search._warm_sq,
        },
        kernels=ivf_search._KERNELS,
        cache=ivf_search.KERNEL_CACHE,
        owner="vector search",
    )
    fresh.reference_bytes = 1 << 60 if reference else 0
    return fresh


Search = Callable[[], IvfSearchResult]
Both = Callable[[Search], tuple[IvfSearchResult, IvfSearchResult]]


@pytest.fixture
def both(monkeypatch: pytest.MonkeyPatch) -> Iterator[Both]:
    """``both(fn)``: ``fn()`` through the reference, then through the kernels."""

    def run(fn: Search) -> tuple[IvfSearchResult, IvfSearchResult]:
        monkeypatch.setattr(ivf_search, "_GATE", _gate(True))
        reference = fn()
        monkeypatch.setattr(ivf_search, "_GATE", _gate(False))
        kernels = fn()
        return reference, kernels

    yield run


def _opened(uri: str, cache: PartitionCache | None = None) -> IvfIndex:
    ds = ls.dataset(uri)
    (entry,) = index_entries(ds._manifest.index_section)
    index = open_ivf_index(ds._store, entry, cache=PartitionCache() if cache is None else cache)
    assert index is not None
    return index


def _same(reference: IvfSearchResult, kernels: IvfSearchResult) -> None:
    assert kernels.row_addresses.tolist() == reference.row_addresses.tolist()
    assert kernels.partitions == reference.partitions
    np.testing.assert_allclose(kernels.distances, reference.distances, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("kind", KINDS)
def test_kernels_find_the_references_rows_and_pylances(
    tables: dict[tuple[str, str], str], kind: str, metric: str, both: Both
) -> None:
    uri = tables[kind, metric]
    index = _opened(uri)
    for qi, q in enumerate(QUERIES):
        for nprobes, refine in [(3, None), (2, 5), (PARTITIONS, None)]:
            reference, kernels = both(
                lambda q=q, n=nprobes, r=refine: search_ivf(
                    index, q, 10, nprobes=n, refine_factor=r, raw_vectors=_raw
                )
            )
            _same(reference, kernels)
            if qi == len(QUERIES) - 1:
                continue  # the zero query: NaN distances under cosine, ties elsewhere
            theirs = lance.dataset(uri).to_table(
                nearest={"column": "vec", "q": q, "k": 10, "nprobes": nprobes}
                | ({"refine_factor": refine} if refine else {}),
                with_row_address=True,
                columns=["id"],
            )
            got = theirs.column("_rowaddr").to_numpy()
            # the same rows as pylance's, but for float ties at the k-th distance
            assert len(set(got.tolist()) & set(kernels.row_addresses.tolist())) >= 9


@pytest.mark.parametrize("kind", KINDS)
def test_filters_ranges_and_default_probes(
    tables: dict[tuple[str, str], str], kind: str, both: Both
) -> None:
    index = _opened(tables[kind, "l2"])

    def even(addresses: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        a = addresses.astype(np.int64)
        return np.asarray(((a >> 32) * PER_FILE + (a & 0xFFFFFFFF)) % 2 == 0)

    q = QUERIES[0]
    full = search_ivf(index, q, 40, nprobes=PARTITIONS)
    d = full.distances.astype(np.float64)  # bounds between rows: no float ties at them
    lo, hi = float(d[5] + d[6]) / 2, float(d[30] + d[31]) / 2
    cases: list[dict[str, Any]] = [
        dict(nprobes=3, row_filter=even),
        dict(nprobes=3, distance_range=(lo, hi)),
        dict(nprobes=3, distance_range=(None, hi), row_filter=even),
        dict(minimum_nprobes=2, maximum_nprobes=6),
        dict(),
    ]
    for case in cases:
        reference, kernels = both(
            lambda case=case: ivf_search.search_ivf_segments([index], q, 20, **case)
        )
        _same(reference, kernels)
    # a range no row is inside: the adaptive search widens to every partition, finds none
    reference, kernels = both(
        lambda: ivf_search.search_ivf_segments([index], q, 5, distance_range=(1e9, None))
    )
    _same(reference, kernels)
    assert len(kernels.row_addresses) == 0 and len(kernels.partitions) == PARTITIONS


def test_the_first_partitions_are_read_at_once(tables: dict[tuple[str, str], str]) -> None:
    """FLAT partitions here (750 rows x 64 bytes) are read one read_range each on the read
    threads, PQ / SQ ones (4 / 16 bytes a row) by one take_rows: the same partitions as
    read one by one, each in its own contiguous arrays, counted once in the cache."""
    for kind in KINDS:
        uri = tables[kind, "dot"]
        together, alone = PartitionCache(), PartitionCache()
        a, b = _opened(uri, together), _opened(uri, alone)
        pids = [5, 1, 6, 1]
        read = a.partitions(pids)
        assert (together.reads, together.hits, len(together)) == (3, 0, 3)
        for pid, part in zip(pids, read, strict=True):
            one = b.partition(pid)
            assert part.row_addresses.tolist() == one.row_addresses.tolist()
            assert part.payload.dtype == one.payload.dtype
            np.testing.assert_array_equal(part.payload, one.payload)
            assert part.payload.flags.c_contiguous
        again = a.partitions([6, 2])  # one cached, one read alone
        assert (together.reads, together.hits) == (4, 1)
        np.testing.assert_array_equal(again[1].payload, b.partition(2).payload)


def test_warm_up_loads_every_search_kernel() -> None:
    took = warm_up_search_kernels()
    assert sorted(took) == ["flat_scan", "pq_scan", "sq_scan"]
    assert all(t >= 0 for t in took.values())


def test_a_partition_file_cut_short_after_opening_names_it(
    tables: dict[tuple[str, str], str], tmp_path: Path
) -> None:
    for kind in KINDS:
        uri = str(tmp_path / f"{kind}.lance")
        shutil.copytree(tables[kind, "l2"], uri)
        index = _opened(uri)
        # cut short, not deleted: the handle keeps the reader that opened the file (a local
        # file deleted under an open reader stays readable)
        aux = Path(uri) / "_indices" / index.uuid / "auxiliary.idx"
        with aux.open("r+b") as f:
            f.truncate(64)
        with pytest.raises(CorruptTableError) as caught:
            index.partitions([0, 3, 5])
        assert caught.value.path.endswith("auxiliary.idx")
