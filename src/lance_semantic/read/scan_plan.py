"""What a scan reads and returns, planned once (layer L4): :class:`ScanPlan` (made by
``read.table_scan.plan_scan``), a vector search's :class:`SearchPlan`, and :func:`project`,
which turns a batch read into the plan's output columns."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..codecs.kernel_layout import to_layout
from ..fts import TextSearch
from ..query import ColumnExpression, Predicate
from ..schema import Field
from ..vector import NearestQuery
from .fragment_reader import empty_rows

__all__ = ["Output", "ScanPlan", "SearchPlan", "TextPlan", "project"]


@dataclass(frozen=True)
class Output:
    """One output column: a field path from a read top-level field, or (``columns`` given
    as a mapping) a SQL expression over the read fields."""

    name: str
    path: tuple[str, ...] = ()
    expr: ColumnExpression | None = None


@dataclass(frozen=True)
class ScanPlan:
    top_fields: tuple[Field, ...]  # what is read from the fragments
    #: the read fields in their kernel layout (no views): what filters, takes and rewrites
    #: read into
    read_schema: pa.Schema
    #: the read fields in their output layouts (views included)
    layout_schema: pa.Schema
    outputs: tuple[Output, ...]
    output_schema: pa.Schema
    predicate: Predicate | None
    #: ``columns`` was a mapping: ``take`` returns flat columns, as ``to_table`` does
    flat: bool = False
    #: the top-level fields the outputs use (in ``layout_schema`` order)
    used: tuple[str, ...] = ()
    #: the outputs are the read fields themselves, in order, in a layout filters and takes
    #: read into too: batches read are output as they are
    identity: bool = False
    #: a vector search (the request's ``nearest``): what it reads and the result's schema
    search: SearchPlan | None = None
    #: a full text search (the request's ``full_text_query``): the result's schema
    text: TextPlan | None = None

    @property
    def result_schema(self) -> pa.Schema:
        """The schema of the batches a run returns (before its row id / address columns):
        the outputs, or a vector search's result (``query_index``, ``_distance``)."""
        if self.text is not None:
            return self.text.schema
        return self.output_schema if self.search is None else self.search.schema


@dataclass(frozen=True)
class SearchPlan:
    """What a vector search reads and returns: ``candidates`` (the plan of the vector
    column, with the filter when prefiltering), ``schema`` (the result's columns before
    the row id / address columns) and ``distance_at``, where ``_distance`` goes among the
    outputs."""

    query: NearestQuery
    candidates: ScanPlan
    schema: pa.Schema
    distance_at: int


@dataclass(frozen=True)
class TextPlan:
    """What a full text search returns: ``schema`` (the outputs with ``_score``, before the
    row id / address columns) and ``score_at``, where ``_score`` goes among the outputs;
    what it reads of the rows no index covers (``flat``)."""

    search: TextSearch
    schema: pa.Schema
    score_at: int
    #: per searched column, the plan of the rows searched without an index (the column,
    #: with the filter when prefiltering)
    flat: tuple[tuple[str, ScanPlan], ...] = ()
    #: with ``prefilter`` and a filter: the plan of the filter's columns alone, which the
    #: matching rows are read in to be filtered before the best are kept
    prefilter: ScanPlan | None = None


def _in_layout(batch: pa.RecordBatch, plan: ScanPlan) -> pa.RecordBatch:
    """The columns the outputs use, in their output layouts (a batch read into the kernel
    layout is converted here, after any filter or take)."""
    arrays, fields = [], []
    for name in plan.used:
        f = plan.layout_schema.field(name)
        arrays.append(to_layout(batch.column(name), f.type, name))
        fields.append(f)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def project(batch: pa.RecordBatch, plan: ScanPlan) -> pa.RecordBatch:
    """The plan's output columns (struct children by path, SQL expressions evaluated) of a
    batch read into ``plan.read_schema`` or ``plan.layout_schema``."""
    if not plan.outputs:  # columns=[]: keep the row count
        return empty_rows(batch.num_rows)
    if plan.identity and batch.num_columns == len(plan.outputs):
        return batch
    batch = _in_layout(batch, plan)
    arrays = []
    for out in plan.outputs:
        if out.expr is not None:
            arrays.append(out.expr.evaluate(batch))
            continue
        arr = batch.column(out.path[0])
        for p in out.path[1:]:
            arr = pc.struct_field(arr, p)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=plan.output_schema)
