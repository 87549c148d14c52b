"""``Dataset.list_indices``: the indices of a version as pylance 14 lists them (layer L5).

The entries are read from the manifest's index section (manifest/index_metadata.py), for
the indices pylance built and ours alike.
"""

from __future__ import annotations

from collections.abc import Set
from typing import TypedDict

from ...manifest import Manifest, index_entries

__all__ = ["IndexInformation", "list_indices"]


class IndexInformation(TypedDict):
    """One index segment (pylance's ``lance.dataset.IndexInformation``): its ``name``,
    ``type`` (``BTree``, ``IVF_PQ``, ...), ``uuid``, the field paths it covers, the
    dataset ``version`` it was built at, the ``fragment_ids`` it covers and its
    ``base_id``.

    >>> import lance, pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
    >>> lance.dataset("t.lance").create_scalar_index("id", "BTREE")
    >>> info = ls.dataset("t.lance").list_indices()[0]
    >>> info["name"], info["type"], info["fields"], info["version"], list(info["fragment_ids"])
    ('id_idx', 'BTree', ['id'], 1, [0])
    """

    name: str
    type: str
    uuid: str
    fields: list[str]
    version: int
    fragment_ids: Set[int]
    base_id: int | None


def _bitmap(ids: tuple[int, ...]) -> Set[int]:
    """pylance's ``lance.bitmap.Bitmap`` of ``ids`` (a frozenset if it cannot be made)."""
    try:
        from lance.bitmap import Bitmap

        bitmap: Set[int] = Bitmap(ids)  # type: ignore[assignment]  # a registered MutableSet
        return bitmap
    except (ImportError, TypeError):  # pragma: no cover - pylance without Bitmap
        return frozenset(ids)


def list_indices(manifest: Manifest) -> list[IndexInformation]:
    """One entry per index segment, ordered by index name (segments of one index in
    manifest order), with the field paths, the dataset version the segment was built at
    and the fragments it covers as stored in the manifest."""
    by_id = {f.id: f.path for f in manifest.schema}
    out: list[IndexInformation] = [
        {
            "name": e.name,
            "type": e.index_type,
            "uuid": e.uuid,
            "fields": [by_id.get(i, str(i)) for i in e.fields],
            "version": e.dataset_version,
            "fragment_ids": _bitmap(e.fragment_ids),
            "base_id": e.base_id,
        }
        for e in index_entries(manifest.index_section)
    ]
    out.sort(key=lambda entry: entry["name"])
    return out
