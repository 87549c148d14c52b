"""SQL expressions that define new columns (``add_columns({"b": "a * 2"})``), evaluated the
way pylance 14 evaluates them (layer L3).

The expression's literals are resolved as Lance resolves them (``literal_resolution``:
in ``a * 2`` on an ``int32`` column the new column is ``int32``, where plain DataFusion would
widen it to ``int64``; ``a + 1.5`` is refused), so that the new columns get pylance's
Arrow types and nullability; :class:`ColumnExpression` evaluates one expression batch by
batch.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..codecs.kernel_layout import kernel_type, to_kernel_layout
from ..errors import InvalidExpressionError
from ..types.arrow_names import has_dictionary
from .literal_resolution import LiteralResolver, wrap_expr
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
        node = wrap_expr(stack.pop())
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
                df.select(wrap_expr(operands[0]).alias("__t")).schema().field(0).type
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
    inner = wrap_expr(expr.to_variant().expr())
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
            return df, LiteralResolver(df, self.sql).resolve(expr)
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
