"""Simple filters evaluated by Arrow compute kernels instead of DataFusion (layer L3; issue
13 item 2).

DataFusion costs about 0.65 ms per call whatever the rows (a session registers the batch,
plans and runs), and on many threads at once its calls queue for the cores: over a scan's
windows the filter cost as much as reading its column. Most filters are comparisons of
columns with literals joined by ``AND`` / ``OR``; :func:`compile_filter` turns a parsed
filter of that shape into Arrow kernel calls (microseconds), and returns None for anything
else, which DataFusion keeps evaluating.

Only what the kernels compute exactly as DataFusion does is taken: columns of integer,
string and boolean types (no floats: DataFusion orders floats totally, ``NaN = NaN`` and
``-0.0 < 0.0``, Arrow compute by IEEE rules), literals of the column's own kind that its
type holds unchanged, and these forms:

- ``column <op> literal`` and ``literal <op> column`` for ``=``, ``!=``, ``<>``, ``<``,
  ``<=``, ``>``, ``>=``; ``(column % k) <op> literal`` for integers and ``k > 0`` (a
  truncated remainder, as DataFusion's);
- ``column [NOT] BETWEEN lo AND hi``, ``column [NOT] IN (literals)`` (no ``NULL`` among
  them), ``column IS [NOT] NULL``, a boolean ``column``;
- ``AND``, ``OR`` and ``NOT`` over those, in SQL's three-valued logic (Kleene).

Nulls come out where DataFusion gives them (a comparison with a null is null, ``NULL IN
(...)`` is null); the scan counts them as false, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..types.families import is_string_like
from .literals import int_fits

__all__ = ["compile_filter"]

#: a compiled node: the batch in, one value per row out
Kernel = Callable[[pa.RecordBatch], pa.Array]

_COMPARE = {
    "=": pc.equal,
    "!=": pc.not_equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}
#: ``literal <op> column`` as ``column <op'> literal``
_MIRROR = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

_INT, _STR, _BOOL = "int", "str", "bool"


def compile_filter(expr: Any, schema: pa.Schema) -> Kernel | None:
    """Arrow kernels computing parsed filter ``expr`` (a DataFusion expression) over batches
    of ``schema``, or None where the filter is not of the simple forms above."""
    try:
        return _Compiler(schema).boolean(expr)
    except (_Unsupported, RecursionError):  # (deeper than Python's frames: DataFusion's)
        return None


class _Unsupported(Exception):
    """The expression is not one the kernels compute exactly as DataFusion does."""


def _kind(t: pa.DataType) -> str | None:
    if pa.types.is_integer(t):
        return _INT
    if is_string_like(t):
        return _STR
    if pa.types.is_boolean(t):
        return _BOOL
    return None


class _Compiler:
    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema

    @staticmethod
    def _variant(e: Any) -> tuple[str, Any]:
        try:
            v = e.to_variant()
        except Exception as err:  # kinds the bindings do not convert (functions...)
            raise _Unsupported from err
        return type(v).__name__, v

    def _column(self, e: Any) -> tuple[str, pa.DataType] | None:
        kind, v = self._variant(e)
        if kind != "Column":
            return None
        name = v.name()
        if self.schema.get_field_index(name) < 0:  # (absent or ambiguous)
            raise _Unsupported
        t = self.schema.field(name).type
        if _kind(t) is None:
            raise _Unsupported
        return name, t

    def _literal(self, e: Any, t: pa.DataType) -> pa.Scalar:
        """Literal ``e`` as a scalar of column type ``t`` (its value unchanged)."""
        kind, v = self._variant(e)
        if kind != "Literal":
            raise _Unsupported
        value = e.python_value()
        if not isinstance(value, pa.Scalar) or not value.is_valid:
            raise _Unsupported  # (NULL: DataFusion's typing of it is left to DataFusion)
        want = _kind(t)
        vt = value.type
        if want != _kind(vt):
            raise _Unsupported
        if want == _INT and not int_fits(t, value.as_py()):
            raise _Unsupported
        return pa.scalar(value.as_py(), t)

    def _operand(self, e: Any) -> tuple[Kernel, pa.DataType]:
        """A column, or ``column % k`` of an integer column with ``k > 0``."""
        found = self._column(e)
        if found is not None:
            name, t = found
            return (lambda b, name=name: b.column(name)), t
        kind, v = self._variant(e)
        if kind == "BinaryExpr" and str(v.op()) == "%":
            found = self._column(v.left())
            if found is None or _kind(found[1]) != _INT:
                raise _Unsupported
            name, t = found
            k = self._literal(v.right(), t)
            if k.as_py() <= 0:
                raise _Unsupported
            return (lambda b, name=name, k=k: pc.remainder(b.column(name), k)), t
        raise _Unsupported

    def boolean(self, e: Any) -> Kernel:
        kind, v = self._variant(e)
        if kind == "BinaryExpr":
            return self._any(e) if str(v.op()).upper() == "OR" else self._binary(v)
        if kind == "Not":
            inner = self.boolean(v.expr())
            return lambda b: pc.invert(inner(b))
        if kind in ("IsNull", "IsNotNull"):
            found = self._column(v.expr())
            if found is None:
                raise _Unsupported
            name = found[0]
            test = pc.is_null if kind == "IsNull" else pc.is_valid
            return lambda b: test(b.column(name))
        if kind == "Between":
            value, t = self._operand(v.expr())
            lo, hi = self._literal(v.low(), t), self._literal(v.high(), t)
            negated = v.negated()

            def between(b: pa.RecordBatch) -> pa.Array:
                x = value(b)
                got = pc.and_kleene(pc.greater_equal(x, lo), pc.less_equal(x, hi))
                return pc.invert(got) if negated else got

            return between
        if kind == "InList":
            value, t = self._operand(v.expr())
            values = pa.array([self._literal(x, t).as_py() for x in v.list()], t)
            negated = v.negated()

            def in_list(b: pa.RecordBatch) -> pa.Array:
                got = _is_in(value(b), values)
                return pc.invert(got) if negated else got

            return in_list
        found = self._column(e) if kind == "Column" else None
        if found is not None and _kind(found[1]) == _BOOL:
            name = found[0]
            return lambda b: b.column(name)
        raise _Unsupported

    def _any(self, e: Any) -> Kernel:
        """An ``OR`` of terms (any nesting of ``OR`` flattened, without recursion): the
        terms ``column = literal`` of one column become one set lookup (as ``IN``: a null
        tested is null), the others are compiled on their own; ``OR`` is commutative in
        Kleene logic, so the order of the terms does not change the value. (A filter of
        10,000 ``id = k`` terms was 10,000 kernel calls per batch.)"""
        terms, stack = [], [e]
        while stack:
            term = stack.pop()
            kind, v = self._variant(term)
            if kind == "BinaryExpr" and str(v.op()).upper() == "OR":
                stack += [v.right(), v.left()]  # (left first: the terms in text order)
            else:
                terms.append((term, kind, v))
        kernels: list[Kernel] = []
        sets: dict[str, tuple[pa.DataType, list[Any]]] = {}
        for term, kind, v in terms:
            equal = self._equality(v) if kind == "BinaryExpr" else None
            if equal is None:
                kernels.append(self.boolean(term))
                continue
            name, t, value = equal
            sets.setdefault(name, (t, []))[1].append(value)
        for name, (t, values) in sets.items():
            kernels.append(_in_set(name, pa.array(values, t)))
        if len(kernels) == 1:
            return kernels[0]

        def any_of(b: pa.RecordBatch) -> pa.Array:
            out = kernels[0](b)
            for k in kernels[1:]:
                out = pc.or_kleene(out, k(b))
            return out

        return any_of

    def _binary(self, v: Any) -> Kernel:
        """A binary expression other than ``OR`` (its variant ``v``)."""
        op = str(v.op()).upper()
        if op == "AND":
            left, right = self.boolean(v.left()), self.boolean(v.right())
            return lambda b: pc.and_kleene(left(b), right(b))
        if op in _COMPARE:
            return self._comparison(op, v.left(), v.right())
        raise _Unsupported

    def _equality(self, v: Any) -> tuple[str, pa.DataType, Any] | None:
        """``column = literal`` or ``literal = column`` of a plain column (its variant ``v``):
        the column's name and type and the literal's value; else None."""
        if str(v.op()) != "=":
            return None
        for col, lit in ((v.left(), v.right()), (v.right(), v.left())):
            found = self._column(col)
            if found is not None:
                name, t = found
                try:
                    return name, t, self._literal(lit, t).as_py()
                except _Unsupported:
                    return None
        return None

    def _comparison(self, op: str, left: Any, right: Any) -> Kernel:
        try:
            value, t = self._operand(left)
            literal = right
        except _Unsupported:
            value, t = self._operand(right)
            literal, op = left, _MIRROR[op]
        scalar = self._literal(literal, t)
        f = _COMPARE[op]
        return lambda b: f(value(b), scalar)


def _is_in(x: pa.Array, values: pa.Array) -> pa.Array:
    """Whether each value of ``x`` is among ``values`` (which hold no nulls); a null tested
    is null, not false, as in SQL."""
    got = pc.is_in(x, value_set=values)
    return pc.if_else(pc.is_valid(x), got, pa.scalar(None, pa.bool_()))


def _in_set(name: str, values: pa.Array) -> Kernel:
    return lambda b: _is_in(b.column(name), values)
