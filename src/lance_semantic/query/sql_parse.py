"""The one parser of user SQL expressions (layer L3).

Every user expression (filters, ``update`` values and ``where``, ``merge_insert``
conditions, ``add_columns`` SQL, SQL projections) goes through :func:`parse_expression`,
which hands the text to DataFusion's *expression* parser (``DataFrame.parse_sql_expr``) and
never splices it into SQL text. That parser accepts exactly one expression: trailing
``UNION SELECT ...``, ``; DROP ...`` or a ``)`` closing a wrapper are syntax errors. Subqueries
are refused as pylance refuses them. The text is first re-spelled from Lance's dialect into
DataFusion's (``sql_dialect``: column names in any case, backticks, double-quoted strings).

DataFusion recurses once per level of an expression tree and a left-deep chain of ~9,000
``OR`` terms overflows an 8 MiB stack (a segfault, not an exception), and its planner is
quadratic in the depth. So before DataFusion sees the text:

- at most :data:`MAX_TERMS` ``AND`` / ``OR`` terms in one expression;
- long ``AND`` / ``OR`` chains are cut at their own operators into runs of at most
  :data:`CHUNK` terms; each run is a contiguous slice of the user's text, parsed alone, and
  the runs are joined as a balanced tree (both operators are associative in SQL's
  three-valued logic, so the value is the same);
- every slice handed to DataFusion nests at most :data:`MAX_DEPTH` levels (operators in one
  chain plus brackets), which needs well under 2 MiB of stack (Linux threads get 8 MiB).

Too large or too deep input is an :class:`InvalidExpressionError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidExpressionError
from .sql_dialect import to_datafusion

__all__ = ["parse_expression", "MAX_TERMS", "MAX_DEPTH", "CHUNK"]

MAX_TERMS = 100_000
MAX_DEPTH = 1_000
CHUNK = 64

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
    |(?P<comment>--[^\n]*|/\*.*?\*/)
    |(?P<string>'(?:[^']|'')*')
    |(?P<ident>"(?:[^"]|"")*"|`[^`]*`)
    |(?P<open>[(\[{])
    |(?P<close>[)\]}])
    |(?P<comma>,)
    |(?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    |(?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)
    |(?P<op>::|<=|>=|<>|!=|\|\||<<|>>|[-+*/%=<>&|^~!@#?:.])
    |(?P<other>.)
    """,
    re.S | re.X,
)
_BINARY_WORDS = frozenset({"AND", "OR", "NOT", "LIKE", "ILIKE", "IS", "IN", "BETWEEN", "SIMILAR"})
_QUERY_WORDS = frozenset({"SELECT", "VALUES", "WITH", "TABLE", "FROM"})


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str  # upper-cased for words
    start: int
    end: int
    depth: int  # brackets and CASE ... END enclosing the token
    split: bool  # an AND / OR that joins two terms (not the AND of BETWEEN)


def _lex(sql: str) -> list[_Token]:
    tokens: list[_Token] = []
    frames: list[list[int]] = []  # per open bracket / CASE: [is_case, pending BETWEENs]
    top = [0, 0]
    terms = 1
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup or "other"
        if kind in ("ws", "comment"):
            continue
        text = m.group()
        frame = frames[-1] if frames else top
        split = False
        if kind == "word":
            text = text.upper()
            if text == "CASE":
                frames.append([1, 0])
                tokens.append(_Token(kind, text, m.start(), m.end(), len(frames) - 1, False))
                continue
            if text == "END" and frames and frames[-1][0]:
                frames.pop()
            elif text == "BETWEEN":
                frame[1] += 1
            elif text == "AND" and frame[1]:
                frame[1] -= 1
            elif text in ("AND", "OR"):
                split = True
                terms += 1
                if terms > MAX_TERMS:
                    raise InvalidExpressionError(
                        sql[:200], f"more than {MAX_TERMS:,} AND / OR terms"
                    )
        elif kind == "open":
            frames.append([0, 0])
            tokens.append(_Token(kind, text, m.start(), m.end(), len(frames) - 1, False))
            continue
        elif kind == "close" and frames and not frames[-1][0]:
            frames.pop()
        tokens.append(_Token(kind, text, m.start(), m.end(), len(frames), split))
    return tokens


def _depth(tokens: list[_Token], lo: int, hi: int) -> int:
    """How deep DataFusion's tree of ``tokens[lo:hi]`` can be: brackets plus operators of
    one chain (a comma starts a new list item, so it starts a new chain)."""
    chains = [0]
    total = worst = 0  # total: len(chains) - 1 + sum(chains)
    for t in tokens[lo:hi]:
        if t.kind == "open" or t.text == "CASE":
            chains.append(0)
            total += 1
        elif (t.kind == "close" or t.text == "END") and len(chains) > 1:
            total -= 1 + chains.pop()
        elif t.kind == "comma":
            total -= chains[-1]
            chains[-1] = 0
        elif t.kind == "op" or (t.kind == "word" and t.text in _BINARY_WORDS):
            chains[-1] += 1
            total += 1
        worst = max(worst, total)
        if worst > MAX_DEPTH:
            break
    return worst


class _Parser:
    def __init__(self, df: Any, sql: str, text: str) -> None:
        """``sql`` as the caller wrote it (named in errors), ``text`` as DataFusion reads
        it (``sql_dialect.to_datafusion``)."""
        self.df = df
        self.sql = sql
        self.text = text
        self.tokens = _lex(text)
        self._close: dict[int, int] = {}
        opened: list[int] = []
        for i, t in enumerate(self.tokens):
            if t.kind == "open":
                opened.append(i)
            elif t.kind == "close" and opened:
                self._close[opened.pop()] = i
        self._splits = [0]
        for t in self.tokens:
            self._splits.append(self._splits[-1] + t.split)

    def _weight(self, lo: int, hi: int) -> int:
        return self._splits[hi] - self._splits[lo]

    def _leaf(self, lo: int, hi: int) -> Any:
        if hi <= lo:
            raise InvalidExpressionError(self.sql, "an AND / OR operand is missing")
        text = self.text if (lo, hi) == (0, len(self.tokens)) else self._text(lo, hi)
        if _depth(self.tokens, lo, hi) > MAX_DEPTH:
            raise InvalidExpressionError(
                self.sql[:200], f"nested more than {MAX_DEPTH:,} levels deep"
            )
        try:
            expr = self.df.parse_sql_expr(text)
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e
        words = {t.text for t in self.tokens[lo:hi] if t.kind == "word"}
        if words & _QUERY_WORDS and "<subquery>" in expr.canonical_name():
            raise InvalidExpressionError(self.sql, "subqueries are not supported")
        return expr

    def _text(self, lo: int, hi: int) -> str:
        return self.text[self.tokens[lo].start : self.tokens[hi - 1].end]

    def build(self, lo: int, hi: int) -> Any:
        if hi <= lo or self._weight(lo, hi) < CHUNK:
            return self._leaf(lo, hi)
        base = self.tokens[lo].depth
        for op in ("OR", "AND"):
            cuts = [
                i
                for i in range(lo, hi)
                if self.tokens[i].split
                and self.tokens[i].text == op
                and self.tokens[i].depth == base
            ]
            if cuts:
                return self._join(op, lo, hi, cuts)
        first = self.tokens[lo]
        if first.kind == "open" and first.text == "(" and self._close.get(lo) == hi - 1:
            return self.build(lo + 1, hi - 1)  # one bracketed term: look inside
        return self._leaf(lo, hi)

    def _join(self, op: str, lo: int, hi: int, cuts: list[int]) -> Any:
        terms = list(zip([lo] + [c + 1 for c in cuts], cuts + [hi], strict=True))
        parts: list[Any] = []
        start, weight = terms[0][0], 0
        for i, (a, b) in enumerate(terms):
            w = self._weight(a, b) + 1
            if weight and weight + w > CHUNK:
                parts.append(self.build(start, terms[i - 1][1]))
                start, weight = a, 0
            weight += w
        parts.append(self.build(start, hi))
        while len(parts) > 1:
            paired = []
            for i in range(0, len(parts) - 1, 2):
                paired.append(parts[i] | parts[i + 1] if op == "OR" else parts[i] & parts[i + 1])
            if len(parts) % 2:
                paired.append(parts[-1])
            parts = paired
        return parts[0]


def parse_expression(df: Any, sql: str) -> Any:
    """``sql`` as one ``datafusion.Expr`` over the columns of ``df`` (a DataFrame).

    Raises
    ------
    InvalidExpressionError
        ``sql`` is not exactly one valid expression, holds a subquery, or is too large or
        too deep to parse safely.
    """
    if not isinstance(sql, str):
        raise InvalidExpressionError(repr(sql), "an SQL expression must be a string")
    parser = _Parser(df, sql, to_datafusion(sql, df.schema().names))
    if not parser.tokens:
        raise InvalidExpressionError(sql, "empty expression")
    return parser.build(0, len(parser.tokens))
