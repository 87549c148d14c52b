"""``Dataset.upgrade_semantic_types``: the metadata-only upgrade of a legacy table to the
Semantic Type Contract (layer L5; spec "Compatibility and Migration: Upgrade")."""

from __future__ import annotations

import logging
from typing import TypeVar

from ...commit import commit
from ...manifest import FLAG_SEMANTIC_TYPES, Manifest, Project
from ...schema import upgrade_schema
from ..core import Snapshot, TableHandle

__all__ = ["upgrade_dataset", "upgrade_semantic_types"]

_log = logging.getLogger("lance_semantic")


H = TypeVar("H", bound=TableHandle)


def upgrade_dataset(ds: H) -> H:
    """Upgrade ``ds`` (advanced in place) to the Semantic Type Contract in one commit.

    Each legacy alias becomes its canonical type plus the output encoding that reproduces
    today's read type, then ``FLAG_SEMANTIC_TYPES`` is set. No data file is touched and
    reads return the same Arrow types, values and field ids as before. Upgrading a flagged
    table is a no-op (logged, nothing committed).
    """
    ds._apply(lambda snap: (upgrade_semantic_types(snap), None))
    return ds


def upgrade_semantic_types(snap: Snapshot) -> Manifest:
    """Commit the upgrade of ``snap`` (see :func:`upgrade_dataset`); ``snap``'s own
    manifest when it already uses semantic types."""
    if snap.semantic_types:
        _log.info(
            "%s already uses semantic types (version %d): nothing to upgrade",
            snap.uri,
            snap.version,
        )
        return snap.manifest
    manifest = snap.manifest
    schema = upgrade_schema(manifest.schema)
    return commit(snap.store, manifest, Project(schema=schema), add_flags=FLAG_SEMANTIC_TYPES)
