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

A compaction's ``Rewrite.rewritten_indices`` are ``RewrittenIndex`` messages (measured on
pylance 14): 1 old_id (``UUID``) · 2 new_id (``UUID``) · 3 new_index_details (``Any``) ·
4 new_index_version (absent for 0) · 5 new_index_files (``IndexFile``).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

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
    "RewrittenIndex",
    "encode_rewritten_index",
    "decode_rewritten_index",
    "with_rewritten_indices",
    "without_modified_fragments",
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


@dataclass(frozen=True, slots=True)
class RewrittenIndex:
    """One index a compaction rewrote: the entry ``old_uuid`` becomes ``new_uuid`` with
    these details, version and files (a ``Rewrite.rewritten_indices`` message)."""

    old_uuid: str
    new_uuid: str
    type_url: str
    details: bytes
    index_version: int
    files: tuple[IndexFile, ...]


def _uuid_of(value: bytes) -> str:
    raw = b"".join(v for n, _, v in _fields(value) if n == 1 and isinstance(v, bytes))
    return str(uuidlib.UUID(bytes=raw)) if len(raw) == 16 else raw.hex()


def encode_rewritten_index(r: RewrittenIndex) -> bytes:
    """The serialized ``RewrittenIndex`` message of ``r``, as pylance 14 writes it.

    >>> r = RewrittenIndex("00000000-0000-0000-0000-000000000001",
    ...     "00000000-0000-0000-0000-000000000002", "/lance.table.BTreeIndexDetails", b"", 0,
    ...     (IndexFile("page_data.lance", 10),))
    >>> decode_rewritten_index(encode_rewritten_index(r)) == r
    True
    """
    out = tag_bytes(1, tag_bytes(1, uuidlib.UUID(r.old_uuid).bytes))
    out += tag_bytes(2, tag_bytes(1, uuidlib.UUID(r.new_uuid).bytes))
    details = tag_bytes(1, r.type_url.encode())
    if r.details:
        details += tag_bytes(2, r.details)
    out += tag_bytes(3, details)
    if r.index_version:
        out += tag_varint(4, r.index_version)
    for f in r.files:
        out += tag_bytes(5, tag_bytes(1, f.path.encode()) + tag_varint(2, f.size_bytes))
    return out


def decode_rewritten_index(data: bytes) -> RewrittenIndex:
    """A serialized ``RewrittenIndex`` message."""
    old = new = type_url = ""
    details = b""
    version = 0
    files: list[IndexFile] = []
    for number, _wire, value in _fields(data):
        if number in (1, 2) and isinstance(value, bytes):
            if number == 1:
                old = _uuid_of(value)
            else:
                new = _uuid_of(value)
        elif number == 3 and isinstance(value, bytes):
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, bytes):
                    type_url = v.decode()
                elif n == 2 and isinstance(v, bytes):
                    details = v
        elif number == 4 and isinstance(value, int):
            version = value
        elif number == 5 and isinstance(value, bytes):
            path, size = "", 0
            for n, _, v in _fields(value):
                if n == 1 and isinstance(v, bytes):
                    path = v.decode()
                elif n == 2 and isinstance(v, int):
                    size = v
            files.append(IndexFile(path, size))
    return RewrittenIndex(old, new, type_url, details, version, tuple(files))


def with_rewritten_indices(
    section: bytes | None,
    groups: Sequence[tuple[frozenset[int], tuple[int, ...]]],
    rewritten: tuple[bytes, ...],
) -> bytes | None:
    """``section`` after a Rewrite of ``groups`` (old fragment ids, new fragment ids) with
    ``rewritten`` indices, as pylance 14 applies it: each rewritten entry takes its new
    uuid, details, version and files, and its fragment bitmap loses the old fragments of
    every group it covers and gains the group's new ones (name, fields, dataset version and
    creation time are kept). The other entries are unchanged. A ``ValueError`` for a
    rewritten index the section does not hold, one named twice, or a group the index
    covers only in part."""
    if not rewritten:
        return section
    changes: dict[str, RewrittenIndex] = {}
    for raw in rewritten:
        r = decode_rewritten_index(raw)
        if r.old_uuid in changes:
            raise ValueError(f"the index {r.old_uuid} is rewritten twice")
        changes[r.old_uuid] = r
    kept = [] if not section else list(tpb.IndexSection.FromString(section).indices)
    present = {entry_uuid(raw) for raw in kept}
    missing = sorted(set(changes) - present)
    if missing:
        raise ValueError(f"the table has no index {missing[0]} that the rewrite remaps")
    out = []
    for raw in kept:
        entry = _entry(raw)
        change = changes.get(entry.uuid)
        if change is None:
            out.append(raw)
            continue
        bitmap = set(entry.fragment_ids)
        for old, new in groups:
            covered = old & bitmap
            if not covered:
                continue
            if covered != old:
                raise ValueError(
                    f"a rewrite group mixes fragments the index {entry.name} covers with "
                    "fragments it does not cover"
                )
            bitmap = (bitmap - old) | set(new)
        changed = IndexEntry(
            change.new_uuid,
            entry.name,
            entry.fields,
            entry.dataset_version,
            tuple(sorted(bitmap)),
            change.type_url,
            change.details,
            change.index_version,
            entry.created_at_ms,
            entry.base_id,
            change.files,
        )
        out.append(encode_index_entry(changed))
    return tpb.IndexSection(indices=out).SerializeToString()


def without_modified_fragments(
    section: bytes | None, fragment_ids: Sequence[int], fields_modified: Sequence[int]
) -> bytes | None:
    """``section`` after an ``Update`` that rewrote the columns ``fields_modified`` inside
    the fragments ``fragment_ids``, as pylance 14 applies it: every index over one of those
    fields stops covering those fragments (its entries there are stale; the fragments are
    then scanned), and every other entry is kept byte for byte.

    >>> e = IndexEntry("00000000-0000-0000-0000-000000000001", "x_idx", (1,), 1, (0, 1),
    ...                "/lance.table.BTreeIndexDetails", b"", 0, 5, None, ())
    >>> section = tpb.IndexSection(indices=[encode_index_entry(e)]).SerializeToString()
    >>> index_entries(without_modified_fragments(section, [0], [1]))[0].fragment_ids
    (1,)
    >>> without_modified_fragments(section, [0], [2]) == section
    True
    """
    modified, touched = set(fields_modified), set(fragment_ids)
    if not section or not modified or not touched:
        return section
    raws = list(tpb.IndexSection.FromString(section).indices)
    out, changed = [], False
    for raw in raws:
        entry = _entry(raw)
        if modified.isdisjoint(entry.fields) or touched.isdisjoint(entry.fragment_ids):
            out.append(raw)
            continue
        kept = tuple(i for i in entry.fragment_ids if i not in touched)
        out.append(encode_index_entry(replace(entry, fragment_ids=kept)))
        changed = True
    return tpb.IndexSection(indices=out).SerializeToString() if changed else section
