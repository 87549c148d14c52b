"""Publish versions: find the latest manifest, write the transaction, and create the next
manifest with an atomic put-if-absent, retrying on concurrent commits (layer L4; facts §1, §8).
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Mapping

from ..errors import CommitConflictError, CorruptManifestError, DatasetNotFoundError
from ..manifest import flags
from ..manifest.codec import decode_manifest_file, encode_manifest_file, encode_transaction
from ..manifest.model import Manifest, Operation, Restore, Transaction
from ..manifest.validation import named_paths, validate_manifest
from ..storage import paths
from ..storage.object_store import ObjectStore
from .conflicts import rebase
from .transaction import apply_transaction

__all__ = ["list_versions", "latest_version", "load_manifest", "commit", "MAX_RETRIES"]

MAX_RETRIES = 20


def list_versions(store: ObjectStore) -> dict[int, str]:
    """Every version on disk mapped to its manifest file name (both naming schemes)."""
    found: dict[int, str] = {}
    for name in store.list(paths.VERSIONS_DIR):
        parsed = paths.parse_manifest_name(name)
        if parsed is not None:
            found[parsed[0]] = name
    return found


def _scheme(store: ObjectStore) -> paths.NamingScheme:
    for name in store.list(paths.VERSIONS_DIR):
        parsed = paths.parse_manifest_name(name)
        if parsed is not None:
            return parsed[1]
    return paths.NamingScheme.V2


def latest_version(store: ObjectStore) -> int | None:
    versions = list_versions(store)
    return max(versions) if versions else None


def load_manifest(store: ObjectStore, version: int | None = None) -> Manifest:
    """The manifest of ``version`` (default: the latest); raises if the table is missing."""
    versions = list_versions(store)
    if not versions:
        raise DatasetNotFoundError(store.root)
    if version is None:
        version = max(versions)
    if version not in versions:
        raise DatasetNotFoundError(store.root, f"version {version} does not exist")
    name = f"{paths.VERSIONS_DIR}/{versions[version]}"
    where = store.local_path(name)
    try:
        data = store.get(name)
    except OSError as e:
        raise CorruptManifestError(where, f"cannot read the manifest: {e}") from e
    manifest = decode_manifest_file(data, where)
    if manifest.version != version:
        raise CorruptManifestError(where, f"holds version {manifest.version}, name says {version}")
    validate_manifest(manifest, where)
    paths.check_inside(store.root, named_paths(manifest), manifest=where)
    return manifest


def _write_hint(store: ObjectStore, version: int) -> None:
    store.put(
        f"{paths.VERSIONS_DIR}/{paths.HINT_FILE}",
        json.dumps({"version": version}, separators=(",", ":")).encode(),
    )


def commit(
    store: ObjectStore,
    base: Manifest | None,
    operation: Operation,
    *,
    properties: Mapping[str, str] | None = None,
    data_format: tuple[str, str] | None = None,
    add_flags: int = 0,
    max_retries: int = MAX_RETRIES,
) -> Manifest:
    """Commit ``operation`` read at ``base`` (None: create) and return the new manifest.

    The transaction is written once (``_transactions/{read_version}-{uuid}.txn``) and inline.
    When another writer published the next version first, the operation is rebased onto the
    newest manifest if it commutes with what was committed, else ``CommitConflictError``.
    """
    read_version = base.version if base is not None else 0
    if base is not None:
        flags.check_writable(base, store.root)
    txn = Transaction(
        read_version=read_version,
        uuid=str(uuidlib.uuid4()),
        operation=operation,
        properties=dict(properties or {}),
    )
    txn_bytes = encode_transaction(txn)
    store.put(f"{paths.TRANSACTIONS_DIR}/{read_version}-{txn.uuid}.txn", txn_bytes)
    scheme = _scheme(store)
    current = base
    restored = None
    if isinstance(operation, Restore):
        restored = load_manifest(store, operation.version)
    for _attempt in range(max_retries):
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
        if store.put_if_absent(
            f"{paths.VERSIONS_DIR}/{paths.manifest_name(version, scheme)}", data
        ):
            _write_hint(store, version)
            return manifest
        newest = load_manifest(store)
        flags.check_writable(newest, store.root)
        rebase(store, txn, read_version, newest, load_manifest)
        current = newest
    raise CommitConflictError(read_version, version, f"gave up after {max_retries} attempts")
