"""The field ids that a manifest's indices cover (layer L3; docs/format/lance-format-facts.md
"IndexSection").

Indices (pylance's and those built here) are kept true: a commit that removes a
field removes the indices on it (as pylance's ``Project`` does), and a change that would
rewrite an indexed column is refused. ``IndexSection`` is kept as raw bytes; only
``IndexMetadata.fields`` (field 2, repeated int32) is read here, every other byte of each
index entry is kept unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._pb import lance_table_pb2 as tpb
from ._wire import message_fields, packed_varints

__all__ = ["index_field_ids", "indices_on_fields", "without_indices_on_missing_fields"]


def _fields(entry: bytes) -> list[int]:
    """``IndexMetadata.fields`` of one serialized index entry (packed or not)."""
    out: list[int] = []
    for number, wire, value in message_fields(entry):
        if number == 2 and wire in (0, 2):
            out.extend([value] if isinstance(value, int) else packed_varints(value))
    return [v - (1 << 64) if v >= 1 << 63 else v for v in out]


def _entries(section: bytes | None) -> list[bytes]:
    if not section:
        return []
    return list(tpb.IndexSection.FromString(section).indices)


def index_field_ids(section: bytes | None) -> set[int]:
    """Every field id some index of ``section`` covers."""
    return {f for entry in _entries(section) for f in _fields(entry)}


def indices_on_fields(section: bytes | None, field_ids: Iterable[int]) -> int:
    """How many indices of ``section`` cover at least one of ``field_ids``."""
    wanted = set(field_ids)
    return sum(1 for entry in _entries(section) if wanted.intersection(_fields(entry)))


def without_indices_on_missing_fields(section: bytes | None, live: set[int]) -> bytes | None:
    """``section`` without the indices that cover a field id outside ``live`` (pylance's
    ``Project``); the kept entries are byte for byte the same."""
    entries = _entries(section)
    kept = [e for e in entries if all(f in live for f in _fields(e))]
    if len(kept) == len(entries):
        return section
    if not kept:
        return None
    return tpb.IndexSection(indices=kept).SerializeToString()
