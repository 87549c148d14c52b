"""The entries of a manifest's ``IndexSection``, decoded for reading (layer L3;
docs/format/lance-format-facts.md §3 "IndexSection / IndexMetadata").

This reads what pylance's indices record so that ``Dataset.list_indices`` reports them as
pylance does and cleanup keeps their files, and :func:`encode_index_entry` writes the entry
of an index lance-semantic builds (``CreateIndex.new_indices``). The manifest itself keeps
the section as raw bytes (``Manifest.index_section``); :func:`with_index_changes` applies a
CreateIndex to it.

``IndexMetadata``: 1 uuid (``UUID{1 bytes}``) · 2 fields (repeated int32) · 3 name ·
4 dataset_version · 5 fragment_bitmap (portable 32-bit roaring) · 6 index_details
(``google.protobuf.Any``: 1 type_url, 2 value) · 7 index_version · 8 created_at (ms) ·
9 base_id · 10 files (``IndexFile{1 path, 2 size_bytes}``).
"""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass

from pyroaring import BitMap

from ._pb import lance_table_pb2 as tpb
from ._wire import message_fields as _fields
from ._wire import packed, tag_bytes, tag_varint
from ._wire import packed_varints as _varints

__all__ = [
    "IndexEntry",
    "IndexFile",
    "index_entries",
    "index_type_name",
    "encode_index_entry",
    "entry_uuid",
    "with_index_changes",
]


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One file of an index segment: its path in the segment's folder and its size
    (pylance's ``lance.dataset.IndexFile``).

    >>> IndexFile("index.idx", 594)
    IndexFile(path='index.idx', size_bytes=594)
    """

    path: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One index segment of a manifest (an ``IndexMetadata`` message)."""

    uuid: str
    name: str
    fields: tuple[int, ...]
    dataset_version: int
    fragment_ids: tuple[int, ...]
    type_url: str
    details: bytes
    index_version: int
    created_at_ms: int | None
    base_id: int | None
    files: tuple[IndexFile, ...]

    @property
    def index_type(self) -> str:
        return index_type_name(self.type_url, self.details)


def _signed32(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _entry(data: bytes) -> IndexEntry:
    uuid = name = type_url = ""
    details = b""
    fields: list[int] = []
    fragments: tuple[int, ...] = ()
    dataset_version = index_version = 0
    created: int | None = None
    base_id: int | None = None
    files: list[IndexFile] = []
    for number, _wire, value in _fields(data):
        if number == 1 and isinstance(value, bytes):
            raw = b"".join(v for n, _, v in _fields(value) if n == 1 and isinstance(v, bytes))
            uuid = str(uuidlib.UUID(bytes=raw)) if len(raw) == 16 else raw.hex()
        elif number == 2:
            values = _varints(value) if isinstance(value, bytes) else [value]
            fields.extend(_signed32(v) for v in values)
        elif number == 3 and isinstance(value, bytes):
            name = value.decode()
        elif number == 4 and isinstance(value, int):
            dataset_version = value
        elif number == 5 and isinstance(value, bytes):
            fragments = tuple(BitMap.deserialize(value)) if value else ()
        elif number == 6 and isinstance(value, bytes):
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, bytes):
                    type_url = v.decode()
                elif n == 2 and isinstance(v, bytes):
                    details = v
        elif number == 7 and isinstance(value, int):
            index_version = value
        elif number == 8 and isinstance(value, int):
            created = value
        elif number == 9 and isinstance(value, int):
            base_id = value
        elif number == 10 and isinstance(value, bytes):
            path, size = "", 0
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, bytes):
                    path = v.decode()
                elif n == 2 and isinstance(v, int):
                    size = v
            files.append(IndexFile(path, size))
    return IndexEntry(
        uuid,
        name,
        tuple(fields),
        dataset_version,
        fragments,
        type_url,
        details,
        index_version,
        created,
        base_id,
        tuple(files),
    )


def index_entries(section: bytes | None) -> list[IndexEntry]:
    """Every index entry of a serialized ``IndexSection`` (none for ``None``), in order."""
    if not section:
        return []
    return [_entry(raw) for raw in tpb.IndexSection.FromString(section).indices]


#: scalar index details messages -> the type name pylance 14 reports
_SCALAR_TYPES = {
    "BTreeIndexDetails": "BTree",
    "BitmapIndexDetails": "Bitmap",
    "LabelListIndexDetails": "LabelList",
    "InvertedIndexDetails": "Inverted",
    "NGramIndexDetails": "NGram",
    "ZoneMapIndexDetails": "ZoneMap",
    "BloomFilterIndexDetails": "BloomFilter",
    "FragmentReuseIndexDetails": "FragmentReuse",
    "MemWalIndexDetails": "MemWal",
}

#: ``VectorIndexDetails`` compression fields (measured on pylance 14 indices)
_VECTOR_COMPRESSION = {4: "PQ", 5: "SQ", 6: "RQ", 8: "FLAT"}
_VECTOR_HNSW = 3


def index_type_name(type_url: str, details: bytes) -> str:
    """The index type pylance 14 reports for an index with these details: ``BTree``,
    ``Bitmap``, ``Inverted``, ... for scalar indices, ``IVF_PQ``, ``IVF_HNSW_SQ``, ...
    for vector ones (from which compression and sub-index fields the details hold).

    >>> index_type_name("/lance.table.BTreeIndexDetails", b"")
    'BTree'
    """
    message = type_url.rsplit(".", 1)[-1]
    if message in _SCALAR_TYPES:
        return _SCALAR_TYPES[message]
    if message == "VectorIndexDetails":
        present = {number for number, _, _ in _fields(details)}
        compression = next(
            (name for number, name in _VECTOR_COMPRESSION.items() if number in present), "PQ"
        )
        return "IVF_" + ("HNSW_" if _VECTOR_HNSW in present else "") + compression
    return message.removesuffix("IndexDetails") or "Unknown"


def encode_index_entry(entry: IndexEntry) -> bytes:
    """The serialized ``IndexMetadata`` of ``entry`` (as pylance 14 writes it: the uuid as
    ``UUID{1 bytes}``, packed fields, a portable roaring fragment bitmap, the details as an
    ``Any``, the files with their sizes).

    >>> e = IndexEntry("00000000-0000-0000-0000-000000000001", "v_idx", (1,), 1, (0,),
    ...                "/lance.index.pb.VectorIndexDetails", b"", 1, 5, None, ())
    >>> index_entries(tpb.IndexSection(indices=[encode_index_entry(e)]).SerializeToString())[0] == e
    True
    """
    out = tag_bytes(1, tag_bytes(1, uuidlib.UUID(entry.uuid).bytes))
    out += packed(2, entry.fields)
    out += tag_bytes(3, entry.name.encode())
    out += tag_varint(4, entry.dataset_version)
    out += tag_bytes(5, BitMap(entry.fragment_ids).serialize())
    out += tag_bytes(6, tag_bytes(1, entry.type_url.encode()) + tag_bytes(2, entry.details))
    out += tag_varint(7, entry.index_version)
    if entry.created_at_ms is not None:
        out += tag_varint(8, entry.created_at_ms)
    if entry.base_id is not None:
        out += tag_varint(9, entry.base_id)
    for f in entry.files:
        out += tag_bytes(10, tag_bytes(1, f.path.encode()) + tag_varint(2, f.size_bytes))
    return out


def entry_uuid(raw: bytes) -> str:
    """The uuid of one serialized ``IndexMetadata``."""
    return _entry(raw).uuid


def with_index_changes(
    section: bytes | None, new: tuple[bytes, ...], removed: tuple[bytes, ...]
) -> bytes | None:
    """``section`` after a CreateIndex: the entries of ``removed`` (matched by uuid) dropped,
    those of ``new`` appended; the other entries byte for byte unchanged."""
    gone = {entry_uuid(r) for r in removed} | {entry_uuid(n) for n in new}
    kept = [] if not section else list(tpb.IndexSection.FromString(section).indices)
    kept = [raw for raw in kept if entry_uuid(raw) not in gone] + list(new)
    if not kept:
        return None
    return tpb.IndexSection(indices=kept).SerializeToString()
