"""``merge_insert``: an upsert keyed on one or several columns (layer L5), written the way
pylance writes it: matched target rows get a deletion file (or the whole fragment goes),
replacing and inserted rows land in new fragments through the writer boundary, and one
``Update`` transaction publishes it all (the shared pieces are in ``mutations``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import DuplicateKeyError, InvalidJsonError, MatchedRowError, SchemaMismatchError
from ...manifest import Fragment, Manifest
from ...query import MatchCondition, SqlExpression, check_boolean_result, referenced_columns
from ...read import ROW_OFFSET, FragmentReader
from ...schema import TableSchema, is_blob, is_blob_v2, match_input_fields
from ...write import (
    bind_input,
    coerce_reader,
    has_json,
    logical_blob_array,
    logical_blob_type,
    table_blob_inputs,
)
from ..core import Snapshot, TableHandle, check_optional_str
from .delete_update import (
    _NARROW_BATCH,
    MergeInsertResult,
    _commit_update,
    _match_keys,
    _without_offsets,
)
from .json_inputs import conform_json, on_rows, plain_json
from .rows_to_change import BATCH as _BATCH
from .rows_to_change import rows_plan as _rows_plan
from .rows_to_change import scan as _scan
from .source_rows import Origin

__all__ = ["MergeInsertBuilder"]


class MergeInsertBuilder:
    """An upsert keyed on one or several columns.

    Target rows are the table's rows; source rows are the data passed to :meth:`execute`.
    A target row and a source row *match* when their keys are equal. Matched target rows can
    be replaced by their source row (:meth:`when_matched_update_all`), deleted
    (:meth:`when_matched_delete`) or refused (:meth:`when_matched_fail`) -- the last of
    these three calls wins, as in pylance; source rows that match nothing can be inserted
    (:meth:`when_not_matched_insert_all`); target rows that match no source row can be
    deleted (:meth:`when_not_matched_by_source_delete`).

    Made by ``Dataset.merge_insert(on)``; each ``when_*`` call returns the builder, and
    :meth:`execute` commits one version.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
    >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
    >>> builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    >>> builder.execute(source)
    MergeInsertResult(num_inserted_rows=1, num_updated_rows=1, num_deleted_rows=0)
    >>> ds.to_table().sort_by("id").to_pydict()
    {'id': [1, 2, 3, 4], 's': ['a', 'B', 'c', 'd']}
    """

    def __init__(self, ds: TableHandle, on: str | Sequence[str]) -> None:
        self._ds = ds
        self._on = [on] if isinstance(on, str) else list(on)
        self._matched: Literal["update", "delete", "fail"] | None = None
        self._insert = False
        self._delete = False
        self._delete_expr: str | None = None
        self._condition: MatchCondition | None = None

    def when_matched_update_all(self, condition: str | None = None) -> MergeInsertBuilder:
        """Replace matched target rows by their source row; with ``condition`` (SQL naming
        ``target.<column>`` and ``source.<column>``) only the pairs that satisfy it.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").when_matched_update_all("target.s < source.s").execute(
        ...     pa.table({"id": [1, 2], "s": ["0", "z"]})).num_updated_rows
        1
        >>> ds.to_table().sort_by("id").to_pydict()
        {'id': [1, 2, 3], 's': ['a', 'z', 'c']}
        """
        check_optional_str("condition", condition)
        self._matched = "update"
        self._condition = MatchCondition(condition) if condition is not None else None
        return self

    def when_matched_delete(self) -> MergeInsertBuilder:
        """Delete the target rows that a source row matches (that source row is then
        neither inserted nor used).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").when_matched_delete().execute(source)
        MergeInsertResult(num_inserted_rows=0, num_updated_rows=0, num_deleted_rows=1)
        >>> ds.to_table().to_pydict()
        {'id': [1, 3], 's': ['a', 'c']}
        """
        self._matched = "delete"
        self._condition = None
        return self

    def when_matched_fail(self) -> MergeInsertBuilder:
        """Refuse the whole merge, committing nothing, if any source row matches a target
        row (:class:`~lance_semantic.errors.MatchedRowError`): an insert-only merge that
        must not meet existing keys.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").when_matched_fail().when_not_matched_insert_all().execute(
        ...     source)
        Traceback (most recent call last):
        ...
        lance_semantic.errors.MatchedRowError: merge_insert with when_matched_fail: a source \
row matches an existing row with key values id = 2; nothing was committed
        >>> ds.version
        1
        """
        self._matched = "fail"
        self._condition = None
        return self

    def when_not_matched_insert_all(self) -> MergeInsertBuilder:
        """Insert the source rows that match no target row.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").when_not_matched_insert_all().execute(source)
        MergeInsertResult(num_inserted_rows=1, num_updated_rows=0, num_deleted_rows=0)
        >>> ds.to_table().to_pydict()
        {'id': [1, 2, 3, 4], 's': ['a', 'b', 'c', 'd']}
        """
        self._insert = True
        return self

    def when_not_matched_by_source_delete(self, expr: str | None = None) -> MergeInsertBuilder:
        """Delete the target rows that match no source row; with ``expr`` (a SQL filter
        over the target's columns) only those of them that satisfy it.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").when_not_matched_by_source_delete("id > 2").execute(source)
        MergeInsertResult(num_inserted_rows=0, num_updated_rows=0, num_deleted_rows=1)
        >>> ds.to_table().to_pydict()
        {'id': [1, 2], 's': ['a', 'b']}
        """
        check_optional_str("expr", expr)
        self._delete = True
        self._delete_expr = expr
        return self

    def execute(self, data: Any) -> MergeInsertResult:
        """Apply the merge with ``data`` as the source and commit one ``Update``.

        ``data`` is anything ``write_dataset`` takes (a table, batches, a reader, ...),
        read into memory; its columns are matched by name (a subset of the table's keeps
        the other columns of updated rows; a merge that inserts no row may leave out
        non-nullable columns too, as in pylance).

        Returns
        -------
        MergeInsertResult

        Raises
        ------
        ValueError
            No ``when_*`` clause was chosen (the merge could change nothing; pylance refuses
            it the same way), before reading ``data``.
        DuplicateKeyError
            Several source rows match one target row that is updated or deleted (a key the
            source repeats is otherwise fine: rows matching nothing are each inserted).
        MatchedRowError
            ``when_matched_fail`` and a source row matches.
        SchemaMismatchError
            Source columns of other types than the table's, or a non-nullable column
            missing from the source of a merge that inserts rows.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").execute(source)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: merge_insert is not configured to change the data in any way: ...
        >>> ds.merge_insert("id").when_matched_update_all().execute(
        ...     pa.table({"id": [2, 2], "s": ["x", "y"]}))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.DuplicateKeyError: merge_insert: 2 source rows match the target ...
        >>> ds.merge_insert("id").when_matched_update_all().execute(source).num_updated_rows
        1
        """
        if self._matched is None and not (self._insert or self._delete):
            raise ValueError(
                "merge_insert is not configured to change the data in any way: call "
                "when_matched_update_all, when_matched_delete, when_not_matched_insert_all "
                "or when_not_matched_by_source_delete before execute"
            )
        source = coerce_reader(data).read_all()
        held = _materialized(data)
        return self._ds._apply(lambda snap: self._execute(snap, source, held), retry=True)

    def _execute(
        self, snap: Snapshot, data: pa.Table, materialized: bool
    ) -> tuple[Manifest, MergeInsertResult]:
        return _Merge(self, snap, data, materialized).commit()


def _materialized(data: object) -> bool:
    """Whether the caller's source is whole in memory (a table, a batch, a data frame, a
    dict or a list of dicts) rather than a stream: pylance knows an empty one holds no row
    to insert, and a stream it refuses without looking."""
    if isinstance(data, (pa.Table, pa.RecordBatch, dict)):
        return True
    if isinstance(data, list):
        return bool(data) and isinstance(data[0], dict)
    kind = type(data)
    return kind.__name__ == "DataFrame" and kind.__module__.split(".")[0] in ("pandas", "polars")


class _Merge:
    """One run of a merge against one snapshot (a retry makes a new one): the conformed
    source and its keys, then what the branches collect while the target's keys are
    scanned -- the target rows to delete per fragment (``hits``), the source rows some
    target row matched, the counts -- and the rows they write (updated and inserted)."""

    def __init__(
        self, builder: MergeInsertBuilder, snap: Snapshot, data: pa.Table, materialized: bool
    ) -> None:
        self.snap = snap
        self.on = list(builder._on)
        self.matched = builder._matched
        self.insert = builder._insert
        self.delete = builder._delete
        self.condition = builder._condition
        # whole target rows, and the layout rows are written back in (no views, ...)
        self.full = _rows_plan(snap, None, None)
        out = self.out = self.full.read_schema
        data = table_blob_inputs(data.to_reader(), snap.semantic_schema).read_all()
        # a materialized source of no rows inserts none: it may lack non-nullable columns
        # (pylance runs it; a stream it refuses)
        empty = materialized and data.num_rows == 0
        _check_source(snap, data.schema, inserting=self.insert and not empty)
        self.source, self.targets = _conform_source(data, out, snap.semantic_schema, self.on)
        n = self.source.num_rows
        self.matched_source = np.zeros(n, dtype=bool)
        keys = [_match_keys(self.source.column(k), k) for k in self.on]
        self.src_keys = pa.table([*keys, pa.array(np.arange(n))], names=[*self.on, "__src"])
        # a key the source repeats: every source row of it matches (not only the first)
        repeated = self.src_keys.group_by(self.on).aggregate([]).num_rows != n
        self.hits: dict[int, list[np.ndarray]] = {}
        self.counts = {"updated": 0, "deleted": 0, "inserted": 0}
        expr = builder._delete_expr
        self.delete_pred = SqlExpression(expr) if expr else None
        if self.delete_pred is not None:
            pred = self.delete_pred
            check_boolean_result("when_not_matched_by_source_delete", pred.sql, pred.evaluate, out)
        self.source_cols = [c for c in self.source.column_names if c in out.names]
        # read only the keys (and the delete condition's columns); whole rows are taken
        # only for the matched target rows that get updated
        self.key_cols = list(self.on)
        if expr:
            self.key_cols += [
                c for c in referenced_columns(expr, out.names) if c not in self.key_cols
            ]
        schema = snap.semantic_schema
        self.source_key = keys[0].combine_chunks()
        self.needs_target = (  # a condition, or a source lacking columns or struct members
            self.condition is not None
            or set(self.source_cols) != set(out.names)
            or any(self.targets[c] != out.field(c).type for c in self.source_cols)
        )
        self.json_fields = {
            c: schema.field(c) for c in self.source_cols if has_json(schema.field(c))
        }
        self.single = len(self.on) == 1 and not repeated

    def commit(self) -> tuple[Manifest, MergeInsertResult]:
        """Write the new rows, mark the target rows deleted, commit one ``Update``."""
        snap = self.snap
        preserving = [f.id for f in snap.semantic_schema]
        if self.matched == "delete" and not (self.insert or self.delete):
            # (pylance's delete-only merge lists the top-level fields only)
            preserving = [f.id for f in snap.semantic_schema.fields]
        rows = self._new_rows()
        manifest = _commit_update(snap, self.out, rows, self.hits, preserving, rewrite=False)
        counts = self.counts
        return manifest, MergeInsertResult(counts["inserted"], counts["updated"], counts["deleted"])

    # ---- the scan and its branches ---------------------------------------------------------

    def _new_rows(self) -> Iterator[tuple[pa.RecordBatch, Origin]]:
        """The rows to write; each target batch goes through the branches chosen."""
        lookup = self._lookup if self.single else None
        for frag, batch in _scan(self.snap, self.key_cols, None, _NARROW_BATCH, lookup):
            offsets, src_idx = self._matches(batch)
            self.matched_source[src_idx] = True
            if self.matched == "fail" and len(offsets):
                raise MatchedRowError(self._keys_of(int(src_idx[0])))
            if self.matched == "delete" and len(offsets):
                self._matched_delete(frag, offsets, src_idx)
            if self.matched == "update" and len(offsets):
                yield from self._matched_update(frag, offsets, src_idx)
            if self.delete:
                self._not_matched_by_source_delete(frag, batch, offsets)
        if self.insert:
            yield from self._not_matched_insert()

    def _matched_delete(self, frag: Fragment, offsets: np.ndarray, src_idx: np.ndarray) -> None:
        """``when_matched_delete``: the matched target rows go."""
        self._one_match_each(offsets, src_idx)
        self.hits.setdefault(frag.id, []).append(offsets.astype(np.uint32))
        self.counts["deleted"] += len(offsets)

    def _matched_update(
        self, frag: Fragment, offsets: np.ndarray, src_idx: np.ndarray
    ) -> Iterator[tuple[pa.RecordBatch, Origin]]:
        """``when_matched_update_all``: the matched target rows (those the condition keeps)
        go, and their source rows, over the target rows' other columns, are written."""
        src_rows = self.source.take(pa.array(src_idx))
        chosen = offsets
        rows = None
        if self.needs_target:
            full = self.full
            reader = FragmentReader(
                self.snap.store, self.snap.semantic_schema, frag, full.top_fields, full.read_schema
            )
            unique = np.unique(offsets)  # (a repeated source key: pairs repeat)
            rows = pa.Table.from_batches(reader.take(unique), schema=full.read_schema)
            if len(unique) != len(offsets):
                rows = rows.take(pa.array(np.searchsorted(unique, offsets)))
        if self.condition is not None:
            assert rows is not None
            keep = self.condition.mask(rows, src_rows)
            rows, src_rows = rows.filter(keep), src_rows.filter(keep)
            chosen = offsets[keep.to_numpy(zero_copy_only=False)]
            src_idx = src_idx[keep.to_numpy(zero_copy_only=False)]
        self._one_match_each(chosen, src_idx)
        src_rows = self._written(src_rows, src_idx)
        if not len(chosen):
            return
        self.hits.setdefault(frag.id, []).append(chosen.astype(np.uint32))
        self.counts["updated"] += len(chosen)
        if rows is None:  # every column comes from the source rows
            yield from _with_origins((_fill(b, self.out) for b in src_rows.to_batches()), src_idx)
        else:
            target_rows = rows.combine_chunks().to_batches()[0]
            merged = _overlay(target_rows, src_rows, self.source_cols, self.out)
            yield merged, _source_rows(src_idx)

    def _not_matched_by_source_delete(
        self, frag: Fragment, batch: pa.RecordBatch, offsets: np.ndarray
    ) -> None:
        """``when_not_matched_by_source_delete``: the target rows of ``batch`` no source row
        matched (and that satisfy its condition) go."""
        batch_offsets = batch.column(ROW_OFFSET).to_numpy()
        unmatched = np.ones(batch.num_rows, dtype=bool)
        unmatched[np.searchsorted(batch_offsets, offsets)] = False
        if self.delete_pred is not None:
            cond = pc.fill_null(self.delete_pred.evaluate(_without_offsets(batch)), False)
            unmatched &= cond.to_numpy(zero_copy_only=False)
        if unmatched.any():
            self.hits.setdefault(frag.id, []).append(batch_offsets[unmatched].astype(np.uint32))
            self.counts["deleted"] += int(unmatched.sum())

    def _not_matched_insert(self) -> Iterator[tuple[pa.RecordBatch, Origin]]:
        """``when_not_matched_insert_all``: the source rows no target row matched (known
        once every target batch was seen) are written."""
        fresh = np.flatnonzero(~self.matched_source)
        self.counts["inserted"] = len(fresh)
        for start in range(0, len(fresh), _BATCH):
            idx = fresh[start : start + _BATCH]
            part = self._written(self.source.take(pa.array(idx)), idx).combine_chunks()
            yield from _with_origins((_fill(b, self.out) for b in part.to_batches()), idx)

    # ---- matching ---------------------------------------------------------------------------

    def _lookup(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each target row's source row (null: no match); runs on the scan threads."""
        key = _match_keys(batch.column(self.on[0]), self.on[0])
        idx = pc.index_in(key, value_set=self.source_key, skip_nulls=True)
        return batch.append_column("__src", idx)

    def _matches(self, batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
        """(target row offsets, source row indices) of the matched pairs."""
        if self.single:
            idx = batch.column("__src")
            hit = idx.is_valid().to_numpy(zero_copy_only=False)
            offsets = batch.column(ROW_OFFSET).to_numpy()[hit]
            return offsets, idx.filter(idx.is_valid()).to_numpy().astype(np.int64)
        target = pa.table(
            [*(_match_keys(batch.column(k), k) for k in self.on), batch.column(ROW_OFFSET)],
            names=[*self.on, ROW_OFFSET],
        )
        joined = target.join(self.src_keys, keys=self.on, join_type="inner")
        joined = joined.sort_by([(ROW_OFFSET, "ascending"), ("__src", "ascending")])
        return joined.column(ROW_OFFSET).to_numpy(), joined.column("__src").to_numpy()

    def _one_match_each(self, offsets: np.ndarray, src_idx: np.ndarray) -> None:
        """Refuse a target row (sorted ``offsets``) that several source rows match."""
        again = np.flatnonzero(offsets[1:] == offsets[:-1])
        if len(again):
            first = int(np.searchsorted(offsets, offsets[again[0]]))
            count = int(np.count_nonzero(offsets == offsets[again[0]]))
            raise DuplicateKeyError(list(self.on), self._keys_of(int(src_idx[first])), count)

    def _keys_of(self, row: int) -> dict[str, Any]:
        """The key values of source row ``row``."""
        values = self.source.slice(row, 1).to_pylist()[0]
        return {k: values[k] for k in self.on}

    def _written(self, rows: pa.Table, idx: np.ndarray) -> pa.Table:
        """Source rows about to be written (``idx``: their source rows), their json values
        in the table's read layout (read by their own type)."""
        for name, field in self.json_fields.items():
            if rows.schema.field(name).type == self.targets[name]:
                continue
            i = rows.schema.get_field_index(name)
            try:
                col = conform_json(rows.column(name).combine_chunks(), field, self.targets[name])
            except InvalidJsonError as e:
                raise on_rows(e, idx) from None
            rows = rows.set_column(i, rows.schema.field(name).with_type(col.type), col)
        return rows


def _source_rows(rows: np.ndarray) -> Origin:
    """Row i of a batch of source rows ``rows`` (indices into the source as given)."""
    return lambda i: int(rows[i])


def _with_origins(
    batches: Iterator[pa.RecordBatch], rows: np.ndarray
) -> Iterator[tuple[pa.RecordBatch, Origin]]:
    """Consecutive batches of the source rows ``rows``, each with its origin."""
    start = 0
    for b in batches:
        yield b, _source_rows(rows[start : start + b.num_rows])
        start += b.num_rows


def _check_source(snap: Snapshot, schema: pa.Schema, *, inserting: bool) -> None:
    """The append rule applies to a merge source: exact Arrow types on a legacy table, an
    accepted layout of each field's semantic type on a flagged one. A merge that inserts
    no row may lack non-nullable columns and struct members too (its rows keep their
    values), as in pylance."""
    table = snap.semantic_schema
    if snap.semantic_types:
        bind_input(table.fields, schema, allow_missing_members=not inserting)
    else:
        match_input_fields(
            table, schema, allow_missing_nullable=True, allow_missing_members=not inserting
        )


def _conform_source(
    source: pa.Table, out: pa.Schema, table: TableSchema, on: Sequence[str]
) -> tuple[pa.Table, dict[str, pa.DataType]]:
    """The (checked) source with every column in the table's read layout: a change of
    layout within one semantic type, values unchanged. A struct keeps only the members the
    source gives (:func:`_given_members`). A column holding json stays as given: its rows
    are converted when written (only those; invalid JSON elsewhere is no error, as in
    pylance). Also returns each column's layout in the rows written."""
    for key in on:
        if key not in source.column_names:
            raise SchemaMismatchError(
                key,
                str(out.field(key).type) if key in out.names else "<absent>",
                "<absent>",
                "merge key missing from the source",
            )
        if key not in out.names:
            raise SchemaMismatchError(
                key,
                "<absent>",
                str(source.schema.field(key).type),
                "merge key is not a column of the table",
            )
    columns, fields, targets = [], [], {}
    for name in source.column_names:
        if name not in out.names:
            raise SchemaMismatchError(name, "<absent>", str(source.schema.field(name).type))
        target = out.field(name)
        if not is_blob(table.field(name)):
            target = target.with_type(_given_members(target.type, source.schema.field(name).type))
        col = source.column(name)
        targets[name] = target.type
        if has_json(table.field(name)):
            col = plain_json(col)
            columns.append(col)
            fields.append(source.schema.field(name).with_type(col.type))
            continue
        if is_blob_v2(table.field(name)) and pa.types.is_large_binary(col.type):
            # plain bytes for a blob v2 column: taken as insert takes them (the data set)
            col = pa.chunked_array(map(logical_blob_array, col.chunks), logical_blob_type(col.type))
        columns.append(col if col.type == target.type else col.cast(target.type))
        fields.append(target)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields)), targets


def _overlay(
    target: pa.RecordBatch, source: pa.Table, source_cols: Sequence[str], out: pa.Schema
) -> pa.RecordBatch:
    """Target rows with the source's columns put over them (a partial-column source keeps
    the other columns' target values, a struct lacking members :func:`_merge_struct`)."""
    chosen = set(source_cols)
    columns = []
    for f in out:
        if f.name not in chosen:
            columns.append(target.column(f.name))
            continue
        given = source.column(f.name).combine_chunks()
        same = given.type == f.type
        columns.append(given if same else _merge_struct(target.column(f.name), given, f.type))
    return pa.RecordBatch.from_arrays(columns, schema=out)


def _fill(batch: pa.RecordBatch, out: pa.Schema) -> pa.RecordBatch:
    """A source batch with the table's columns (missing ones, and members missing from its
    structs, null) in the table's order."""
    names = set(batch.schema.names)
    columns = []
    for f in out:
        if f.name not in names:
            columns.append(pa.nulls(batch.num_rows, f.type))
            continue
        col = batch.column(f.name)
        columns.append(col if col.type == f.type else col.cast(f.type))
    return pa.RecordBatch.from_arrays(columns, schema=out)


def _plain_struct(dt: pa.DataType) -> bool:
    return pa.types.is_struct(dt) and not isinstance(dt, pa.BaseExtensionType)


def _given_members(out: pa.DataType, given: pa.DataType) -> pa.DataType:
    """``out`` with, along struct members (not inside lists or maps, whose elements are
    replaced whole), only the members ``given`` has, in ``out``'s order."""
    if not (_plain_struct(out) and _plain_struct(given)):
        return out
    theirs = {given.field(i).name: given.field(i).type for i in range(given.num_fields)}
    members = [out.field(i) for i in range(out.num_fields)]
    return pa.struct(
        [m.with_type(_given_members(m.type, theirs[m.name])) for m in members if m.name in theirs]
    )


def _merge_struct(target: pa.Array, given: pa.Array, out: pa.DataType) -> pa.Array:
    """A struct column of updated rows from a source that lacks some of its members, as
    pylance 14 merges them: a member the source gives takes the source's value (null under
    a null source struct), a missing one keeps the target's, and a row's struct is null only
    where both are; the same rule applies again in a member that lacks members."""
    valid = pc.or_(target.is_valid(), given.is_valid())
    kept = target.flatten()
    theirs = {given.type.field(i).name: a for i, a in enumerate(given.flatten())}
    members, children = [], []
    for i in range(out.num_fields):
        m = out.field(i)
        members.append(m)
        value = theirs.get(m.name)
        if value is None:
            children.append(kept[i])
        elif value.type == m.type:
            children.append(value)
        else:
            children.append(_merge_struct(kept[i], value, m.type))
    return pa.StructArray.from_arrays(children, fields=members, mask=pc.invert(valid))
