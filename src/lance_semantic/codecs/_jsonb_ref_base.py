"""What the parts of the JSON reference share (layer L2): its error, UTF-8 checks and the
recursion limit deep documents need. :mod:`lance_semantic.codecs.json_reference` states the
rules and exports the reference.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ._jsonb_format import (
    MAX_NESTING_DEPTH,
    reason_of,
)

__all__ = ["JsonbReferenceError", "utf8_sequence_length"]


class JsonbReferenceError(ValueError):
    """A document or JSONB value was refused: ``code`` (see ``_jsonb_format``) at byte ``pos``."""

    def __init__(self, code: int, pos: int) -> None:
        self.code = code
        self.pos = pos
        super().__init__(f"{reason_of(code)} at byte {pos}")


@contextmanager
def _deep_recursion() -> Iterator[None]:
    old = sys.getrecursionlimit()
    need = 4 * MAX_NESTING_DEPTH + 200
    if old < need:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if old < need:
            sys.setrecursionlimit(old)


# ---- UTF-8 ------------------------------------------------------------------------------------
def utf8_sequence_length(b: bytes, pos: int, end: int) -> int:
    """Length of the well-formed UTF-8 sequence starting at ``b[pos]`` (a byte >= 0x80), or 0."""
    c = b[pos]
    if 0xC2 <= c <= 0xDF:
        n, lo, hi = 2, 0x80, 0xBF
    elif c == 0xE0:
        n, lo, hi = 3, 0xA0, 0xBF
    elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
        n, lo, hi = 3, 0x80, 0xBF
    elif c == 0xED:
        n, lo, hi = 3, 0x80, 0x9F
    elif c == 0xF0:
        n, lo, hi = 4, 0x90, 0xBF
    elif 0xF1 <= c <= 0xF3:
        n, lo, hi = 4, 0x80, 0xBF
    elif c == 0xF4:
        n, lo, hi = 4, 0x80, 0x8F
    else:
        return 0
    if pos + n > end or not lo <= b[pos + 1] <= hi:
        return 0
    for k in range(2, n):
        if not 0x80 <= b[pos + k] <= 0xBF:
            return 0
    return n


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return False
    return True
