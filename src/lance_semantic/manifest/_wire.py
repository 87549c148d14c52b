"""Protobuf wire format, the one piece read by hand (layer L3): varints and the fields of a
message, for the scans of ``_fragments`` (fragment entries of a Manifest message) and of
index entries (``indices``, ``index_metadata``)."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["message_fields", "packed_varints", "read_varint"]


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
