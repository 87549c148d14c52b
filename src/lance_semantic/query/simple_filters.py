"""Simple filters read without DataFusion (layer L3; issue 31 item 5).

Parsing a filter with DataFusion (parse, literal check, literal resolution) and checking it
on no rows costs about 1-1.5 ms per new text: more than a point lookup through a scalar
index. Most filters that an index answers are comparisons of a column with literals, so
:func:`parse_simple` reads that shape itself (microseconds) and gives a small tree that
Arrow's kernels evaluate (:func:`simple_kernel`) and the scalar index planner walks.

Only what evaluates exactly as the DataFusion path does is taken, and None is returned for
anything else (which then goes through DataFusion as before, errors included):

- columns of integer or string (``utf8`` / ``large_utf8``) type, named unquoted and exactly
  (a name no other column shares in another case, and no SQL keyword);
- integer literals (an optional ``-``) that the column's type and int64 hold; single-quoted
  string literals (``''`` for a quote, no backslash) for string columns;
- ``column <op> literal`` and ``literal <op> column`` for ``=``, ``!=``, ``<>``, ``<``,
  ``<=``, ``>``, ``>=``; ``column [NOT] IN (literals)``; ``column [NOT] BETWEEN lo AND hi``;
  ``column IS [NOT] NULL``;
- ``AND``, ``OR``, ``NOT`` and brackets over those (at most :data:`MAX_TERMS` terms and
  :data:`MAX_DEPTH` brackets deep), in SQL's three-valued logic, with SQL's precedence
  (``NOT`` over ``AND`` over ``OR``).

>>> import pyarrow as pa
>>> schema = pa.schema([("k", pa.int64()), ("s", pa.string())])
>>> parse_simple("k = 5 AND s IN ('a', 'b')", schema)  # doctest: +NORMALIZE_WHITESPACE
Both(left=Compare(column='k', op='=', value=<pyarrow.Int64Scalar: 5>),
     right=InValues(column='s', values=(<pyarrow.StringScalar: 'a'>,
                                        <pyarrow.StringScalar: 'b'>), negated=False))
>>> parse_simple("k = 5.0", schema) is None, parse_simple("s = 1", schema) is None
(True, True)
>>> batch = pa.record_batch({"k": [1, 5, None], "s": ["a", "c", "b"]})
>>> simple_kernel(parse_simple("k = 5 OR s = 'b'", schema))(batch).to_pylist()
[False, True, True]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .literals import int_fits

__all__ = [
    "Between",
    "Both",
    "Compare",
    "Either",
    "InValues",
    "MAX_DEPTH",
    "MAX_TERMS",
    "Negation",
    "NullTest",
    "SimpleFilter",
    "parse_simple",
    "simple_kernel",
]

#: at most this many comparisons in a filter read here (longer ones go to DataFusion)
MAX_TERMS = 64
#: at most this many brackets deep
MAX_DEPTH = 16
#: at most this many tokens (an ``IN`` of about 1,000 values)
_MAX_TOKENS = 2048


@dataclass(frozen=True)
class Compare:
    """``column <op> value`` (``op`` one of ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``)."""

    column: str
    op: str
    value: pa.Scalar


@dataclass(frozen=True)
class InValues:
    """``column [NOT] IN (values)``."""

    column: str
    values: tuple[pa.Scalar, ...]
    negated: bool


@dataclass(frozen=True)
class Between:
    """``column [NOT] BETWEEN low AND high``."""

    column: str
    low: pa.Scalar
    high: pa.Scalar
    negated: bool


@dataclass(frozen=True)
class NullTest:
    """``column IS [NOT] NULL``."""

    column: str
    negated: bool


@dataclass(frozen=True)
class Both:
    """``left AND right``."""

    left: SimpleFilter
    right: SimpleFilter


@dataclass(frozen=True)
class Either:
    """``left OR right``."""

    left: SimpleFilter
    right: SimpleFilter


@dataclass(frozen=True)
class Negation:
    """``NOT inner``."""

    inner: SimpleFilter


SimpleFilter = Compare | InValues | Between | NullTest | Both | Either | Negation

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
    |(?P<string>'(?:[^'\\]|'')*')
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<number>[0-9]+)
    |(?P<op><=|>=|<>|!=|[=<>(),-])
    """,
    re.X,
)
#: words never taken as column names here (SQL syntax, or names DataFusion may read as
#: something else)
_KEYWORDS = frozenset(
    """AND OR NOT IS NULL TRUE FALSE UNKNOWN CASE WHEN THEN ELSE END IN BETWEEN LIKE ILIKE
    SIMILAR TO ESCAPE DISTINCT FROM AS CAST TRY_CAST INTERVAL EXISTS SELECT ANY ALL SOME
    DATE TIME TIMESTAMP""".split()
)
_COMPARISONS = frozenset({"=", "!=", "<>", "<", "<=", ">", ">="})
_MIRROR = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INT64 = pa.int64()


class _NotSimple(Exception):
    """The text is not of the shape read here."""


def parse_simple(sql: str, schema: pa.Schema) -> SimpleFilter | None:
    """Filter ``sql`` over batches of ``schema`` as a :data:`SimpleFilter`, or None when it
    is not of the simple shape (see the module's notes)."""
    tokens = _lex(sql)
    if tokens is None or not tokens or len(tokens) > _MAX_TOKENS:
        return None
    try:
        parser = _Parser(tokens, schema)
        out = parser.disjunction(0)
        if parser.at != len(tokens):
            return None
    except (_NotSimple, IndexError):
        return None
    return out


def _lex(sql: str) -> list[tuple[str, str]] | None:
    """(kind, text) of each token (words upper-cased in ``kind == 'kw'``), or None when the
    text holds anything but the tokens read here."""
    out: list[tuple[str, str]] = []
    at = 0
    for m in _TOKEN.finditer(sql):
        if m.start() != at:
            return None
        at = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind == "ws":
            continue
        if kind == "word" and text.upper() in _KEYWORDS:
            out.append(("kw", text.upper()))
        else:
            out.append((str(kind), text))
    if at != len(sql):
        return None
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], schema: pa.Schema) -> None:
        self.tokens, self.schema, self.at = tokens, schema, 0
        self.terms = 0
        self.folded: dict[str, list[str]] = {}
        for name in schema.names:
            self.folded.setdefault(name.lower(), []).append(name)

    # ---- tokens ------------------------------------------------------------------------
    def _peek(self, ahead: int = 0) -> tuple[str, str]:
        i = self.at + ahead
        return self.tokens[i] if i < len(self.tokens) else ("end", "")

    def _take(self) -> tuple[str, str]:
        tok = self.tokens[self.at]
        self.at += 1
        return tok

    def _keyword(self, word: str) -> bool:
        if self._peek() == ("kw", word):
            self.at += 1
            return True
        return False

    def _expect(self, kind: str, text: str) -> None:
        if self._take() != (kind, text):
            raise _NotSimple

    # ---- boolean structure -------------------------------------------------------------
    def disjunction(self, depth: int) -> SimpleFilter:
        out = self.conjunction(depth)
        while self._keyword("OR"):
            out = Either(out, self.conjunction(depth))
        return out

    def conjunction(self, depth: int) -> SimpleFilter:
        out = self.negation(depth)
        while self._keyword("AND"):
            out = Both(out, self.negation(depth))
        return out

    def negation(self, depth: int) -> SimpleFilter:
        if self._keyword("NOT"):
            return Negation(self.negation(depth))
        if self._peek() == ("op", "("):
            self.at += 1
            if depth >= MAX_DEPTH:
                raise _NotSimple
            inner = self.disjunction(depth + 1)
            self._expect("op", ")")
            return inner
        return self.predicate()

    # ---- comparisons -------------------------------------------------------------------
    def predicate(self) -> SimpleFilter:
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise _NotSimple
        kind, _ = self._peek()
        if kind != "word":  # ``literal <op> column``
            if kind not in ("number", "string") and self._peek() != ("op", "-"):
                raise _NotSimple
            start = self.at
            self._literal_tokens()
            op = self._take()
            if op[0] != "op" or op[1] not in _COMPARISONS:
                raise _NotSimple
            name, t = self._column()
            end = self.at
            self.at = start
            value = self._literal(t)
            self.at = end
            return Compare(name, _MIRROR[_op(op[1])], value)
        name, t = self._column()
        tok = self._take()
        if tok[0] == "op" and tok[1] in _COMPARISONS:
            return Compare(name, _op(tok[1]), self._literal(t))
        if tok == ("kw", "IS"):
            negated = self._keyword("NOT")
            self._expect("kw", "NULL")
            return NullTest(name, negated)
        negated = tok == ("kw", "NOT")
        if negated:
            tok = self._take()
        if tok == ("kw", "IN"):
            self._expect("op", "(")
            values = [self._value(t)]
            while self._peek() == ("op", ","):
                self.at += 1
                values.append(self._value(t))
            self._expect("op", ")")
            return InValues(name, tuple(pa.array(values, t)), negated)
        if tok == ("kw", "BETWEEN"):
            low = self._literal(t)
            self._expect("kw", "AND")
            return Between(name, low, self._literal(t), negated)
        raise _NotSimple

    def _column(self) -> tuple[str, pa.DataType]:
        kind, text = self._take()
        if kind != "word" or self.folded.get(text.lower()) != [text]:
            raise _NotSimple
        if self._peek() == ("op", "("):  # (a function call)
            raise _NotSimple
        t = self.schema.field(text).type
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)):
            raise _NotSimple
        return text, t

    def _literal_tokens(self) -> None:
        """Step over one literal's tokens."""
        if self._peek() == ("op", "-"):
            self.at += 1
        self._take()

    def _literal(self, t: pa.DataType) -> pa.Scalar:
        """The next literal as a scalar of column type ``t`` (its value unchanged)."""
        return pa.scalar(self._value(t), t)

    def _value(self, t: pa.DataType) -> int | str:
        """The next literal's value, one that column type ``t`` holds unchanged."""
        kind, text = self._take()
        negative = (kind, text) == ("op", "-")
        if negative:
            kind, text = self._take()
        if kind == "number" and pa.types.is_integer(t) and len(text) <= 20:
            value = -int(text) if negative else int(text)
            if not int_fits(_INT64, value) or not int_fits(t, value):
                raise _NotSimple
            return value
        if kind == "string" and not negative and not pa.types.is_integer(t):
            return text[1:-1].replace("''", "'")
        raise _NotSimple


def _op(text: str) -> str:
    return "!=" if text == "<>" else text


#: a compiled filter: the batch in, one boolean (or null) per row out
Kernel = Callable[[pa.RecordBatch], pa.Array]

_COMPARE = {
    "=": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


def simple_kernel(node: SimpleFilter) -> Kernel:
    """Arrow kernels computing ``node`` over a batch holding its columns, nulls where SQL
    gives them (a comparison with a null is null; ``NULL IN (...)`` is null)."""
    if isinstance(node, Compare):
        f, name, value = _COMPARE[node.op], node.column, node.value
        return lambda b: f(b.column(name), value)
    if isinstance(node, InValues):
        name, negated = node.column, node.negated
        values = pa.array([v.as_py() for v in node.values], node.values[0].type)

        def in_values(b: pa.RecordBatch) -> pa.Array:
            x = b.column(name)
            got = pc.if_else(
                pc.is_valid(x), pc.is_in(x, value_set=values), pa.scalar(None, pa.bool_())
            )
            return pc.invert(got) if negated else got

        return in_values
    if isinstance(node, Between):
        name, lo, hi, negated = node.column, node.low, node.high, node.negated

        def between(b: pa.RecordBatch) -> pa.Array:
            x = b.column(name)
            got = pc.and_kleene(pc.greater_equal(x, lo), pc.less_equal(x, hi))
            return pc.invert(got) if negated else got

        return between
    if isinstance(node, NullTest):
        name = node.column
        test = pc.is_valid if node.negated else pc.is_null
        return lambda b: test(b.column(name))
    if isinstance(node, Negation):
        inner = simple_kernel(node.inner)
        return lambda b: pc.invert(inner(b))
    left, right = simple_kernel(node.left), simple_kernel(node.right)
    if isinstance(node, Both):
        return lambda b: pc.and_kleene(left(b), right(b))
    return lambda b: pc.or_kleene(left(b), right(b))
