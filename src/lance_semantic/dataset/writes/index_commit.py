"""``LanceOperation.CreateIndex`` as a manifest operation (layer L5): the new and removed
index segments (``ls.Index`` or pylance's ``lance.dataset.Index``) checked against the
version they are committed on.

Checked, with nothing committed on failure: every new segment covers fields of the table
and fragments it has; a new segment covering fragments that a kept segment of the same
name covers is refused (pylance 14 panics on it: "not implemented: this method is only
needed for migrating older manifests"); a removed segment is matched by uuid (one the
version does not have is ignored, as pylance ignores it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...manifest import Manifest, encode_index_entry, index_entries, model
from ..core import index_entry

__all__ = ["create_index_operation"]


def create_index_operation(
    new_indices: Sequence[Any], removed_indices: Sequence[Any], base: Manifest
) -> model.CreateIndex:
    """The manifest ``CreateIndex`` of these segments, read at ``base``."""
    new = [index_entry(i) for i in new_indices]
    removed = [index_entry(i) for i in removed_indices]
    gone = {e.uuid for e in removed}
    field_ids = {f.id for f in base.schema}
    fragment_ids = {f.id for f in base.fragments}
    kept = [e for e in index_entries(base.index_section) if e.uuid not in gone]
    for e in new:
        missing = [i for i in e.fields if i not in field_ids]
        if missing:
            raise ValueError(f"new_indices: index {e.name!r} covers unknown field ids {missing}")
        unknown = sorted(set(e.fragment_ids) - fragment_ids)
        if unknown:
            raise ValueError(
                f"new_indices: index {e.name!r} covers fragments {unknown} that version "
                f"{base.version} does not have"
            )
        for other in kept + [n for n in new if n is not e]:
            overlap = sorted(set(e.fragment_ids) & set(other.fragment_ids))
            if other.name == e.name and overlap and other.uuid != e.uuid:
                raise ValueError(
                    f"new_indices: segment {e.uuid} of index {e.name!r} covers fragments "
                    f"{overlap} that its segment {other.uuid} covers too (remove that one "
                    "in removed_indices)"
                )
    return model.CreateIndex(
        new_indices=tuple(encode_index_entry(e) for e in new),
        removed_indices=tuple(encode_index_entry(e) for e in removed),
    )
