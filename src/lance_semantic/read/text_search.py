"""Full text search over a scan (layer L4): the rows of a ``ScanRequest`` whose
``full_text`` is set, best BM25 score first, in pylance's shape (the outputs, then
``_score`` float32).

Each column the query searches needs an INVERTED index (``fts.open_inverted_index``); the
query is evaluated over the index's documents (:func:`lance_semantic.fts.evaluate`), then:
rows of fragments not scanned and deleted rows are dropped (they never come back, and --
as in pylance -- they do not change the scores, which use the index's statistics);
``prefilter=True``: the rows failing ``filter`` are dropped before the best ``limit`` are
kept; ``prefilter=False`` (pylance's default): the best ``limit`` rows, then the filter
(fewer may remain). Without ``limit`` every matching row is returned (as pylance).

Not here yet (``NotSupportedYetError``): fragments the index does not cover (appended after
it was built; pylance tokenizes those rows on the fly) unless ``fast_search=True``, which
searches the indexed fragments only, as pylance; a column without an INVERTED index
(pylance searches it flat).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import NotSupportedYetError
from ..fts import (
    PHRASE_WITHOUT_POSITIONS,
    Hits,
    InvertedIndex,
    Searcher,
    TextSearch,
    evaluate,
    open_inverted_index,
)
from ..fts.indices import INVERTED_DETAILS
from ..manifest import Fragment, index_entries
from ..schema import TableSchema
from ..storage import ObjectStore
from .deletions import deleted_rows
from .request import ScanRequest
from .scan_plan import ScanPlan, project
from .vector_search import _take as take_at

__all__ = ["text_batches", "inverted_columns", "text_index"]


def inverted_columns(table: TableSchema, index_section: bytes | None) -> list[str]:
    """The top-level columns with an INVERTED index, in schema order (what a string query
    without ``columns`` searches)."""
    if not index_section:
        return []
    ids = {e.fields[0] for e in index_entries(index_section) if e.type_url == INVERTED_DETAILS}
    return [f.name for f in table.fields if f.id in ids]


def text_index(
    store: ObjectStore, table: TableSchema, column: str, index_section: bytes | None
) -> InvertedIndex | None:
    """The INVERTED index of ``column`` (the first in manifest order), or None."""
    if not index_section:
        return None
    field_id = table.field(column).id
    entries = [
        e
        for e in index_entries(index_section)
        if e.type_url == INVERTED_DETAILS and e.fields == (field_id,)
    ]
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
    try:
        module: Any = importlib.import_module("lance_semantic.fts.tokenize")
    except ImportError:  # pragma: no cover - the analyzer lands with i31/fts-tokens
        raise NotSupportedYetError(
            "full text search of a query text (pylance's analyzer is not here yet)"
        ) from None
    got = list(module.Analyzer(dict(index.params)).tokens(text))
    if all(isinstance(t, str) for t in got):
        return got, list(range(len(got)))
    tokens = [str(getattr(t, "text", t[0] if isinstance(t, tuple) else t)) for t in got]
    positions = [
        int(getattr(t, "position", t[1] if isinstance(t, tuple) else i)) for i, t in enumerate(got)
    ]
    return tokens, positions


class _Live:
    """Which row addresses may be returned: those of the fragments scanned, not deleted."""

    def __init__(self, store: ObjectStore, fragments: Sequence[Fragment]) -> None:
        self.store = store
        self.by_id = {f.id: f for f in fragments}
        self._deleted: dict[int, np.ndarray | None] = {}

    def keep(self, addresses: np.ndarray) -> np.ndarray:
        frag = (addresses >> np.uint64(32)).astype(np.int64)
        mask = np.zeros(len(addresses), bool)
        for fid in np.unique(frag).tolist():
            f = self.by_id.get(fid)
            if f is None:
                continue
            at = frag == fid
            if fid not in self._deleted:
                self._deleted[fid] = deleted_rows(self.store, f)
            gone = self._deleted[fid]
            if gone is None or not len(gone):
                mask |= at
                continue
            offsets = addresses[at] & np.uint64(0xFFFFFFFF)
            alive = ~np.isin(offsets, gone.astype(np.uint64))
            where = np.flatnonzero(at)
            mask[where[alive]] = True
        return mask


def _searcher(indices: dict[str, InvertedIndex], live: _Live, tokens: Any = _tokens_of) -> Searcher:
    def hits(index: InvertedIndex, docs: np.ndarray, scores: np.ndarray) -> Hits:
        addrs = index.addresses()[docs]
        keep = live.keep(addrs)
        addrs, scores = addrs[keep], scores[keep]
        order = np.argsort(addrs, kind="stable")
        return addrs[order], scores[order]

    def match(column: str, toks: list[str], every: bool) -> Hits:
        index = indices[column]
        return hits(index, *index.score(toks, require_all=every))

    def phrase(column: str, toks: list[str], positions: list[int], slop: int) -> Hits:
        index = indices[column]
        if not index.with_position:
            raise ValueError(PHRASE_WITHOUT_POSITIONS)
        return hits(index, *index.phrase(toks, positions, slop))

    return Searcher(lambda column, text: _tokens_of(indices[column], text), match, phrase)


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
    indices: dict[str, InvertedIndex] = {}
    for column in search.query.columns:
        index = text_index(store, table, column, index_section)
        if index is None:
            raise NotSupportedYetError(
                f"full text search of column {column!r}, which has no INVERTED index "
                "(pylance searches it flat)"
            )
        indices[column] = index
    covered = frozenset.intersection(*(i.fragment_ids for i in indices.values()))
    if search.fast_search:
        fragments = [f for f in fragments if f.id in covered]
    elif any(f.id not in covered for f in fragments):
        missing = sorted(f.id for f in fragments if f.id not in covered)
        raise NotSupportedYetError(
            f"full text search over fragments {missing} that the INVERTED index does not "
            "cover (pylance tokenizes them on the fly); search with fast_search=True (the "
            "indexed fragments only) or bring the index up to date in pylance "
            "(optimize_indices)"
        )
    live = _Live(store, fragments)
    addrs, scores = evaluate(search.query, _searcher(indices, live))
    addrs, scores = _best_first(addrs, scores)
    predicate = plan.predicate
    start = request.offset or 0
    limit = request.limit
    if predicate is not None and search.prefilter and len(addrs):
        mask = predicate.mask(take_at(store, table, fragments, plan, addrs))
        keep = mask.fill_null(False).to_numpy(zero_copy_only=False)
        addrs, scores = addrs[keep], scores[keep]
    if limit is not None:
        addrs, scores = addrs[: start + limit], scores[: start + limit]
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


def _best_first(addrs: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best score first; equal scores by row address."""
    order = np.lexsort((addrs, -scores.astype(np.float64)))
    return addrs[order], scores[order]
