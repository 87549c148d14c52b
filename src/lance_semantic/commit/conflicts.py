"""Which operations commute: may an operation read at version R be committed on top of the
versions that other writers published since R? (layer L4)

The matrix follows Lance's conflict resolver in spirit and errs on the side of refusing:
a refused rebase raises :class:`CommitConflictError`; nothing is written over.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import CommitConflictError, CorruptTableError, DatasetExistsError
from ..manifest.codec import decode_transaction
from ..manifest.model import (
    Append,
    Delete,
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
)
from ..storage import paths
from ..storage.object_store import ObjectStore

__all__ = ["rebase", "commutes"]

_ALWAYS_FINE = (ReserveFragments, UpdateConfig)


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
    """True when ``ours`` can be applied after ``theirs`` as if it had read it."""
    if isinstance(ours, Overwrite) or isinstance(ours, _ALWAYS_FINE):
        return True
    if isinstance(theirs, (Overwrite, Restore, Merge, Project)):
        return False
    if isinstance(theirs, _ALWAYS_FINE):
        return True
    if isinstance(ours, Append):
        return isinstance(theirs, (Append, Delete, Update, Rewrite))
    mine, other = _touched(ours), _touched(theirs)
    if mine is None or other is None:
        return False
    return not (mine & other)


def _transaction_of(store: ObjectStore, manifest: Manifest) -> Transaction | None:
    if not manifest.transaction_file:
        return None
    name = f"{paths.TRANSACTIONS_DIR}/{manifest.transaction_file}"
    try:
        data = store.get(name)
    except FileNotFoundError as e:
        raise CorruptTableError(
            store.local_path(name), f"the transaction file of version {manifest.version} is missing"
        ) from e
    except OSError as e:
        raise CorruptTableError(store.local_path(name), f"cannot read: {e}") from e
    txn = decode_transaction(data, store.local_path(name))
    if not txn.uuid:  # every writer sets it; an empty or cut file decodes as "no fields"
        raise CorruptTableError(store.local_path(name), "the transaction has no uuid")
    return txn


def rebase(
    store: ObjectStore,
    txn: Transaction,
    read_version: int,
    newest: Manifest,
    load: Callable[[ObjectStore, int], Manifest],
) -> None:
    """Raise unless ``txn`` commutes with every version published after ``read_version``."""
    if read_version == 0 and isinstance(txn.operation, Overwrite):
        raise DatasetExistsError(store.root)
    for v in range(read_version + 1, newest.version + 1):
        other = _transaction_of(store, load(store, v) if v != newest.version else newest)
        if other is None or not commutes(txn.operation, other.operation):
            raise CommitConflictError(
                read_version,
                newest.version + 1,
                f"version {v} ({type(other.operation).__name__ if other else 'unknown'}) "
                f"conflicts with {type(txn.operation).__name__}",
            )
