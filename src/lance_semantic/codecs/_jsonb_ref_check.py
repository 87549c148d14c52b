"""The strict JSONB check of the JSON reference (layer L2): refuse bytes that are not JSONB as
pylance writes it. :mod:`lance_semantic.codecs.json_reference` exports :func:`check_value`.
"""

from __future__ import annotations

from ._jsonb_format import (
    B_BAD_ENTRY,
    B_BAD_HEADER,
    B_BAD_LENGTH,
    B_BAD_NUMBER,
    B_BAD_UTF8,
    B_EMPTY,
    B_KEY_ORDER,
    B_KEY_TYPE,
    B_TOO_DEEP,
    B_TRAILING,
    B_TRUNCATED,
    HDR_ARRAY,
    HDR_COUNT_MASK,
    HDR_KIND_MASK,
    HDR_OBJECT,
    HDR_SCALAR,
    JE_CONTAINER,
    JE_FALSE,
    JE_LENGTH_MASK,
    JE_NULL,
    JE_NUMBER,
    JE_STRING,
    JE_TRUE,
    JE_TYPE_MASK,
    MAX_NESTING_DEPTH,
    NUM_FLOAT,
    NUM_INF,
    NUM_INT,
    NUM_NAN,
    NUM_NEG_INF,
    NUM_UINT,
    NUM_ZERO,
)
from ._jsonb_ref_base import JsonbReferenceError, _deep_recursion, _is_utf8

__all__ = ["check_value"]


# ---- strict JSONB check -----------------------------------------------------------------------
def _check_number(p: bytes, pos: int) -> None:
    tag, n = p[0], len(p)
    ok = (
        (tag in (NUM_ZERO, NUM_NAN, NUM_INF, NUM_NEG_INF) and n == 1)
        or (tag in (NUM_INT, NUM_UINT) and n in (2, 3, 5, 9))
        or (tag == NUM_FLOAT and n == 9)
    )
    if not ok:
        raise JsonbReferenceError(B_BAD_NUMBER, pos)


def _check_entry(b: bytes, je: int, start: int, end: int, depth: int) -> int:
    """Check one JEntry's payload at ``start``; return where the next payload starts."""
    if je & 0x80000000:
        raise JsonbReferenceError(B_BAD_ENTRY, start)
    t, length = je & JE_TYPE_MASK, je & JE_LENGTH_MASK
    stop = start + length
    if t in (JE_NULL, JE_TRUE, JE_FALSE):
        if length:
            raise JsonbReferenceError(B_BAD_LENGTH, start)
        return stop
    if stop > end:
        raise JsonbReferenceError(B_TRUNCATED, start)
    if t == JE_STRING:
        if not _is_utf8(b[start:stop]):
            raise JsonbReferenceError(B_BAD_UTF8, start)
    elif t == JE_NUMBER:
        if length == 0:
            raise JsonbReferenceError(B_BAD_NUMBER, start)
        _check_number(b[start:stop], start)
    elif t == JE_CONTAINER:
        _check_container(b, start, stop, depth, nested=True)
    else:
        raise JsonbReferenceError(B_BAD_ENTRY, start)
    return stop


def _check_container(b: bytes, start: int, end: int, depth: int, nested: bool) -> None:
    if start + 4 > end:
        raise JsonbReferenceError(B_TRUNCATED, start)
    header = int.from_bytes(b[start : start + 4], "big")
    kind, n = header & HDR_KIND_MASK, header & HDR_COUNT_MASK
    if kind == HDR_SCALAR and not nested:
        if n:
            raise JsonbReferenceError(B_BAD_HEADER, start)
        if start + 8 > end:
            raise JsonbReferenceError(B_TRUNCATED, start)
        je = int.from_bytes(b[start + 4 : start + 8], "big")
        if je & JE_TYPE_MASK == JE_CONTAINER:
            raise JsonbReferenceError(B_BAD_ENTRY, start + 4)
        stop = _check_entry(b, je, start + 8, end, depth)
        if stop != end:
            raise JsonbReferenceError(B_TRAILING if stop < end else B_TRUNCATED, stop)
        return
    if kind not in (HDR_ARRAY, HDR_OBJECT):
        raise JsonbReferenceError(B_BAD_HEADER, start)
    if depth + 1 > MAX_NESTING_DEPTH:
        raise JsonbReferenceError(B_TOO_DEEP, start)
    width = 4 if kind == HDR_ARRAY else 8
    pos = start + 4 + width * n
    if pos > end:
        raise JsonbReferenceError(B_TRUNCATED, start)
    if kind == HDR_OBJECT:
        prev: bytes | None = None
        for i in range(n):
            je_at = start + 4 + 4 * i
            je = int.from_bytes(b[je_at : je_at + 4], "big")
            if je & JE_TYPE_MASK != JE_STRING or je & 0x80000000:
                raise JsonbReferenceError(B_KEY_TYPE, je_at)
            stop = _check_entry(b, je, pos, end, depth + 1)
            key = b[pos:stop]
            if prev is not None and not prev < key:
                raise JsonbReferenceError(B_KEY_ORDER, pos)
            prev, pos = key, stop
    first = start + 4 + (4 * n if kind == HDR_OBJECT else 0)
    for i in range(n):
        je_at = first + 4 * i
        je = int.from_bytes(b[je_at : je_at + 4], "big")
        pos = _check_entry(b, je, pos, end, depth + 1)
    if pos != end:
        raise JsonbReferenceError(B_TRAILING, pos)


def check_value(data: bytes) -> None:
    """Refuse bytes that are not JSONB as pylance writes it from JSON text.

    Checked: container headers, JEntry types (no extension values) and lengths (no bytes past
    the end, none left over), number encodings (no decimals), UTF-8 of strings and keys, keys
    of an object strictly increasing by their bytes, nesting depth. Integer widths need not be
    minimal.

    >>> check_value(encode_value('{"a": [1, "x", null]}'))
    >>> check_value(b"hello")
    Traceback (most recent call last):
    ...
    lance_semantic.codecs.json_reference.JsonbReferenceError: invalid JSONB container header ...
    """
    b = bytes(data)
    if not b:
        raise JsonbReferenceError(B_EMPTY, 0)
    with _deep_recursion():
        _check_container(b, 0, len(b), 0, nested=False)
