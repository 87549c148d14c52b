"""Vector search over a scan (layer L4): the nearest rows of a ``ScanRequest`` whose
``nearest`` is set, streamed in pylance's shape.

The search reads only the vector column (and the rows' addresses), batch by batch, keeping
a bounded top-k per query (``vector.flat``); then it takes the result rows' other columns
by row address. ``prefilter=True``: the filter runs in the candidate scan (the k nearest
rows that pass it); ``prefilter=False`` (pylance's default): the k nearest rows, then the
filter (fewer may remain). Deleted rows and null vectors are never candidates.

With ``use_index`` (pylance's default) and an IVF index on the column
(``read.indexed_search``), the fragments the index covers are searched through it and the
others flat (exact); :func:`search_candidates` yields the candidate (row address, distance)
batches of both, and one top-k merges them, as pylance unions its index and flat searches
under one TopK. ``fast_search=True``: the indexed fragments alone. ``use_index=False`` or
no usable index: every fragment flat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..manifest import Fragment
from ..schema import Field, TableSchema
from ..storage import ObjectStore
from ..vector import (
    DISTANCE,
    QUERY_INDEX,
    Candidates,
    NearestQuery,
    TopK,
    batch_candidates,
    distances,
)
from .fragment_reader import ROW_ADDRESS, FragmentReader, empty_rows
from .indexed_search import VectorIndex, column_index, index_candidates
from .prefetch import ordered
from .readers import Readers
from .readers import readers as kept_readers
from .request import ScanRequest
from .row_streams import filtered_batches
from .scan_plan import ScanPlan, SearchPlan, project

__all__ = ["search_schema", "search_candidates", "nearest_batches", "SCAN_ROWS", "AHEAD"]

#: rows of the vector column read (and compared) at a time
SCAN_ROWS = 32_768
#: row ranges read ahead (in flight or done, not yet merged): bounds the memory of a search
AHEAD = 4


def search_schema(outputs: pa.Schema, query: NearestQuery, distance_at: int) -> pa.Schema:
    """pylance's result schema: ``query_index`` (int32, not null) first for a 2-D ``q``,
    then the outputs with ``_distance`` (float32) at ``distance_at`` (where ``columns`` put
    it, else after them)."""
    fields = list(outputs)
    fields.insert(distance_at, pa.field(DISTANCE, pa.float32()))
    if query.batch:
        fields.insert(0, pa.field(QUERY_INDEX, pa.int32(), nullable=False))
    return pa.schema(fields, metadata=outputs.metadata)


def search_candidates(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    search: SearchPlan,
    top: TopK | None = None,
    index: VectorIndex | None = None,
) -> Iterator[Candidates]:
    """The candidates of ``fragments``, batch by batch: per query, the addresses (uint64)
    and float32 distances of the rows of a batch that can be among its ``k`` nearest
    (:func:`~lance_semantic.vector.flat.batch_candidates`).

    ``index``: the fragments it covers yield its candidates (``indexed_search``), one
    batch per query; with ``fast_search`` nothing else, otherwise the other fragments are
    then searched flat (exact). Without a prefilter flat fragments are read in row ranges
    of :data:`SCAN_ROWS` on the read pool, each range's distances computed on the thread
    that read it; with one, the rows that pass it stream from the filtered scan
    (``row_streams.filtered_batches``). ``top``: the top-k the caller merges into, whose
    bounds drop the rows that cannot make it early."""
    query = search.query
    if index is not None:
        covered = index.fragment_ids
        fragments = [] if query.fast_search else [f for f in fragments if f.id not in covered]
        # merged with flat distances: the index's rows get exact distances too (as pylance)
        exact = bool(fragments)
        yield from index_candidates(store, table, search, index, exact=exact)
    if query.fast_search:  # only what an index covers
        return
    plan = search.candidates
    bound = None if top is None else top.bound
    if plan.predicate is not None:

        def shape(fields: Sequence[Field], schema: pa.Schema, addresses: bool) -> Readers:
            return kept_readers(store, table, fields, schema, addresses)

        found = filtered_batches(
            shape,
            fragments,
            plan.top_fields,
            plan.read_schema,
            plan.predicate,
            SCAN_ROWS,
            len(fragments),
            row_addresses=True,
        )
        for batch in found:
            vectors, addresses = batch.column(query.column), batch.column(ROW_ADDRESS)
            yield _candidates(vectors, addresses.to_numpy(), query, bound)
        return

    def task(reader: FragmentReader, lo: int) -> Callable[[], list[Candidates]]:
        def run() -> list[Candidates]:
            hi = lo + SCAN_ROWS
            return [
                _candidates(b.column(0), b.column(ROW_ADDRESS).to_numpy(), query, bound)
                for b in reader.batches(SCAN_ROWS, start=lo, stop=hi)
            ]

        return run

    def tasks() -> Iterator[Callable[[], list[Candidates]]]:
        for f in fragments:
            reader = FragmentReader(
                store, table, f, plan.top_fields, plan.layout_schema, row_addresses=True
            )
            for lo in range(0, f.physical_rows, SCAN_ROWS):
                yield task(reader, lo)

    for ranges in ordered(tasks(), ahead=AHEAD):
        yield from ranges


def _candidates(
    col: pa.Array, addresses: np.ndarray, query: NearestQuery, bound: np.ndarray | None
) -> Candidates:
    """One batch's candidates: null vectors dropped, a null value inside a vector read as
    0 (as pylance)."""
    if isinstance(col, pa.ExtensionArray):
        col = col.storage
    if col.null_count:  # null vectors are never returned
        valid = col.is_valid().to_numpy(zero_copy_only=False)
        col = col.filter(pa.array(valid))
        addresses = addresses[valid]
    values = col.flatten()  # (a sliced array's own values)
    if values.null_count:
        values = values.fill_null(0)
    flat = values.to_numpy(zero_copy_only=False).reshape(len(col), query.dim)
    dists = distances(flat, query.queries, query.metric)
    return batch_candidates(dists, addresses, query.k, query.distance_range, bound)


def nearest_batches(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    request: ScanRequest,
    batch_size: int,
    index_section: bytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """The result of the request's vector search over ``fragments`` (``plan`` with its
    ``search`` set), in batches of at most ``batch_size`` rows. ``index_section``: the
    version's manifest index section, whose IVF index on the column the search uses
    (``indexed_search.column_index``)."""
    search = plan.search
    assert search is not None
    query = search.query
    index = column_index(store, table, fragments, search, index_section)
    if query.fast_search and index is None:  # only indexed fragments: none here
        return
    if index is not None and index.metric != query.metric:  # no metric given: the index's
        query = replace(query, metric=index.metric)
        search = replace(search, query=query)
    top = TopK(len(query.queries), query.k, query.distance_range)
    for candidates in search_candidates(store, table, fragments, search, top, index):
        top.merge(candidates)
    found = [top.result(i) for i in range(len(query.queries))]
    addrs = np.concatenate([a for a, _ in found]) if found else np.empty(0, np.uint64)
    dists = np.concatenate([d for _, d in found]) if found else np.empty(0, np.float32)
    which = np.concatenate([np.full(len(a), i, np.int32) for i, (a, _) in enumerate(found)])
    rows = _take(store, table, fragments, plan, addrs)
    if plan.predicate is not None and not query.prefilter:  # postfilter: fewer may remain
        mask = plan.predicate.mask(rows)
        keep = mask.fill_null(False).to_numpy(zero_copy_only=False)
        rows = rows.filter(pa.array(keep))
        addrs, dists, which = addrs[keep], dists[keep], which[keep]
    start = request.offset or 0
    stop = len(addrs) if request.limit is None else min(len(addrs), start + request.limit)
    for lo in range(start, stop, batch_size):
        hi = min(stop, lo + batch_size)
        out = project(rows.slice(lo, hi - lo), plan)
        columns = [out.column(i) for i in range(out.num_columns)]
        columns.insert(search.distance_at, pa.array(dists[lo:hi], pa.float32()))
        if query.batch:
            columns.insert(0, pa.array(which[lo:hi], pa.int32()))
        schema = search.schema
        address = pa.array(addrs[lo:hi], pa.uint64())
        for name in request.row_columns:
            columns.append(address)
            schema = schema.append(pa.field(name, pa.uint64()))
        yield pa.RecordBatch.from_arrays(columns, schema=schema)


def _take(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    addresses: np.ndarray,
) -> pa.RecordBatch:
    """The rows at ``addresses`` (in that order, duplicates allowed: one per query) read
    into the plan's read schema (the outputs' and the filter's columns)."""
    schema = plan.read_schema
    if not len(addresses):
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
    uniq, inverse = np.unique(addresses, return_inverse=True)
    frag_ids = (uniq >> np.uint64(32)).astype(np.int64)
    if not plan.top_fields:
        return empty_rows(len(addresses))
    by_id = {f.id: f for f in fragments}

    def task(fid: int) -> Callable[[], list[pa.RecordBatch]]:
        def run() -> list[pa.RecordBatch]:
            offsets = (uniq[frag_ids == fid] & np.uint64(0xFFFFFFFF)).astype(np.int64)
            reader = FragmentReader(store, table, by_id[fid], plan.top_fields, schema)
            return reader.take(offsets)

        return run

    # each fragment's rows taken on the read pool, at once (one fragment: here)
    tasks = [task(int(fid)) for fid in np.unique(frag_ids)]
    if len(tasks) == 1:
        parts = tasks[0]()
    else:
        parts = [b for taken in ordered(tasks, ahead=len(tasks)) for b in taken]
    order = pa.array(inverse.reshape(-1))
    if len(parts) == 1 and parts[0].schema == schema:
        return parts[0].take(order)
    taken = pa.Table.from_batches(parts, schema=schema).take(order)
    return taken.combine_chunks().to_batches()[0]
