"""A tiny independent protobuf wire reader, to check field numbers against the facts sheet
without going through our own generated classes."""

from __future__ import annotations


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """Top-level ``(field_number, wire_type, value)`` in wire order."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            n, pos = _varint(data, pos)
            value, pos = data[pos : pos + n], pos + n
        elif wire == 1:
            value, pos = int.from_bytes(data[pos : pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(data[pos : pos + 4], "little"), pos + 4
        else:  # pragma: no cover
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def numbers(data: bytes) -> list[int]:
    return [n for n, _, _ in fields(data)]


def get(data: bytes, number: int) -> list[int | bytes]:
    return [v for n, _, v in fields(data) if n == number]


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload
