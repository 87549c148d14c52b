"""``full_text_query``: the query forms pylance 14 accepts, checked into frozen query values
(layer L3), and their BM25 evaluation over INVERTED indices.

pylance 14 takes a plain string (a match of its tokens over every indexed column, or the
``columns`` given; in double quotes a phrase), a dict ``{"query": str, "columns": [...]}``
(the keywords of its ``ScannerBuilder.full_text_search``; any other key is a
``TypeError``), or a query object of ``lance.query``. pylance's query objects keep their
arguments only inside a Rust object (``PyFullTextQuery``) that exposes none of them, so they
cannot be read here: the same classes are defined here, with pylance's names and
signatures (:class:`MatchQuery`, :class:`PhraseQuery`, :class:`MultiMatchQuery`,
:class:`BoostQuery`, :class:`BooleanQuery`, with :class:`Occur` and
:class:`FullTextOperator`); ``to_pylance()`` makes pylance's object of the same query.

Scores (measured against pylance 14.0.2): a match sums its tokens' BM25 scores (repeats
included) times ``boost``, over the rows holding any token (``OR``) or every token
(``AND``); a multi-match keeps, per row, the best of its columns' (boosted) match scores; a
boolean query's rows hold every MUST (or, without MUST, some SHOULD) and no MUST_NOT, scored
by the sum of its MUST and matching SHOULD scores; a boost query keeps the positive query's
rows, scored ``positive - negative_boost * negative`` where the negative matches; a phrase
keeps the rows holding its tokens at their relative positions, scored as a match of every
token. Not here yet (``NotSupportedYetError``): ``fuzziness`` other than 0 and phrase
``slop`` > 0 over three or more terms (pylance 14's sloppy phrases of three terms miss some
exact occurrences: its rule is not reproduced; two terms in order with at most ``slop``
positions between them are searched).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from ..errors import NotSupportedYetError

__all__ = [
    "Occur",
    "FullTextOperator",
    "MatchQuery",
    "PhraseQuery",
    "MultiMatchQuery",
    "BoostQuery",
    "BooleanQuery",
    "FullTextQuery",
    "full_text_query",
    "evaluate",
    "Hits",
    "PHRASE_WITHOUT_POSITIONS",
    "TextSearch",
    "Searcher",
    "SCORE",
]

#: the score column (float32) every full text search result has
SCORE = "_score"

#: pylance 14's message for a phrase query on an index built without positions
PHRASE_WITHOUT_POSITIONS = (
    "position is not found but required for phrase queries, try recreating the index with position"
)


class Occur(enum.Enum):
    """How a clause of a :class:`BooleanQuery` takes part (pylance's ``Occur``)."""

    SHOULD = "SHOULD"
    MUST = "MUST"
    MUST_NOT = "MUST_NOT"


class FullTextOperator(enum.Enum):
    """How a match combines its tokens (pylance's ``FullTextOperator``)."""

    AND = "AND"
    OR = "OR"


@dataclass(frozen=True, slots=True)
class MatchQuery:
    """Rows holding the tokens of ``query`` in ``column`` (pylance's ``MatchQuery``).

    >>> MatchQuery("hello world", "text", operator=FullTextOperator.AND).columns
    ('text',)
    """

    query: str
    column: str
    boost: float = 1.0
    fuzziness: int | None = 0
    max_expansions: int = 50
    operator: FullTextOperator = FullTextOperator.OR
    prefix_length: int = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def to_pylance(self) -> Any:
        """pylance's ``lance.query.MatchQuery`` of the same query."""
        from lance import query as lq

        return lq.MatchQuery(
            self.query,
            self.column,
            boost=self.boost,
            fuzziness=self.fuzziness,  # type: ignore[arg-type]
            max_expansions=self.max_expansions,
            operator=lq.FullTextOperator[self.operator.name],
            prefix_length=self.prefix_length,
        )


@dataclass(frozen=True, slots=True)
class PhraseQuery:
    """Rows holding the tokens of ``query`` in order in ``column`` (pylance's
    ``PhraseQuery``; ``slop``: positions allowed between them)."""

    query: str
    column: str
    slop: int = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def to_pylance(self) -> Any:
        from lance import query as lq

        return lq.PhraseQuery(self.query, self.column, slop=self.slop)


@dataclass(frozen=True, slots=True)
class MultiMatchQuery:
    """A match of ``query`` in any of ``columns`` (pylance's ``MultiMatchQuery``)."""

    query: str
    columns: tuple[str, ...]
    boosts: tuple[float, ...] | None = None
    operator: FullTextOperator = FullTextOperator.OR

    def __init__(
        self,
        query: str,
        columns: Sequence[str],
        *,
        boosts: Sequence[float] | None = None,
        operator: FullTextOperator = FullTextOperator.OR,
    ) -> None:
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "columns", tuple(columns))
        object.__setattr__(self, "boosts", None if boosts is None else tuple(boosts))
        object.__setattr__(self, "operator", operator)
        if self.boosts is not None and len(self.boosts) != len(self.columns):
            raise ValueError(
                f"MultiMatchQuery: {len(self.boosts)} boosts for {len(self.columns)} columns"
            )

    def to_pylance(self) -> Any:
        from lance import query as lq

        return lq.MultiMatchQuery(
            self.query,
            list(self.columns),
            boosts=None if self.boosts is None else list(self.boosts),
            operator=lq.FullTextOperator[self.operator.name],
        )


@dataclass(frozen=True, slots=True)
class BoostQuery:
    """The rows of ``positive``, demoted where ``negative`` matches (pylance's
    ``BoostQuery``)."""

    positive: FullTextQuery
    negative: FullTextQuery
    negative_boost: float = 0.5

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.positive.columns + self.negative.columns))

    def to_pylance(self) -> Any:
        from lance import query as lq

        return lq.BoostQuery(
            self.positive.to_pylance(),
            self.negative.to_pylance(),
            negative_boost=self.negative_boost,
        )


@dataclass(frozen=True, slots=True)
class BooleanQuery:
    """Clauses that must, should or must not match (pylance's ``BooleanQuery``)."""

    queries: tuple[tuple[Occur, FullTextQuery], ...] = field(default=())

    def __init__(self, queries: Sequence[tuple[Occur, FullTextQuery]]) -> None:
        clauses = tuple((o, q) for o, q in queries)
        for o, _ in clauses:
            if not isinstance(o, Occur):
                raise TypeError(f"BooleanQuery clauses need an Occur, got {o!r}")
        object.__setattr__(self, "queries", clauses)

    @property
    def columns(self) -> tuple[str, ...]:
        cols: dict[str, None] = {}
        for _, q in self.queries:
            cols.update(dict.fromkeys(q.columns))
        return tuple(cols)

    def to_pylance(self) -> Any:
        from lance import query as lq

        return lq.BooleanQuery([(lq.Occur[o.name], q.to_pylance()) for o, q in self.queries])


FullTextQuery: TypeAlias = MatchQuery | PhraseQuery | MultiMatchQuery | BoostQuery | BooleanQuery
_QUERY_TYPES = (MatchQuery, PhraseQuery, MultiMatchQuery, BoostQuery, BooleanQuery)


def full_text_query(value: object, indexed: Sequence[str]) -> FullTextQuery:
    """``full_text_query`` as a query value; ``indexed``: the columns with an INVERTED
    index (what a string without ``columns`` searches).

    Raises
    ------
    TypeError
        A value of another type, a dict with other keys than ``query`` / ``columns``.
    ValueError
        A string (or dict) query when no column has an INVERTED index; a phrase (a quoted
        string) over several columns.
    NotSupportedYetError
        pylance's own query objects (opaque: use this module's classes).

    >>> full_text_query("hello world", ["text"])
    MultiMatchQuery(query='hello world', columns=('text',), boosts=None, \
operator=<FullTextOperator.OR: 'OR'>)
    >>> full_text_query('"hello world"', ["text"])
    PhraseQuery(query='hello world', column='text', slop=0)
    """
    if isinstance(value, _QUERY_TYPES):
        return value
    if type(value).__module__.startswith("lance"):
        raise NotSupportedYetError(
            f"pylance's query objects as full_text_query ({type(value).__name__} keeps its "
            "arguments inside a Rust object that exposes none of them); use "
            f"lance_semantic.fts.{type(value).__name__} with the same arguments"
        )
    columns: Sequence[str] | None = None
    if isinstance(value, Mapping):
        for key in value:
            if key not in ("query", "columns"):
                raise TypeError(f"full_text_query got an unexpected key {key!r}")
        if "query" not in value:
            raise TypeError("full_text_query is missing the required key 'query'")
        columns = value.get("columns")
        value = value["query"]
        if columns is not None and (
            isinstance(columns, str) or not all(isinstance(c, str) for c in columns)
        ):
            raise TypeError(f"full_text_query columns must be a list of names, got {columns!r}")
    if not isinstance(value, str):
        raise TypeError(
            "full_text_query must be a string, a dict {'query': ..., 'columns': [...]} or "
            f"a query of lance_semantic.fts, got {type(value).__name__}"
        )
    cols = list(indexed) if columns is None else list(columns)
    if not cols:
        raise ValueError(
            "full_text_query: no column has an INVERTED index (name the columns to search)"
        )
    text = value.strip()
    if len(text) >= 2 and text.startswith('"') and text.endswith('"'):
        if len(cols) != 1:  # pylance 14's message
            raise ValueError(
                f"full_text_query: the column must be specified in the query (a phrase "
                f"searches one column, got {len(cols)}: {cols})"
            )
        return PhraseQuery(text[1:-1], cols[0])
    return MultiMatchQuery(value, cols)


@dataclass(frozen=True, slots=True)
class TextSearch:
    """One checked ``full_text_query`` with the scan's ``prefilter`` / ``fast_search``."""

    query: FullTextQuery
    prefilter: bool = False
    fast_search: bool = False


class Searcher:
    """What evaluating a query needs per column (made by the caller): ``tokens(column,
    text)`` -> (tokens, positions), and ``match`` / ``phrase`` giving a column's
    (row addresses ascending, float32 scores)."""

    def __init__(
        self,
        tokens: Callable[[str, str], tuple[list[str], list[int]]],
        match: Callable[[str, list[str], bool], Hits],
        phrase: Callable[[str, list[str], list[int], int], Hits],
    ) -> None:
        self.tokens, self.match, self.phrase = tokens, match, phrase


#: a result: row addresses (uint64, ascending, unique) and their scores (float32)
Hits: TypeAlias = tuple[np.ndarray, np.ndarray]


def _union_max(a: Hits, b: Hits) -> Hits:
    addrs = np.union1d(a[0], b[0])
    out = np.full(len(addrs), -np.inf, np.float32)
    for ad, sc in (a, b):
        at = np.searchsorted(addrs, ad)
        out[at] = np.maximum(out[at], sc)
    return addrs, out


def _scaled(h: Hits, boost: float) -> Hits:
    if boost == 1.0:
        return h
    return h[0], (h[1] * np.float32(boost)).astype(np.float32)


def evaluate(query: FullTextQuery, searcher: Searcher) -> Hits:
    """The rows ``query`` finds and their scores."""
    if isinstance(query, MatchQuery):
        if query.fuzziness != 0:
            raise NotSupportedYetError(
                f"fuzzy matches (MatchQuery fuzziness={query.fuzziness!r}; 0 is searched)"
            )
        tokens, _ = searcher.tokens(query.column, query.query)
        hits = searcher.match(query.column, tokens, query.operator is FullTextOperator.AND)
        return _scaled(hits, query.boost)
    if isinstance(query, PhraseQuery):
        tokens, positions = searcher.tokens(query.column, query.query)
        return searcher.phrase(query.column, tokens, positions, query.slop)
    if isinstance(query, MultiMatchQuery):
        boosts = query.boosts or (1.0,) * len(query.columns)
        result: Hits | None = None
        for column, boost in zip(query.columns, boosts, strict=True):
            one = MatchQuery(query.query, column, boost=boost, operator=query.operator)
            hits = evaluate(one, searcher)
            result = hits if result is None else _union_max(result, hits)
        assert result is not None
        return result
    if isinstance(query, BoostQuery):
        pos = evaluate(query.positive, searcher)
        neg = evaluate(query.negative, searcher)
        at = np.searchsorted(neg[0], pos[0])
        at = np.minimum(at, max(len(neg[0]) - 1, 0))
        hit = (neg[0][at] == pos[0]) if len(neg[0]) else np.zeros(len(pos[0]), bool)
        scores = pos[1].copy()
        scores[hit] = scores[hit] - np.float32(query.negative_boost) * neg[1][at[hit]]
        return pos[0], scores
    return _boolean(query, searcher)


def _boolean(query: BooleanQuery, searcher: Searcher) -> Hits:
    must = [evaluate(q, searcher) for o, q in query.queries if o is Occur.MUST]
    should = [evaluate(q, searcher) for o, q in query.queries if o is Occur.SHOULD]
    must_not = [evaluate(q, searcher) for o, q in query.queries if o is Occur.MUST_NOT]
    if must:
        addrs = must[0][0]
        for m in must[1:]:
            addrs = np.intersect1d(addrs, m[0], assume_unique=True)
    elif should:
        addrs = np.unique(np.concatenate([s[0] for s in should]))
    else:
        addrs = np.empty(0, np.uint64)
    for n in must_not:
        addrs = np.setdiff1d(addrs, n[0], assume_unique=True)
    scores = np.zeros(len(addrs), np.float32)
    for part in must + should:
        at = np.searchsorted(part[0], addrs)
        at = np.minimum(at, max(len(part[0]) - 1, 0))
        if not len(part[0]):
            continue
        hit = part[0][at] == addrs
        scores[hit] += part[1][at[hit]]
    return addrs.astype(np.uint64), scores
