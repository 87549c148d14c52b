"""SQL expressions over Arrow batches, in Lance's dialect, evaluated by DataFusion
(layer L3; DESIGN §2.6). One engine serves filters, ``update`` and ``add_columns``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import InvalidExpressionError
from .kernels import Kernel, compile_filter
from .literal_resolution import LiteralResolver
from .literals import check_filter_literals
from .simple_filters import SimpleFilter, parse_simple, simple_kernel
from .sql_dialect import referenced_names
from .sql_parse import parse_expression

__all__ = ["SqlExpression", "MatchCondition", "referenced_columns"]

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def referenced_columns(sql: str, names: Iterable[str]) -> list[str]:
    """The names among ``names`` that ``sql`` mentions, by Lance's rules (any case, in
    backticks; string literals skipped); a superset is harmless, it only reads more
    columns."""
    names = list(names)
    found = referenced_names(sql, names)
    # a name the identifier pattern cannot match (non-ASCII letters, spaces...): by its text
    found |= {n for n in names if not _PLAIN.fullmatch(n) and n in sql}
    return [n for n in names if n in found]


def _storage_only(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Extension columns as their storage (SQL sees json columns as text)."""
    if not any(isinstance(t, pa.BaseExtensionType) for t in batch.schema.types):
        return batch
    arrays = [c.storage if isinstance(c.type, pa.BaseExtensionType) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


#: each thread's DataFusion session, shared by every expression it evaluates. Nothing is
#: ever registered in it: a batch is read as an anonymous frame (``read_batches``), so an
#: interrupt at any point of an evaluation leaves no name behind to clash with the next one
#: and no batch held after it (measured: no slower than registering and deregistering a
#: name; a session per call costs 0.1-1 ms more)
_LOCAL = threading.local()

#: parsed (and checked) expressions, and their results on no rows (what every scan's
#: up-front check evaluates), by text, literal rule and batch schema, shared by every scan
#: of the process: a filter is parsed once, not once per scan (bounded, oldest out)
_PARSED: dict[tuple[str, bool, str], object] = {}
_EMPTY: dict[tuple[str, bool, str], pa.Array] = {}
#: filters of the simple forms Arrow's kernels compute exactly (``query.kernels``), by the
#: same key; None: evaluated by DataFusion
_KERNELS: dict[tuple[str, bool, str], Kernel | None] = {}
#: filters of the simple shape read without DataFusion (``query.simple_filters``) and their
#: kernels, by the same key; None: not of that shape
_SIMPLE: dict[tuple[str, bool, str], tuple[SimpleFilter, Kernel] | None] = {}
_UNSEEN = object()
_REMEMBERED = 1024
_REMEMBER_LOCK = threading.Lock()


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    with _REMEMBER_LOCK:
        if len(cache) >= _REMEMBERED:
            del cache[next(iter(cache))]
        cache[key] = value


def _schema_key(schema: pa.Schema) -> str:
    """What identifies a batch schema for parsing: names, types, nullability and metadata
    (extension types included; a ``pa.Schema`` holding them is not hashable)."""
    return schema.to_string(show_field_metadata=True, show_schema_metadata=True)


class SqlExpression:
    """One SQL expression, evaluated batch by batch into one Arrow array per batch.

    The text is parsed once per batch schema in the process (DataFusion qualifies column
    references with the frame's name: every batch is an anonymous frame, all of one name)
    and reused for every later batch of that schema, by any expression of the same text.
    Each thread evaluates in a session of its own."""

    def __init__(self, sql: str, *, is_filter: bool = False) -> None:
        """``is_filter``: literals compared with columns must keep their value in the
        column's type, as pylance requires of filters (``filter_literals``)."""
        self.sql = sql
        self.is_filter = is_filter

    @staticmethod
    def _session() -> Any:
        ctx = getattr(_LOCAL, "ctx", None)
        if ctx is None:
            from datafusion import SessionConfig, SessionContext

            # one partition: with more, DataFusion may return a large batch's rows out of
            # order, and a mask or a new column must line up with the batch row for row
            ctx = _LOCAL.ctx = SessionContext(SessionConfig().with_target_partitions(1))
        return ctx

    def evaluate(self, batch: pa.RecordBatch) -> pa.Array:
        batch = _storage_only(batch)
        key = (self.sql, self.is_filter, _schema_key(batch.schema))
        simple = self._simple(batch.schema, key)
        if simple is not None:  # (no DataFusion: see simple())
            return simple[1](batch)
        if batch.num_rows:
            kernel = _KERNELS.get(key)
            if kernel is not None:
                return kernel(batch)
            return self._evaluate(batch, key)
        empty = _EMPTY.get(key)  # (the up-front check of every scan: once per schema)
        if empty is None:
            empty = self._evaluate(batch, key)
            _remember(_EMPTY, key, empty)
        return empty

    def simple(self, schema: pa.Schema) -> SimpleFilter | None:
        """The filter over columns of ``schema`` as a :data:`~.simple_filters.SimpleFilter`
        when it is of that shape (comparisons of integer and string columns with literals,
        ``IN``, ``BETWEEN``, ``IS NULL``, ``AND`` / ``OR`` / ``NOT``), else None (and for an
        expression that is not a filter). Such a filter is evaluated by Arrow's kernels
        and never reaches DataFusion: it computes the same values, and reading it costs
        microseconds where DataFusion's parse and check cost about a millisecond."""
        if not self.is_filter:
            return None
        found = self._simple(schema, (self.sql, self.is_filter, _schema_key(schema)))
        return None if found is None else found[0]

    def _simple(
        self, schema: pa.Schema, key: tuple[str, bool, str]
    ) -> tuple[SimpleFilter, Kernel] | None:
        if not self.is_filter:
            return None
        found = _SIMPLE.get(key, _UNSEEN)
        if found is _UNSEEN:
            node = parse_simple(self.sql, schema)
            found = None if node is None else (node, simple_kernel(node))
            _remember(_SIMPLE, key, found)
        return found  # type: ignore[return-value]

    def parsed(self, schema: pa.Schema) -> Any:
        """The expression parsed over columns of ``schema`` (a DataFusion ``Expr`` whose
        literals have the types of the columns they meet, as evaluations see it; checked as
        a filter with ``is_filter``): what the scalar index planner walks."""
        batch = _storage_only(pa.RecordBatch.from_pylist([], schema=schema))
        key = (self.sql, self.is_filter, _schema_key(batch.schema))
        expr = _PARSED.get(key)
        if expr is None:
            expr = self._parse(self._session().read_batches([batch]), batch.schema, key)
        return expr

    def _parse(self, df: Any, schema: pa.Schema, key: tuple[str, bool, str]) -> Any:
        """The text parsed over frame ``df`` (of ``schema``), checked as a filter with
        ``is_filter``, its literals resolved; remembered under ``key``."""
        expr = parse_expression(df, self.sql)
        if self.is_filter:
            check_filter_literals(expr, schema, self.sql)
        try:
            expr = LiteralResolver(df, self.sql).resolve(expr)
        except InvalidExpressionError:
            raise
        except Exception as e:  # DataFusion raises plain Exception (typing a member)
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e
        _remember(_PARSED, key, expr)
        return expr

    def _evaluate(self, batch: pa.RecordBatch, key: tuple[str, bool, str]) -> pa.Array:
        df = self._session().read_batches([batch])
        expr = _PARSED.get(key)
        if expr is None:
            expr = self._parse(df, batch.schema, key)
        try:
            out = df.select(expr.alias("__value")).to_arrow_table().column(0)  # type: ignore[attr-defined]
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e
        if self.is_filter and key not in _KERNELS:  # (once DataFusion has accepted it)
            _remember(_KERNELS, key, compile_filter(expr, batch.schema))
        if len(out) != batch.num_rows:  # an aggregate would collapse the rows
            raise InvalidExpressionError(self.sql, "must give one value per row")
        return out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)


class MatchCondition:
    """A merge_insert ``when_matched_update_all(condition)``: SQL over the matched pairs,
    naming columns ``target.<c>`` and ``source.<c>`` (as in pylance).

    The two sides are anonymous frames under those aliases: nothing is registered in the
    session, so an interrupted evaluation leaves nothing behind for the next one."""

    def __init__(self, sql: str) -> None:
        self.sql = sql

    def mask(self, target: pa.Table, source: pa.Table) -> pa.Array:
        """For aligned matched pairs (row i of ``target`` matches row i of ``source``), which
        satisfy the condition (nulls count as false)."""
        from datafusion import col

        n = target.num_rows
        index = pa.array(range(n), pa.int64())
        ctx = SqlExpression._session()
        left = ctx.read_batches(_batches(target.append_column("__i", index)))
        right = ctx.read_batches(_batches(source.append_column("__j", index)))
        pairs = left.alias("target").join(
            right.alias("source"), left_on="__i", right_on="__j", how="inner"
        )
        # the condition is parsed as one expression over the joined pairs, never pasted
        # into SQL text
        expr = parse_expression(pairs, self.sql)
        try:
            hits = pairs.filter(expr).select(col("__i")).to_arrow_table().column(0)
        except Exception as e:  # DataFusion raises plain Exception
            raise InvalidExpressionError(self.sql, str(e).splitlines()[0]) from e
        keep = np.zeros(n, dtype=bool)
        keep[hits.to_numpy()] = True
        return pa.array(keep, pa.bool_())


def _batches(table: pa.Table) -> list[pa.RecordBatch]:
    """``table``'s batches, at least one (a frame of no batches would have no columns)."""
    return table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
