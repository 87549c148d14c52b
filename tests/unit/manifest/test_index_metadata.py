"""IndexSection entries decoded by hand (manifest/index_metadata.py), from messages built
with an independent encoder."""

from __future__ import annotations

import uuid

from pyroaring import BitMap

from lance_semantic.manifest._pb import lance_table_pb2 as tpb
from lance_semantic.manifest.index_metadata import index_entries, index_type_name


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _entry(name: str, fields: list[int], *, type_url: str, details: bytes = b"") -> bytes:
    u = uuid.UUID("849acb80-d87c-4a1f-b497-d76696dee5b7")
    any_msg = _field(1, type_url.encode()) + (_field(2, details) if details else b"")
    return b"".join(
        [
            _field(1, _field(1, u.bytes)),
            _field(2, b"".join(_varint(f) for f in fields)),
            _field(3, name.encode()),
            _field(4, 5),
            _field(5, BitMap([0, 2, 7]).serialize()),
            _field(6, any_msg),
            _field(7, 1),
            _field(8, 1_796_144_453_085),
            _field(10, _field(1, b"page_data.lance") + _field(2, 6273)),
            _field(10, _field(1, b"page_lookup.lance") + _field(2, 701)),
        ]
    )


def test_an_entry_decodes() -> None:
    raw = _entry("id_idx", [0], type_url="/lance.table.BTreeIndexDetails")
    section = tpb.IndexSection(indices=[raw]).SerializeToString()
    (e,) = index_entries(section)
    assert e.uuid == "849acb80-d87c-4a1f-b497-d76696dee5b7"
    assert (e.name, e.fields, e.dataset_version, e.fragment_ids) == ("id_idx", (0,), 5, (0, 2, 7))
    assert (e.index_type, e.index_version, e.created_at_ms, e.base_id) == (
        "BTree",
        1,
        1_796_144_453_085,
        None,
    )
    assert [(f.path, f.size_bytes) for f in e.files] == [
        ("page_data.lance", 6273),
        ("page_lookup.lance", 701),
    ]
    assert index_entries(None) == [] == index_entries(b"")


def test_vector_types_come_from_the_details_fields() -> None:
    url = "/lance.index.pb.VectorIndexDetails"
    hnsw = _field(3, b"\x08\x14")
    assert index_type_name(url, _field(4, b"\x08\x08")) == "IVF_PQ"
    assert index_type_name(url, _field(5, b"\x08\x08")) == "IVF_SQ"
    assert index_type_name(url, _field(6, b"\x08\x05")) == "IVF_RQ"
    assert index_type_name(url, _field(8, b"")) == "IVF_FLAT"
    assert index_type_name(url, hnsw + _field(5, b"\x08\x08")) == "IVF_HNSW_SQ"
    assert index_type_name(url, hnsw + _field(8, b"")) == "IVF_HNSW_FLAT"
    assert index_type_name(url, b"") == "IVF_PQ"  # older, empty details: Lance's default


def test_scalar_types_and_unknown_ones() -> None:
    for message, name in [
        ("BitmapIndexDetails", "Bitmap"),
        ("LabelListIndexDetails", "LabelList"),
        ("InvertedIndexDetails", "Inverted"),
        ("NGramIndexDetails", "NGram"),
        ("ZoneMapIndexDetails", "ZoneMap"),
        ("BloomFilterIndexDetails", "BloomFilter"),
        ("FragmentReuseIndexDetails", "FragmentReuse"),
    ]:
        assert index_type_name(f"/lance.table.{message}", b"") == name
    assert index_type_name("/lance.table.JsonIndexDetails", b"") == "Json"
    assert index_type_name("", b"") == "Unknown"
