"""Literals in filters keep their type, as in pylance (layer L3).

pylance 14 refuses a filter that compares a column with a literal whose value its type
cannot hold unchanged (``id > '3'`` on an integer column, ``id = 2.0``, ``i8 < 300``,
``s = 1`` on a string column, ``d > '2020-01-01'`` on a date), where DataFusion alone
would cast and quietly compare something else. The rule applies where pylance applies it:
to comparisons (``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``), ``IN`` lists and ``BETWEEN``
bounds between a column and literals, reached through ``AND`` / ``OR`` from the top of the
filter. A literal that is arithmetic over literals (``s > 3 - 1``) is checked term by term.
``NULL`` is always allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ..errors import InvalidExpressionError
from ..types.families import is_string_like

__all__ = ["check_filter_literals", "int_fits"]

_COMPARISONS = frozenset({"=", "!=", "<>", "<", "<=", ">", ">="})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})
_STRINGS = frozenset({"Utf8", "LargeUtf8", "Utf8View"})


def check_filter_literals(expr: Any, schema: pa.Schema, sql: str) -> None:
    """Raise :class:`InvalidExpressionError` where parsed filter ``expr`` (a DataFusion
    expression over ``schema``) compares a column with a literal its type cannot hold."""
    stack = [expr]
    while stack:
        e = stack.pop()
        v = _variant(e)
        kind = type(v).__name__
        pairs: list[tuple[Any, list[Any]]] = []
        if kind == "BinaryExpr":
            op = str(v.op()).upper()
            if op in ("AND", "OR"):
                stack += [v.left(), v.right()]
                continue
            if op in _COMPARISONS:
                pairs = [(v.left(), [v.right()]), (v.right(), [v.left()])]
        elif kind == "InList":
            pairs = [(v.expr(), list(v.list()))]
        elif kind == "Between":
            pairs = [(v.expr(), [v.low(), v.high()])]
        for column, others in pairs:
            field = _column(column, schema)
            if field is None:
                continue
            for other in others:
                for literal in _literals(other):
                    _check(field, literal, sql)


def _variant(e: Any) -> Any:
    """The typed node of ``e``, or None for kinds the bindings do not convert (functions
    such as struct field access): those are left to DataFusion."""
    try:
        return e.to_variant()
    except (ValueError, NotImplementedError):
        return None


def _column(e: Any, schema: pa.Schema) -> pa.Field | None:
    v = _variant(e)
    if type(v).__name__ != "Column":
        return None
    name = v.name()
    return schema.field(name) if name in schema.names else None


def _literals(e: Any) -> Iterator[Any]:
    """The literals of ``e`` when it is a literal or arithmetic over literals only."""
    found: list[Any] = []
    stack = [e]
    while stack:
        x = stack.pop()
        v = _variant(x)
        kind = type(v).__name__
        if kind == "Literal":
            found.append(x)
        elif kind == "BinaryExpr" and str(v.op()) in _ARITHMETIC:
            stack += [v.left(), v.right()]
        else:
            return  # a column, a function, a cast: not a plain literal
    yield from found


def _value_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    return t


def _check(field: pa.Field, literal: Any, sql: str) -> None:
    kind = str(_variant(literal).data_type())
    if kind == "Null":
        return
    t = _value_type(field.type)
    value = literal.python_value()
    whole = kind.startswith(("Int", "UInt"))
    if pa.types.is_integer(t):
        ok = whole and int_fits(t, int(value))
    elif pa.types.is_floating(t):
        ok = whole or kind.startswith("Float")
    elif is_string_like(t):
        ok = kind in _STRINGS
    elif pa.types.is_boolean(t):
        ok = kind == "Boolean"
    elif pa.types.is_temporal(t):
        ok = kind not in _STRINGS and not whole
    else:
        return
    if not ok:
        shown = f"'{value}'" if kind in _STRINGS else str(value)
        hint = (
            " (a date or time literal is written date '2020-01-31')"
            if pa.types.is_temporal(t)
            else ""
        )
        raise InvalidExpressionError(
            sql,
            f"the literal {shown} ({kind}) cannot be compared with column '{field.name}' of "
            f"type {field.type} without changing its value; pylance refuses it too: use a "
            f"literal of the column's type{hint}",
        )


def int_fits(t: pa.DataType, value: int) -> bool:
    """Whether integer type ``t`` holds ``value`` unchanged."""
    bits = t.bit_width
    if pa.types.is_signed_integer(t):
        return -(1 << (bits - 1)) <= value < (1 << (bits - 1))
    return 0 <= value < (1 << bits)
