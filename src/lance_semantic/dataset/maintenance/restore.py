"""``Dataset.restore``: an older version committed again as the newest (layer L5)."""

from __future__ import annotations

from ...commit.committer import commit, load_manifest
from ...manifest.model import Manifest, Restore
from ..core.snapshot import Snapshot

__all__ = ["restore_version"]


def restore_version(snap: Snapshot) -> Manifest:
    """Commit ``snap``'s version as the newest one (``Dataset.restore``)."""
    latest = load_manifest(snap.store)
    return commit(snap.store, latest, Restore(version=snap.version))
