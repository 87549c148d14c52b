"""Manifest file layout, manifest / transaction round trips and corrupt input (facts §2, §3, §8)."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from lance_semantic.errors import CorruptManifestError, NotSupportedYetError
from lance_semantic.manifest.codec import (
    FOOTER_SIZE,
    decode_manifest_file,
    decode_transaction,
    encode_manifest_file,
    encode_transaction,
    manifest_region,
    read_inline_transaction,
)
from lance_semantic.manifest.model import (
    Append,
    DataFile,
    Fragment,
    Manifest,
    Overwrite,
    WriterVersion,
)
from lance_semantic.schema.field import Field, TableSchema

from . import _wire as wire
from ._samples import sample_fragment, sample_manifest, sample_schema, txn


def _footer(data: bytes) -> tuple[int, int, int, bytes]:
    return struct.unpack("<qhh4s", data[-FOOTER_SIZE:])


# ---------------------------------------------------------------------------------------
# layout


def test_layout_without_transaction_is_minimal():
    m = sample_manifest()
    data = encode_manifest_file(m)
    pos, major, minor, magic = _footer(data)
    assert (pos, major, minor, magic) == (0, 0, 2, b"LANC")
    (length,) = struct.unpack_from("<I", data, 0)
    assert 4 + length + FOOTER_SIZE == len(data)
    assert manifest_region(data) == (4, len(data) - FOOTER_SIZE)
    body = data[4 : 4 + length]
    assert 23 not in wire.numbers(body) and 6 not in wire.numbers(body)
    assert read_inline_transaction(data) is None


def test_layout_with_transaction_at_offset_zero():
    m = sample_manifest()
    t = txn(Append((sample_fragment(0),)))
    data = encode_manifest_file(m, t)
    tbytes = encode_transaction(t)
    (tlen,) = struct.unpack_from("<I", data, 0)
    assert data[4 : 4 + tlen] == tbytes
    pos = _footer(data)[0]
    assert pos == 4 + tlen
    start, end = manifest_region(data)
    body = data[start:end]
    assert wire.get(body, 23) == [0]
    assert 21 not in wire.numbers(body)
    assert read_inline_transaction(data) == t


def test_layout_index_section_then_transaction():
    index = wire.length_delimited(1, b"\x0a\x02ab")
    m = sample_manifest(index_section=index)
    t = txn(Append(()))
    data = encode_manifest_file(m, t)
    (ilen,) = struct.unpack_from("<I", data, 0)
    assert data[4 : 4 + ilen] == index
    start, end = manifest_region(data)
    body = data[start:end]
    assert wire.get(body, 6) == [0]
    assert wire.get(body, 23) == [4 + ilen]
    back = decode_manifest_file(data)
    assert back.index_section == index
    assert read_inline_transaction(data) == t
    assert back == m


def test_manifest_field_numbers_follow_facts_sheet():
    m = sample_manifest(max_fragment_id=0, next_row_id=7, max_allocated_field_id=12)
    data = encode_manifest_file(m, txn(Append(())))
    body = data[slice(*manifest_region(data))]
    nums = wire.numbers(body)
    assert nums == sorted(nums)  # field-number order, like pylance
    assert wire.get(body, 3) == [3]  # version
    assert wire.get(body, 9) == [1] and wire.get(body, 10) == [9]
    assert wire.get(body, 11) == [0]  # max_fragment_id written even when 0
    assert wire.get(body, 12) == [b"2-abc.txn"]
    assert wire.get(body, 14) == [7]
    assert wire.get(body, 24) == [12]
    (wv,) = wire.get(body, 13)
    assert wire.fields(wv) == [(1, 2, b"lance"), (2, 2, b"14.0.2")]  # type: ignore[arg-type]
    (fmt,) = wire.get(body, 15)
    assert wire.fields(fmt) == [(1, 2, b"lance"), (2, 2, b"2.2")]  # type: ignore[arg-type]
    (ts,) = wire.get(body, 7)
    assert wire.fields(ts) == [(1, 0, 1_700_000_000), (2, 0, 123_456_789)]  # type: ignore[arg-type]
    # maps as repeated entries, in insertion order
    assert [wire.fields(e)[0][2] for e in wire.get(body, 16)] == [b"z", b"a"]  # type: ignore[arg-type]
    assert [wire.fields(e)[0][2] for e in wire.get(body, 5)] == [b"b", b"a"]  # type: ignore[arg-type]


def test_field_wire_encoding():
    data = encode_manifest_file(sample_manifest())
    body = data[slice(*manifest_region(data))]
    raw_fields = wire.get(body, 1)
    first = wire.fields(raw_fields[0])  # type: ignore[arg-type]
    # id 0 omitted, parent -1 as a 10-byte varint, type (1) never written
    assert [n for n, _, _ in first] == [2, 4, 5, 7, 10, 10]
    assert dict((n, v) for n, _, v in first if n != 10)[4] == 2**64 - 1
    dict_field = wire.fields(raw_fields[6])  # type: ignore[arg-type]
    assert (8, 2, b"") in dict_field  # present-but-empty dictionary
    uuid_field = wire.fields(raw_fields[7])  # type: ignore[arg-type]
    assert (9, 2, b"arrow.uuid") in uuid_field
    # empty metadata value: the entry has only its key
    entries = [v for n, _, v in uuid_field if n == 10]
    assert wire.fields(entries[1]) == [(1, 2, b"ARROW:extension:metadata")]  # type: ignore[arg-type]
    pk = wire.fields(raw_fields[8])  # type: ignore[arg-type]
    assert (12, 0, 1) in pk and (13, 0, 1) in pk and (15, 0, 2) in pk


# ---------------------------------------------------------------------------------------
# round trips


def test_manifest_round_trip_keeps_every_attribute():
    m = sample_manifest()
    back = decode_manifest_file(encode_manifest_file(m, txn(Append(()))))
    assert back == m
    assert list(back.config) == ["z", "a"]
    assert list(back.schema.metadata) == ["b", "a"]
    fields = {f.path: f for f in back.schema}
    assert fields["d"].dictionary == (0, 0)
    assert fields["i"].dictionary is None
    assert fields["i"].metadata == {"zz": b"1", "aa": b"\x00\xff"}
    assert fields["u"].extension_name == "arrow.uuid"
    assert fields["u"].metadata["ARROW:extension:metadata"] == b""
    assert fields["s.x"].parent_id == 1 and fields["s"].parent_id == -1
    assert fields["pk"].unenforced_primary_key
    assert fields["pk"].unenforced_primary_key_position == 1
    assert fields["pk"].unenforced_clustering_key_position == 2
    assert back.fragments[1].files[1].base_id == 3
    assert back.fragments[0].deletion_file is not None
    assert back.fragments[0].deletion_file.id == 2**64 - 5


def test_reencoding_decoded_file_is_byte_identical():
    data = encode_manifest_file(sample_manifest(), txn(Append((sample_fragment(4),))))
    again = encode_manifest_file(decode_manifest_file(data), read_inline_transaction(data))
    assert again == data


def test_optional_fields_absent():
    m = Manifest(TableSchema(()), (), 1, writer_version=WriterVersion("", ""))
    data = encode_manifest_file(m)
    body = data[slice(*manifest_region(data))]
    assert wire.numbers(body) == [3, 15]  # only version and data_format
    back = decode_manifest_file(data)
    assert back == m
    assert back.max_fragment_id is None and back.timestamp_ns is None


def test_passthrough_keeps_unmodelled_and_unknown_fields():
    base_path = wire.length_delimited(
        18, wire.tag(1, 0) + b"\x01" + wire.length_delimited(4, b"s3://x")
    )
    branch = wire.length_delimited(20, b"dev")
    unknown = wire.tag(99, 0) + wire.varint(5)
    row_ids = wire.length_delimited(5, b"\x0a\x04\x0a\x02\x08\x0a")
    frag = replace(sample_fragment(0), passthrough=row_ids)
    m = sample_manifest(fragments=(frag,), passthrough=base_path + branch + unknown)
    data = encode_manifest_file(m)
    back = decode_manifest_file(data)
    assert back == m
    body = data[slice(*manifest_region(data))]
    nums = wire.numbers(body)
    assert nums.index(18) < nums.index(19) < nums.index(20) and nums[-1] == 99
    assert 5 in wire.numbers(wire.get(body, 2)[0])  # type: ignore[arg-type]


def test_legacy_dictionary_data_is_kept_at_file_start():
    d = Field("d", 0, -1, "dict:string:int32:false", dictionary=(2, 2))
    schema = TableSchema.from_flat([d])
    prefix = b"xy" + struct.pack("<3q", 0, 1, 2)
    m = sample_manifest(
        schema=schema, fragments=(), legacy_dictionary_data=prefix, data_format=("lance", "0.1")
    )
    t = txn(Append(()))
    data = encode_manifest_file(m, t)
    assert data.startswith(prefix)
    assert decode_manifest_file(data) == m
    assert read_inline_transaction(data) == t
    with pytest.raises(NotSupportedYetError):
        encode_manifest_file(replace(m, legacy_dictionary_data=b""))


def test_negative_field_id_in_data_file_refused():
    frag = Fragment(0, (DataFile("a.lance", (-1,), (0,), 2, 2, 1),), 1)
    with pytest.raises(ValueError, match="-1"):
        encode_manifest_file(sample_manifest(fragments=(frag,)))


def test_missing_data_format_inferred_from_files():
    m = sample_manifest()
    data = encode_manifest_file(m)
    start, end = manifest_region(data)
    body = b"".join(
        wire.tag(n, w) + (wire.varint(v) if w == 0 else wire.varint(len(v)) + v)  # type: ignore[operator, arg-type]
        for n, w, v in wire.fields(data[start:end])
        if n != 15
    )
    stripped = struct.pack("<I", len(body)) + body + struct.pack("<qhh4s", 0, 0, 2, b"LANC")
    assert decode_manifest_file(stripped).data_format == ("lance", "2.0")


def test_overwrite_carries_schema_metadata_in_field_3():
    op = Overwrite((sample_fragment(0),), sample_schema(), {"c": "1"})
    body = encode_transaction(txn(op))
    (payload,) = wire.get(body, 102)
    assert wire.numbers(payload) == [1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 4]  # type: ignore[arg-type]
    assert decode_transaction(body).operation == op


# ---------------------------------------------------------------------------------------
# corrupt input


def _good() -> bytes:
    return encode_manifest_file(sample_manifest(), txn(Append(())))


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda d: b"", "too small"),
        (lambda d: d[:10], "too small"),
        (lambda d: d[:-1], "magic"),
        (lambda d: d[:-4] + b"XXXX", "magic"),
        (lambda d: d[:-20] + d[-16:], "length"),
        (lambda d: d[:-16] + struct.pack("<qhh4s", len(d), 0, 2, b"LANC"), "outside"),
        (lambda d: d[:-16] + struct.pack("<qhh4s", -5, 0, 2, b"LANC"), "outside"),
        (lambda d: b"\x00" + d, "length"),
    ],
)
def test_corrupt_framing(mutate, reason):
    with pytest.raises(CorruptManifestError) as err:
        decode_manifest_file(mutate(_good()), "v.manifest")
    assert err.value.path == "v.manifest"
    assert reason in err.value.reason


def _frame(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body + struct.pack("<qhh4s", 0, 0, 2, b"LANC")


def test_garbage_protobuf():
    with pytest.raises(CorruptManifestError) as err:
        decode_manifest_file(_frame(b"\xff\xff\xff\xff"), "p")
    assert "decode" in err.value.reason
    assert isinstance(err.value.__cause__, Exception)


def test_bad_section_offsets():
    body = wire.tag(3, 0) + wire.varint(1) + wire.tag(23, 0) + wire.varint(1000)
    data = _frame(body)
    decode_manifest_file(data)  # the manifest itself is fine ...
    with pytest.raises(CorruptManifestError, match="inline transaction"):
        read_inline_transaction(data)  # ... its transaction pointer is not
    body = wire.tag(3, 0) + wire.varint(1) + wire.tag(6, 0) + wire.varint(0)
    data = b"\xff\x00\x00\x00" + _frame(body)
    data = data[:-16] + struct.pack("<qhh4s", 4, 0, 2, b"LANC")
    with pytest.raises(CorruptManifestError, match="index section"):
        decode_manifest_file(data)


def test_legacy_field_21_transaction_is_read():
    t = txn(Append(()))
    tb = encode_transaction(t)
    body = wire.tag(3, 0) + wire.varint(1) + wire.tag(21, 0) + wire.varint(0)
    data = struct.pack("<I", len(tb)) + tb + struct.pack("<I", len(body)) + body
    data += struct.pack("<qhh4s", 4 + len(tb), 0, 2, b"LANC")
    assert read_inline_transaction(data) == t


@pytest.mark.parametrize(
    "flat, reason",
    [
        ([Field("a", 0, -1, "int32"), Field("b", 0, -1, "int32")], "duplicate"),
        ([Field("a", 0, -1, "struct"), Field("b", 1, 7, "int32")], "no parent"),
        ([Field("a", 0, 1, "struct"), Field("b", 1, 0, "struct")], "cycle"),
    ],
)
def test_schema_that_is_not_a_tree(flat, reason):
    from lance_semantic.manifest._convert import fields_to_pb
    from lance_semantic.manifest._pb import lance_table_pb2

    pb = lance_table_pb2.Manifest(version=1)
    fields_to_pb(pb.fields, TableSchema(tuple(flat)))
    with pytest.raises(CorruptManifestError) as err:
        decode_manifest_file(_frame(pb.SerializeToString()), "m")
    assert reason in err.value.reason


def test_garbage_transaction():
    with pytest.raises(CorruptManifestError) as err:
        decode_transaction(b"\x0a\xff", "x.txn")
    assert err.value.path == "x.txn"
