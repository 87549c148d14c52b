"""Protobuf wire format, the one piece read by hand (layer L3): varints and the fields of a
message, for the scans of ``_fragments`` (fragment entries of a Manifest message) and of
index entries (``indices``, ``index_metadata``), and the few encoders the index entries and
the IVF index files lance-semantic writes need (``varint``, ``tag_varint``, ``tag_bytes``,
``tag_double``, ``packed``)."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

__all__ = [
    "message_fields",
    "packed_varints",
    "read_varint",
    "varint",
    "tag_varint",
    "tag_bytes",
    "tag_double",
    "packed",
]


def varint(value: int) -> bytes:
    """The varint of ``value`` (a negative int32 / int64 as its 64-bit two's complement).

    >>> varint(300).hex()
    'ac02'
    """
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


def tag_varint(number: int, value: int) -> bytes:
    """Field ``number`` as a varint (wire type 0)."""
    return varint(number << 3) + varint(value)


def tag_bytes(number: int, data: bytes) -> bytes:
    """Field ``number`` length-delimited (wire type 2): bytes, a string, a message."""
    return varint(number << 3 | 2) + varint(len(data)) + data


def tag_double(number: int, value: float) -> bytes:
    """Field ``number`` as a double (wire type 1)."""
    return varint(number << 3 | 1) + struct.pack("<d", value)


def packed(number: int, values: Iterable[int]) -> bytes:
    """A packed repeated varint field (every value written, zeros included).

    >>> packed(2, [0, 300]).hex()
    '120300ac02'
    """
    return tag_bytes(number, b"".join(varint(int(v)) for v in values))


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``data[pos:]`` and the position after it.

    >>> read_varint(bytes([0xAC, 0x02, 0x07]), 0)
    (300, 2)
    """
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def message_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of a serialized message; varints
    as ints, length-delimited and fixed-width fields as their bytes.

    >>> list(message_fields(bytes([0x08, 0x96, 0x01, 0x12, 0x02, 0x61, 0x62])))
    [(1, 0, 150), (2, 2, b'ab')]
    """
    pos = 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = read_varint(data, pos)
            yield number, wire, value
        elif wire == 2:
            size, pos = read_varint(data, pos)
            yield number, wire, data[pos : pos + size]
            pos += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, wire, data[pos : pos + width]
            pos += width
        else:
            raise ValueError(f"unexpected wire type {wire}")


def packed_varints(data: bytes) -> list[int]:
    """The varints of a packed repeated field.

    >>> packed_varints(bytes([0x01, 0xAC, 0x02]))
    [1, 300]
    """
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out
