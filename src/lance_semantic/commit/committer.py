"""Publish versions: find the latest manifest, write the transaction, and create the next
manifest with an atomic put-if-absent, retrying on concurrent commits (layer L4;
docs/format/lance-format-facts.md §1, §8).
"""

from __future__ import annotations

import json
import logging
import operator
import uuid as uuidlib
from collections.abc import Mapping

from ..errors import (
    CommitConflictError,
    CommitOutcomeUnknownError,
    CorruptManifestError,
    DatasetNotFoundError,
    VersionNotFoundError,
)
from ..manifest import (
    Fragment,
    Manifest,
    Operation,
    Restore,
    Transaction,
    decode_manifest_file,
    encode_manifest_file,
    encode_transaction,
    flags,
    named_paths,
    validate_manifest,
    validation_context,
)
from ..storage import ObjectStore, OutcomeUnknown, UncommittedFiles, create_once, paths
from .conflicts import AffectedRows, rebase
from .transaction import apply_transaction

__all__ = [
    "list_versions",
    "latest_version",
    "is_latest",
    "load_manifest",
    "commit",
    "MAX_RETRIES",
    "load_latest_or_none",
]

MAX_RETRIES = 20

_log = logging.getLogger("lance_semantic")


def list_versions(store: ObjectStore) -> dict[int, str]:
    """Every version on disk mapped to its manifest file name (both naming schemes)."""
    found: dict[int, str] = {}
    for name in store.list(paths.VERSIONS_DIR):
        parsed = paths.parse_manifest_name(name)
        if parsed is not None:
            found[parsed[0]] = name
    return found


def _scheme(store: ObjectStore, base: Manifest | None = None) -> paths.NamingScheme:
    """The naming scheme of the table's manifests: that of ``base``'s own manifest when
    given (one existence check), else of the first manifest listed (V2 for a new table)."""
    if base is not None:
        known = _SCHEMES.get((store.root, base.version))
        if known is not None:  # the name it was loaded from or published under
            return known
        for scheme in (paths.NamingScheme.V2, paths.NamingScheme.V1):
            if store.exists(f"{paths.VERSIONS_DIR}/{paths.manifest_name(base.version, scheme)}"):
                return scheme
    for name in store.list(paths.VERSIONS_DIR):
        parsed = paths.parse_manifest_name(name)
        if parsed is not None:
            return parsed[1]
    return paths.NamingScheme.V2


def _from_hint(store: ObjectStore) -> tuple[int, str] | None:
    """(version, file name) of the newest version found from ``latest_version_hint.json``:
    the hinted manifest must exist, and later ones are found by walking forward (a stale
    hint, manifests added by hand). None when there is no usable hint."""
    try:
        version = json.loads(store.get(f"{paths.VERSIONS_DIR}/{paths.HINT_FILE}"))["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return None
    for scheme in (paths.NamingScheme.V2, paths.NamingScheme.V1):
        name = paths.manifest_name(version, scheme)
        if store.exists(f"{paths.VERSIONS_DIR}/{name}"):
            break
    else:
        return None  # the hint points at a version that does not exist
    while True:
        later = paths.manifest_name(version + 1, scheme)
        if not store.exists(f"{paths.VERSIONS_DIR}/{later}"):
            return version, name
        version, name = version + 1, later


def _latest(store: ObjectStore) -> tuple[int, str] | None:
    """(version, manifest file name) of the newest version: from the hint file (two small
    reads) when it is usable, else from the listing, parsing as few names as it can (under
    V2 naming the newest is the first name in sorted order). On an object store a listing
    is one request, fewer than the hint and its checks, so the hint is neither read nor
    written there (pylance does not use it either)."""
    hinted = _from_hint(store) if store.is_local else None
    if hinted is not None:
        return hinted
    best: tuple[int, str] | None = None
    names = store.list(paths.VERSIONS_DIR)  # sorted
    for name in names:
        if len(name) == paths.V2_NAME_LENGTH:
            parsed = paths.parse_manifest_name(name)
            if parsed is not None:
                best = (parsed[0], name)
                break
    for name in names:  # V1 names (older tables, or both schemes side by side)
        if len(name) != paths.V2_NAME_LENGTH:
            parsed = paths.parse_manifest_name(name)
            if parsed is not None and (best is None or parsed[0] > best[0]):
                best = (parsed[0], name)
    return best


def is_latest(store: ObjectStore, manifest: Manifest) -> bool:
    """Whether no version after ``manifest``'s has been published (one existence check per
    naming scheme): a handle at the latest version can commit on what it holds."""
    return not any(
        store.exists(f"{paths.VERSIONS_DIR}/{paths.manifest_name(manifest.version + 1, s)}")
        for s in paths.NamingScheme
    )


def load_latest_or_none(store: ObjectStore) -> Manifest | None:
    """The latest manifest, or None when there is no table (one listing, not two)."""
    try:
        return load_manifest(store)
    except DatasetNotFoundError:
        return None


def latest_version(store: ObjectStore) -> int | None:
    latest = _latest(store)
    return latest[0] if latest is not None else None


def load_manifest(store: ObjectStore, version: int | None = None) -> Manifest:
    """The manifest of ``version`` (default: the latest); raises if the table is missing."""
    if version is None:
        latest = _latest(store)
        if latest is None:
            raise DatasetNotFoundError(store.root)
        version, file_name = latest
    else:
        versions = list_versions(store)
        if not versions:
            raise DatasetNotFoundError(store.root)
        if version not in versions:
            raise VersionNotFoundError(store.root, version)
        file_name = versions[version]
    name = f"{paths.VERSIONS_DIR}/{file_name}"
    where = store.uri(name)
    parsed_name = paths.parse_manifest_name(file_name)
    if parsed_name is not None:
        _remember_scheme(store, version, parsed_name[1])
    # a manifest is immutable once published; with it and the directories its files live
    # in unchanged (no file added, replaced or linked), the checks of the last open hold
    state = store.state((name, "", paths.DATA_DIR, paths.DELETIONS_DIR, paths.TRANSACTIONS_DIR))
    cache_key = (store.root, name)
    known = _LOADED.get(cache_key)
    if state[0] is not None and known is not None and known[0] == state:
        return known[1]
    try:
        data = store.get(name)
    except OSError as e:
        raise CorruptManifestError(where, f"cannot read the manifest: {e}") from e
    manifest = decode_manifest_file(data, where)
    if manifest.version != version:
        raise CorruptManifestError(where, f"holds version {manifest.version}, name says {version}")
    # the fragments of the last version validated here, when this one starts with them (the
    # same objects: decoded once, see manifest._convert) in the same context, are sound
    context = validation_context(manifest)
    checked = 0
    last = _VALIDATED.get(store.root)
    if last is not None and last[1] == context and len(manifest.fragments) >= len(last[0]):
        if all(map(operator.is_, manifest.fragments, last[0])):
            checked = len(last[0])
    validate_manifest(manifest, where, checked=checked)
    named = named_paths(manifest, checked=checked)
    paths.check_inside(store.root, named, manifest=where, links=store.is_local)
    if store.is_local:  # when no file named in the new fragments lives there
        paths.check_directories(store.root, _TABLE_DIRS, manifest=where)
    if len(_VALIDATED) >= 256:
        _VALIDATED.clear()
    _VALIDATED[store.root] = (manifest.fragments, context)
    if state[0] is not None:
        if len(_LOADED) >= 256:
            _LOADED.clear()
        _LOADED[cache_key] = (state, manifest)
    return manifest


_TABLE_DIRS = (paths.DATA_DIR, paths.DELETIONS_DIR, paths.TRANSACTIONS_DIR)

#: (table root, version) -> the naming scheme of that version's manifest file, as loaded
#: or published (what the next commit of a handle at that version names its manifest by)
_SCHEMES: dict[tuple[str, int], paths.NamingScheme] = {}


def _remember_scheme(store: ObjectStore, version: int, scheme: paths.NamingScheme) -> None:
    if len(_SCHEMES) >= 4096:
        _SCHEMES.clear()
    _SCHEMES[(store.root, version)] = scheme


#: table root -> (fragments of the last version validated, their validation context)
_VALIDATED: dict[str, tuple[tuple[Fragment, ...], tuple[str, bool, frozenset[int]]]] = {}

#: (table root, manifest path) -> (store.state of it and the table's directories, manifest)
_LOADED: dict[tuple[str, str], tuple[tuple[object, ...], Manifest]] = {}


def _write_hint(store: ObjectStore, version: int) -> None:
    """Point ``latest_version_hint.json`` at ``version``. The hint is advisory (readers
    check it and walk forward from it), so a failure is logged, never raised: the version
    is published by then, and its files are the table's."""
    try:
        store.put(
            f"{paths.VERSIONS_DIR}/{paths.HINT_FILE}",
            json.dumps({"version": version}, separators=(",", ":")).encode(),
        )
    except Exception as e:  # noqa: BLE001 - a stale hint is harmless (see _from_hint)
        _log.warning("lance-semantic: version %d is published; its hint was not: %s", version, e)


def _publish(
    store: ObjectStore, path: str, data: bytes, version: int, files: UncommittedFiles
) -> bool:
    """Put manifest ``data`` at ``path`` if absent: True when it is there now as ours
    (it names this attempt's transaction uuid), False when another writer's manifest is
    there (storage/conditional.py settles lost answers by reading back). ``files`` hear
    when publication starts and how it ended; when no answer settles it,
    :class:`CommitOutcomeUnknownError` and the files are kept."""
    files.publishing(path, data)
    try:
        ours = create_once(store, path, data, well_formed=_is_manifest)
    except OutcomeUnknown as e:
        files.outcome_unknown()
        raise CommitOutcomeUnknownError(version, e.uri, e.cause) from e
    except OSError:
        files.settle(path, ours=False)  # a local put failed: nothing was stored
        raise
    files.settle(path, ours=ours)
    return ours


def _is_manifest(data: bytes) -> bool:
    try:
        decode_manifest_file(data, "")
    except (CorruptManifestError, ValueError):
        return False
    return True


def commit(
    store: ObjectStore,
    base: Manifest | None,
    operation: Operation,
    *,
    properties: Mapping[str, str] | None = None,
    data_format: tuple[str, str] | None = None,
    add_flags: int = 0,
    max_retries: int = MAX_RETRIES,
    affected_rows: AffectedRows | None = None,
    files: UncommittedFiles | None = None,
) -> Manifest:
    """Commit ``operation`` read at ``base`` (None: create) and return the new manifest.

    The transaction is written to ``_transactions/{read_version}-{uuid}.txn`` and inline.
    When another writer published the next version first, the operation is rebased onto the
    newest manifest (commit/conflicts.py), else ``CommitConflictError``. A rebased Delete or
    Update reads the newest version and may carry merged deletion files, so it is written
    again under its new read version before the next attempt (as Lance does).
    ``affected_rows`` (fragment id -> row offsets the Delete / Update removed) lets it be
    merged with concurrent deletions of the same fragment.

    ``files`` owns what the operation wrote before (data files, deletion files): the
    transaction files and rebased deletion files written here join them, and it is told
    when a manifest may have been published (storage/uncommitted.py keeps or removes them
    by that). Without it, the commit owns its own files.
    """
    if files is None:
        with UncommittedFiles(store) as own:
            return commit(
                store,
                base,
                operation,
                properties=properties,
                data_format=data_format,
                add_flags=add_flags,
                max_retries=max_retries,
                affected_rows=affected_rows,
                files=own,
            )
    read_version = base.version if base is not None else 0
    if base is not None:
        flags.check_writable(base, store.root)
    txn = Transaction(
        read_version=read_version,
        uuid=str(uuidlib.uuid4()),
        operation=operation,
        properties=dict(properties or {}),
    )
    scheme = _scheme(store, base)
    current = base
    restored = None
    if isinstance(operation, Restore):
        restored = load_manifest(store, operation.version)
    written: Transaction | None = None
    for _attempt in range(max_retries):
        if txn is not written:
            name = files.add(f"{paths.TRANSACTIONS_DIR}/{txn.read_version}-{txn.uuid}.txn")
            store.put(name, encode_transaction(txn))
            written = txn
        version = (current.version if current is not None else 0) + 1
        manifest = apply_transaction(
            current,
            txn,
            version=version,
            restored=restored,
            data_format=data_format,
            add_flags=add_flags,
        )
        data = encode_manifest_file(manifest, txn)
        path = f"{paths.VERSIONS_DIR}/{paths.manifest_name(version, scheme)}"
        if _publish(store, path, data, version, files):
            _remember_scheme(store, version, scheme)
            if store.is_local:
                _write_hint(store, version)
            return manifest
        newest = load_manifest(store)
        flags.check_writable(newest, store.root)
        txn = rebase(store, txn, current, newest, load_manifest, affected_rows, files=files)
        current = newest
    raise CommitConflictError(read_version, version, f"gave up after {max_retries} attempts")
