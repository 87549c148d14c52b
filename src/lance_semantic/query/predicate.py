"""The row filter of a scan (layer L3): a SQL string or a ``pyarrow.compute.Expression``,
compiled once per scan and applied per batch (``read.table_scan`` plans it,
``read.row_streams`` applies it)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InvalidExpressionError
from ..schema import TableSchema
from .arrow_filters import expression_columns
from .expressions import SqlExpression, referenced_columns

__all__ = ["Predicate"]


class Predicate:
    """A row filter compiled once per scan and applied per batch."""

    def __init__(
        self, expr: str | pc.Expression, table: TableSchema, arrow: pa.Schema | None = None
    ) -> None:
        """``arrow``: the table's columns as reads return them, to find the columns an
        Arrow expression references (without it, it reads every column)."""
        self.expr = expr
        self._sql: SqlExpression | None = None
        if isinstance(expr, str):
            self._sql = SqlExpression(expr, is_filter=True)
            self.columns = referenced_columns(expr, table.names)
        elif isinstance(expr, pc.Expression):
            self.columns = list(table.names)
            if arrow is not None:
                self.columns = expression_columns(expr, arrow)
        else:
            raise TypeError(
                f"filter must be a SQL string or pyarrow.compute.Expression, got {expr!r}"
            )

    def mask(self, batch: pa.RecordBatch) -> pa.Array:
        if self._sql is not None:
            # only the columns the filter names: every batch of a scan (and the up-front
            # check) then has one schema, and the SQL is parsed once
            names = set(batch.schema.names)
            return self._sql.evaluate(batch.select([c for c in self.columns if c in names]))
        assert isinstance(self.expr, pc.Expression)
        # the referenced columns in table order: a positional ``pc.field(0)`` is the table's
        # first column, as in a pyarrow dataset
        names = set(batch.schema.names)
        table = pa.Table.from_batches([batch.select([c for c in self.columns if c in names])])
        try:
            return _eval(table, self.expr).combine_chunks()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise InvalidExpressionError(str(self.expr), str(e).split("\n")[0]) from e

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        m = self.mask(batch)
        return batch.filter(pc.fill_null(m, False))


def _eval(table: pa.Table, expr: pc.Expression) -> pa.ChunkedArray:
    import pyarrow.dataset as pds

    return pds.dataset(table).to_table(columns={"m": expr}).column("m")
