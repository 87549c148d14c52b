"""Scans: column selection (including nested paths, or SQL projections given as a mapping
of output names to expressions), filters, offset and limit over the fragments of one
version, streamed batch by batch (layer L4).

Filters are SQL strings in Lance's dialect, evaluated per batch by DataFusion, or
``pyarrow.compute.Expression`` objects evaluated by Arrow. Filters and takes run in the
plan's kernel layout (``ScanPlan.read_schema``: no views, which Arrow's filter and take
kernels lack); rows are converted to their output layouts (``layout_schema``) after them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..codecs.kernel_layout import kernel_schema, to_layout
from ..errors import ColumnNotFoundError, InvalidExpressionError, NotSupportedYetError, ReadError
from ..fts import SCORE
from ..manifest import Fragment
from ..query import ColumnExpression, Predicate, check_boolean_result, referenced_columns
from ..schema import Field, TableSchema
from ..storage import ObjectStore
from ..vector import DISTANCE, QUERY_INDEX
from .fragment_reader import ROW_ADDRESS, FragmentReader
from .indexed_filter import indexed_batches, scalar_choice, taken_shape
from .output import blob_values_schema, check_override_paths, output_schema
from .readers import Readers
from .readers import readers as kept_readers
from .request import Columns, Filter, ScanRequest
from .row_streams import drop_rows, filtered_batches, unfiltered_batches
from .scan_plan import Output, ScanPlan, SearchPlan, TextPlan, project
from .text_search import text_batches
from .vector_search import nearest_batches, search_schema

__all__ = [
    "Columns",
    "Filter",
    "Output",
    "Predicate",
    "ScanPlan",
    "plan_scan",
    "project",
    "run_scan",
    "take_rows",
    "DEFAULT_BATCH_SIZE",
]

DEFAULT_BATCH_SIZE = 8192


def plan_scan(
    table: TableSchema,
    request: ScanRequest,
    *,
    flagged: bool = False,
    blob_values: bool = False,
    plain_dictionaries: bool = False,
) -> ScanPlan:
    """What to read for the request's ``columns`` (and ``filter``) and the schema reads
    return, in the layouts of its ``output_encodings``.

    ``columns`` is a list of field paths, or a mapping of output names to SQL expressions
    (a bare field path in it is that field under the new name), as in pylance.
    ``blob_values``: blob columns come back as their values (bytes, or the logical blob v2
    struct) instead of pylance's descriptors -- what rewrites write back.
    ``plain_dictionaries``: the kernel layout also decodes dictionaries (rewrites of a
    flagged table: any layout may be written back, and a narrow key could not hold new
    values).

    With the request's ``nearest`` the plan's ``search`` holds the vector search: the
    candidate scan of the vector column (with the filter when prefiltering) and pylance's
    result schema; ``_distance`` may be one of ``columns``, which places it."""
    if request.nearest is not None:
        return _plan_search(table, request, flagged=flagged)
    if request.full_text_query is not None:
        return _plan_text(table, request, flagged=flagged)
    columns, filter, output_encodings = request.columns, request.filter, request.output_encodings
    predicate = None
    if filter is not None:
        arrow = None
        if isinstance(filter, pc.Expression):
            arrow = kernel_schema(output_schema(table, flagged=flagged))
        predicate = Predicate(filter, table, arrow)
    flat = isinstance(columns, Mapping)
    outputs: list[Output] = []
    sql: dict[str, str] = {}
    needed: list[str] = []
    if isinstance(columns, Mapping):
        for name, expr in columns.items():
            if not isinstance(name, str) or not isinstance(expr, str):
                raise TypeError(
                    f"columns must map output names to SQL expressions (strings), got "
                    f"{name!r}: {expr!r}"
                )
            parts = _path_of(table, expr.strip())
            if parts is None:
                sql[name] = expr
                outputs.append(Output(name))
                refs = referenced_columns(expr, table.names)
            else:
                outputs.append(Output(name, parts))
                refs = [parts[0]]
            needed += [n for n in refs if n not in needed]
        if outputs and not needed:
            for name, expr in sql.items():  # an unknown column is the error to report
                ColumnExpression(name, expr, pa.schema([]))
            raise InvalidExpressionError(
                ", ".join(sql.values()),
                "a scan must read at least one column; the projection has only expressions "
                "without column references",
            )
    else:
        if columns is None:
            columns = table.names
        if isinstance(columns, str):
            columns = [columns]
        for col in columns:
            parts = _split_path(table, col)
            if any(o.name == col for o in outputs):  # as pylance refuses it
                raise ValueError(f"duplicate column name '{col}' in columns")
            outputs.append(Output(col, parts))
            if parts[0] not in needed:
                needed.append(parts[0])
    used = [n for n in table.names if n in needed]
    for name in predicate.columns if predicate else ():
        if name not in needed:
            needed.append(name)
    sub = table.select(needed)
    if output_encodings:
        check_override_paths(table, output_encodings)
    layout_schema = output_schema(sub, flagged=flagged, overrides=output_encodings)
    if blob_values:
        layout_schema = blob_values_schema(sub, layout_schema)
    read_schema = kernel_schema(layout_schema, dictionaries=plain_dictionaries)
    if predicate is not None:  # before anything is read, as pylance
        check_boolean_result("filter", filter, predicate.mask, read_schema)
    out_fields = []
    for i, out in enumerate(outputs):
        if out.path:
            f = layout_schema.field(out.path[0])
            for p in out.path[1:]:
                f = f.type.field(p)
            out_fields.append(f.with_name(out.name))
        else:
            compiled = ColumnExpression(out.name, sql[out.name], layout_schema)
            outputs[i] = replace(out, expr=compiled)
            out_fields.append(compiled.field)
    out_schema = pa.schema(out_fields, metadata=layout_schema.metadata)
    identity = (
        [(o.name, o.path, o.expr) for o in outputs]
        == [(n, (n,), None) for n in layout_schema.names]
        and read_schema.equals(layout_schema, check_metadata=True)
        and out_schema.equals(layout_schema, check_metadata=True)
    )
    return ScanPlan(
        sub.fields,
        read_schema,
        layout_schema,
        tuple(outputs),
        out_schema,
        predicate,
        flat,
        tuple(used),
        identity,
    )


def _plan_search(table: TableSchema, request: ScanRequest, *, flagged: bool) -> ScanPlan:
    """The plan of a vector search: the outputs' plan (``columns`` without ``_distance``,
    and the filter, which a postfilter evaluates on the rows taken) with its ``search``."""
    query = request.nearest
    assert query is not None
    columns = request.columns
    distance_at = None
    if isinstance(columns, str):
        columns = [columns]
    if columns is not None and not isinstance(columns, Mapping):
        columns = list(columns)
        if DISTANCE in columns:
            distance_at = columns.index(DISTANCE)
            columns.remove(DISTANCE)
    plain = replace(request, columns=columns, nearest=None)
    plan = plan_scan(table, plain, flagged=flagged)
    added = (DISTANCE, QUERY_INDEX) if query.batch else (DISTANCE,)
    for name in added:
        if name in plan.output_schema.names:
            raise ValueError(f"columns already hold a column named {name!r}")
    vector = ScanRequest(
        columns=[query.column],
        filter=request.filter if query.prefilter else None,
        output_encodings=request.output_encodings,
    )
    candidates = plan_scan(table, vector, flagged=flagged)
    if distance_at is None:
        distance_at = len(plan.output_schema)
    schema = search_schema(plan.output_schema, query, distance_at)
    search = SearchPlan(query, candidates, schema, distance_at)
    return replace(plan, search=search, identity=False)


def _plan_text(table: TableSchema, request: ScanRequest, *, flagged: bool) -> ScanPlan:
    """The plan of a full text search: the outputs' plan (``columns`` without ``_score``,
    and the filter) with its ``text``; each searched column must be a string column."""
    search = request.full_text_query
    assert search is not None
    for column in search.query.columns:
        _text_column(table, column, flagged)
    columns = request.columns
    score_at = None
    if isinstance(columns, str):
        columns = [columns]
    if columns is not None and not isinstance(columns, Mapping):
        columns = list(columns)
        if SCORE in columns:
            score_at = columns.index(SCORE)
            columns.remove(SCORE)
    plan = plan_scan(
        table, replace(request, columns=columns, full_text_query=None), flagged=flagged
    )
    if SCORE in plan.output_schema.names:
        raise ValueError(f"columns already hold a column named {SCORE!r}")
    if score_at is None:
        score_at = len(plan.output_schema)
    fields = list(plan.output_schema)
    fields.insert(score_at, pa.field(SCORE, pa.float32()))
    schema = pa.schema(fields, metadata=plan.output_schema.metadata)
    flat = tuple(
        (
            column,
            plan_scan(
                table,
                ScanRequest(
                    columns=[column],
                    filter=request.filter if search.prefilter else None,
                    output_encodings=request.output_encodings,
                ),
                flagged=flagged,
            ),
        )
        for column in dict.fromkeys(search.query.columns)
    )
    prefilter = None
    if search.prefilter and request.filter is not None:
        prefilter = plan_scan(
            table, ScanRequest(columns=[], filter=request.filter), flagged=flagged
        )
    text = TextPlan(search, schema, score_at, flat, prefilter)
    return replace(plan, text=text, identity=False)


def _text_column(table: TableSchema, column: str, flagged: bool) -> None:
    """``column`` is a top-level string (or JSON) column (pylance's check)."""
    if column not in table.names:
        raise ColumnNotFoundError(column, table.names)
    arrow = output_schema(table, flagged=flagged).field(column).type
    if isinstance(arrow, pa.BaseExtensionType):
        if arrow.extension_name in ("arrow.json", "lance.json"):
            raise NotSupportedYetError(
                f"full text search of the JSON column {column!r} (pylance's json tokenizer)"
            )
        arrow = arrow.storage_type
    if not (
        pa.types.is_string(arrow)
        or pa.types.is_large_string(arrow)
        or pa.types.is_string_view(arrow)
    ):
        raise ValueError(
            f"full_text_query: FTS field {column!r} must resolve to Utf8, LargeUtf8, "
            f"Utf8View, or JSON, got {arrow}"
        )


def _path_of(table: TableSchema, text: str) -> tuple[str, ...] | None:
    """The field path ``text`` names (a top-level column or struct children), else None."""
    try:
        return _split_path(table, text)
    except (ReadError, ColumnNotFoundError):
        return None


def _path_parts(col: str) -> tuple[str, ...] | None:
    """The names of a column path as pylance reads one: split at every ``.`` outside
    backticks; a part in backticks is taken as written (```s`.`x.y```). None: malformed."""
    parts: list[str] = []
    i = 0
    while True:
        if col.startswith("`", i):
            end = col.find("`", i + 1)
            if end < 0:
                return None
            parts.append(col[i + 1 : end])
            i = end + 1
        else:
            end = col.find(".", i)
            part = col[i:] if end < 0 else col[i:end]
            if not part or "`" in part:
                return None
            parts.append(part)
            i = len(col) if end < 0 else end
        if i == len(col):
            return tuple(parts)
        if col[i] != ".":
            return None
        i += 1


def _split_path(table: TableSchema, col: str) -> tuple[str, ...]:
    """The field path ``col`` names: a top-level column, or struct members after it."""
    if col in table.names:
        return (col,)
    parts = _path_parts(col)
    if parts is None:
        raise ColumnNotFoundError(col, table.names)
    field: Field | None = None
    for name in parts:
        if field is not None and field.logical_type != "struct":
            raise ReadError(
                f"cannot select '{col}': only struct children can be selected "
                f"('{field.path}' is {field.logical_type})"
            )
        children = table.fields if field is None else field.children
        field = next((c for c in children if c.name == name), None)
        if field is None:
            raise ColumnNotFoundError(col, table.names)
    return parts


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="lance-semantic-take")


def take_rows(
    readers: Sequence[FragmentReader], starts: Sequence[int], indices: np.ndarray, plan: ScanPlan
) -> pa.Table:
    """Rows at ``indices`` (offsets into the live rows of ``readers`` laid end to end, the
    i-th starting at ``starts[i]``), in the order given, duplicates allowed.

    The readers read into ``plan.read_schema`` (no views: Arrow has no take kernel for
    them); the rows are converted to their output layouts after the take."""
    uniq, inverse = np.unique(indices, return_inverse=True)
    frag_of = np.searchsorted(np.asarray(starts), uniq, side="right") - 1
    groups = [(readers[fi], uniq[frag_of == fi] - starts[fi]) for fi in np.unique(frag_of)]
    if len(groups) > 1:  # the Rust takes release the GIL: fragments proceed in parallel
        results = list(_pool().map(lambda g: g[0].take_live(g[1]), groups))
    else:
        results = [reader.take_live(local) for reader, local in groups]
    parts = [batch for batches in results for batch in batches]
    table = pa.Table.from_batches(parts, schema=plan.read_schema)
    table = table.take(pa.array(inverse.reshape(-1))).combine_chunks()
    if plan.flat:
        batches = [project(b, plan) for b in table.to_batches()]
        return pa.Table.from_batches(batches, schema=plan.output_schema)
    if plan.read_schema is not plan.layout_schema:  # views: converted after the take
        columns = [
            pa.chunked_array(
                [to_layout(c, f.type, f.name) for c in table.column(f.name).chunks], type=f.type
            )
            for f in plan.layout_schema
        ]
        table = pa.Table.from_arrays(columns, schema=plan.layout_schema)
    return project_nested(table, plan)


def _nest(
    field: pa.Field, arr: pa.Array, paths: list[tuple[str, ...]]
) -> tuple[pa.Field, pa.Array]:
    if any(not p for p in paths):
        return field, arr
    groups: dict[str, list[tuple[str, ...]]] = {}
    for p in paths:
        groups.setdefault(p[0], []).append(p[1:])
    fields, children = [], []
    members = [field.type.field(i).name for i in range(field.type.num_fields)]
    for name in (m for m in members if m in groups):  # schema order, as pylance's take
        f, a = _nest(field.type.field(name), arr.field(name), groups[name])
        fields.append(f)
        children.append(a)
    mask = arr.is_null() if arr.null_count else None
    out = pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    return field.with_type(out.type), out


def project_nested(table: pa.Table, plan: ScanPlan) -> pa.Table:
    """The plan's columns the way pylance's ``take`` shapes them: a nested path keeps its
    enclosing structs, holding only the selected children (``st.y`` -> ``st: struct<y>``)."""
    groups: dict[str, list[tuple[str, ...]]] = {}
    for out in plan.outputs:
        groups.setdefault(out.path[0], []).append(out.path[1:])
    fields, arrays = [], []
    for top, paths in groups.items():
        f, a = _nest(table.schema.field(top), table.column(top).combine_chunks(), paths)
        fields.append(f)
        arrays.append(a)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=table.schema.metadata))


def run_scan(
    store: ObjectStore,
    table: TableSchema,
    fragments: Sequence[Fragment],
    plan: ScanPlan,
    request: ScanRequest,
    *,
    row_addresses: Sequence[str] = (),
    index_section: bytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the plan's output batches in the request's window (``offset``, ``limit``:
    stops reading as soon as ``limit`` rows are out) and ``batch_size``.

    The request's row columns (``_rowid``, ``_rowaddr``) and ``row_addresses`` (internal
    names) are uint64 columns appended to every batch, each holding the rows' addresses
    ``(fragment id << 32) | physical offset`` (``_rowid`` of a table without stable row
    ids).

    A plan with a vector ``search`` yields the search's result (``nearest_batches``),
    through the IVF index of the version's manifest ``index_section`` where one is usable.
    A filter is answered through the scalar indices of ``index_section`` where they select
    few rows (``read.indexed_filter``; not with ``use_scalar_index=False``): the same rows,
    in the same order.
    """
    if plan.search is not None:
        size = request.batch_size or DEFAULT_BATCH_SIZE
        yield from nearest_batches(store, table, fragments, plan, request, size, index_section)
        return
    if plan.text is not None:
        size = request.batch_size or DEFAULT_BATCH_SIZE
        yield from text_batches(store, table, fragments, plan, request, size, index_section)
        return
    row_addresses = (*request.row_columns, *row_addresses)
    batch_size = request.batch_size or DEFAULT_BATCH_SIZE
    addresses = bool(row_addresses)
    skip = request.offset or 0
    remaining = request.limit
    if remaining is not None and remaining <= 0:
        return
    # a filter runs in the kernel layout (no views); the rows are converted after it
    schema = plan.layout_schema if plan.predicate is None else plan.read_schema
    if plan.predicate is not None:

        def shape(fields: Sequence[Field], sch: pa.Schema, addresses: bool) -> Readers:
            return kept_readers(store, table, fields, sch, addresses)

        predicate = plan.predicate
        rows_only = not plan.outputs and not addresses

        def scan(run: Sequence[Fragment]) -> Iterator[pa.RecordBatch]:
            return filtered_batches(
                shape,
                run,
                plan.top_fields,
                schema,
                predicate,
                batch_size,
                len(run),
                row_addresses=addresses,
                rows_only=rows_only,
            )

        choice = scalar_choice(
            store,
            table,
            fragments,
            plan,
            index_section,
            use_scalar_index=request.use_scalar_index,
            count_only=rows_only,
        )
        if choice is None:
            found = scan(fragments)
        else:
            taken = taken_shape(store, table, plan, addresses)
            found = indexed_batches(
                choice, fragments, scan, taken, plan, batch_size, rows_only=rows_only
            )
        stream = drop_rows(found, skip)
    else:
        kept = kept_readers(store, table, plan.top_fields, schema, addresses)
        stream = unfiltered_batches(fragments, kept.reader, batch_size, skip)
    emit = project
    if row_addresses:

        def emit(batch: pa.RecordBatch, plan: ScanPlan) -> pa.RecordBatch:
            out = project(batch, plan)
            column = batch.column(ROW_ADDRESS)
            for name in row_addresses:
                out = out.append_column(pa.field(name, pa.uint64()), column)
            return out

    for batch in stream:
        if remaining is not None:
            if batch.num_rows >= remaining:
                yield emit(batch.slice(0, remaining), plan)
                return
            remaining -= batch.num_rows
        if batch.num_rows:
            yield emit(batch, plan)
