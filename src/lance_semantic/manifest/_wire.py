"""Protobuf wire format, the one piece read by hand (layer L3): varints, for the scans of
``_fragments`` (fragment entries of a Manifest message) and ``indices`` (index field ids)."""

from __future__ import annotations

__all__ = ["read_varint"]


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
