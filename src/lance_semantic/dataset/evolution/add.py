"""``Dataset.add_columns``: new columns from SQL expressions, a batch function, a stream of
values, or as all-null columns (layer L5; docs/format/lance-format-facts.md §3: a ``Merge``
carrying every fragment).

* SQL expressions and batch functions are evaluated over each fragment's live rows and
  written as one new data file per fragment holding only the new field ids.
* ``pa.Field`` / list of fields / ``pa.Schema`` (and a set of ``CAST(NULL AS <type>)``
  expressions) add all-null columns without writing anything: reads fill them with nulls.
* Anything else that holds Arrow data (a table, a reader, batches) supplies the values of
  the new columns for the live rows, in table order.

On a flagged table every new column gets its canonical semantic type, and the Arrow layout
it was computed in is recorded as its output encoding when it differs from the type's
default (spec "Output Encoding"); its data files keep that layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from ...codecs.kernel_layout import has_view, to_kernel_layout
from ...commit import commit
from ...errors import NotSupportedYetError
from ...manifest import Manifest, Merge, preserves_nullability
from ...query import ColumnExpression, is_null_cast, referenced_columns, stored_type
from ...read import DEFAULT_BATCH_SIZE, ScanRequest, plan_scan, project
from ...schema import (
    Field,
    TableSchema,
    assign_new_ids,
    canonicalize_created,
    check_reserved_names,
    check_storage_version_support,
)
from ...storage import UncommittedFiles
from ...write import coerce_reader, parse_storage_version
from ..core import Snapshot
from .common import (
    ColumnSource,
    SchemaEvolutionError,
    next_field_id,
    scan_columns,
    with_files,
    write_column_files,
)

__all__ = ["add_columns"]


def _new_fields(snap: Snapshot, arrow_schema: pa.Schema) -> tuple[Field, ...]:
    """The new top-level fields (ids from :func:`next_field_id`), canonical on flagged
    tables; raises when a name is taken."""
    manifest = snap.manifest
    existing = {f.name for f in manifest.schema.fields}
    for af in arrow_schema:
        if af.name in existing:
            raise SchemaEvolutionError(af.name, "a column with this name already exists")
    fields = assign_new_ids(arrow_schema, next_field_id(manifest))
    check_reserved_names(fields)
    check_storage_version_support(fields, parse_storage_version(manifest.data_storage_version))
    if snap.semantic_types:
        fields = canonicalize_created(TableSchema(fields), arrow_schema).fields
    return fields


def _commit_merge(
    snap: Snapshot,
    new_fields: Sequence[Field],
    files: Sequence[Any] | None,
    owner: UncommittedFiles | None = None,
) -> Manifest:
    manifest = snap.manifest
    old = manifest.schema
    schema = TableSchema.of((*old.fields, *new_fields), old.metadata)
    fragments = list(manifest.fragments) if files is None else with_files(manifest.fragments, files)
    op = Merge(
        fragments=tuple(fragments),
        schema=schema,
        preserves_nullability=preserves_nullability(old, schema),
    )
    return commit(snap.store, manifest, op, files=owner)


def _add_all_null(snap: Snapshot, arrow_schema: pa.Schema) -> Manifest:
    for af in arrow_schema:
        if not af.nullable:
            raise SchemaEvolutionError(
                af.name, "all-null columns must be nullable, but this field is not"
            )
    return _commit_merge(snap, _new_fields(snap, arrow_schema), None)


def _write_and_commit(
    snap: Snapshot,
    arrow_schema: pa.Schema,
    source: ColumnSource,
    batch_size: int | None,
    check: Callable[[], None] | None = None,
) -> Manifest:
    fields = _new_fields(snap, arrow_schema)
    with UncommittedFiles(snap.store) as owner:
        files = write_column_files(
            snap.store,
            snap.manifest,
            source,
            fields,
            flagged=snap.semantic_types,
            batch_size=batch_size or DEFAULT_BATCH_SIZE,
            written=owner.data_names,
        )
        if check is not None:
            check()
        return _commit_merge(snap, fields, files, owner)


def _add_sql(snap: Snapshot, transforms: Mapping[str, str], batch_size: int | None) -> Manifest:
    table = snap.semantic_schema
    for name, sql in transforms.items():
        if not isinstance(name, str):
            raise TypeError(f"column names must be strings, got {type(name).__name__}")
        if not isinstance(sql, str):
            raise TypeError(f"column expressions must be strings, got {type(sql).__name__}")
    used = {c for sql in transforms.values() for c in referenced_columns(sql, table.names)}
    needed = [c for c in table.names if c in used]
    plan = plan_scan(table, ScanRequest(columns=needed), flagged=snap.semantic_types)
    # the expressions see the columns as reads return them (views included); the layouts
    # of their results that are the engine's are not kept (below)
    # the new columns are stored in what DataFusion gives, less its own layouts (views,
    # dictionaries it keeps where pylance's engine does not): evolution_sql.stored_type
    null_types = [is_null_cast(sql, plan.layout_schema) for sql in transforms.values()]
    if transforms and all(t is not None for t in null_types):
        fields = [pa.field(n, stored_type(t)) for n, t in zip(transforms, null_types, strict=True)]
        return _add_all_null(snap, pa.schema(fields))
    exprs = [ColumnExpression(name, sql, plan.layout_schema) for name, sql in transforms.items()]
    out = pa.schema([e.stored_field for e in exprs])

    def transform(batch: pa.RecordBatch) -> pa.RecordBatch:
        values = [e.evaluate_stored(batch) for e in exprs]
        if all(v.type == f.type for v, f in zip(values, out, strict=True)):
            return pa.RecordBatch.from_arrays(values, schema=out)
        # (64-bit offsets for views whose values need them: the boundary takes them)
        return pa.RecordBatch.from_arrays(values, names=out.names)

    source = ColumnSource(plan.top_fields, plan.layout_schema, transform)
    return _write_and_commit(snap, out, source, batch_size)


def _to_batch(result: Any) -> pa.RecordBatch:
    if isinstance(result, pa.RecordBatch):
        return result
    if isinstance(result, pa.Table):
        if not result.num_rows:
            return _empty(result.schema)
        return result.combine_chunks().to_batches()[0]
    if type(result).__module__.startswith("pandas"):
        return pa.RecordBatch.from_pandas(result, preserve_index=False)
    raise TypeError(
        f"an add_columns function must return a pa.RecordBatch (or a pandas DataFrame), "
        f"got {type(result).__name__}"
    )


def _add_udf(
    snap: Snapshot,
    func: Callable[[pa.RecordBatch], Any],
    read_columns: Sequence[str] | None,
    batch_size: int | None,
) -> Manifest:
    if read_columns is not None:
        special = [c for c in read_columns if c in ("_rowid", "_rowaddr")]
        if special:
            raise NotSupportedYetError(f"reading {special[0]} in an add_columns function")
    plan = plan_scan(
        snap.semantic_schema, ScanRequest(columns=read_columns), flagged=snap.semantic_types
    )
    # like pylance, the output schema is that of the function's result on a one-row sample
    sample = next(iter(scan_columns(snap, read_columns, limit=1)), None)
    if sample is None:
        sample = pa.RecordBatch.from_pylist([], schema=plan.output_schema)
    declared = getattr(func, "output_schema", None)
    try:
        out_schema = declared if isinstance(declared, pa.Schema) else _to_batch(func(sample)).schema
    except Exception as e:  # like pylance: any failure on the sample is a bad transform
        raise TypeError(
            f"transforms must be a dict of SQL expressions, a function of a batch, Arrow "
            f"fields or Arrow data; the function failed on a batch of data: {e}"
        ) from e

    def transform(batch: pa.RecordBatch) -> pa.RecordBatch:
        result = _to_batch(func(project(batch, plan)))
        if not result.schema.equals(out_schema):
            raise SchemaEvolutionError(
                ", ".join(out_schema.names),
                f"the function returned a batch of schema {result.schema}, expected {out_schema}",
            )
        return _without_views(result)

    source = ColumnSource(plan.top_fields, plan.read_schema, transform)
    return _write_and_commit(snap, out_schema, source, batch_size)


class _RowFeed:
    """Rows of a reader handed out in the sizes the live rows of the table come in."""

    def __init__(self, reader: pa.RecordBatchReader) -> None:
        self.schema = reader.schema
        self._batches: Iterator[pa.RecordBatch] = iter(reader)
        self._pending: pa.RecordBatch | None = None

    def take(self, n: int) -> pa.RecordBatch:
        parts = []
        while n:
            batch = self._pending if self._pending is not None else next(self._batches, None)
            self._pending = None
            if batch is None:
                raise SchemaEvolutionError(
                    ", ".join(self.schema.names),
                    "the new column data ended before every row of the dataset had a value",
                )
            if batch.num_rows > n:
                self._pending = batch.slice(n)
                batch = batch.slice(0, n)
            parts.append(batch)
            n -= batch.num_rows
        if len(parts) == 1:
            return parts[0]
        return pa.Table.from_batches(parts, schema=self.schema).combine_chunks().to_batches()[0]

    def check_exhausted(self) -> None:
        rest = self._pending.num_rows if self._pending is not None else 0
        rest += sum(b.num_rows for b in self._batches)
        if rest:
            raise SchemaEvolutionError(
                ", ".join(self.schema.names),
                f"the new column data has {rest} more rows than the dataset",
            )


def _add_reader(snap: Snapshot, data: Any, batch_size: int | None) -> Manifest:
    try:
        reader = coerce_reader(data)
    except TypeError as e:
        raise TypeError(
            "transforms must be a dict of SQL expressions, a function of a batch, Arrow "
            f"fields or Arrow data, not {type(data).__name__}: {e}"
        ) from e
    feed = _RowFeed(reader)

    def transform(batch: pa.RecordBatch) -> pa.RecordBatch:
        return _without_views(feed.take(batch.num_rows) if batch.num_rows else _empty(feed.schema))

    plan = plan_scan(snap.semantic_schema, ScanRequest(columns=[]), flagged=snap.semantic_types)
    source = ColumnSource(plan.top_fields, plan.read_schema, transform)
    return _write_and_commit(snap, feed.schema, source, batch_size, feed.check_exhausted)


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


def _without_views(batch: pa.RecordBatch) -> pa.RecordBatch:
    """New column values with views (at any depth) in their non-view layouts: the rows are
    placed at their physical offsets by a take, and Arrow has none for views; the data
    file stores the non-view layout anyway, and the declared (view) layout is what the new
    field records as its output encoding."""
    if not any(has_view(t) for t in batch.schema.types):
        return batch
    arrays = [to_kernel_layout(c, f.name) for c, f in zip(batch.columns, batch.schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def add_columns(
    snap: Snapshot,
    transforms: Any,
    read_columns: Sequence[str] | None = None,
    batch_size: int | None = None,
) -> Manifest:
    """Add columns to ``snap`` in one ``Merge`` commit (see the module docstring)."""
    if isinstance(transforms, pa.Field):
        transforms = [transforms]
    if (
        isinstance(transforms, list)
        and transforms
        and all(isinstance(f, pa.Field) for f in transforms)
    ):
        transforms = pa.schema(transforms)
    if isinstance(transforms, (pa.Schema, Mapping)) and not len(transforms):
        raise SchemaEvolutionError("", "no columns to add")
    if isinstance(transforms, pa.Schema):
        return _add_all_null(snap, transforms)
    if isinstance(transforms, Mapping):
        return _add_sql(snap, transforms, batch_size)
    if callable(transforms) and not isinstance(transforms, pa.RecordBatchReader):
        return _add_udf(snap, transforms, read_columns, batch_size)
    return _add_reader(snap, transforms, batch_size)
