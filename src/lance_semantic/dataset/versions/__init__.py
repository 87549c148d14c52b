"""Versions and tags of a table (layer L5), with pylance 14's listings and verbs, and the
cleanup of old versions."""

from .cleanup import UNVERIFIED_THRESHOLD, CleanupStats, cleanup_old_versions
from .listing import DatasetStats, LanceStats, Version, all_versions, every_manifest, version_entry
from .tags import Reference, Tag, Tags, resolve_reference

__all__ = [
    "Version",
    "version_entry",
    "all_versions",
    "every_manifest",
    "DatasetStats",
    "LanceStats",
    "Tags",
    "Tag",
    "Reference",
    "resolve_reference",
    "CleanupStats",
    "cleanup_old_versions",
    "UNVERIFIED_THRESHOLD",
]
