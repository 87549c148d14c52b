"""The field ids that a manifest's indices cover (layer L3; facts "IndexSection").

lance-semantic builds no index, but keeps pylance's indices true: a commit that removes a
field removes the indices on it (as pylance's ``Project`` does), and a change that would
rewrite an indexed column is refused. ``IndexSection`` is kept as raw bytes; only
``IndexMetadata.fields`` (field 2, repeated int32) is read here, every other byte of each
index entry is kept unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ._pb import lance_table_pb2 as tpb
from ._wire import read_varint

__all__ = [
    "index_field_ids",
    "indices_on_fields",
    "without_indices_on_missing_fields",
    "describe_indices",
    "IndexSummary",
]


def _wire_fields(message: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of a serialized message: an int for
    varints and fixed-width fields, the bytes of length-delimited ones."""
    pos = 0
    while pos < len(message):
        tag, pos = read_varint(message, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = read_varint(message, pos)
            yield number, wire, value
        elif wire == 2:
            size, pos = read_varint(message, pos)
            yield number, wire, message[pos : pos + size]
            pos += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, wire, int.from_bytes(message[pos : pos + width], "little")
            pos += width
        else:
            raise ValueError(f"unexpected wire type {wire} in an index entry")


def _fields(entry: bytes) -> list[int]:
    """``IndexMetadata.fields`` of one serialized index entry (packed or not)."""
    out: list[int] = []
    for number, wire, value in _wire_fields(entry):
        if number != 2:
            continue
        if isinstance(value, int):
            out.append(value)
        elif wire == 2:
            p = 0
            while p < len(value):
                v, p = read_varint(value, p)
                out.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in out]


@dataclass(frozen=True)
class IndexSummary:
    """What ``lance-semantic inspect`` shows of one index: ``name``, the field ids it covers,
    its kind (``BTree``, ``Vector``... from the type of its details, as pylance's
    ``list_indices`` names it; ``""`` if unknown) and the table version it was built at."""

    name: str
    field_ids: tuple[int, ...]
    kind: str
    dataset_version: int


def describe_indices(section: bytes | None) -> list[IndexSummary]:
    """One :class:`IndexSummary` per index entry of ``section``, in stored order."""
    out = []
    for entry in _entries(section):
        name, kind, version = "", "", 0
        for number, _wire, value in _wire_fields(entry):
            if number == 3 and isinstance(value, bytes):
                name = value.decode("utf-8", "replace")
            elif number == 4 and isinstance(value, int):
                version = value
            elif number == 6 and isinstance(value, bytes):  # google.protobuf.Any
                for n, _w, v in _wire_fields(value):
                    if n == 1 and isinstance(v, bytes):  # type_url
                        kind = v.decode("utf-8", "replace").rsplit(".", 1)[-1]
                        kind = kind.removesuffix("IndexDetails")
        out.append(IndexSummary(name, tuple(_fields(entry)), kind, version))
    return out


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
