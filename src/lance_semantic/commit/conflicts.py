"""Rebase a transaction read at version R onto the versions other writers published since R,
or refuse it (layer L4; the rules of Lance's conflict resolver, ``conflict_resolver.rs``).

Delete and Update (update, merge_insert) are rebased row by row, as Lance does:

* commits that do not touch the fragments they modify (appends, config, index and schema
  projections, deletes / updates / rewrites of other fragments) change nothing;
* a concurrent Delete or Update that only wrote a new deletion file for one of their
  fragments is merged: when the rows both removed are disjoint, the fragment gets a NEW
  deletion file holding the union (always a bitmap, named with the newest version as its
  read version, as pylance writes it), and a union covering every row drops the fragment;
* the same row removed by both, a fragment whose data files the other rewrote or that it
  removed, a compaction (Rewrite) or a Merge of their fragments: a retryable conflict (the
  caller re-runs the operation from the newest version); an Overwrite or Restore: an
  incompatible one. Without the rows the operation removed (``affected_rows``), any
  shared fragment is a conflict.

The rebased transaction reads the newest version (``read_version``), as Lance records it.
Other operations keep the matrix of :func:`commutes`. A refused rebase raises
:class:`CommitConflictError`; nothing is written over.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from ..errors import CommitConflictError, CorruptTableError, DatasetExistsError
from ..manifest import (
    Append,
    CreateIndex,
    Delete,
    DeletionFile,
    Fragment,
    Manifest,
    Merge,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    Transaction,
    Update,
    UpdateConfig,
    decode_rewritten_index,
    decode_transaction,
    index_entries,
)
from ..manifest._pb.lance_table_pb2 import IndexSection
from ..storage import ObjectStore, UncommittedFiles, paths, read_deleted_rows, write_deleted_rows

__all__ = ["rebase", "commutes", "AffectedRows"]

#: fragment id -> the row offsets an operation removed from it (sorted, unique, uint32)
AffectedRows = Mapping[int, np.ndarray]

_ALWAYS_FINE = (ReserveFragments, UpdateConfig)
#: what a Delete or Update never conflicts with (Lance: check_delete_txn / check_update_txn)
_ROWS_FINE = (Append, ReserveFragments, UpdateConfig, Project, CreateIndex)


def _touched(op: object) -> set[int] | None:
    """Fragment ids an operation modifies or removes (None: the whole table)."""
    if isinstance(op, Delete):
        return {f.id for f in op.updated_fragments} | set(op.deleted_fragment_ids)
    if isinstance(op, Update):
        return {f.id for f in op.updated_fragments} | set(op.removed_fragment_ids)
    if isinstance(op, Rewrite):
        return {f.id for g in op.groups for f in g.old_fragments}
    if isinstance(op, (Append, ReserveFragments, UpdateConfig)):
        return set()
    return None


def commutes(ours: object, theirs: object) -> bool:
    """True when ``ours`` (not a Delete or Update) can be applied after ``theirs`` as if it
    had read it."""
    if isinstance(ours, Overwrite) or isinstance(ours, _ALWAYS_FINE):
        return True
    if isinstance(theirs, (Overwrite, Restore, Merge, Project)):
        return False
    if isinstance(theirs, _ALWAYS_FINE):
        return True
    if isinstance(ours, Append):
        return isinstance(theirs, (Append, Delete, Update, Rewrite, CreateIndex))
    if isinstance(ours, Project):
        # Lance's check_project_txn: a schema-only change commutes with every operation that
        # keeps the schema (it is applied on the newest fragments: their files of dropped
        # fields go, indices on them go); Merge / Project change the schema themselves (and
        # rebase() refuses a Project that makes a field non-nullable over new rows)
        return isinstance(theirs, (Append, Delete, Update, Rewrite, CreateIndex))
    if isinstance(ours, CreateIndex):
        return _index_commutes(ours, theirs)
    if isinstance(ours, Rewrite) and isinstance(theirs, Rewrite):
        # Lance's check_rewrite_txn: two compactions that remapped the same index conflict
        # even over other fragments (the index ours remapped is gone)
        if _remapped_indices(ours) & _remapped_indices(theirs):
            return False
    mine, other = _touched(ours), _touched(theirs)
    if mine is None or other is None:
        return False
    return not (mine & other)


def _remapped_indices(op: Rewrite) -> set[str]:
    return {decode_rewritten_index(raw).old_uuid for raw in op.rewritten_indices}


def _index_names(op: CreateIndex) -> set[str]:
    return {e.name for e in index_entries(_section(op.new_indices + op.removed_indices))}


def _section(raw: tuple[bytes, ...]) -> bytes | None:
    return IndexSection(indices=list(raw)).SerializeToString() if raw else None


def _index_commutes(ours: CreateIndex, theirs: object) -> bool:
    """Lance's ``check_create_index_txn``: an index commit is untouched by appends, deletes
    and updates (rows outside its fragments are searched flat, deleted rows filtered), by
    an index commit of other names, and by a compaction of fragments it does not cover."""
    if isinstance(theirs, (Append, Delete, Update)):
        return True
    if isinstance(theirs, CreateIndex):
        return not (_index_names(ours) & _index_names(theirs))
    if isinstance(theirs, Rewrite):
        covered = {i for e in index_entries(_section(ours.new_indices)) for i in e.fragment_ids}
        return not (covered & (_touched(theirs) or set()))
    return False


def _transaction_of(store: ObjectStore, manifest: Manifest) -> Transaction | None:
    if not manifest.transaction_file:
        return None
    name = f"{paths.TRANSACTIONS_DIR}/{manifest.transaction_file}"
    try:
        data = store.get(name)
    except FileNotFoundError as e:
        raise CorruptTableError(
            store.uri(name), f"the transaction file of version {manifest.version} is missing"
        ) from e
    except OSError as e:
        raise CorruptTableError(store.uri(name), f"cannot read: {e}") from e
    txn = decode_transaction(data, store.uri(name))
    if not txn.uuid:  # every writer sets it; an empty or cut file decodes as "no fields"
        raise CorruptTableError(store.uri(name), "the transaction has no uuid")
    return txn


def rebase(
    store: ObjectStore,
    txn: Transaction,
    current: Manifest | None,
    newest: Manifest,
    load: Callable[[ObjectStore, int], Manifest],
    affected_rows: AffectedRows | None = None,
    *,
    files: UncommittedFiles | None = None,
) -> Transaction:
    """``txn``, read at ``current``, made fit to publish on top of ``newest``.

    Returns ``txn`` itself or, for a Delete / Update, the rebased transaction (new deletion
    files written, registered with ``files``); raises :class:`CommitConflictError` when it
    conflicts with a version published after ``current``.
    """
    start = current.version if current is not None else 0
    if start == 0 and isinstance(txn.operation, Overwrite):
        raise DatasetExistsError(store.root)
    others = [
        (v, _transaction_of(store, load(store, v) if v != newest.version else newest))
        for v in range(start + 1, newest.version + 1)
    ]
    if isinstance(txn.operation, (Delete, Update)) and current is not None:
        return _Rows(store, txn, current, newest, affected_rows, files).rebase(others)
    tightens = isinstance(txn.operation, Project) and _tightens(current, txn.operation)
    for v, other in others:
        if other is None or not commutes(txn.operation, other.operation):
            raise _conflict(txn, start, newest, v, other)
        if tightens and isinstance(other.operation, (Append, Update)):
            # pylance 14: a Project that makes a field non-nullable is preempted by rows
            # written after it read the table (they may hold nulls); deletes and
            # compactions write no new values, so they still commute
            raise _conflict(txn, start, newest, v, other)
    return txn


def _tightens(current: Manifest | None, op: Project) -> bool:
    """True when ``op`` makes a field of ``current`` non-nullable."""
    if current is None:
        return False
    was_nullable = {f.id for f in current.schema if f.nullable}
    return any(not f.nullable and f.id in was_nullable for f in op.schema)


def _conflict(
    txn: Transaction,
    start: int,
    newest: Manifest,
    v: int,
    other: Transaction | None,
    why: str = "conflicts with",
    *,
    retryable: bool = True,
) -> CommitConflictError:
    name = type(other.operation).__name__ if other else "unknown"
    return CommitConflictError(
        start,
        newest.version + 1,
        f"version {v} ({name}) {why} {type(txn.operation).__name__}",
        retryable=retryable,
    )


def _modified(op: Delete | Update) -> tuple[tuple[Fragment, ...], tuple[int, ...]]:
    if isinstance(op, Delete):
        return op.updated_fragments, op.deleted_fragment_ids
    return op.updated_fragments, op.removed_fragment_ids


class _Rows:
    """The row-level rebase of one Delete / Update (Lance's TransactionRebase)."""

    def __init__(
        self,
        store: ObjectStore,
        txn: Transaction,
        current: Manifest,
        newest: Manifest,
        affected: AffectedRows | None,
        files: UncommittedFiles | None = None,
    ) -> None:
        assert isinstance(txn.operation, (Delete, Update))
        self.store, self.txn, self.current, self.newest = store, txn, current, newest
        self.files = files
        self.op: Delete | Update = txn.operation
        updated, removed = _modified(self.op)
        mine = {f.id for f in updated} | set(removed)
        # as Lance: only the fragments a full-fragment removal touches cannot be merged
        self.affected = affected if updated else None
        #: the fragments this operation modifies, as they were when it read them
        self.initial = {f.id: f for f in current.fragments if f.id in mine}
        self.mine = mine
        #: fragments whose deletion file another commit replaced since
        self.stale: set[int] = set()

    def rebase(self, others: list[tuple[int, Transaction | None]]) -> Transaction:
        for v, other in others:
            self._check(v, other)
        op = self._merge_deletions() if self.stale else self.op
        return replace(self.txn, read_version=self.newest.version, operation=op)

    def _fail(self, v: int, other: Transaction | None, why: str = "conflicts with") -> None:
        retryable = other is None or not isinstance(other.operation, (Overwrite, Restore))
        raise _conflict(
            self.txn, self.current.version, self.newest, v, other, why, retryable=retryable
        )

    def _check(self, v: int, other: Transaction | None) -> None:
        theirs = other.operation if other is not None else None
        if isinstance(theirs, _ROWS_FINE):
            return
        if isinstance(theirs, Rewrite):
            if {f.id for g in theirs.groups for f in g.old_fragments} & self.mine:
                self._fail(v, other, "rewrote fragments modified by")
            return
        if not isinstance(theirs, (Delete, Update)):
            self._fail(v, other)  # Merge, Overwrite, Restore, unknown
            return
        updated, removed = _modified(theirs)
        if not ({f.id for f in updated} | set(removed)) & self.mine:
            return
        if self.affected is None:
            self._fail(v, other, "modified the fragments of")
        for frag in updated:
            before = self.initial.get(frag.id)
            if before is None:
                continue
            if frag.files != before.files:
                self._fail(v, other, "rewrote the data files of a fragment modified by")
            if frag.deletion_file != before.deletion_file:
                self.stale.add(frag.id)
        if set(removed) & self.initial.keys():
            self._fail(v, other, "removed a fragment modified by")

    def _merge_deletions(self) -> Delete | Update:
        """Write, for each stale fragment, the union of the newest deletion file and the
        rows this operation removed; refuse when both removed the same row."""
        assert self.affected is not None
        newest = {f.id: f for f in self.newest.fragments}
        files: dict[int, DeletionFile] = {}
        gone: list[int] = []
        for fid in sorted(self.stale):
            frag = newest[fid]  # a removal was refused in _check
            d = frag.deletion_file
            theirs = (
                read_deleted_rows(self.store, fid, d.read_version, d.id, d.file_type == "bitmap")
                if d is not None
                else np.zeros(0, np.uint32)
            )
            ours = np.asarray(self.affected.get(fid, ()), dtype=np.uint32)
            both = np.intersect1d(theirs, ours)
            if len(both):
                raise CommitConflictError(
                    self.current.version,
                    self.newest.version + 1,
                    f"a concurrent commit also changed rows {both[:5].tolist()} of fragment "
                    f"{fid} modified by {type(self.op).__name__}",
                )
            merged = np.union1d(theirs, ours)
            if len(merged) >= frag.physical_rows:
                gone.append(fid)
                continue
            file_id = secrets.randbits(64)
            # pylance writes a rebased deletion vector as a bitmap whatever its size
            write_deleted_rows(
                self.store,
                fid,
                self.newest.version,
                file_id,
                merged,
                previous="bitmap",
                files=self.files,
            )
            files[fid] = DeletionFile("bitmap", self.newest.version, file_id, len(merged))
        updated, removed = _modified(self.op)
        kept = tuple(
            replace(f, deletion_file=files.get(f.id, f.deletion_file))
            for f in updated
            if f.id not in gone
        )
        dropped = (*removed, *(i for i in gone if i not in removed))
        if isinstance(self.op, Delete):
            return replace(self.op, updated_fragments=kept, deleted_fragment_ids=dropped)
        return replace(self.op, updated_fragments=kept, removed_fragment_ids=dropped)
