"""How mutations read the rows they change (layer L5): live rows with their offsets, of
the fragments a predicate matches, in the layout rows are written back in.

Fragments are read on a small thread pool (the decoding releases the GIL), at most
``_WINDOW`` ahead of the consumer, in fragment order. Small fragments are read in groups and
their predicate evaluated once per group: a SQL predicate costs a DataFusion plan per call,
which at a thousand 100-row fragments was most of a one-row delete.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...manifest import Fragment, flags
from ...read import (
    ROW_ADDRESS,
    ROW_OFFSET,
    WORKERS,
    Filter,
    FragmentReader,
    ScanPlan,
    ScanRequest,
    fields_where,
    ordered,
    per_fragment,
    plan_scan,
    read_together,
    run_scan,
)
from ...read.readers import readers
from ..core import Snapshot

__all__ = ["BATCH", "matching_rows", "rows_plan", "scan"]

BATCH = 262_144
#: fragments (or groups of small ones) read ahead of the consumer
_WINDOW = 2

K = TypeVar("K")
R = TypeVar("R")
_POOL = ThreadPoolExecutor(max_workers=_WINDOW, thread_name_prefix="lance-semantic-scan")


def scan(
    snap: Snapshot,
    columns: Sequence[str] | None,
    where: Filter | None,
    batch_size: int = 0,
    post: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
) -> Iterator[tuple[Fragment, pa.RecordBatch]]:
    """Live rows (with their ``_rowoffset``) of every fragment matching ``where``, in the
    layout rows are written back in (:func:`rows_plan`).

    Fragments are read and filtered on a small thread pool (the decoding releases the GIL),
    at most ``_WINDOW`` ahead of the consumer, in fragment order; ``post`` runs there too.
    """
    plan = rows_plan(snap, columns, where)
    schema = snap.semantic_schema
    # (kept across scans: see ``read.readers``)
    reader_of = readers(snap.store, schema, plan.top_fields, plan.read_schema).reader

    def read(frag: Fragment) -> Iterator[pa.RecordBatch]:
        return reader_of(frag).batches(batch_size or BATCH, with_offsets=True)

    def kept(batches: Iterable[pa.RecordBatch]) -> list[pa.RecordBatch]:
        out = []
        for batch in batches:
            if plan.predicate is not None:
                batch = plan.predicate.apply(batch)
            if batch.num_rows:
                out.append(batch if post is None else post(batch))
        return out

    # the predicate's columns, read first where the rows have others (late materialisation)
    first_of = reader_of
    if plan.predicate is not None:
        wanted = set(plan.predicate.columns)
        keys = fields_where(plan.top_fields, plan.read_schema, lambda name: name in wanted)
        if len(keys[0]) < len(plan.top_fields):
            first_of = readers(snap.store, schema, *keys).reader

    def group(frags: list[Fragment]) -> list[list[pa.RecordBatch]]:
        """The kept rows of each of ``frags``: one fragment streamed batch by batch, several
        small ones read and then filtered at once (one predicate evaluation, a DataFusion
        plan, per group rather than per fragment). When the predicate needs fewer columns
        than the rows have, they are read first, and the whole rows only of the fragments
        with a match (taken when they are few)."""
        if len(frags) == 1 or plan.predicate is None:
            return [kept(read(frag)) for frag in frags]
        # read by one pylance call each and joined (``read_together``)
        parts, counts = read_together([first_of(f) for f in frags], with_offsets=True)
        parts = [b for b in parts if b.num_rows]
        if not parts:
            return [[] for _ in frags]
        if any(not b.schema.equals(parts[0].schema) for b in parts):
            if first_of is not reader_of:  # (the filter's columns only: the rows whole)
                return [kept(read(frag)) for frag in frags]
            return [kept(batches) for batches in per_fragment(parts, counts)]
        owner = np.repeat(np.arange(len(frags), dtype=np.int32), counts)
        whole = parts[0] if len(parts) == 1 else pa.concat_batches(parts)
        keep = pc.fill_null(plan.predicate.mask(whole), False)
        rows = np.flatnonzero(np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool))
        out: list[list[pa.RecordBatch]] = [[] for _ in frags]
        # each fragment's rows taken afresh, never a slice: engines downstream (DataFusion for
        # update expressions, pylance's encoder) panic on sliced nested structs
        bounds = np.searchsorted(owner[rows], np.arange(len(frags) + 1))
        for i in range(len(frags)):
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            if hi <= lo:
                continue
            if first_of is reader_of:
                part = whole.take(pa.array(rows[lo:hi]))
                out[i].append(part if post is None else post(part))
            elif hi - lo > _DENSE * counts[i]:  # many: the fragment read whole
                out[i] = kept(read(frags[i]))
            else:  # few: those rows taken
                offsets = whole.column(ROW_OFFSET).take(pa.array(rows[lo:hi]))
                part = _with_offsets(reader_of(frags[i]), offsets)
                out[i].append(part if post is None else post(part))
        return out

    fragments = snap.manifest.fragments
    groups = _small_groups(fragments) if plan.predicate is not None else [[f] for f in fragments]
    if all(len(g) > 1 or g[0].physical_rows <= _SMALL for g in groups):
        # small fragments only: read on the shared pool, every thread busy
        tasks = [lambda g=g: (g, group(g)) for g in groups]
        results: Iterable[tuple[list[Fragment], list[list[pa.RecordBatch]]]] = ordered(tasks)
    else:  # large fragments are read whole per task: a few at a time
        results = _ordered_window(group, groups)
    for frags, found in results:
        for frag, batches in zip(frags, found, strict=True):
            for batch in batches:
                yield frag, batch


#: above this share of a fragment's rows matching, its rows are read whole, not taken
_DENSE = 0.25


def _with_offsets(reader: FragmentReader, offsets: pa.Array) -> pa.RecordBatch:
    """The rows of ``reader``'s fragment at physical ``offsets`` (sorted), ending with them
    as :data:`ROW_OFFSET` (as ``batches(with_offsets=True)`` returns them)."""
    got = reader.take(offsets.to_numpy())
    batch = got[0] if len(got) == 1 else pa.Table.from_batches(got).combine_chunks().to_batches()[0]
    field = pa.field(ROW_OFFSET, pa.uint64(), nullable=False)
    return batch.append_column(field, offsets.cast(pa.uint64()))


#: fragments of at most this many rows are filtered together, up to this many rows a group
_SMALL = 16_384


def _small_groups(fragments: Sequence[Fragment]) -> list[list[Fragment]]:
    """Consecutive small fragments in groups of at most ``_SMALL`` rows (and at most one
    thread's share of the fragments); a larger fragment is a group of its own (and
    streamed)."""
    share = max(1, -(-len(fragments) // WORKERS))
    groups: list[list[Fragment]] = []
    rows = _SMALL  # rows of the last group: nothing joins a large fragment's group
    for frag in fragments:
        n = frag.physical_rows
        if groups and n <= _SMALL and rows + n <= _SMALL and len(groups[-1]) < share:
            groups[-1].append(frag)
            rows += n
        else:
            groups.append([frag])
            rows = n if n <= _SMALL else _SMALL
    return groups


def matching_rows(snap: Snapshot, where: Filter) -> Iterator[tuple[int, np.ndarray]]:
    """``(fragment id, physical offsets)`` of the live rows matching ``where``, in order
    (several pairs may name one fragment). The predicate's columns are read as a filtered
    scan reads them -- without offsets, each fragment as stored -- and only the matching
    rows' offsets are worked out, from the deletion vectors (what a delete needs); where
    the scalar indices select few rows, only those are read."""
    plan = rows_plan(snap, [], where)
    if not plan.top_fields:  # (a predicate without columns: every row or none)
        for frag, batch in scan(snap, [], where):
            yield frag.id, batch.column(ROW_OFFSET).to_numpy()
        return
    manifest = snap.manifest
    stable = manifest.reader_feature_flags & flags.FLAG_STABLE_ROW_IDS
    found = run_scan(
        snap.store,
        snap.semantic_schema,
        manifest.fragments,
        plan,
        ScanRequest(batch_size=BATCH),
        row_addresses=(ROW_ADDRESS,),
        # a selective predicate is answered through the scalar indices (of row addresses:
        # not those of a table with stable row ids, which hold row ids)
        index_section=None if stable else manifest.index_section,
    )
    for batch in found:
        addresses = batch.column(ROW_ADDRESS).to_numpy()
        ids = addresses >> np.uint64(32)
        offsets = (addresses & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1  # (a fragment's rows come together)
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(ids)], strict=True):
            yield int(ids[lo]), offsets[lo:hi]


def rows_plan(snap: Snapshot, columns: Sequence[str] | None, where: Filter | None) -> ScanPlan:
    """How mutations read rows: blob values, not descriptors, and in the kernel layout
    (``read_schema``: no views -- Arrow has no filter, take or join kernel for them -- and on
    flagged tables no dictionaries, which any layout may replace in a rewrite and whose key
    could be too narrow for new values); that is also the layout rows are written back in."""
    return plan_scan(
        snap.semantic_schema,
        ScanRequest(columns=columns, filter=where),
        flagged=snap.semantic_types,
        blob_values=True,
        plain_dictionaries=snap.semantic_types,
    )


def _ordered_window(fn: Callable[[K], R], items: Sequence[K]) -> Iterator[tuple[K, R]]:
    """``(item, fn(item))`` in order, ``fn`` run on the pool at most ``_WINDOW`` ahead."""
    pending: deque[tuple[K, Future[R]]] = deque()
    it = iter(items)
    for item in it:
        pending.append((item, _POOL.submit(fn, item)))
        if len(pending) >= _WINDOW:
            break
    while pending:
        item, fut = pending.popleft()
        nxt = next(it, None)
        if nxt is not None:
            pending.append((nxt, _POOL.submit(fn, nxt)))
        yield item, fut.result()
