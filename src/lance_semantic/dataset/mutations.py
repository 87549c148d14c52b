"""Row mutations: ``delete``, ``update`` and ``merge_insert`` (layer L5; facts §3 "What
pylance 14 actually writes per operation", §7 deletion files).

All three write the way pylance does: rows that go away get a deletion file on their
fragment (a fragment whose rows all go away is dropped), rewritten and inserted rows land
in new fragments written through the same boundary as appends, and one transaction
(``Delete`` or ``Update``) publishes it all.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..commit.committer import commit
from ..errors import (
    CommitOutcomeUnknownError,
    DuplicateKeyError,
    InvalidJsonError,
    MatchedRowError,
    SchemaMismatchError,
)
from ..manifest.model import Delete, DeletionFile, Fragment, Manifest, Update
from ..read.scan import ROW_OFFSET, FragmentReader, deleted_rows
from ..read.views import to_kernel_layout
from ..schema.compatibility import match_input_fields
from ..storage.deletions import write_deleted_rows
from ..write.boundary import bind_input
from ..write.fragments import coerce_reader
from .arguments import (
    cast_update_value,
    check_boolean_result,
    check_optional_str,
    check_update_value,
)
from .expressions import MatchCondition, SqlExpression, referenced_columns
from .mutation_scan import BATCH as _BATCH
from .mutation_scan import rows_plan as _rows_plan
from .mutation_scan import scan as _scan
from .scan import Filter
from .snapshot import Snapshot, TableHandle
from .source_rows import Origin, RowOrigins
from .writing import write_rows

__all__ = [
    "DeleteResult",
    "UpdateResult",
    "MergeInsertResult",
    "MergeInsertBuilder",
    "delete",
    "update",
]

#: rows per batch when only a few columns are read (keys, a predicate's columns)
_NARROW_BATCH = 1 << 20


class _Counts:
    """Read as attributes, or by key like the dicts pylance returns
    (``result["num_deleted_rows"]``, ``dict(result)``)."""

    __slots__ = ()

    def keys(self) -> list[str]:
        """The counts' names, so that the result reads like pylance's dict.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> result = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance").delete("id > 0")
        >>> result.keys(), result["num_deleted_rows"], dict(result)
        (['num_deleted_rows'], 2, {'num_deleted_rows': 2})
        """
        return [f.name for f in fields(self)]  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> int:
        if key not in self.keys():
            raise KeyError(key)
        return int(getattr(self, key))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())


@dataclass(frozen=True, slots=True)
class DeleteResult(_Counts):
    """Rows a ``delete`` removed.

    >>> DeleteResult(3)["num_deleted_rows"]
    3
    """

    num_deleted_rows: int


@dataclass(frozen=True, slots=True)
class UpdateResult(_Counts):
    """What ``Dataset.update`` did: ``num_rows_updated`` (also ``result["..."]``).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
    >>> result = ds.update({"id": "id + 10"}, where="id < 3")
    >>> result.num_rows_updated, dict(result)
    (2, {'num_rows_updated': 2})
    """

    num_rows_updated: int


@dataclass(frozen=True, slots=True)
class MergeInsertResult(_Counts):
    """What a merge_insert did: rows inserted, updated and deleted (also by key).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> result = ds.merge_insert("id").when_not_matched_insert_all().execute(
    ...     pa.table({"id": [2, 3]}))
    >>> result.num_inserted_rows, result["num_updated_rows"], result.num_deleted_rows
    (1, 0, 0)
    """

    num_inserted_rows: int
    num_updated_rows: int
    num_deleted_rows: int


# ---- shared pieces ---------------------------------------------------------------------------


def _match_keys(arr: pa.Array | pa.ChunkedArray, name: str) -> pa.Array | pa.ChunkedArray:
    """A merge key column as its plain values: keys match by value, whatever dictionary
    (a legacy ``dict:`` column, a source's own one) encodes them."""
    return to_kernel_layout(arr, name, dictionaries=True)


def _offsets(batch: pa.RecordBatch) -> np.ndarray:
    return batch.column(ROW_OFFSET).to_numpy().astype(np.uint32)


def _without_offsets(batch: pa.RecordBatch) -> pa.RecordBatch:
    return batch.drop_columns([ROW_OFFSET])


def _apply_deletions(
    snap: Snapshot, hits: Mapping[int, list[np.ndarray]]
) -> tuple[list[Fragment], list[int], dict[int, np.ndarray]]:
    """Write the merged deletion file of every fragment with newly deleted rows; also
    returns those rows per fragment (what a rebase merges with concurrent deletions)."""
    updated: list[Fragment] = []
    removed: list[int] = []
    affected: dict[int, np.ndarray] = {}
    for frag in snap.manifest.fragments:
        new = hits.get(frag.id)
        if not new:
            continue
        affected[frag.id] = np.unique(np.concatenate(new)).astype(np.uint32)
        before = deleted_rows(snap.store, frag)
        rows = affected[frag.id] if before is None else np.union1d(affected[frag.id], before)
        if len(rows) >= frag.physical_rows:
            removed.append(frag.id)
            continue
        file_id = secrets.randbits(64)
        previous = frag.deletion_file.file_type if frag.deletion_file is not None else None
        bitmap = write_deleted_rows(
            snap.store, frag.id, snap.version, file_id, rows, previous=previous
        )
        deletion = DeletionFile(
            file_type="bitmap" if bitmap else "arrow",
            read_version=snap.version,
            id=file_id,
            num_deleted_rows=len(rows),
        )
        updated.append(replace(frag, deletion_file=deletion))
    return updated, removed, affected


def _predicate_text(predicate: Filter | None) -> str:
    return "" if predicate is None else str(predicate)


def _write_new_rows(
    snap: Snapshot,
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
    written: list[str],
    allow_external_blobs: bool,
) -> list[Fragment]:
    return write_rows(
        snap.store,
        snap.semantic_schema,
        schema,
        batches,
        flagged=snap.semantic_types,
        appending=True,
        version=snap.data_storage_version,
        written=written,
        allow_external_blobs=allow_external_blobs,
    )


def _commit_update(
    snap: Snapshot,
    schema: pa.Schema,
    new_rows: Iterator[tuple[pa.RecordBatch, Origin | None]],
    hits: Mapping[int, list[np.ndarray]],
    preserving: Sequence[int],
    *,
    rewrite: bool,
) -> Manifest:
    """Write ``new_rows`` as new fragments, then mark ``hits`` deleted and commit one
    ``Update`` (pylance's shape for update and merge_insert). ``hits`` is filled while
    ``new_rows`` is consumed. On failure the new data files are removed. ``rewrite``: the
    rows are the table's own (external blob URIs in them were admitted when first written).

    Each batch comes with the origin of its rows: an invalid json value is reported on the
    caller's row (the merge source's, the table's), not on a row of the batch.
    """
    written: list[str] = []
    origins = RowOrigins()
    try:
        try:
            fragments = _write_new_rows(
                snap, schema, origins.track(new_rows), written, allow_external_blobs=rewrite
            )
        except InvalidJsonError as e:
            placed = origins.relocate(e, snap.semantic_schema)
            if placed is e:
                raise
            raise placed from None
        updated, removed, affected = _apply_deletions(snap, hits)
        op = Update(
            removed_fragment_ids=tuple(removed),
            updated_fragments=tuple(updated),
            new_fragments=tuple(fragments),
            fields_for_preserving_frag_bitmap=tuple(preserving),
        )
        return commit(snap.store, snap.manifest, op, affected_rows=affected)
    except CommitOutcomeUnknownError:
        raise  # a published manifest may name the files: kept
    except BaseException:
        for name in written:
            snap.store.delete(f"data/{name}")
        raise


# ---- delete -----------------------------------------------------------------------------------


def delete(snap: Snapshot, predicate: Filter) -> tuple[Manifest, DeleteResult]:
    """Mark the rows matching ``predicate`` deleted and commit a ``Delete``."""
    return _delete(snap, predicate)


def _delete(snap: Snapshot, predicate: Filter) -> tuple[Manifest, DeleteResult]:
    hits: dict[int, list[np.ndarray]] = {}
    count = 0
    for frag, batch in _scan(snap, [], predicate, _NARROW_BATCH):
        hits.setdefault(frag.id, []).append(_offsets(batch))
        count += batch.num_rows
    # nothing matched: an empty Delete, as pylance
    updated, removed, affected = _apply_deletions(snap, hits)
    op = Delete(
        updated_fragments=tuple(updated),
        deleted_fragment_ids=tuple(removed),
        predicate=_predicate_text(predicate),
    )
    return commit(snap.store, snap.manifest, op, affected_rows=affected), DeleteResult(count)


# ---- update -----------------------------------------------------------------------------------


def update(
    snap: Snapshot, updates: Mapping[str, str], where: Filter | None = None
) -> tuple[Manifest, UpdateResult]:
    """Rewrite the rows matching ``where`` with ``updates`` (column -> SQL expression)."""
    if isinstance(updates, Mapping) and not updates:  # pylance: "No updates provided"
        raise ValueError("update: no updates provided (give at least one column -> SQL)")
    return _update(snap, updates, where)


def _update(
    snap: Snapshot, updates: Mapping[str, str], where: Filter | None
) -> tuple[Manifest, UpdateResult]:
    table = snap.semantic_schema
    for name in updates:
        if name not in table.names:
            raise SchemaMismatchError(name, "<absent>", "update", "no such column")
    exprs = {name: SqlExpression(sql) for name, sql in updates.items()}
    out = _rows_plan(snap, None, None).read_schema  # the layout rows are written back in
    for name, expr in exprs.items():
        check_update_value(name, expr.sql, expr.evaluate, out)
    hits: dict[int, list[np.ndarray]] = {}
    count = 0

    def new_rows() -> Iterator[tuple[pa.RecordBatch, Origin]]:
        nonlocal count
        for frag, batch in _scan(snap, None, where):
            offsets = _offsets(batch)
            hits.setdefault(frag.id, []).append(offsets)
            count += batch.num_rows
            rows = _without_offsets(batch)
            columns = []
            for f in out:
                if f.name in exprs:
                    expr = exprs[f.name]
                    columns.append(cast_update_value(f.name, expr.sql, expr.evaluate(rows), f.type))
                else:
                    columns.append(rows.column(f.name))
            origin = _table_rows(snap, frag, offsets)
            yield pa.RecordBatch.from_arrays(columns, schema=out), origin

    preserving = [f.id for n in updates for f in table.field(n).walk()]
    manifest = _commit_update(snap, out, new_rows(), hits, preserving, rewrite=True)
    return manifest, UpdateResult(count)


def _table_rows(snap: Snapshot, frag: Fragment, offsets: np.ndarray) -> Origin:
    """Row i of a batch of ``frag``'s rows at physical ``offsets`` -> its table row (its
    index among the live rows of the version, as ``take`` counts); computed only when an
    error needs it."""

    def origin(i: int) -> int:
        schema = snap.semantic_schema
        start = 0
        for f in snap.manifest.fragments:
            if f.id == frag.id:
                break
            start += FragmentReader(snap.store, schema, f, [], pa.schema([])).live_rows()
        physical = int(offsets[i])
        deleted = deleted_rows(snap.store, frag)
        before = 0 if deleted is None else int(np.searchsorted(deleted, physical))
        return start + physical - before

    return origin


# ---- merge_insert -----------------------------------------------------------------------------


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
        the other columns of updated rows).

        Returns
        -------
        MergeInsertResult

        Raises
        ------
        ValueError
            No ``when_*`` clause was chosen (the merge could change nothing; pylance refuses
            it the same way), before reading ``data``.
        DuplicateKeyError
            The source holds a key more than once.
        MatchedRowError
            ``when_matched_fail`` and a source row matches.
        SchemaMismatchError
            Source columns of other types than the table's.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> source = pa.table({"id": [2, 4], "s": ["B", "d"]})
        >>> ds.merge_insert("id").execute(source)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: merge_insert is not configured to change the data in any way: ...
        >>> ds.merge_insert("id").when_not_matched_insert_all().execute(
        ...     pa.table({"id": [8, 8], "s": ["x", "y"]}))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.DuplicateKeyError: merge_insert source has duplicate values ...
        >>> ds.merge_insert("id").when_matched_update_all().execute(source).num_updated_rows
        1
        """
        if not (self._matched in ("update", "delete") or self._insert or self._delete):
            raise ValueError(
                "merge_insert is not configured to change the data in any way: call "
                "when_matched_update_all, when_matched_delete, when_not_matched_insert_all "
                "or when_not_matched_by_source_delete before execute"
            )
        source = coerce_reader(data).read_all()
        return self._ds._apply(lambda snap: self._execute(snap, source), retry=True)

    def _execute(self, snap: Snapshot, data: pa.Table) -> tuple[Manifest, MergeInsertResult]:
        # whole target rows, and the layout rows are written back in (no views, ...)
        full = _rows_plan(snap, None, None)
        out = full.read_schema
        _check_source(snap, data.schema)
        source = _conform_source(data, out, self._on)
        n = source.num_rows
        matched_source = np.zeros(n, dtype=bool)
        keys = [_match_keys(source.column(k), k) for k in self._on]
        src_keys = pa.table([*keys, pa.array(np.arange(n))], names=[*self._on, "__src"])
        hits: dict[int, list[np.ndarray]] = {}
        counts = {"updated": 0, "deleted": 0, "inserted": 0}
        delete_pred = SqlExpression(self._delete_expr) if self._delete_expr else None
        if delete_pred is not None:
            check_boolean_result(
                "when_not_matched_by_source_delete", delete_pred.sql, delete_pred.evaluate, out
            )
        source_cols = [c for c in source.column_names if c in out.names]

        # read only the keys (and the delete condition's columns); whole rows are taken
        # only for the matched target rows that get updated
        key_cols = list(self._on)
        if self._delete_expr:
            key_cols += [
                c for c in referenced_columns(self._delete_expr, out.names) if c not in key_cols
            ]
        schema = snap.semantic_schema
        source_key = keys[0].combine_chunks()
        needs_target = self._condition is not None or set(source_cols) != set(out.names)

        single = len(self._on) == 1

        def lookup(batch: pa.RecordBatch) -> pa.RecordBatch:
            """Each target row's source row (null: no match); runs on the scan threads."""
            key = _match_keys(batch.column(self._on[0]), self._on[0])
            idx = pc.index_in(key, value_set=source_key, skip_nulls=True)
            return batch.append_column("__src", idx)

        def matches(batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
            """(target row offsets, source row indices) of the matched pairs."""
            if single:
                idx = batch.column("__src")
                hit = idx.is_valid().to_numpy(zero_copy_only=False)
                offsets = batch.column(ROW_OFFSET).to_numpy()[hit]
                return offsets, idx.filter(idx.is_valid()).to_numpy().astype(np.int64)
            target = pa.table(
                [*(_match_keys(batch.column(k), k) for k in self._on), batch.column(ROW_OFFSET)],
                names=[*self._on, ROW_OFFSET],
            )
            joined = target.join(src_keys, keys=self._on, join_type="inner")
            joined = joined.sort_by(ROW_OFFSET)
            return joined.column(ROW_OFFSET).to_numpy(), joined.column("__src").to_numpy()

        def new_rows() -> Iterator[tuple[pa.RecordBatch, Origin]]:
            for frag, batch in _scan(
                snap, key_cols, None, _NARROW_BATCH, lookup if single else None
            ):
                offsets, src_idx = matches(batch)
                matched_source[src_idx] = True
                batch_offsets = batch.column(ROW_OFFSET).to_numpy()
                if self._matched == "fail" and len(offsets):
                    row = source.slice(int(src_idx[0]), 1).to_pylist()[0]
                    raise MatchedRowError({k: row[k] for k in self._on})
                if self._matched == "delete" and len(offsets):
                    hits.setdefault(frag.id, []).append(offsets.astype(np.uint32))
                    counts["deleted"] += len(offsets)
                if self._matched == "update" and len(offsets):
                    src_rows = source.take(pa.array(src_idx))
                    chosen = offsets
                    rows = None
                    if needs_target:  # a condition or a partial-column source
                        reader = FragmentReader(
                            snap.store, schema, frag, full.top_fields, full.read_schema
                        )
                        rows = pa.Table.from_batches(reader.take(offsets), schema=full.read_schema)
                    if self._condition is not None:
                        assert rows is not None
                        keep = self._condition.mask(rows, src_rows)
                        rows, src_rows = rows.filter(keep), src_rows.filter(keep)
                        chosen = offsets[keep.to_numpy(zero_copy_only=False)]
                        src_idx = src_idx[keep.to_numpy(zero_copy_only=False)]
                    if len(chosen):
                        hits.setdefault(frag.id, []).append(chosen.astype(np.uint32))
                        counts["updated"] += len(chosen)
                        if rows is None:  # every column comes from the source rows
                            yield from _with_origins(
                                (_fill(b, out) for b in src_rows.to_batches()), src_idx
                            )
                        else:
                            target_rows = rows.combine_chunks().to_batches()[0]
                            merged = _overlay(target_rows, src_rows, source_cols, out)
                            yield merged, _source_rows(src_idx)
                if self._delete:
                    unmatched = np.ones(batch.num_rows, dtype=bool)
                    unmatched[np.searchsorted(batch_offsets, offsets)] = False
                    if delete_pred is not None:
                        cond = pc.fill_null(delete_pred.evaluate(_without_offsets(batch)), False)
                        unmatched &= cond.to_numpy(zero_copy_only=False)
                    if unmatched.any():
                        hits.setdefault(frag.id, []).append(
                            batch_offsets[unmatched].astype(np.uint32)
                        )
                        counts["deleted"] += int(unmatched.sum())
            if self._insert:
                fresh = source.filter(pa.array(~matched_source))
                counts["inserted"] = fresh.num_rows
                yield from _with_origins(
                    (_fill(b, out) for b in fresh.to_batches(max_chunksize=_BATCH)),
                    np.flatnonzero(~matched_source),
                )

        preserving = [f.id for f in snap.semantic_schema]
        manifest = _commit_update(snap, out, new_rows(), hits, preserving, rewrite=False)
        return manifest, MergeInsertResult(counts["inserted"], counts["updated"], counts["deleted"])


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


def _check_source(snap: Snapshot, schema: pa.Schema) -> None:
    """The append rule applies to a merge source: exact Arrow types on a legacy table, an
    accepted layout of each field's semantic type on a flagged one."""
    table = snap.semantic_schema
    if snap.semantic_types:
        bind_input(table.fields, schema)
    else:
        match_input_fields(table, schema, allow_missing_nullable=True)


def _conform_source(source: pa.Table, out: pa.Schema, on: Sequence[str]) -> pa.Table:
    """The (checked) source with every column in the table's read layout: a change of
    layout within one semantic type, values unchanged."""
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
    columns, fields = [], []
    for name in source.column_names:
        if name not in out.names:
            raise SchemaMismatchError(name, "<absent>", str(source.schema.field(name).type))
        target = out.field(name)
        col = source.column(name)
        columns.append(col if col.type == target.type else col.cast(target.type))
        fields.append(target)
    conformed = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    keys = pa.table([_match_keys(conformed.column(k), k) for k in on], names=list(on))
    if keys.group_by(list(on)).aggregate([]).num_rows != keys.num_rows:
        raise DuplicateKeyError(list(on))
    return conformed


def _overlay(
    target: pa.RecordBatch, source: pa.Table, source_cols: Sequence[str], out: pa.Schema
) -> pa.RecordBatch:
    """Target rows with the source's columns put over them (a partial-column source keeps
    the other columns' target values)."""
    chosen = set(source_cols)
    columns = [
        source.column(f.name).combine_chunks() if f.name in chosen else target.column(f.name)
        for f in out
    ]
    return pa.RecordBatch.from_arrays(columns, schema=out)


def _fill(batch: pa.RecordBatch, out: pa.Schema) -> pa.RecordBatch:
    """A source batch with the table's columns (missing ones null) in the table's order."""
    names = set(batch.schema.names)
    columns = [
        batch.column(f.name) if f.name in names else pa.nulls(batch.num_rows, f.type) for f in out
    ]
    return pa.RecordBatch.from_arrays(columns, schema=out)
