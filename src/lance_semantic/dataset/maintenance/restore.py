"""``Dataset.restore``: an older version committed again as the newest (layer L5)."""

from __future__ import annotations

from ...commit import commit, load_manifest
from ...manifest import Manifest, Restore
from ..core import Snapshot

__all__ = ["restore_version"]


def restore_version(snap: Snapshot) -> Manifest:
    """Commit ``snap``'s version as the newest one (``Dataset.restore``)."""
    latest = load_manifest(snap.store)
    return commit(snap.store, latest, Restore(version=snap.version))
