"""Full text search over a scan (layer L4): the rows of a ``ScanRequest`` whose
``full_text_query`` is set, best BM25 score first, in pylance's shape (the outputs, then
``_score`` float32).

Each column the query searches is searched through its INVERTED index
(``fts.open_inverted_index``) over the fragments the index covers, and flat
(``read.text_flat``: tokenized now) over the others, or over every fragment when the column
has no index; the query combines the columns' hits (:func:`lance_semantic.fts.evaluate`).
Then, as pylance (measured against pylance 14.0.2): rows of fragments not scanned and
deleted rows never come back, and do not change the scores of the indexed rows, which use
the index's statistics; ``prefilter=True``: the rows failing ``filter`` are dropped before
the best ``limit`` are kept; ``prefilter=False`` (pylance's default): the best ``limit``
rows, then the filter (fewer may remain); ``fast_search=True``: the indexed fragments only.
Without ``limit`` every matching row is returned, best first -- in scan order when no
index covers the rows searched, as pylance's flat search.

Not here yet (``NotSupportedYetError``): phrase ``slop`` > 0 over three or more terms,
fuzzy matches, an index of
several segments.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np
import pyarrow as pa

from ..errors import NotSupportedYetError
from ..fts import (
    PHRASE_WITHOUT_POSITIONS,
    Analyzer,
    AnalyzerParams,
    Hits,
    InvertedIndex,
    Searcher,
    TextSearch,
    evaluate,
    open_inverted_index,
)
from ..fts.indices import INVERTED_DETAILS
from ..fts.inverted import check_slop
from ..manifest import Fragment, IndexEntry, index_entries
from ..schema import TableSchema
from ..storage import ObjectStore
from .deletions import deleted_rows
from .fragment_reader import empty_rows
from .prefetch import ordered
from .readers import readers as kept_readers
from .request import ScanRequest
from .scan_plan import ScanPlan, project
from .text_flat import FlatDocs, IndexStats, flat_docs

__all__ = ["text_batches", "inverted_columns", "text_index"]


@lru_cache(maxsize=16)
def _inverted_entries(index_section: bytes) -> tuple[IndexEntry, ...]:
    """The INVERTED entries of a manifest's index section (decoded once per section)."""
    return tuple(e for e in index_entries(index_section) if e.type_url == INVERTED_DETAILS)


def inverted_columns(table: TableSchema, index_section: bytes | None) -> list[str]:
    """The top-level columns with an INVERTED index, in schema order (what a string query
    without ``columns`` searches)."""
    if not index_section:
        return []
    ids = {e.fields[0] for e in _inverted_entries(index_section)}
    return [f.name for f in table.fields if f.id in ids]


def text_index(
    store: ObjectStore, table: TableSchema, column: str, index_section: bytes | None
) -> InvertedIndex | None:
    """The INVERTED index of ``column`` (the first in manifest order), or None."""
    if not index_section:
        return None
    field_id = table.field(column).id
    entries = [e for e in _inverted_entries(index_section) if e.fields == (field_id,)]
    if not entries:
        return None
    same = [e for e in entries if e.name == entries[0].name]
    if len(same) > 1:
        raise NotSupportedYetError(
            f"full text search through an INVERTED index of several segments (index "
            f"{entries[0].name!r} on column {column!r})"
        )
    return open_inverted_index(store, same[0])


def _tokens_of(index: InvertedIndex, text: str) -> tuple[list[str], list[int]]:
    """The query's tokens through the index's analyzer, and their positions."""
    got = index.analyzer.tokens_with_positions(text)
    return [t for t, _ in got], [p for _, p in got]


#: live-document masks kept (index, fragments scanned and their deletions -> mask)
_MASKS_KEPT = 32
_masks: OrderedDict[tuple[InvertedIndex, tuple[object, ...]], np.ndarray | None] = OrderedDict()
_masks_lock = threading.Lock()


def _fragments_key(fragments: Sequence[Fragment]) -> tuple[object, ...]:
    out: list[object] = []
    for f in fragments:
        d = f.deletion_file
        out.append((f.id, None if d is None else (d.read_version, d.id, d.num_deleted_rows)))
    return tuple(out)


def live_docs(
    store: ObjectStore, index: InvertedIndex, fragments: Sequence[Fragment]
) -> np.ndarray | None:
    """Which of the index's documents may be returned (a bool per document): those of the
    fragments scanned, not deleted; None when every one may (kept per index and fragment
    state)."""
    key = (index, _fragments_key(fragments))  # (the index itself: ids are reused)
    with _masks_lock:
        if key in _masks:
            _masks.move_to_end(key)
            return _masks[key]
    by_id = {f.id: f for f in fragments}
    deleted = {f.id: deleted_rows(store, f) for f in fragments if f.id in index.fragment_ids}
    mask: np.ndarray | None = None
    if not index.fragment_ids <= by_id.keys() or any(
        d is not None and len(d) for d in deleted.values()
    ):
        addresses = index.addresses()
        frag = (addresses >> np.uint64(32)).astype(np.int64)
        mask = np.isin(frag, np.fromiter(by_id, np.int64, len(by_id)))
        for fid, gone in deleted.items():
            if gone is None or not len(gone):
                continue
            at = np.flatnonzero(frag == fid)
            offsets = (addresses[at] & np.uint64(0xFFFFFFFF)).astype(np.int64)
            mask[at[np.isin(offsets, gone.astype(np.int64))]] = False
    with _masks_lock:
        _masks[key] = mask
        while len(_masks) > _MASKS_KEPT:
            _masks.popitem(last=False)
    return mask


#: how pylance 14 tokenizes a column without an INVERTED index: its ``simple`` splitting
#: alone (no lower-casing, stemming, stop words, folding or length limit)
FLAT_ANALYZER = AnalyzerParams(
    base_tokenizer="simple",
    lower_case=False,
    stem=False,
    remove_stop_words=False,
    ascii_folding=False,
    max_token_length=None,
)


class _Search:
    """One query's evaluation over the scanned ``fragments``: each column through its index
    (``indices``; None for a column without one) and, for the fragments its index does not
    cover (all of them without an index), over the rows tokenized then (``flat``)."""

    def __init__(
        self,
        store: ObjectStore,
        table: TableSchema,
        fragments: Sequence[Fragment],
        indices: dict[str, InvertedIndex | None],
        flat: dict[str, tuple[list[Fragment], ScanPlan]],
    ) -> None:
        self.store, self.table, self.fragments = store, table, fragments
        self.indices, self.flat = indices, flat
        self._docs: dict[str, FlatDocs] = {}
        self._flat_analyzer: Analyzer | None = None

    def analyzer(self, column: str) -> Analyzer:
        index = self.indices[column]
        if index is not None:
            return index.analyzer
        if self._flat_analyzer is None:
            self._flat_analyzer = Analyzer(FLAT_ANALYZER)
        return self._flat_analyzer

    def tokens(self, column: str, text: str) -> tuple[list[str], list[int]]:
        index = self.indices[column]
        if index is not None:
            return _tokens_of(index, text)
        got = self.analyzer(column).tokens_with_positions(text)
        return [t for t, _ in got], [p for _, p in got]

    def _flat_docs(self, column: str) -> FlatDocs | None:
        frags, plan = self.flat.get(column, ([], None))
        if not frags or plan is None:
            return None
        if column not in self._docs:
            self._docs[column] = flat_docs(
                self.store, self.table, frags, plan, column, self.analyzer(column)
            )
        return self._docs[column]

    def _stats(self, column: str) -> IndexStats:
        index = self.indices[column]
        if index is None:
            return IndexStats()
        return IndexStats(index.num_docs, index.total_tokens, lambda t: index.term(t).count)

    def _hits(self, index: InvertedIndex, docs: np.ndarray, scores: np.ndarray) -> Hits:
        mask = live_docs(self.store, index, self.fragments)
        if mask is not None:
            keep = mask[docs]
            docs, scores = docs[keep], scores[keep]
        addrs = index.addresses()[docs]
        if not index.addresses_ascending:
            order = np.argsort(addrs, kind="stable")
            addrs, scores = addrs[order], scores[order]
        return addrs, scores

    def match(self, column: str, toks: list[str], every: bool) -> Hits:
        index = self.indices[column]
        parts = []
        if index is not None:
            parts.append(self._hits(index, *index.score(toks, require_all=every)))
        docs = self._flat_docs(column)
        if docs is not None:
            parts.append(docs.match(toks, every, self._stats(column)))
        return _joined(parts)

    def phrase(self, column: str, toks: list[str], positions: list[int], slop: int) -> Hits:
        check_slop(len(toks), slop)
        index = self.indices[column]
        parts = []
        if index is not None:
            if not index.with_position:
                raise ValueError(PHRASE_WITHOUT_POSITIONS)
            parts.append(self._hits(index, *index.phrase(toks, positions, slop)))
        docs = self._flat_docs(column)
        if docs is not None:
            parts.append(docs.phrase(toks, positions, slop, self._stats(column)))
        return _joined(parts)

    def searcher(self) -> Searcher:
        return Searcher(self.tokens, self.match, self.phrase)


def _joined(parts: list[Hits]) -> Hits:
    """Hits of disjoint rows, by address."""
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.float32)
    if len(parts) == 1:
        return parts[0]
    addrs = np.concatenate([p[0] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    order = np.argsort(addrs, kind="stable")
    return addrs[order], scores[order]


def text_batches(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    request: ScanRequest,
    batch_size: int,
    index_section: bytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """The result of the request's full text search over ``fragments`` (``plan`` with its
    ``text`` set), in batches of at most ``batch_size`` rows, best score first."""
    text = plan.text
    assert text is not None
    search: TextSearch = text.search
    indices: dict[str, InvertedIndex | None] = {}
    flat: dict[str, tuple[list[Fragment], ScanPlan]] = {}
    plans = dict(text.flat)
    for column in search.query.columns:
        index = text_index(store, table, column, index_section)
        indices[column] = index
        if index is None:
            uncovered = [] if search.fast_search else list(fragments)
        else:
            uncovered = (
                []
                if search.fast_search
                else [f for f in fragments if f.id not in index.fragment_ids]
            )
        flat[column] = (uncovered, plans[column])
    if search.fast_search:  # only what the indices cover
        covered = frozenset().union(*(i.fragment_ids for i in indices.values() if i))
        fragments = [f for f in fragments if f.id in covered]
    found = _Search(store, table, fragments, indices, flat).searcher()
    addrs, scores = evaluate(search.query, found)
    predicate = plan.predicate
    start = request.offset or 0
    limit = request.limit
    if text.prefilter is not None and text.prefilter.predicate is not None and len(addrs):
        rows = take_at(store, table, fragments, text.prefilter, addrs)
        mask = text.prefilter.predicate.mask(rows)
        keep = mask.fill_null(False).to_numpy(zero_copy_only=False)
        addrs, scores = addrs[keep], scores[keep]
    scanned = {f.id for f in fragments}
    if limit is None and not any(
        i is not None and i.fragment_ids & scanned for i in indices.values()
    ):
        pass  # pylance's flat search without a limit: the rows in scan (address) order
    else:
        addrs, scores = _best_first(addrs, scores, None if limit is None else start + limit)
    rows = take_at(store, table, fragments, plan, addrs)
    if predicate is not None and not search.prefilter:  # postfilter: fewer may remain
        keep = predicate.mask(rows).fill_null(False).to_numpy(zero_copy_only=False)
        rows = rows.filter(pa.array(keep))
        addrs, scores = addrs[keep], scores[keep]
    stop = len(addrs) if limit is None else min(len(addrs), start + limit)
    for lo in range(start, stop, batch_size):
        hi = min(stop, lo + batch_size)
        out = project(rows.slice(lo, hi - lo), plan)
        columns = [out.column(i) for i in range(out.num_columns)]
        columns.insert(text.score_at, pa.array(scores[lo:hi], pa.float32()))
        schema = text.schema
        address = pa.array(addrs[lo:hi], pa.uint64())
        for name in request.row_columns:
            columns.append(address)
            schema = schema.append(pa.field(name, pa.uint64()))
        yield pa.RecordBatch.from_arrays(columns, schema=schema)


def take_at(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    addresses: np.ndarray,
) -> pa.RecordBatch:
    """The rows at ``addresses`` (unique, in that order) read into the plan's read schema,
    one take per fragment through the kept readers, the fragments' takes on the read pool."""
    schema = plan.read_schema
    if not len(addresses):
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
    if not plan.top_fields:
        return empty_rows(len(addresses))
    order = np.argsort(addresses, kind="stable")
    uniq = addresses[order]
    frag_ids = (uniq >> np.uint64(32)).astype(np.int64)
    by_id = {f.id: f for f in fragments}
    kept = kept_readers(store, table, plan.top_fields, schema, False)
    bounds = np.flatnonzero(np.diff(frag_ids)) + 1

    def task(run: np.ndarray) -> Callable[[], list[pa.RecordBatch]]:
        def read() -> list[pa.RecordBatch]:
            offsets = (uniq[run] & np.uint64(0xFFFFFFFF)).astype(np.int64)
            return kept.reader(by_id[int(frag_ids[run[0]])]).take(offsets)

        return read

    tasks = [task(run) for run in np.split(np.arange(len(uniq)), bounds)]
    if len(tasks) == 1:
        parts = tasks[0]()
    else:  # each fragment's rows taken on the read pool, at once
        parts = [b for taken in ordered(tasks, ahead=len(tasks)) for b in taken]
    back = np.empty(len(order), np.int64)
    back[order] = np.arange(len(order))
    taken = pa.Table.from_batches(parts, schema=schema).take(pa.array(back))
    return taken.combine_chunks().to_batches()[0]


def _best_first(
    addrs: np.ndarray, scores: np.ndarray, k: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` (None: all), best score first; equal scores by row address (pylance
    orders ties arbitrarily)."""
    if k is not None and k < len(addrs):
        if k <= 0:
            return addrs[:0], scores[:0]
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        top = np.flatnonzero(scores >= kth)  # (ties at the k-th score all kept, then cut)
        addrs, scores = addrs[top], scores[top]
    order = np.lexsort((addrs, -scores.astype(np.float64)))
    if k is not None:
        order = order[:k]
    return addrs[order], scores[order]
