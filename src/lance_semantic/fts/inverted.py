"""pylance 14's INVERTED (full text) index, read and searched with BM25 (layer L3).

An index is a folder ``_indices/<uuid>/`` of Lance files: ``metadata.lance`` (its analyzer
``params`` and partition ids in the schema metadata) and per partition ``p``
``part_<p>_tokens.lance`` (the FST token map), ``part_<p>_docs.lance`` (``_rowid``: each
document's row address, ``_num_tokens``: its length; a document's id is its row) and
``part_<p>_invert.lance`` (one row per token id: its posting list, see
:mod:`~lance_semantic.fts.postings`).

Scores are BM25 as pylance computes them, in float32: ``k1 = 1.2``, ``b = 0.75``,
``idf(n) = ln(1 + (N - n + 0.5) / (n + 0.5))`` and ``avgdl = total tokens / N``, where
``N`` and the total count every document of every partition the index holds -- deleted
rows included (measured against pylance 14.0.2: deletions do not change the scores of the
rows that remain), and ``n`` is the token's posting count over the partitions.

Documents are numbered densely over the partitions (partition after partition); a search
works on dense per-document arrays of that numbering (``num_docs`` entries) and returns row
addresses. The documents, the token maps and the decoded posting lists are kept with the
opened index (an index never changes once written).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa

from ..errors import CorruptTableError, NotSupportedYetError
from ..scalar.files import IndexFile
from ..storage import ObjectStore
from .params import AnalyzerParams, analyzer_params
from .postings import Postings, decode_positions, decode_postings
from .token_map import TokenMap
from .tokenize import Analyzer

__all__ = ["InvertedIndex", "TermMatches", "bm25_weights", "K1", "B", "idf"]

K1: Final = np.float32(1.2)
B: Final = np.float32(0.75)

#: token -> id in one partition, or None when the partition has not the token
TokenLookup = Callable[[int, str], "int | None"]


def idf(n: int | np.ndarray, total: int) -> np.ndarray:
    """pylance's BM25 idf of a token in ``n`` of ``total`` documents (float32)."""
    n32 = np.asarray(n, np.float32)
    t32 = np.float32(total)
    half = np.float32(0.5)
    return np.log((t32 - n32 + half) / (n32 + half) + np.float32(1.0)).astype(np.float32)


def bm25_weights(freqs: np.ndarray, lengths: np.ndarray, avgdl: np.float32) -> np.ndarray:
    """``(k1 + 1) f / (f + k1 (1 - b + b dl / avgdl))`` per posting (float32)."""
    f = freqs.astype(np.float32)
    norm = K1 * (np.float32(1.0) - B + B * lengths.astype(np.float32) / avgdl)
    return ((K1 + np.float32(1.0)) * f / (f + norm)).astype(np.float32)


@dataclass(frozen=True, slots=True, eq=False)
class TermMatches:
    """One token's postings over the whole index: ``docs`` (int64 dense document numbers,
    ascending), ``freqs`` (uint32); with positions ``positions`` (uint32) and ``starts``
    (int64, per document, one more at the end)."""

    docs: np.ndarray
    freqs: np.ndarray
    positions: np.ndarray | None = None
    starts: np.ndarray | None = None

    @property
    def count(self) -> int:
        return len(self.docs)


_POOL: list[ThreadPoolExecutor] = []


def _background() -> ThreadPoolExecutor:
    """The thread that reads an index's documents while its postings are read."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="lance-semantic-fts"))
    return _POOL[0]


def check_slop(terms: int, slop: int) -> None:
    """Phrase ``slop`` is searched for phrases of two terms (pylance 14's rule for longer
    ones misses some exact occurrences and is not reproduced)."""
    if isinstance(slop, bool) or not isinstance(slop, int) or slop < 0:
        raise ValueError(f"PhraseQuery slop must be an int >= 0, got {slop!r}")
    if slop and terms > 2:
        raise NotSupportedYetError(
            f"phrase queries of {terms} terms with slop={slop} (slop 0, or two terms)"
        )


def sloppy_pairs(first: np.ndarray, second: np.ndarray, slop: int) -> np.ndarray:
    """The documents where a start of the second term (``doc << 32 | position - query
    position``, ascending) lies 0 to ``slop`` past one of the first term's: its tokens in
    order with at most ``slop`` positions between them (pylance's two-term rule)."""
    if not len(first) or not len(second):
        return np.empty(0, np.int64)
    at = np.searchsorted(second, first)
    inside = at < len(second)
    gap = second[np.minimum(at, len(second) - 1)] - first
    ok = inside & (gap <= slop)
    return np.unique(first[ok] >> 32)


def _joined(parts: list[np.ndarray], dtype: type[np.generic]) -> np.ndarray:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype)


_EMPTY = TermMatches(np.empty(0, np.int64), np.empty(0, np.uint32))


_POSTING_COLUMNS = ("_posting", "_length")
_POSITIONS = ("_compressed_position", "_position_block_offset")


class _Partition:
    """One partition's files, read on first use and kept."""

    def __init__(self, store: ObjectStore, base: str, part: int) -> None:
        self.part = part
        self.docs_file = IndexFile(store, f"{base}/part_{part}_docs.lance")
        self.tokens_file = IndexFile(store, f"{base}/part_{part}_tokens.lance")
        invert = f"{base}/part_{part}_invert.lance"
        self.invert = IndexFile(store, invert, list(_POSTING_COLUMNS))
        self.invert_positions = IndexFile(store, invert, list(_POSTING_COLUMNS + _POSITIONS))
        self.tokens: TokenMap | None = None
        self.postings: dict[tuple[int, bool], Postings] = {}


class InvertedIndex:
    """An INVERTED index of one column over ``fragments`` (its fragment bitmap).

    ``token_lookup`` (tests): how a token's id in a partition is found; by default through
    the partition's FST token map. Nothing is read until a search asks."""

    kind = "INVERTED"

    def __init__(
        self,
        store: ObjectStore,
        base: str,
        name: str,
        fragments: frozenset[int],
        token_lookup: TokenLookup | None = None,
    ) -> None:
        self.store, self.base, self.name = store, base, name
        self.fragment_ids = fragments
        self._lookup = token_lookup
        self._meta = IndexFile(store, f"{base}/metadata.lance")
        self._lock = threading.RLock()
        self._docs_lock = threading.Lock()
        self._params: dict[str, Any] | None = None
        self._analyzer_params: AnalyzerParams | None = None
        self._analyzer: Analyzer | None = None
        self._parts: list[_Partition] | None = None
        self._addresses: np.ndarray | None = None
        self._lengths: np.ndarray | None = None
        self._firsts: np.ndarray | None = None
        self._ascending = True
        self._total_tokens = 0
        self._terms: dict[tuple[str, bool], TermMatches] = {}
        self._weights: dict[str, tuple[TermMatches, np.ndarray]] = {}

    # ---- what the index is --------------------------------------------------------------
    @property
    def params(self) -> Mapping[str, Any]:
        """The analyzer's parameters (``params`` of ``metadata.lance``, JSON decoded)."""
        self._open()
        assert self._params is not None
        return self._params

    @property
    def analyzer(self) -> Analyzer:
        """pylance's analyzer of the index (what a query's text goes through)."""
        with self._lock:
            if self._analyzer is None:
                self._open()
                assert self._analyzer_params is not None
                self._analyzer = Analyzer(self._analyzer_params)
            return self._analyzer

    @property
    def with_position(self) -> bool:
        """Whether the index holds positions (phrase queries need them)."""
        return bool(self.params.get("with_position", False))

    @property
    def num_docs(self) -> int:
        """Documents over every partition (deleted rows included): BM25's ``N``."""
        return len(self._docs()[0])

    @property
    def total_tokens(self) -> int:
        self._docs()
        return self._total_tokens

    @property
    def avgdl(self) -> np.float32:
        """BM25's average document length (float32, as pylance)."""
        n = self.num_docs
        return np.float32(self.total_tokens) / np.float32(n) if n else np.float32(0.0)

    def addresses(self) -> np.ndarray:
        """The row address (uint64) of each document."""
        return self._docs()[0]

    @property
    def addresses_ascending(self) -> bool:
        """Whether the documents' row addresses ascend with their numbers (pylance numbers
        them in table order)."""
        self._docs()
        return self._ascending

    def lengths(self) -> np.ndarray:
        """The token count (uint32) of each document."""
        return self._docs()[1]

    # ---- reading ------------------------------------------------------------------------
    def _open(self) -> list[_Partition]:
        if self._parts is not None:  # (set once, never changed)
            return self._parts
        with self._lock:
            if self._parts is None:
                meta = self._meta.schema_metadata()
                where = self.store.uri(f"{self.base}/metadata.lance")
                try:
                    self._params = json.loads(meta[b"params"])
                    self._analyzer_params = analyzer_params(meta, where=where)
                    parts = json.loads(meta.get(b"partitions", b"[0]"))
                except (KeyError, ValueError) as e:
                    raise CorruptTableError(where, f"unreadable index metadata: {e}") from e
                fmt = meta.get(b"format_version", b"2")
                if fmt != b"2" or meta.get(b"posting_block_size", b"128") != b"128":
                    raise NotSupportedYetError(
                        f"INVERTED index format {fmt.decode()!r} with posting blocks of "
                        f"{meta.get(b'posting_block_size', b'?').decode()} (index {self.name!r};"
                        " pylance 14's format 2 with blocks of 128 is read)"
                    )
                self._parts = [_Partition(self.store, self.base, int(p)) for p in parts]
            return self._parts

    def _docs(self) -> tuple[np.ndarray, np.ndarray]:
        with self._docs_lock:
            if self._addresses is None:
                addrs, lens, firsts, total = [], [], [0], 0
                for p in self._open():
                    table = p.docs_file.read_range(0, 1 << 40)  # (one batch)
                    addrs.append(table.column("_rowid").to_numpy().astype(np.uint64, copy=False))
                    lens.append(
                        table.column("_num_tokens").to_numpy().astype(np.uint32, copy=False)
                    )
                    firsts.append(firsts[-1] + table.num_rows)
                    meta = p.docs_file.schema_metadata()
                    total += int(meta.get(b"total_tokens", b"0")) or int(lens[-1].sum())
                self._addresses = _joined(addrs, np.uint64)
                self._lengths = _joined(lens, np.uint32)
                self._firsts = np.asarray(firsts, np.int64)
                a = self._addresses
                self._ascending = bool((a[1:] > a[:-1]).all())
                self._total_tokens = total
            assert self._lengths is not None
            return self._addresses, self._lengths

    def _token_id(self, p: _Partition, token: str) -> int | None:
        if self._lookup is not None:
            return self._lookup(p.part, token)
        if p.tokens is None:
            where = self.store.uri(p.tokens_file.rel)
            p.tokens = TokenMap.from_table(p.tokens_file.read_all(), where)
        assert p.tokens is not None
        return p.tokens.get(token)

    def _fetch(self, p: _Partition, token_ids: Sequence[int], positions: bool) -> None:
        """Read and decode the posting lists of ``token_ids`` not decoded yet (one take)."""
        wanted = sorted(
            {
                t
                for t in token_ids
                if (t, True) not in p.postings and (t, positions) not in p.postings
            }
        )
        if not wanted:
            return
        source = p.invert_positions if positions else p.invert
        rows = source.take(wanted)
        where = self.store.uri(source.rel)
        blocks = rows.column("_posting").combine_chunks()
        lengths = rows.column("_length").to_numpy()
        if positions:
            streams = rows.column("_compressed_position").combine_chunks()
            offsets = rows.column("_position_block_offset").combine_chunks()
        for i, token_id in enumerate(wanted):
            try:
                docs, freqs = decode_postings(blocks[i].values, int(lengths[i]))
                pos = starts = None
                if positions:
                    pos, starts = decode_positions(
                        streams[i].as_buffer(),
                        offsets[i].values.to_numpy().astype(np.int64),
                        freqs,
                    )
            except (ValueError, IndexError, pa.ArrowException) as e:
                raise CorruptTableError(
                    where, f"a malformed posting list (token {token_id}): {e}"
                ) from e
            p.postings[(token_id, positions)] = Postings(docs, freqs, pos, starts)

    def _postings(self, p: _Partition, token_id: int, positions: bool) -> Postings:
        for key in ((token_id, True), (token_id, positions)):
            found = p.postings.get(key)
            if found is not None:
                return found
        self._fetch(p, [token_id], positions)
        return p.postings[(token_id, positions)]

    def prefetch(self, tokens: Sequence[str], *, positions: bool = False) -> None:
        """Read the posting lists of ``tokens`` not read yet, one take per partition (the
        documents, on first use, read meanwhile on another thread)."""
        if self._addresses is None:
            self._open()  # (before: the documents' thread only reads the partitions)
            _background().submit(self._docs)
        with self._lock:
            for p in self._open():
                ids = [self._token_id(p, t) for t in dict.fromkeys(tokens)]
                self._fetch(p, [i for i in ids if i is not None], positions)

    def term(self, token: str, *, positions: bool = False) -> TermMatches:
        """The postings of ``token`` over every partition (empty when no document has it);
        with ``positions`` its positions too (the index must hold them)."""
        key = (token, positions)
        with self._lock:
            found = self._terms.get(key) or self._terms.get((token, True))
            if found is not None:
                return found
            self._docs()
            assert self._firsts is not None
            docs, freqs, poss, starts = [], [], [], []
            offset = 0
            for i, p in enumerate(self._open()):
                tid = self._token_id(p, token)
                if tid is None:
                    continue
                got = self._postings(p, tid, positions)
                docs.append(got.docs.astype(np.int64) + int(self._firsts[i]))
                freqs.append(got.freqs)
                if positions:
                    assert got.positions is not None and got.starts is not None
                    poss.append(got.positions)
                    starts.append(got.starts[:-1] + offset)
                    offset += len(got.positions)
            if not docs:
                made = _EMPTY
            elif len(docs) == 1 and not positions:
                made = TermMatches(docs[0], freqs[0])
            else:
                made = TermMatches(
                    np.concatenate(docs),
                    np.concatenate(freqs),
                    np.concatenate(poss) if positions else None,
                    np.append(np.concatenate(starts), offset) if positions else None,
                )
            self._terms[key] = made
            return made

    # ---- searching ----------------------------------------------------------------------
    def weights(self, token: str) -> tuple[TermMatches, np.ndarray]:
        """``token``'s postings and each one's BM25 score (float32; kept)."""
        with self._lock:
            found = self._weights.get(token)
            if found is not None:
                return found
        t = self.term(token)
        w = bm25_weights(t.freqs, self.lengths()[t.docs], self.avgdl)
        made = (t, (w * idf(t.count, self.num_docs)).astype(np.float32))
        with self._lock:
            self._weights[token] = made
        return made

    def score(
        self, tokens: Sequence[str], *, require_all: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents (int64 dense numbers, ascending) holding any of ``tokens`` (every
        one with ``require_all``) and their BM25 scores (float32): summed over the tokens,
        repeats included (pylance's)."""
        none = np.empty(0, np.int64), np.empty(0, np.float32)
        distinct = list(dict.fromkeys(tokens))
        self.prefetch(distinct)
        terms = [(*self.weights(t), tokens.count(t)) for t in distinct]
        if require_all and any(not t.count for t, _, _ in terms):
            return none
        terms = [x for x in terms if x[0].count]
        if not terms:
            return none
        if len(terms) == 1:
            t, w, repeat = terms[0]
            total = w
            for _ in range(repeat - 1):  # (as pylance sums them: once per query token)
                total = total + w
            return t.docs, total
        n_docs = self.num_docs
        scores = np.zeros(n_docs, np.float32)
        hits = np.zeros(n_docs, np.int32)
        for t, w, repeat in terms:
            for _ in range(repeat):
                scores[t.docs] += w
            hits[t.docs] += 1
        docs = np.flatnonzero(hits >= (len(terms) if require_all else 1))
        return docs, scores[docs]

    def phrase(
        self, tokens: Sequence[str], query_positions: Sequence[int], slop: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The documents holding ``tokens`` as a phrase (token ``i`` at ``query_positions[i]``
        relative to the others, ``slop`` 0) and their BM25 scores (the sum over the tokens,
        as a match of every token scores them)."""
        check_slop(len(tokens), slop)
        if len(tokens) > 1:
            self.prefetch(tokens, positions=True)
        docs, scores = self.score(tokens, require_all=True)
        if len(tokens) < 2 or not len(docs):
            return docs, scores
        keys: np.ndarray | None = None
        # the rarest token first: its starts are the fewest candidates
        order = sorted(range(len(tokens)), key=lambda i: self.term(tokens[i]).count)
        if slop:
            order = list(range(len(tokens)))
        by_term: list[np.ndarray] = []
        for i in order:
            t = self.term(tokens[i], positions=True)
            assert t.positions is not None and t.starts is not None
            at = np.searchsorted(t.docs, docs)  # every candidate holds every token
            lo, hi = t.starts[at], t.starts[at + 1]
            counts = hi - lo
            gather = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            doc_of = np.repeat(docs, counts)
            start = t.positions[gather].astype(np.int64) - int(query_positions[i])
            ok = start >= 0
            k = (doc_of[ok] << 32) | start[ok]  # ascending: docs, then positions, ascending
            if slop:
                by_term.append(k)
                continue
            if keys is None:
                keys = k
            else:
                where = np.minimum(np.searchsorted(k, keys), max(len(k) - 1, 0))
                keys = keys[k[where] == keys] if len(k) else k
            if not len(keys):
                break
        found = sloppy_pairs(by_term[0], by_term[1], slop) if slop else None
        if found is None:
            assert keys is not None
            found = np.unique(keys >> 32)
        keep = np.isin(docs, found, assume_unique=True)
        return docs[keep], scores[keep]
