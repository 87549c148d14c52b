"""Full text search without an index (layer L4): the rows of fragments an INVERTED index does
not cover, or of a column without one, tokenized when a query reads them, and scored with
BM25 as pylance scores them (measured against pylance 14.0.2):

- rows of an indexed column's fragments the index does not cover go through the index's
  analyzer and score with the index's statistics plus their own: ``N`` plus their
  documents, each token's ``n`` plus their documents holding it, the total tokens plus
  theirs (the rows the index covers keep the index's own statistics);
- rows of a column without an index score with their own statistics alone.

Only live rows count, and with ``prefilter=True`` only the rows that pass the filter. A row
without tokens is not a document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..fts import Analyzer, Hits, bm25_weights, idf
from ..fts.inverted import check_slop, sloppy_pairs
from ..manifest import Fragment
from ..schema import Field, TableSchema
from ..storage import ObjectStore
from .fragment_reader import ROW_ADDRESS, FragmentReader
from .readers import Readers
from .readers import readers as kept_readers
from .row_streams import filtered_batches
from .scan_plan import ScanPlan

__all__ = ["FlatDocs", "flat_docs", "IndexStats", "FLAT_ROWS"]

#: rows of the column read at a time
FLAT_ROWS = 32_768


@dataclass(frozen=True, slots=True)
class IndexStats:
    """The statistics the flat rows' scores add to: the index's documents, tokens and
    each token's document count (nothing for a column without an index)."""

    docs: int = 0
    tokens: int = 0
    count: Callable[[str], int] = lambda token: 0


@dataclass(frozen=True, slots=True, eq=False)
class FlatDocs:
    """The tokenized rows: ``addresses`` (uint64, ascending) and ``lengths`` (int64) of the
    rows with tokens (the documents), and every token (``tokens``, a string array) with its
    document (``parents``, int64) and position (``positions``, int64)."""

    addresses: np.ndarray
    lengths: np.ndarray
    tokens: pa.Array
    parents: np.ndarray
    positions: np.ndarray

    def counts(self, token: str) -> np.ndarray:
        """How often ``token`` occurs in each document."""
        hit = pc.equal(self.tokens, token).to_numpy(zero_copy_only=False)
        return np.bincount(self.parents[hit], minlength=len(self.addresses))

    def match(self, tokens: Sequence[str], every: bool, stats: IndexStats) -> Hits:
        """The documents holding any (``every``: all) of ``tokens``, BM25-scored over the
        index's statistics plus these documents'."""
        n_docs = stats.docs + len(self.addresses)
        if not len(self.addresses) or not tokens:
            return np.empty(0, np.uint64), np.empty(0, np.float32)
        avgdl = np.float32(stats.tokens + int(self.lengths.sum())) / np.float32(n_docs)
        scores = np.zeros(len(self.addresses), np.float32)
        held = np.zeros(len(self.addresses), np.int32)
        distinct = list(dict.fromkeys(tokens))
        for token in distinct:
            counts = self.counts(token)
            docs = np.flatnonzero(counts)
            if not len(docs):
                continue
            n = stats.count(token) + len(docs)
            w = bm25_weights(counts[docs], self.lengths[docs], avgdl) * idf(n, n_docs)
            for _ in range(tokens.count(token)):
                scores[docs] += w.astype(np.float32)
            held[docs] += 1
        found = np.flatnonzero(held >= (len(distinct) if every else 1))
        return self.addresses[found], scores[found]

    def phrase(
        self, tokens: Sequence[str], positions: Sequence[int], slop: int, stats: IndexStats
    ) -> Hits:
        """The documents holding ``tokens`` at their relative ``positions`` (``slop``: for
        two tokens, at most that many positions between them)."""
        check_slop(len(tokens), slop)
        addrs, scores = self.match(tokens, True, stats)
        if len(tokens) < 2 or not len(addrs):
            return addrs, scores
        keys: np.ndarray | None = None
        by_term = []
        for token, at in zip(tokens, positions, strict=True):
            hit = pc.equal(self.tokens, token).to_numpy(zero_copy_only=False)
            start = self.positions[hit] - int(at)
            ok = start >= 0
            k = np.unique((self.parents[hit][ok] << 32) | start[ok])
            by_term.append(k)
            keys = k if keys is None else np.intersect1d(keys, k, assume_unique=True)
        assert keys is not None
        found = sloppy_pairs(by_term[0], by_term[1], slop) if slop else np.unique(keys >> 32)
        docs = self.addresses[found]
        keep = np.isin(addrs, docs)
        return addrs[keep], scores[keep]


def flat_docs(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    column: str,
    analyzer: Analyzer,
) -> FlatDocs:
    """The live rows of ``column`` in ``fragments`` (those passing ``plan``'s filter when it
    has one), tokenized by ``analyzer``."""
    batches: list[pa.RecordBatch] = []
    if plan.predicate is not None:

        def shape(fields: Sequence[Field], schema: pa.Schema, addresses: bool) -> Readers:
            return kept_readers(store, table, fields, schema, addresses)

        batches = list(
            filtered_batches(
                shape,
                fragments,
                plan.top_fields,
                plan.read_schema,
                plan.predicate,
                FLAT_ROWS,
                len(fragments),
                row_addresses=True,
            )
        )
    else:
        for f in fragments:
            reader = FragmentReader(
                store, table, f, plan.top_fields, plan.read_schema, row_addresses=True
            )
            batches += reader.batches(FLAT_ROWS)
    if batches:
        texts = pa.chunked_array([b.column(column) for b in batches])
        addresses = np.concatenate([b.column(ROW_ADDRESS).to_numpy() for b in batches])
    else:
        texts = pa.chunked_array([], pa.string())
        addresses = np.empty(0, np.uint64)
    lists, where = analyzer.tokenize_array(texts.combine_chunks(), positions=True)
    assert where is not None
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    lengths = lengths.astype(np.int64)
    docs = np.flatnonzero(lengths > 0)
    renumber = np.full(len(lengths), -1, np.int64)
    renumber[docs] = np.arange(len(docs))
    parents = renumber[pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)]
    order = np.argsort(addresses[docs], kind="stable")
    if not (order == np.arange(len(order))).all():  # documents by address
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        parents = inverse[parents]
        docs = docs[order]
    return FlatDocs(
        addresses[docs].astype(np.uint64),
        lengths[docs],
        pc.list_flatten(lists),
        parents,
        pc.list_flatten(where).to_numpy(zero_copy_only=False).astype(np.int64),
    )
