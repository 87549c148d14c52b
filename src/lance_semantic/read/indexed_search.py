"""A vector search through the table's IVF index (layer L4): which index a search uses and
the candidates of the fragments it covers, as pylance 14 searches them.

- **Which index.** With ``use_index`` (pylance's default) the search uses the first index
  name in the manifest over the vector column alone (measured: with two names on a column
  pylance 14 plans the first, and searches flat when that one's metric is not the query's,
  not through the second); the index is every entry (segment) of that name (the index and
  its deltas), and is used when all of them open as an IVF index known here
  (``vector.open_ivf_index``). Without ``metric`` the search takes the index's metric, flat
  fragments too (pylance's); a ``metric`` other than the index's searches flat (pylance
  warns "Requested metric ... is incompatible with index metric, falling back to
  brute-force search"). No usable index: every fragment is searched flat.
- **Which fragments.** The union of the segments' ``fragment_bitmap`` among the scan's
  fragments (a fragment compacted away is no longer in the version); the others are searched
  flat and merged by the caller's top-k (``vector_search.search_candidates``).
- **Which rows.** Deleted rows are never candidates: pylance drops them inside the index
  search (measured: after deleting some of the top 10 it still returns 10 rows), and so does
  the row filter here. ``prefilter=True``: the filter's matching rows of the indexed
  fragments are found first (a scan of the filter's columns alone) and only those are
  candidates in each probed partition: the k nearest that pass it among the partitions
  probed, as pylance. A postfilter runs after the top k (the caller's).
- **Probes and refine** are ``vector.search_ivf_segments``'s (pylance's ``nprobes`` /
  ``minimum_nprobes`` / ``maximum_nprobes`` and ``refine_factor``); refining reads the
  candidates' raw vectors by row address.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..manifest import Fragment, IndexEntry, index_entries
from ..schema import Field, TableSchema
from ..storage import ObjectStore
from ..vector import (
    INDEX_DIR,
    Candidates,
    IvfIndex,
    Metric,
    distances,
    open_ivf_index,
    search_ivf_segments,
)
from .deletions import deleted_rows
from .fragment_reader import ROW_ADDRESS, FragmentReader
from .readers import Readers
from .readers import readers as kept_readers
from .row_streams import filtered_batches
from .scan_plan import SearchPlan

__all__ = ["VectorIndex", "column_index", "index_candidates"]

_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


@dataclass(frozen=True, eq=False)
class VectorIndex:
    """The index a search uses: its open ``segments`` (one name's entries) and the scan's
    ``fragments`` they cover."""

    segments: tuple[IvfIndex, ...]
    fragments: tuple[Fragment, ...]

    @property
    def fragment_ids(self) -> frozenset[int]:
        return frozenset(f.id for f in self.fragments)

    @property
    def metric(self) -> Metric:
        return self.segments[0].metric


def column_index(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    search: SearchPlan,
    index_section: bytes | None,
) -> VectorIndex | None:
    """The index the search of ``search.query`` uses over ``fragments`` (those scanned), or
    ``None`` (``use_index=False``, no index on the column, none known here or built for
    another metric): see the module's docstring."""
    query = search.query
    if not query.use_index or not index_section or query.element == "uint8":
        return None
    field_id = table.field(query.column).id
    entries = [e for e in _entries(index_section) if e.fields == (field_id,)]
    if not entries:
        return None
    name = entries[0].name  # the first index on the column, in manifest order (as pylance)
    opened = [_opened(store, e) for e in entries if e.name == name]
    segments = [s for s in opened if s is not None]
    if len(segments) != len(opened):
        return None
    metric = segments[0].metric
    if any(s.metric != metric for s in segments):
        return None
    if query.metric_given and query.metric != metric:
        return None  # pylance: "incompatible with index metric, falling back to brute-force"
    covered = frozenset().union(*(s.fragment_ids for s in segments))
    return VectorIndex(tuple(segments), tuple(f for f in fragments if f.id in covered))


@lru_cache(maxsize=16)
def _entries(index_section: bytes) -> tuple[IndexEntry, ...]:
    """The entries of a version's index section, parsed once for the searches of a version
    (a section's bytes never change; its entries are frozen)."""
    return tuple(index_entries(index_section))


#: indices opened lately, by (their folder's URI, storage options, manifest entry): their
#: files never change, so a search reopens none (their partitions are in the partition cache)
_OPENED: OrderedDict[Hashable, IvfIndex | None] = OrderedDict()
_OPENED_MAX = 16
_OPENED_LOCK = threading.Lock()


def _opened(store: ObjectStore, entry: IndexEntry) -> IvfIndex | None:
    """``open_ivf_index(store, entry)``, remembered for the last few indices opened."""
    options = tuple(sorted((store.storage_options or {}).items()))
    key = (store.uri(f"{INDEX_DIR}/{entry.uuid}"), options, entry)
    with _OPENED_LOCK:
        if key in _OPENED:
            _OPENED.move_to_end(key)
            return _OPENED[key]
    index = open_ivf_index(store, entry)
    with _OPENED_LOCK:
        _OPENED[key] = index
        while len(_OPENED) > _OPENED_MAX:
            _OPENED.popitem(last=False)
    return index


def _addresses_of(fragment_id: int, offsets: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    return (np.uint64(fragment_id) << _SHIFT) | np.asarray(offsets, dtype=np.uint64)


def _deleted(store: ObjectStore, fragments: Sequence[Fragment]) -> npt.NDArray[np.uint64]:
    """The sorted addresses of the deleted rows of ``fragments``."""
    parts = [np.empty(0, np.uint64)]
    for f in fragments:
        rows = deleted_rows(store, f)
        if rows is not None and len(rows):
            parts.append(_addresses_of(f.id, rows))
    return np.sort(np.concatenate(parts))


def _passing(
    store: ObjectStore, table: TableSchema, fragments: Sequence[Fragment], search: SearchPlan
) -> npt.NDArray[np.uint64]:
    """The sorted addresses of the live rows of ``fragments`` that pass the prefilter,
    found by a scan of the filter's columns alone."""
    plan = search.candidates
    predicate = plan.predicate
    assert predicate is not None
    wanted = set(predicate.columns)
    fields = [f for f in plan.top_fields if f.name in wanted]
    schema = pa.schema([plan.read_schema.field(f.name) for f in fields])

    def shape(chosen: Sequence[Field], read: pa.Schema, addresses: bool) -> Readers:
        return kept_readers(store, table, chosen, read, addresses)

    found = filtered_batches(
        shape,
        fragments,
        fields,
        schema,
        predicate,
        65_536,
        len(fragments),
        row_addresses=True,
    )
    parts = [np.empty(0, np.uint64)]
    parts.extend(b.column(ROW_ADDRESS).to_numpy().astype(np.uint64) for b in found)
    return np.sort(np.concatenate(parts))


def _vectors_at(
    store: ObjectStore,
    table: TableSchema,
    by_id: dict[int, Fragment],
    search: SearchPlan,
    addresses: npt.NDArray[np.uint64],
    dtype: npt.DTypeLike = np.float32,
) -> npt.NDArray[Any]:
    """The raw vectors of the rows at ``addresses`` (in that order), as ``dtype``."""
    query, plan = search.query, search.candidates
    fields = [f for f in plan.top_fields if f.name == query.column]
    schema = pa.schema([plan.layout_schema.field(query.column)])
    out = np.empty((len(addresses), query.dim), dtype=dtype)
    frag = (addresses >> _SHIFT).astype(np.int64)
    for fid in np.unique(frag):
        where = np.flatnonzero(frag == fid)
        offsets = (addresses[where] & _LOW).astype(np.int64)
        uniq, inverse = np.unique(offsets, return_inverse=True)
        reader = FragmentReader(store, table, by_id[int(fid)], fields, schema)
        taken = reader.take(uniq)
        col = (
            taken[0].column(0)
            if len(taken) == 1
            else pa.concat_arrays([b.column(0) for b in taken])
        )
        if isinstance(col, pa.ExtensionArray):
            col = col.storage
        values = col.flatten()
        if values.null_count:
            values = values.fill_null(0)
        flat = values.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
        out[where] = flat.reshape(len(uniq), query.dim)[inverse.reshape(-1)]
    return out


def index_candidates(
    store: ObjectStore,
    table: TableSchema,
    search: SearchPlan,
    index: VectorIndex,
    *,
    exact: bool = False,
) -> Iterator[Candidates]:
    """The candidates the index gives for each query in turn (one ``Candidates`` per query,
    the other queries' entries empty): the ``k`` nearest live rows of the indexed fragments
    (passing the prefilter, if any) as pylance's IVF search finds them, refined when
    ``refine_factor`` is set, inside the query's ``distance_range``.

    ``exact`` (the caller also searches unindexed fragments flat): the distances of those
    ``k`` rows are then computed again on their raw vectors, as the flat search computes
    them, before they are merged. pylance does the same (measured: with unindexed
    fragments an IVF_PQ / IVF_SQ result carries exact distances, its plan a
    ``KNNVectorDistance`` over the union of the ANN and the flat branches; with
    ``fast_search`` or no unindexed fragment, the index's own distances)."""
    query = search.query
    fragments = index.fragments
    if not fragments:
        return
    ids = np.array(sorted(index.fragment_ids), dtype=np.intp)
    scanned = np.zeros(int(ids.max()) + 2, dtype=bool)  # by fragment id; the last: beyond
    scanned[ids] = True
    prefilter = search.candidates.predicate is not None
    allowed = _passing(store, table, fragments, search) if prefilter else None
    deleted = None if prefilter else _deleted(store, fragments)

    # (index files may hold rows of fragments outside the bitmap: always filtered)
    def row_filter(addresses: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        frags = np.minimum(addresses >> _SHIFT, np.uint64(len(scanned) - 1)).astype(np.intp)
        keep = scanned[frags]
        if allowed is not None:
            keep &= np.isin(addresses, allowed, assume_unique=False)
        elif deleted is not None and len(deleted):
            keep &= ~np.isin(addresses, deleted)
        return keep

    by_id = {f.id: f for f in fragments}

    def raw(addresses: npt.NDArray[np.uint64]) -> npt.NDArray[np.float32]:
        return _vectors_at(store, table, by_id, search, addresses)

    empty = (np.empty(0, np.uint64), np.empty(0, np.float32))
    for i, q in enumerate(query.queries):
        found = search_ivf_segments(
            index.segments,
            q,
            query.k,
            nprobes=query.nprobes,
            minimum_nprobes=query.minimum_nprobes,
            maximum_nprobes=query.maximum_nprobes,
            refine_factor=query.refine_factor,
            raw_vectors=raw if query.refine_factor is not None else None,
            row_filter=row_filter,
            distance_range=query.distance_range,
        )
        addresses, dists = found.row_addresses, found.distances
        if exact and len(addresses):
            work = np.float64 if query.element == "float64" else np.float32
            vectors = _vectors_at(store, table, by_id, search, addresses, work)
            dists = distances(vectors, query.queries[i : i + 1], query.metric)[0]
        keep = ~np.isnan(dists)
        if query.distance_range is not None:
            lo, hi = query.distance_range
            if lo is not None:
                keep &= dists >= lo
            if hi is not None:
                keep &= dists < hi
        out: Candidates = [empty] * len(query.queries)
        out[i] = (addresses[keep], dists[keep])
        yield out
