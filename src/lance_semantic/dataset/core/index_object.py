"""``ls.Index``: one index segment as pylance 14's ``lance.dataset.Index`` describes it (layer
L5), what ``create_index_uncommitted`` returns and ``LanceOperation.CreateIndex`` commits.

The fields are pylance's (``uuid``, ``name``, ``fields`` (field ids), ``dataset_version``,
``fragment_ids``, ``index_version``, ``created_at``, ``base_id``, ``files``,
``index_details`` = ``(type_url, details bytes)``, ``covering_fields``), so an ``ls.Index``
commits through pylance's ``LanceOperation.CreateIndex`` and a pylance ``Index`` through
ours: :func:`index_entry` reads any object with those attributes.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...errors import NotSupportedYetError
from ...manifest import IndexEntry, IndexFile

__all__ = ["Index", "IndexFile", "index_entry", "index_of_entry"]


@dataclass
class Index:
    """One index segment (pylance's ``lance.dataset.Index``).

    >>> from lance_semantic.manifest import IndexEntry
    >>> e = IndexEntry("00000000-0000-0000-0000-000000000001", "v_idx", (1,), 3, (0, 1),
    ...                "/lance.index.pb.VectorIndexDetails", b"", 1, 0, None, ())
    >>> index = index_of_entry(e)
    >>> index.name, index.fields, sorted(index.fragment_ids), index_entry(index) == e
    ('v_idx', [1], [0, 1], True)
    """

    uuid: str
    name: str
    fields: list[int]
    dataset_version: int
    fragment_ids: Set[int]
    index_version: int
    created_at: datetime | None = None
    base_id: int | None = None
    files: list[IndexFile] | None = None
    index_details: tuple[str, bytes] | None = None
    covering_fields: list[int] = field(default_factory=list)


def _bitmap(ids: Iterable[int]) -> Set[int]:
    try:
        from lance.bitmap import Bitmap

        bitmap: Set[int] = Bitmap(list(ids))  # type: ignore[assignment]  # a MutableSet
        return bitmap
    except (ImportError, TypeError):  # pragma: no cover - pylance without Bitmap
        return frozenset(ids)


def index_of_entry(entry: IndexEntry) -> Index:
    """The :class:`Index` of a manifest entry."""
    created = (
        None
        if entry.created_at_ms is None
        else datetime.fromtimestamp(entry.created_at_ms / 1000, tz=UTC)
    )
    return Index(
        uuid=entry.uuid,
        name=entry.name,
        fields=list(entry.fields),
        dataset_version=entry.dataset_version,
        fragment_ids=_bitmap(entry.fragment_ids),
        index_version=entry.index_version,
        created_at=created,
        base_id=entry.base_id,
        files=[IndexFile(f.path, f.size_bytes) for f in entry.files],
        index_details=(entry.type_url, entry.details),
    )


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"Index.{name} must be an int, got {type(value).__name__}")
    return int(value)


def _ints(value: object, name: str) -> tuple[int, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"Index.{name} must be a list of ints, got {type(value).__name__}")
    return tuple(_int(v, name) for v in value)


def index_entry(index: Any) -> IndexEntry:
    """The manifest entry of an :class:`Index` or of pylance's ``lance.dataset.Index`` (any
    object with its attributes); a ``TypeError`` / ``ValueError`` naming the attribute
    that is missing or wrong."""
    for attr in ("uuid", "name", "fields", "dataset_version", "fragment_ids", "index_version"):
        if not hasattr(index, attr):
            raise TypeError(
                f"an index must be an ls.Index or a lance Index (no {attr!r} on "
                f"{type(index).__name__})"
            )
    name = index.name
    if not isinstance(name, str):
        raise TypeError(f"Index.name must be a str, got {type(name).__name__}")
    try:
        uuid = str(uuidlib.UUID(str(index.uuid)))
    except ValueError as e:
        raise ValueError(f"Index.uuid is not a UUID: {index.uuid!r}") from e
    details = getattr(index, "index_details", None)
    if details is None:
        raise NotSupportedYetError(
            "an Index without index_details (pylance infers them from the index files)"
        )
    if not isinstance(details, tuple) or len(details) != 2:
        raise TypeError("Index.index_details must be a (type_url, bytes) tuple")
    type_url, raw = str(details[0]), bytes(details[1])
    created = getattr(index, "created_at", None)
    created_ms = None
    if created is not None:
        if not isinstance(created, datetime):
            raise TypeError(f"Index.created_at must be a datetime, got {type(created).__name__}")
        created_ms = int(round(created.timestamp() * 1000))
    base_id = getattr(index, "base_id", None)
    files = getattr(index, "files", None) or []
    return IndexEntry(
        uuid=uuid,
        name=name,
        fields=_ints(index.fields, "fields"),
        dataset_version=_int(index.dataset_version, "dataset_version"),
        fragment_ids=tuple(sorted(_ints(index.fragment_ids, "fragment_ids"))),
        type_url=type_url,
        details=raw,
        index_version=_int(index.index_version, "index_version"),
        created_at_ms=created_ms,
        base_id=None if base_id is None else _int(base_id, "base_id"),
        files=tuple(IndexFile(str(f.path), _int(f.size_bytes, "files.size_bytes")) for f in files),
    )
