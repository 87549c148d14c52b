"""Which rows the scalar indices select for a filter (layer L3).

:func:`select_rows` walks a parsed filter (a DataFusion ``Expr`` whose literals have the
types of the columns they meet) and answers what it can from the indices of its columns:

- ``col = v``, ``col IN (...)``, ``<`` / ``<=`` / ``>`` / ``>=`` (either side),
  ``BETWEEN``, ``IS NULL`` / ``IS NOT NULL`` over a BTREE or BITMAP;
  ``array_has_any`` / ``array_has_all`` / ``array_has`` over a LABEL_LIST;
- ``AND``: the intersection (a side that no index answers is left out: the other side's
  rows are a superset); ``OR``: the union, only when both sides are answered;
- ``NOT``, ``<>``, ``NOT IN``, ``NOT BETWEEN``: the complement of an *exact* inner
  selection (a superset: the rows where the inner predicate is null come back).

The caller evaluates the whole filter again on the selected rows, so a scan through the
indices returns what an unindexed scan returns, unless the selection is ``complete``:
exactly the filter's rows (every part answered exactly), so counting needs no rows and
the rows taken need no evaluation.

A filter of the simple shape (``query.simple_filters``: comparisons, ``IN``, ``BETWEEN``,
``IS NULL`` with ``AND`` / ``OR`` / ``NOT``) arrives as that small tree instead of a
DataFusion ``Expr``, and is walked the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from ..query.simple_filters import (
    Between,
    Both,
    Compare,
    Either,
    InValues,
    Negation,
    NullTest,
    SimpleFilter,
)
from .rowsets import RowSelection

__all__ = ["ScalarIndex", "Selected", "select_rows"]


class ScalarIndex(Protocol):
    """What the planner asks of an index (BTREE, BITMAP, LABEL_LIST)."""

    kind: str
    name: str
    fragments: frozenset[int]

    def in_values(
        self,
        values: Sequence[pa.Scalar],
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None: ...

    def between(
        self,
        low: pa.Scalar | None,
        low_in: bool,
        high: pa.Scalar | None,
        high_in: bool,
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None: ...

    def is_null(self, physical: Mapping[int, int]) -> RowSelection: ...

    def is_not_null(self, physical: Mapping[int, int]) -> RowSelection: ...


@dataclass(frozen=True)
class Selected:
    """The rows the indices select for a filter. ``complete``: they are exactly the
    filter's rows (before deletions)."""

    selection: RowSelection
    complete: bool


_SIMPLE = (Compare, InValues, Between, NullTest, Both, Either, Negation)
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!=", "<>": "<>"}


def select_rows(
    expr: Any,
    indices: Mapping[str, Sequence[ScalarIndex]],
    physical: Mapping[int, int],
    *,
    budget: int | None = None,
) -> Selected | None:
    """The rows the ``indices`` (by column name; several entries of one column cover
    disjoint fragments) select for filter ``expr`` over the scanned fragments
    (``physical``: their physical row counts), or None when no part is answered.
    ``budget``: a BTREE comparison that would read pages of more rows than this is not
    answered (a selection that large is not used: its pages are never read)."""
    walker = _Walker(indices, physical, budget)
    parts = _conjuncts(expr)
    answered = [walker.answer(p) for p in parts]
    found = [a for a in answered if a is not None]
    if not found:
        return None
    out = found[0]
    for a in found[1:]:
        out = out.intersect(a)
    complete = out.exact and len(found) == len(parts)
    return Selected(out, complete)


def _variant(e: Any) -> Any:
    try:
        return e.to_variant()
    except (ValueError, NotImplementedError, AttributeError):
        return None


def _conjuncts(expr: Any) -> list[Any]:
    if isinstance(expr, Both):
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    if isinstance(expr, _SIMPLE):
        return [expr]
    v = _variant(expr)
    if type(v).__name__ == "BinaryExpr" and str(v.op()).upper() == "AND":
        return _conjuncts(v.left()) + _conjuncts(v.right())
    return [expr]


class _Walker:
    def __init__(
        self,
        indices: Mapping[str, Sequence[ScalarIndex]],
        physical: Mapping[int, int],
        budget: int | None,
    ) -> None:
        self.indices, self.physical, self.budget = indices, physical, budget

    def answer(self, e: Any) -> RowSelection | None:
        if isinstance(e, _SIMPLE):
            return self.simple(e)
        try:
            kind = e.variant_name()
        except AttributeError:
            return None
        if kind == "ScalarFunction":
            return self._function(e)
        v = _variant(e)
        if v is None:
            return None
        kind = type(v).__name__
        if kind == "BinaryExpr":
            return self._binary(v)
        if kind == "Not":
            return self._not(self.answer(v.expr()))
        if kind == "InList":
            got = self._in(v.expr(), list(v.list()))
            return self._not(got) if v.negated() else got
        if kind == "Between":
            got = self._between(v.expr(), v.low(), v.high())
            return self._not(got) if v.negated() else got
        if kind in ("IsNull", "IsNotNull"):
            column = self._column(v.expr(), label_list=None)
            if column is None:
                return None
            if kind == "IsNull":
                return self._each(column, lambda ix: ix.is_null(self.physical))
            return self._each(column, lambda ix: ix.is_not_null(self.physical))
        return None

    # ---- combinations ----------------------------------------------------------------
    def _binary(self, v: Any) -> RowSelection | None:
        op = str(v.op()).upper()
        if op == "AND":
            left, right = self.answer(v.left()), self.answer(v.right())
            if left is None or right is None:
                return left if right is None else right
            return left.intersect(right)
        if op == "OR":
            left, right = self.answer(v.left()), self.answer(v.right())
            if left is None or right is None:
                return None
            return left.union(right)
        if op not in _FLIP:
            return None
        column, literal = self._column(v.left()), _literal(v.right())
        if column is None:
            column, literal = self._column(v.right()), _literal(v.left())
            op = _FLIP[op]
        if column is None or literal is None:
            return None
        if not literal.is_valid:  # compared with NULL: never true
            return self._none(column)
        return self._compare(column, op, literal)

    def _compare(self, column: str, op: str, literal: pa.Scalar) -> RowSelection | None:
        """``column <op> literal`` (a valid literal)."""
        if op in ("!=", "<>"):
            return self._not(self._values(column, [literal]))
        if op == "=":
            return self._values(column, [literal])
        if op in (">", ">="):
            return self._range(column, literal, op == ">=", None, False)
        return self._range(column, None, False, literal, op == "<=")

    def _values(self, column: str, values: list[pa.Scalar]) -> RowSelection | None:
        """``column IN (values)`` (valid literals)."""
        return self._each(
            column, lambda ix: ix.in_values(values, self.physical, budget=self.budget)
        )

    def _range(
        self,
        column: str,
        low: pa.Scalar | None,
        low_in: bool,
        high: pa.Scalar | None,
        high_in: bool,
    ) -> RowSelection | None:
        return self._each(
            column,
            lambda ix: ix.between(low, low_in, high, high_in, self.physical, budget=self.budget),
        )

    def simple(self, node: SimpleFilter) -> RowSelection | None:
        """The rows of a filter read without DataFusion (``query.simple_filters``)."""
        if isinstance(node, (Both, Either)):
            left, right = self.simple(node.left), self.simple(node.right)
            if isinstance(node, Both):
                if left is None or right is None:
                    return left if right is None else right
                return left.intersect(right)
            if left is None or right is None:
                return None
            return left.union(right)
        if isinstance(node, Negation):
            return self._not(self.simple(node.inner))
        column = self._indexed(node.column, label_list=False)
        if column is None:
            return None
        if isinstance(node, Compare):
            return self._compare(column, node.op, node.value)
        if isinstance(node, InValues):
            got = self._values(column, list(node.values))
            return self._not(got) if node.negated else got
        if isinstance(node, Between):
            got = self._range(column, node.low, True, node.high, True)
            return self._not(got) if node.negated else got
        if node.negated:
            return self._each(column, lambda ix: ix.is_not_null(self.physical))
        return self._each(column, lambda ix: ix.is_null(self.physical))

    def _not(self, inner: RowSelection | None) -> RowSelection | None:
        if inner is None or not inner.exact:
            return None
        return inner.complement(self.physical)

    def _in(self, target: Any, items: list[Any]) -> RowSelection | None:
        column = self._column(target)
        literals = [_literal(x) for x in items]
        if column is None or not literals or any(lit is None for lit in literals):
            return None
        valid = [lit for lit in literals if lit is not None and lit.is_valid]
        if not valid:
            return self._none(column)
        return self._values(column, valid)

    def _between(self, target: Any, low: Any, high: Any) -> RowSelection | None:
        column = self._column(target)
        lo, hi = _literal(low), _literal(high)
        if column is None or lo is None or hi is None:
            return None
        if not lo.is_valid or not hi.is_valid:
            return None
        return self._range(column, lo, True, hi, True)

    def _function(self, e: Any) -> RowSelection | None:
        try:
            name = str(e.rex_call_operator()).lower()
            args = list(e.rex_call_operands())
        except Exception:  # (an expression the bindings cannot take apart)
            return None
        if name not in ("array_has_any", "array_has_all", "array_has") or len(args) != 2:
            return None
        column = self._column(args[0], label_list=True)
        if column is None:
            return None
        if name == "array_has":
            needle = _literal(args[1])
            values = None if needle is None else [needle]
        else:
            values = _array_literal(args[1])
        if not values or any(not v.is_valid for v in values):
            return None
        if name == "array_has_all":
            return self._each(column, lambda ix: ix.has_all(values, self.physical))
        return self._each(column, lambda ix: ix.has_any(values, self.physical))

    # ---- leaves ----------------------------------------------------------------------
    def _column(self, e: Any, *, label_list: bool | None = False) -> str | None:
        """The name of the indexed column ``e`` is (``label_list``: of LABEL_LIST indices
        only, of the others only, or None: any), else None."""
        v = _variant(e)
        if type(v).__name__ != "Column":
            return None
        return self._indexed(v.name(), label_list=label_list)

    def _indexed(self, name: str, *, label_list: bool | None) -> str | None:
        """``name`` when the column has indices (of the kind ``label_list`` asks)."""
        found = self.indices.get(name)
        if not found:
            return None
        if label_list is not None and any((ix.kind == "LABEL_LIST") != label_list for ix in found):
            return None
        return str(name)

    def _each(self, column: str, ask: Any) -> RowSelection | None:
        """The answers of every index of ``column`` (disjoint fragments), merged."""
        rows: dict[int, Any] = {}
        exact = True
        names: tuple[str, ...] = ()
        for ix in self.indices[column]:
            got = ask(ix)
            if got is None:
                return None
            rows.update(got.rows)
            exact = exact and got.exact
            names += tuple(n for n in got.indices if n not in names)
        return RowSelection(rows, exact, names)

    def _none(self, column: str) -> RowSelection:
        from pyroaring import BitMap

        rows = {
            f: BitMap() for ix in self.indices[column] for f in ix.fragments & self.physical.keys()
        }
        return RowSelection(rows, True, tuple(ix.name for ix in self.indices[column]))


def _literal(e: Any) -> pa.Scalar | None:
    """The value of a literal (or a cast of one, as ``date '2020-01-01'`` parses)."""
    v = _variant(e)
    kind = type(v).__name__
    try:
        if kind == "Literal":
            value = e.python_value()
            return value if isinstance(value, pa.Scalar) else pa.scalar(value)
        if kind == "Cast":  # the index casts the literal to its own type (as the cast would)
            return _literal(v.expr())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None
    return None


def _array_literal(e: Any) -> list[pa.Scalar] | None:
    """The items of ``make_array(literal, ...)`` (how ``['a', 'b']`` parses)."""
    try:
        if str(e.variant_name()) != "ScalarFunction":
            return None
        if str(e.rex_call_operator()).lower() not in ("make_array", "make_list"):
            return None
        items = [_literal(x) for x in e.rex_call_operands()]
    except Exception:
        return None
    if any(i is None for i in items):
        return None
    return [i for i in items if i is not None]
