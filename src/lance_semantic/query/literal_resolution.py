"""Lance's literal resolution (``resolve_expr`` / ``safe_coerce_scalar`` in lance-datafusion),
over parsed DataFusion expressions (layer L3).

Before it plans an expression, Lance coerces a literal to the type of the column it meets:
in ``a * 2`` on an ``int32`` column the ``2`` becomes an ``int32`` (so the value is an
``int32`` and ``a + 1`` at the ``int32`` maximum wraps, as Arrow's arithmetic does), in
``f = 0.1`` on a ``float32`` column the ``0.1`` becomes a ``float32`` (so the row holding
``float32(0.1)`` matches), and ``a + 1.5`` is refused because ``1.5`` is not an ``int32``.
Only the top level of a comparison or arithmetic expression is resolved (``(a + 1) + 1``
is computed in ``int64``), plus ``AND`` / ``OR`` operands, ``BETWEEN`` bounds and ``IN``
lists. Every user expression goes through it: filters, ``update`` values, ``add_columns``
SQL and SQL projections.
"""

from __future__ import annotations

import decimal
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import InvalidExpressionError
from ..types.families import is_string_like

__all__ = ["LiteralResolver", "coerce_scalar", "wrap_expr"]

_BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_NUMERICAL = frozenset({"+", "-", "*", "/", "%"})


_BINARIES = (pa.binary(), pa.large_binary(), pa.binary_view())


def _float_scalar(v: float, target: pa.DataType) -> pa.Scalar:
    """``v`` as a literal of float type ``target`` (Arrow takes a half float as numpy's)."""
    return pa.scalar(np.float16(v) if pa.types.is_float16(target) else v, target)


def coerce_scalar(value: pa.Scalar, target: pa.DataType) -> pa.Scalar | None:
    """``safecoerce_scalar``: ``value`` as a literal of ``target``, or None when Lance
    refuses the conversion."""
    dt = value.type
    if pa.types.is_null(dt):
        return value
    if pa.types.is_dictionary(target):
        return coerce_scalar(value, target.value_type)
    v = value.as_py()
    if v is None:
        return pa.scalar(None, target) if dt == target else None
    if pa.types.is_integer(dt):
        if pa.types.is_integer(target):
            try:
                return pa.scalar(v, target)
            except (pa.ArrowInvalid, OverflowError):
                return None
        if pa.types.is_floating(target):
            return _float_scalar(float(v), target)
        if pa.types.is_decimal(target) and dt == pa.int64():
            # by value: Arrow's cast asks the precision of every int64 (19 digits + scale)
            try:
                return pa.scalar(decimal.Decimal(v), target)
            except (pa.ArrowInvalid, OverflowError, decimal.InvalidOperation):
                return None
        return None
    if pa.types.is_floating(dt):
        if pa.types.is_floating(target):
            return _float_scalar(v if math.isnan(v) else float(v), target)
        return None
    if is_string_like(dt):
        if target in (pa.string(), pa.large_string(), pa.string_view()):
            return pa.scalar(v, target)
        return None
    if dt in _BINARIES:
        return pa.scalar(v, target) if target in _BINARIES else None
    if pa.types.is_boolean(dt):
        return value if pa.types.is_boolean(target) else None
    if pa.types.is_timestamp(dt) and pa.types.is_timestamp(target):
        try:
            return value.cast(pa.timestamp(target.unit, dt.tz)).cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    if dt == target:
        return value
    return None


def wrap_expr(raw: Any) -> Any:
    """A ``datafusion.Expr`` around a sub-expression taken from ``Expr.to_variant()``."""
    from datafusion import Expr

    return raw if isinstance(raw, Expr) else Expr(raw)


class LiteralResolver:
    """Lance's literal resolution over one DataFusion frame (``resolve_expr``)."""

    def __init__(self, df: Any, sql: str) -> None:
        self._df = df
        self._sql = sql

    def _type_of(self, expr: Any) -> pa.DataType:
        return self._df.select(expr.alias("__t")).schema().field(0).type

    def _column_type(self, expr: Any) -> pa.DataType | None:
        """The type of a column or nested ``get_field`` reference, else None."""
        kind = expr.variant_name()
        if kind == "Column" or (
            kind == "ScalarFunction" and expr.canonical_name().startswith("get_field(")
        ):
            return self._type_of(expr)
        return None

    def _literal(self, expr: Any, target: pa.DataType) -> Any:
        from datafusion import Expr

        value = expr.python_value()
        coerced = coerce_scalar(value, target)
        if coerced is None:
            raise InvalidExpressionError(
                self._sql,
                f"received literal {value.as_py()!r} ({value.type}) and could not convert it "
                f"to a literal of type {target}",
            )
        return Expr.literal(coerced)

    def _coerce(self, expr: Any, target: pa.DataType) -> Any:
        """``coerce_expr``: every literal of a literal expression as ``target``."""
        kind = expr.variant_name()
        if kind == "Literal":
            return self._literal(expr, target)
        if kind == "BinaryExpr":
            v = expr.to_variant()
            build = _BINARY_OPERATORS.get(v.op())
            if build is not None:
                return build(
                    self._coerce(wrap_expr(v.left()), target),
                    self._coerce(wrap_expr(v.right()), target),
                )
        return expr

    def _literal_only(self, expr: Any) -> bool:
        kind = expr.variant_name()
        if kind == "Literal":
            return True
        if kind == "BinaryExpr":
            v = expr.to_variant()
            return (
                v.op() in _NUMERICAL
                and self._literal_only(wrap_expr(v.left()))
                and self._literal_only(wrap_expr(v.right()))
            )
        return False

    def resolve(self, expr: Any) -> Any:
        kind = expr.variant_name()
        if kind == "BinaryExpr":
            v = expr.to_variant()
            op, left, right = v.op(), wrap_expr(v.left()), wrap_expr(v.right())
            if op in ("AND", "OR"):
                resolved = [self.resolve(left), self.resolve(right)]
                return resolved[0] & resolved[1] if op == "AND" else resolved[0] | resolved[1]
            build = _BINARY_OPERATORS.get(op)
            if build is None:
                return expr
            left_type = self._column_type(left)
            if left_type is not None:
                if right.variant_name() in ("Literal", "Cast") or self._literal_only(right):
                    return build(left, self._coerce(right, left_type))
                return expr
            right_type = self._column_type(right)
            if right_type is not None and left.variant_name() in ("Literal", "Cast"):
                return build(self._coerce(left, right_type), right)
            return expr
        if kind == "Between":
            v = expr.to_variant()
            inner = wrap_expr(v.expr())
            inner_type = self._column_type(inner)
            if inner_type is None:
                return expr
            return inner.between(
                self._coerce(wrap_expr(v.low()), inner_type),
                self._coerce(wrap_expr(v.high()), inner_type),
                negated=v.negated(),
            )
        if kind == "InList":
            from datafusion import functions

            v = expr.to_variant()
            inner = wrap_expr(v.expr())
            if inner.variant_name() != "Column":
                return expr
            inner_type = self._type_of(inner)
            values = [self._coerce(wrap_expr(item), inner_type) for item in v.list()]
            return functions.in_list(inner, values, v.negated())
        return expr
