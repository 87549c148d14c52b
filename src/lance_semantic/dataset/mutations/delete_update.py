"""Row mutations: ``delete`` and ``update``, and what ``merge_insert`` shares with them
(layer L5; docs/format/lance-format-facts.md §3 "What pylance 14 actually writes per operation", §7
deletion files).

All three write the way pylance does: rows that go away get a deletion file on their
fragment (a fragment whose rows all go away is dropped), rewritten and inserted rows land
in new fragments written through the same boundary as appends, and one transaction
(``Delete`` or ``Update``) publishes it all.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa

from ...codecs.kernel_layout import to_kernel_layout
from ...commit import commit
from ...errors import InvalidJsonError, SchemaMismatchError
from ...manifest import Delete, DeletionFile, Fragment, Manifest, Update
from ...query import SqlExpression, cast_update_value, check_update_value
from ...read import ROW_OFFSET, Filter, FragmentReader, deleted_rows
from ...schema import Field
from ...storage import UncommittedFiles, write_deleted_rows
from ...write import WriteRequest, has_json, write_rows
from ..core import Snapshot
from .json_inputs import conform_json
from .rows_to_change import matching_rows
from .rows_to_change import rows_plan as _rows_plan
from .rows_to_change import scan as _scan
from .source_rows import Origin, RowOrigins

__all__ = [
    "DeleteResult",
    "UpdateResult",
    "MergeInsertResult",
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
    snap: Snapshot, hits: Mapping[int, list[np.ndarray]], files: UncommittedFiles
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
            snap.store, frag.id, snap.version, file_id, rows, previous=previous, files=files
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
        WriteRequest(mode="append", allow_external_blob_outside_bases=allow_external_blobs),
        flagged=snap.semantic_types,
        appending=True,
        version=snap.data_storage_version,
        written=written,
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
    origins = RowOrigins()
    with UncommittedFiles(snap.store) as files:
        try:
            fragments = _write_new_rows(
                snap,
                schema,
                origins.track(new_rows),
                files.data_names,
                allow_external_blobs=rewrite,
            )
        except InvalidJsonError as e:
            placed = origins.relocate(e, snap.semantic_schema)
            if placed is e:
                raise
            raise placed from None
        updated, removed, affected = _apply_deletions(snap, hits, files)
        op = Update(
            removed_fragment_ids=tuple(removed),
            updated_fragments=tuple(updated),
            new_fragments=tuple(fragments),
            fields_for_preserving_frag_bitmap=tuple(preserving),
        )
        return commit(snap.store, snap.manifest, op, affected_rows=affected, files=files)


# ---- delete -----------------------------------------------------------------------------------


def delete(snap: Snapshot, predicate: Filter) -> tuple[Manifest, DeleteResult]:
    """Mark the rows matching ``predicate`` deleted and commit a ``Delete``."""
    return _delete(snap, predicate)


def _delete(snap: Snapshot, predicate: Filter) -> tuple[Manifest, DeleteResult]:
    hits: dict[int, list[np.ndarray]] = {}
    count = 0
    for frag_id, offsets in matching_rows(snap, predicate):
        hits.setdefault(frag_id, []).append(offsets)
        count += len(offsets)
    # nothing matched: an empty Delete, as pylance
    with UncommittedFiles(snap.store) as files:
        updated, removed, affected = _apply_deletions(snap, hits, files)
        op = Delete(
            updated_fragments=tuple(updated),
            deleted_fragment_ids=tuple(removed),
            predicate=_predicate_text(predicate),
        )
        manifest = commit(snap.store, snap.manifest, op, affected_rows=affected, files=files)
    return manifest, DeleteResult(count)


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
            origin = _table_rows(snap, frag, offsets)
            for f in out:
                if f.name in exprs:
                    expr = exprs[f.name]
                    value = expr.evaluate(rows)
                    field = table.field(f.name)
                    columns.append(
                        _json_value(value, field, f.type, origin)
                        if has_json(field) and _json_input(value.type)
                        else cast_update_value(f.name, expr.sql, value, f.type)
                    )
                else:
                    columns.append(rows.column(f.name))
            yield pa.RecordBatch.from_arrays(columns, schema=out), origin

    preserving = [f.id for n in updates for f in table.field(n).walk()]
    manifest = _commit_update(snap, out, new_rows(), hits, preserving, rewrite=True)
    return manifest, UpdateResult(count)


def _json_input(dt: pa.DataType) -> bool:
    """Whether an update value of type ``dt`` is read as json input (text, JSONB, or
    nested values holding them), not cast."""
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    return not (pa.types.is_primitive(dt) or pa.types.is_null(dt))


def _json_value(value: pa.Array, field: Field, target: pa.DataType, origin: Origin) -> pa.Array:
    """An update value for a column holding json, read by its own type (SQL gives json as
    text) into the rows' layout; invalid JSON names the table row."""
    try:
        return conform_json(value, field, target)
    except InvalidJsonError as e:
        e.at_offset(origin(e.row) - e.row)
        raise


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
