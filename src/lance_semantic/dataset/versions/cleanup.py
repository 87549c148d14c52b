"""``Dataset.cleanup_old_versions``: remove old versions and the files only they use, with
pylance 14's rules and statistics (layer L5).

What is removed, as in pylance 14 (each rule confirmed on twin tables):

* **manifests** of versions that match the policy (committed before ``now - older_than``
  and, with ``retain_versions=n``, older than the n newest versions), except the version
  the handle is at and every later one, and except tagged versions (or an error, see
  ``error_if_tagged_old_versions``);
* **data files** (``data/**.lance``, and blob sidecars ``data/<stem>/<id>.blob`` by their
  parent data file), **deletion files** (``_deletions/*.arrow|.bin``), **transaction files**
  (``_transactions/*.txn``) and **index files** (``_indices/<uuid>/…``, by uuid) that no
  kept version references;
* a file no manifest references at all (an abandoned write) only when it is at least
  7 days old, or with ``delete_unverified=True``; files referenced by a removed version are
  *verified* and go regardless of age; leftover ``_versions/.tmp*`` files count as such;
* files in ``_versions``, ``_transactions`` and ``_deletions`` modified after the oldest
  kept version was committed are not looked at, unless a tagged old version is kept
  (``data`` and ``_indices`` are always listed in full); tags, the version hint and
  anything else are never touched.

Emptied ``_indices/<uuid>`` directories are removed on local tables.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from ...commit import list_versions, refs
from ...errors import TaggedVersionsCleanupError
from ...manifest import Manifest, index_entries
from ...storage import FileInfo, ObjectStore, paths
from ..core import Snapshot
from ..core import arguments as args
from .listing import every_manifest

__all__ = ["CleanupStats", "cleanup_old_versions", "UNVERIFIED_THRESHOLD"]

#: an unreferenced file younger than this may belong to a commit in progress (pylance's 7 days)
UNVERIFIED_THRESHOLD = timedelta(days=7)

#: pylance's default ``older_than`` when neither it nor ``retain_versions`` is given
DEFAULT_OLDER_THAN = timedelta(days=14)

_INDICES_DIR = "_indices"


@dataclass(frozen=True, slots=True)
class CleanupStats:
    """What :meth:`Dataset.cleanup_old_versions` removed (pylance's ``CleanupStats``):
    ``bytes_removed`` counts every removed file, ``old_versions`` the removed manifests;
    the other counts are the data, transaction, index and deletion files removed, and the
    deletes that failed.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> _ = ds.delete("id = 1")
    >>> _ = ds.insert(pa.table({"id": [3]}), mode="overwrite")
    >>> stats = ds.cleanup_old_versions(retain_versions=1)
    >>> stats.old_versions, stats.data_files_removed, stats.deletion_files_removed
    (2, 1, 1)
    >>> stats.transaction_files_removed, stats.failed_deletes, stats.bytes_removed > 0
    (2, 0, True)
    """

    bytes_removed: int = 0
    old_versions: int = 0
    data_files_removed: int = 0
    transaction_files_removed: int = 0
    index_files_removed: int = 0
    deletion_files_removed: int = 0
    failed_deletes: int = 0


@dataclass
class _Refs:
    data: set[str] = field(default_factory=set)
    deletions: set[str] = field(default_factory=set)
    transactions: set[str] = field(default_factory=set)
    index_uuids: set[str] = field(default_factory=set)

    def add(self, manifest: Manifest) -> None:
        for fragment in manifest.fragments:
            self.data.update(f"{paths.DATA_DIR}/{f.path}" for f in fragment.files)
            if fragment.deletion_file is not None:
                self.deletions.add(fragment.deletion_file.path(fragment.id))
        if manifest.transaction_file:
            self.transactions.add(f"{paths.TRANSACTIONS_DIR}/{manifest.transaction_file}")
        self.index_uuids.update(e.uuid for e in index_entries(manifest.index_section))


@dataclass
class _Inspection:
    kept: _Refs = field(default_factory=_Refs)  # referenced by a version that stays
    verified: _Refs = field(default_factory=_Refs)  # referenced by a version that goes
    old_manifests: dict[str, int] = field(default_factory=dict)  # path -> version
    tagged_old: set[int] = field(default_factory=set)
    earliest_kept_ns: int | None = None


def _before_version(versions: Iterable[int], retain: int) -> int:
    ordered = sorted(versions)
    return ordered[0] if len(ordered) <= retain else ordered[len(ordered) - retain]


def _inspect(
    store: ObjectStore,
    read_version: int,
    before_ns: int | None,
    before_version: int | None,
    tagged: set[int],
) -> _Inspection:
    out = _Inspection()
    for path, manifest in every_manifest(store):
        version = manifest.version
        stamp = manifest.timestamp_ns or 0
        should_clean = (before_ns is None or stamp < before_ns) and (
            before_version is None or version < before_version
        )
        current = read_version <= version
        if version in tagged and should_clean and not current:
            out.tagged_old.add(version)
        if current or not should_clean or version in tagged:
            out.kept.add(manifest)
            if out.earliest_kept_ns is None or stamp < out.earliest_kept_ns:
                out.earliest_kept_ns = stamp
        else:
            out.verified.add(manifest)
            out.old_manifests[path] = version
    return out


#: what a removed file counts as in the statistics
_DATA, _DELETION, _TRANSACTION, _INDEX, _TEMPORARY = "data", "deletion", "txn", "index", "tmp"


def _kind_to_remove(f: FileInfo, young: bool, seen: _Inspection) -> str | None:
    """What ``f`` is if it is to be removed, else None (``young``: it may belong to a
    commit in progress, so it goes only when a removed version referenced it)."""
    path = f.path
    kept, verified = seen.kept, seen.verified
    if path.startswith(f"{paths.VERSIONS_DIR}/.tmp"):
        return None if young else _TEMPORARY
    if path.startswith(_INDICES_DIR):
        parts = path.split("/")
        if len(parts) < 3:
            return None
        uuid = parts[1]
        if uuid in kept.index_uuids:
            return None
        if not young or uuid in verified.index_uuids:
            return _INDEX
    name = path.rsplit("/", 1)[-1]
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    if suffix == "lance" and path.startswith(paths.DATA_DIR):
        return _pick(path, kept.data, verified.data, young, _DATA)
    if suffix == "blob" and path.startswith(paths.DATA_DIR):
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != paths.DATA_DIR:
            return None
        return _pick(f"{paths.DATA_DIR}/{parts[1]}.lance", kept.data, verified.data, young, _DATA)
    if suffix in ("arrow", "bin") and path.startswith(paths.DELETIONS_DIR):
        return _pick(path, kept.deletions, verified.deletions, young, _DELETION)
    if suffix == "txn" and path.startswith(paths.TRANSACTIONS_DIR):
        return _pick(path, kept.transactions, verified.transactions, young, _TRANSACTION)
    return None


def _pick(key: str, kept: set[str], verified: set[str], young: bool, kind: str) -> str | None:
    if key in kept:
        return None
    if not young or key in verified:
        return kind
    return None


def cleanup_old_versions(
    snap: Snapshot,
    older_than: timedelta | None = None,
    retain_versions: int | None = None,
    *,
    delete_unverified: bool = False,
    error_if_tagged_old_versions: bool = True,
) -> CleanupStats:
    """Remove the versions older than ``older_than`` (see the module docstring for every
    rule) and return what was removed. With neither ``older_than`` nor
    ``retain_versions``, ``older_than`` is 14 days (pylance's default).

    Raises
    ------
    TaggedVersionsCleanupError
        ``error_if_tagged_old_versions`` and a tagged version matches the policy; nothing
        is removed.
    """
    if older_than is not None and not isinstance(older_than, timedelta):
        raise TypeError(f"older_than must be a datetime.timedelta, got {args.shown(older_than)}")
    retain = args.check_optional_int("retain_versions", retain_versions, minimum=1)
    delete_unverified = args.check_bool("delete_unverified", delete_unverified)
    error_if_tagged = args.check_bool("error_if_tagged_old_versions", error_if_tagged_old_versions)
    if older_than is None and retain is None:
        older_than = DEFAULT_OLDER_THAN
    store = snap.store
    now_ns = time.time_ns()
    before_ns = None if older_than is None else now_ns - _micros(older_than) * 1000
    before_version = None if retain is None else _before_version(list_versions(store), retain)
    tags = {n: t for n, t in refs.list_tags(store).items() if t.branch is None}
    tagged = {t.version for t in tags.values()}
    seen = _inspect(store, snap.version, before_ns, before_version, tagged)
    if error_if_tagged and seen.tagged_old:
        raise TaggedVersionsCleanupError(
            {n: t.version for n, t in tags.items() if t.version in seen.tagged_old}
        )
    threshold_ns = now_ns - _micros(UNVERIFIED_THRESHOLD) * 1000
    counts = dict.fromkeys((_DATA, _DELETION, _TRANSACTION, _INDEX, _TEMPORARY), 0)
    removed_bytes = 0
    to_remove: list[str] = []
    emptied: set[str] = set()
    # files modified after the oldest kept commit are left alone in some directories, but
    # not when a tagged old version is kept (measured: then pylance 14 looks at them all)
    since_ns = None if seen.tagged_old else seen.earliest_kept_ns
    for directory in _LISTED:
        for f in store.walk(directory):
            if directory in _TIME_FILTERED and since_ns is not None and f.mtime_ns > since_ns:
                continue
            young = not delete_unverified and f.mtime_ns >= threshold_ns
            kind = _kind_to_remove(f, young, seen)
            if kind is None:
                continue
            counts[kind] += 1
            removed_bytes += f.size
            to_remove.append(f.path)
            if kind == _INDEX:
                emptied.add(f.path.rsplit("/", 1)[0])
    manifests = list(seen.old_manifests)
    for path in manifests:
        removed_bytes += store.size(path)
    # the old versions go first, then the files only they named: a cleanup stopped half
    # way (a failed delete, Ctrl-C) leaves unreferenced files, never a version missing one
    for path in (*manifests, *to_remove):
        store.delete(path)
    for directory in sorted(emptied, key=len, reverse=True):
        store.remove_empty_dir(directory)
    return CleanupStats(
        bytes_removed=removed_bytes,
        old_versions=len(seen.old_manifests),
        data_files_removed=counts[_DATA],
        transaction_files_removed=counts[_TRANSACTION],
        index_files_removed=counts[_INDEX],
        deletion_files_removed=counts[_DELETION],
    )


#: the table directories cleanup lists, and those of them it lists only up to the oldest
#: kept version's commit time (pylance 14 lists ``data`` and ``_indices`` in full)
_LISTED = (
    paths.VERSIONS_DIR,
    paths.TRANSACTIONS_DIR,
    paths.DATA_DIR,
    _INDICES_DIR,
    paths.DELETIONS_DIR,
)
_TIME_FILTERED = frozenset({paths.VERSIONS_DIR, paths.TRANSACTIONS_DIR, paths.DELETIONS_DIR})


def _micros(delta: timedelta) -> int:
    """``delta`` in whole microseconds (pylance passes ``older_than`` so)."""
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
