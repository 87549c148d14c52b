"""SQL expressions that define new columns (``add_columns({"b": "a * 2"})``), evaluated the
way pylance 14 evaluates them (layer L3).

Lance parses the expression with DataFusion and then, before planning, coerces literals to
the type of the column they meet (``resolve_expr`` / ``safe_coerce_scalar`` in
lance-datafusion): in ``a * 2`` on an ``int32`` column the literal ``2`` becomes an ``int32``,
so the new column is ``int32`` (plain DataFusion would widen it to ``int64``), and
``a + 1.5`` is refused because ``1.5`` is not an ``int32``. Only the top level of a
comparison or arithmetic expression is resolved (``a * 2 + 1`` is ``int64`` in pylance
too), plus ``AND`` / ``OR`` operands, ``BETWEEN`` bounds and ``IN`` lists. This module
reproduces that resolution so that the new columns get pylance's Arrow types and
nullability; :class:`ColumnExpression` evaluates one expression batch by batch.
"""

from __future__ import annotations

import decimal
import math
import operator
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ..codecs.kernel_layout import kernel_type, to_kernel_layout
from ..errors import InvalidExpressionError
from ..types.arrow_names import has_dictionary
from ..types.families import is_string_like
from .sql_parse import parse_expression

__all__ = ["ColumnExpression", "is_null_cast", "stored_type"]

#: DataFusion 55's string functions that keep a dictionary argument's encoding in their
#: result (``upper(d)`` is a ``dictionary<int32, string>``, ``length(d)`` a dictionary of
#: int32); DataFusion 54, pylance 14's engine, decodes the argument first, and so pylance
#: stores plain values. Found by calling every scalar function on dictionary arguments.
_DICTIONARY_KEEPING = frozenset(
    {
        "upper",
        "lower",
        "btrim",
        "trim",
        "ltrim",
        "rtrim",
        "initcap",
        "reverse",
        "ascii",
        "bit_length",
        "octet_length",
        "character_length",
        "char_length",
        "length",
    }
)

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


def _session() -> Any:
    """A DataFusion session that keeps rows in order: with more than one target partition
    DataFusion repartitions a batch of over 8,192 rows round-robin and the values of one
    expression come back out of row order."""
    from datafusion import SessionConfig, SessionContext

    return SessionContext(SessionConfig().with_target_partitions(1))


def _empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    if not len(schema):
        return pa.RecordBatch.from_struct_array(pa.nulls(0, pa.struct([])))
    return pa.RecordBatch.from_pylist([], schema=schema)


def _coerce_scalar(value: pa.Scalar, target: pa.DataType) -> pa.Scalar | None:
    """``safe_coerce_scalar``: ``value`` as a literal of ``target``, or None when Lance
    refuses the conversion."""
    dt = value.type
    if pa.types.is_null(dt):
        return value
    if pa.types.is_dictionary(target):
        return _coerce_scalar(value, target.value_type)
    v = value.as_py()
    if v is None:
        return pa.scalar(None, target) if dt == target else None
    if pa.types.is_integer(dt):
        if pa.types.is_integer(target):
            try:
                return pa.scalar(v, target)
            except (pa.ArrowInvalid, OverflowError):
                return None
        if pa.types.is_floating(target) and not pa.types.is_float16(target):
            return pa.scalar(float(v), target)
        if pa.types.is_decimal(target) and dt == pa.int64():
            # by value: Arrow's cast asks the precision of every int64 (19 digits + scale)
            try:
                return pa.scalar(decimal.Decimal(v), target)
            except (pa.ArrowInvalid, OverflowError, decimal.InvalidOperation):
                return None
        return None
    if pa.types.is_floating(dt):
        if target in (pa.float32(), pa.float64()):
            return pa.scalar(v if math.isnan(v) else float(v), target)
        return None
    if is_string_like(dt):
        if target in (pa.string(), pa.large_string(), pa.string_view()):
            return pa.scalar(v, target)
        return None
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


def _wrap(raw: Any) -> Any:
    """A ``datafusion.Expr`` around a sub-expression taken from ``Expr.to_variant()``."""
    from datafusion import Expr

    return raw if isinstance(raw, Expr) else Expr(raw)


class _Resolver:
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
        coerced = _coerce_scalar(value, target)
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
                    self._coerce(_wrap(v.left()), target), self._coerce(_wrap(v.right()), target)
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
                and self._literal_only(_wrap(v.left()))
                and self._literal_only(_wrap(v.right()))
            )
        return False

    def resolve(self, expr: Any) -> Any:
        kind = expr.variant_name()
        if kind == "BinaryExpr":
            v = expr.to_variant()
            op, left, right = v.op(), _wrap(v.left()), _wrap(v.right())
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
            inner = _wrap(v.expr())
            inner_type = self._column_type(inner)
            if inner_type is None:
                return expr
            return inner.between(
                self._coerce(_wrap(v.low()), inner_type),
                self._coerce(_wrap(v.high()), inner_type),
                negated=v.negated(),
            )
        if kind == "InList":
            from datafusion import functions

            v = expr.to_variant()
            inner = _wrap(v.expr())
            if inner.variant_name() != "Column":
                return expr
            inner_type = self._type_of(inner)
            values = [self._coerce(_wrap(item), inner_type) for item in v.list()]
            return functions.in_list(inner, values, v.negated())
        return expr


def stored_type(dt: pa.DataType, *, dictionaries: bool = False) -> pa.DataType:
    """The Arrow type a new column computed as ``dt`` by DataFusion is stored as: every view
    as its non-view layout (``string``, ``binary``; at any depth), and with
    ``dictionaries`` every dictionary as its values. Views are DataFusion's choice, never
    the user's: pylance stores them as the plain layouts (``md5(s)``,
    ``arrow_cast(s, 'Utf8View')`` and ``CAST(x AS VARCHAR)`` make ``string`` columns).

    >>> stored_type(pa.struct([("k", pa.string_view()), ("l", pa.list_(pa.binary_view()))]))
    StructType(struct<k: string, l: list<item: binary>>)
    >>> stored_type(pa.dictionary(pa.int32(), pa.int32()), dictionaries=True)
    DataType(int32)
    """
    if dictionaries:
        dt = kernel_type(dt, dictionaries=True)
    return kernel_type(dt)


def _keeps_dictionaries(df: Any, expr: Any) -> bool:
    """Whether ``expr`` hands a dictionary to one of :data:`_DICTIONARY_KEEPING` (a walk of
    the expression tree, without recursion: expressions may be deep)."""
    stack = [expr]
    while stack:
        node = _wrap(stack.pop())
        kind = node.variant_name()
        if kind in ("Column", "Literal", "ScalarVariable", "Placeholder", "Wildcard"):
            continue
        try:
            operands = node.rex_call_operands()
        except Exception:  # a node kind without operands
            continue
        if (
            kind == "ScalarFunction"
            and node.rex_call_operator() in _DICTIONARY_KEEPING
            and operands
            and pa.types.is_dictionary(
                df.select(_wrap(operands[0]).alias("__t")).schema().field(0).type
            )
        ):
            return True
        stack.extend(operands)
    return False


def is_null_cast(sql: str, read_schema: pa.Schema) -> pa.DataType | None:
    """The type of ``CAST(NULL AS <type>)``, or None for any other expression.

    pylance turns a set of such expressions into all-null columns (a metadata-only add,
    like ``add_columns(pa.field(...))``) instead of writing data files.
    """
    df = _session().read_batches([_empty_batch(read_schema)])
    try:
        expr = parse_expression(df, sql)
    except InvalidExpressionError:  # ColumnExpression reports it
        return None
    if expr.variant_name() != "Cast":
        return None
    inner = _wrap(expr.to_variant().expr())
    if inner.variant_name() != "Literal" or not pa.types.is_null(inner.python_value().type):
        return None
    return df.select(expr.alias("__t")).schema().field(0).type


class ColumnExpression:
    """One new column's SQL expression, planned once against the schema of the batches it
    will see; :attr:`field` is the new column as pylance types it (name, Arrow type and
    DataFusion's nullability)."""

    def __init__(self, name: str, sql: str, read_schema: pa.Schema) -> None:
        if not isinstance(sql, str):
            raise TypeError(f"column expressions must be strings, got {type(sql).__name__}")
        self.name = name
        self.sql = sql
        self._ctx = _session()
        df, expr = self._plan(_empty_batch(read_schema))
        try:
            self.field: pa.Field = df.select(expr.alias(name)).schema().field(0)
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(sql, str(e).splitlines()[0]) from e
        self._decode = has_dictionary(self.field.type) and _keeps_dictionaries(df, expr)
        #: the new column as ``add_columns`` stores it (:func:`stored_type`)
        self.stored_field: pa.Field = self.field.with_type(
            stored_type(self.field.type, dictionaries=self._decode)
        )

    def _plan(self, batch: pa.RecordBatch) -> tuple[Any, Any]:
        # an anonymous frame: a registered one would stay in the session, holding its batch,
        # until the expression is dropped (every batch of a scan or an add_columns)
        df = self._ctx.read_batches([batch])
        try:
            expr = parse_expression(df, self.sql)
            return df, _Resolver(df, self.sql).resolve(expr)
        except InvalidExpressionError:
            raise
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e

    def evaluate(self, batch: pa.RecordBatch) -> pa.Array:
        """The expression's value for every row of ``batch`` (one array, ``field.type``)."""
        df, expr = self._plan(batch)
        try:
            out = df.select(expr.alias(self.name)).to_arrow_table().column(0)
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e
        if len(out) != batch.num_rows:  # an aggregate would collapse the rows
            raise InvalidExpressionError(self.sql, "must give one value per row")
        arr = out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)
        return arr if arr.type == self.field.type else arr.cast(self.field.type)

    def evaluate_stored(self, batch: pa.RecordBatch) -> pa.Array:
        """:meth:`evaluate` in :attr:`stored_field`'s layout (64-bit offsets where a view's
        values need them)."""
        arr = self.evaluate(batch)
        if arr.type == self.stored_field.type:
            return arr
        out = to_kernel_layout(arr, self.name, dictionaries=self._decode)
        assert isinstance(out, pa.Array)
        return out
