"""What a SQL expression must give in its place (layer L3): a filter or condition gives
booleans, an update value converts to its column's type. Checked on no rows before anything
is read, as pylance checks them, so a bad expression never moves a table's version and gets
an ``InvalidExpressionError`` naming the expression."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ..codecs.kernel_layout import has_view, to_kernel_layout
from ..errors import InvalidExpressionError
from .engine_text import float_text, is_float_to_text

__all__ = ["check_boolean_result", "check_update_value", "cast_update_value", "empty_batch"]


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    """No rows of ``schema`` (``pa.nulls``: it builds nested extension types, which
    ``from_pylist`` and ``empty_table`` cannot)."""
    return pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)


def check_boolean_result(
    name: str, expression: object, evaluate: Callable[[pa.RecordBatch], Any], schema: pa.Schema
) -> None:
    """``expression`` (a filter or a condition), evaluated on no rows of ``schema``, gives
    booleans, as pylance requires before it reads anything (a bare ``NULL`` is refused
    there too)."""
    result = evaluate(empty_batch(schema))
    if not pa.types.is_boolean(result.type):
        raise InvalidExpressionError(
            str(expression), f"{name} must be a boolean expression, but it gives {result.type}"
        )


def check_update_value(
    column: str, sql: str, evaluate: Callable[[pa.RecordBatch], pa.Array], schema: pa.Schema
) -> None:
    """The update expression ``sql`` for ``column`` gives values storable in it: its type
    casts to the column's, and a constant (an expression that does not depend on the row)
    converts, so ``'text'`` for an int column fails before any row is read."""
    target = schema.field(column).type
    result = _plain(evaluate(empty_batch(schema)), column)
    try:
        result.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise InvalidExpressionError(
            sql, f"gives {result.type}, which column {column!r} ({target}) cannot hold"
        ) from None
    one = pa.RecordBatch.from_arrays([pa.nulls(1)], names=["__one_row"])
    try:
        constant = evaluate(one)
    except InvalidExpressionError:  # it reads columns: checked per value by cast_update_value
        return
    cast_update_value(column, sql, constant, target)


def cast_update_value(column: str, sql: str, values: pa.Array, target: pa.DataType) -> pa.Array:
    """``values`` of an update expression as ``target`` (the column's type), or an
    ``InvalidExpressionError`` naming the column and the value that does not fit. A view
    the engine computed is taken in its non-view layout first (Arrow casts no view to a
    dictionary; the view is DataFusion's layout, not a type)."""
    values = _plain(values, column)
    if is_float_to_text(values.type, target):  # pylance's engine formats floats its own way
        return float_text(values, target)
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise InvalidExpressionError(
            sql, f"a value does not fit column {column!r} ({target}): {str(e).splitlines()[0]}"
        ) from None


def _plain(values: pa.Array, column: str) -> pa.Array:
    if not has_view(values.type):
        return values
    out = to_kernel_layout(values, column)
    assert isinstance(out, pa.Array)
    return out
