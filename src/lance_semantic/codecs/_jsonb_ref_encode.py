"""JSON text -> JSONB in the JSON reference (layer L2): the strict RFC 8259 parser and the JSONB
encoder. :mod:`lance_semantic.codecs.json_reference` states the rules and exports
:func:`encode_value`.
"""

from __future__ import annotations

import math
import struct
from typing import TypeAlias

from ._jsonb_format import (
    E_CONTROL_CHAR,
    E_DUPLICATE_KEY,
    E_EMPTY,
    E_EOF,
    E_EXPECTED_COLON,
    E_EXPECTED_COMMA_OR_BRACE,
    E_EXPECTED_COMMA_OR_BRACKET,
    E_EXPECTED_KEY,
    E_EXPECTED_VALUE,
    E_INVALID_ESCAPE,
    E_INVALID_HEX,
    E_INVALID_LITERAL,
    E_INVALID_NUMBER,
    E_INVALID_UTF8,
    E_TOO_DEEP,
    E_TOO_LARGE,
    E_TRAILING,
    E_UNTERMINATED_STRING,
    HDR_ARRAY,
    HDR_OBJECT,
    HDR_SCALAR,
    JE_CONTAINER,
    JE_FALSE,
    JE_NULL,
    JE_NUMBER,
    JE_STRING,
    JE_TRUE,
    MAX_ENTRY_LENGTH,
    MAX_NESTING_DEPTH,
    NUM_FLOAT,
    NUM_INF,
    NUM_INT,
    NUM_NAN,
    NUM_NEG_INF,
    NUM_UINT,
    NUM_ZERO,
)
from ._jsonb_ref_base import JsonbReferenceError, _deep_recursion, utf8_sequence_length

__all__ = ["encode_value"]


_U64_MAX = (1 << 64) - 1
_I64_MIN = -(1 << 63)
_WS = frozenset(b" \t\n\r")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {
    ord('"'): b'"',
    ord("\\"): b"\\",
    ord("/"): b"/",
    ord("b"): b"\b",
    ord("f"): b"\f",
    ord("n"): b"\n",
    ord("r"): b"\r",
    ord("t"): b"\t",
}


# parsed values: None, bool, bytes (a string), _Num, list (array), _Obj (sorted (key, value))
_Num: TypeAlias = tuple[int, bytes]  # (number payload tag, whole payload)


class _Obj(list):  # type: ignore[type-arg]
    """An object's (key, value) pairs, sorted by key bytes."""


# ---- text -> value ----------------------------------------------------------------------------
class _Parser:
    def __init__(self, b: bytes) -> None:
        self.b = b
        self.n = len(b)
        self.pos = 0

    def fail(self, code: int, pos: int | None = None) -> JsonbReferenceError:
        return JsonbReferenceError(code, self.pos if pos is None else pos)

    def skip_ws(self) -> None:
        while self.pos < self.n and self.b[self.pos] in _WS:
            self.pos += 1

    def document(self) -> object:
        self.skip_ws()
        if self.pos >= self.n:
            raise self.fail(E_EMPTY)
        value = self.value(0)
        self.skip_ws()
        if self.pos != self.n:
            raise self.fail(E_TRAILING)
        return value

    def value(self, depth: int) -> object:
        self.skip_ws()
        if self.pos >= self.n:
            raise self.fail(E_EOF)
        c = self.b[self.pos]
        if c == ord("["):
            return self.array(depth + 1)
        if c == ord("{"):
            return self.object(depth + 1)
        if c == ord('"'):
            return self.string()
        if c == ord("t"):
            return self.literal(b"true", True)
        if c == ord("f"):
            return self.literal(b"false", False)
        if c == ord("n"):
            return self.literal(b"null", None)
        if c == ord("-") or c in _DIGITS:
            return self.number()
        raise self.fail(E_EXPECTED_VALUE)

    def literal(self, word: bytes, value: object) -> object:
        if self.b[self.pos : self.pos + len(word)] != word:
            raise self.fail(E_INVALID_LITERAL)
        self.pos += len(word)
        return value

    def array(self, depth: int) -> list[object]:
        if depth > MAX_NESTING_DEPTH:
            raise self.fail(E_TOO_DEEP)
        self.pos += 1
        items: list[object] = []
        self.skip_ws()
        if self.pos >= self.n:
            raise self.fail(E_EOF)
        if self.b[self.pos] == ord("]"):
            self.pos += 1
            return items
        while True:
            items.append(self.value(depth))
            self.skip_ws()
            if self.pos >= self.n:
                raise self.fail(E_EOF)
            c = self.b[self.pos]
            if c == ord(","):
                self.pos += 1
            elif c == ord("]"):
                self.pos += 1
                return items
            else:
                raise self.fail(E_EXPECTED_COMMA_OR_BRACKET)

    def object(self, depth: int) -> _Obj:
        if depth > MAX_NESTING_DEPTH:
            raise self.fail(E_TOO_DEEP)
        self.pos += 1
        pairs: list[tuple[bytes, object, int]] = []
        self.skip_ws()
        if self.pos >= self.n:
            raise self.fail(E_EOF)
        if self.b[self.pos] != ord("}"):
            while True:
                self.skip_ws()
                if self.pos >= self.n:
                    raise self.fail(E_EOF)
                if self.b[self.pos] != ord('"'):
                    raise self.fail(E_EXPECTED_KEY)
                key_pos = self.pos
                key = self.string()
                self.skip_ws()
                if self.pos >= self.n:
                    raise self.fail(E_EOF)
                if self.b[self.pos] != ord(":"):
                    raise self.fail(E_EXPECTED_COLON)
                self.pos += 1
                pairs.append((key, self.value(depth), key_pos))
                self.skip_ws()
                if self.pos >= self.n:
                    raise self.fail(E_EOF)
                c = self.b[self.pos]
                if c == ord(","):
                    self.pos += 1
                elif c == ord("}"):
                    break
                else:
                    raise self.fail(E_EXPECTED_COMMA_OR_BRACE)
        self.pos += 1
        pairs.sort(key=lambda p: p[0])  # stable, like pylance's sort_by
        for i in range(1, len(pairs)):
            if pairs[i - 1][0] == pairs[i][0]:
                raise self.fail(E_DUPLICATE_KEY, pairs[i][2])
        return _Obj((k, v) for k, v, _ in pairs)

    def hex4(self, at: int) -> int:
        for k in range(4):
            if at + k >= self.n:
                raise self.fail(E_UNTERMINATED_STRING, self.n)
            if self.b[at + k] not in _HEX:
                raise self.fail(E_INVALID_HEX, at + k)
        return int(self.b[at : at + 4], 16)

    def string(self) -> bytes:
        b, n = self.b, self.n
        start = self.pos
        pos = self.pos + 1
        out = bytearray()
        while True:
            if pos >= n:
                raise self.fail(E_UNTERMINATED_STRING, n)
            c = b[pos]
            if c == ord('"'):
                pos += 1
                break
            if c == ord("\\"):
                if pos + 1 >= n:
                    raise self.fail(E_UNTERMINATED_STRING, n)
                e = b[pos + 1]
                if e in _SIMPLE_ESCAPES:
                    out += _SIMPLE_ESCAPES[e]
                    pos += 2
                elif e == ord("u"):
                    cp = self.hex4(pos + 2)
                    if 0xDC00 <= cp <= 0xDFFF:
                        out += b[pos : pos + 6]
                        pos += 6
                    elif 0xD800 <= cp <= 0xDBFF:
                        if pos + 7 < n and b[pos + 6] == ord("\\") and b[pos + 7] == ord("u"):
                            cp2 = self.hex4(pos + 8)
                            if 0xDC00 <= cp2 <= 0xDFFF:
                                full = 0x10000 + ((cp - 0xD800) << 10) + (cp2 - 0xDC00)
                                out += chr(full).encode("utf-8")
                            else:
                                out += b[pos : pos + 12]
                            pos += 12
                        else:
                            out += b[pos : pos + 6]
                            pos += 6
                    else:
                        out += chr(cp).encode("utf-8")
                        pos += 6
                else:
                    raise self.fail(E_INVALID_ESCAPE, pos)
            elif c < 0x20:
                raise self.fail(E_CONTROL_CHAR, pos)
            elif c < 0x80:
                out.append(c)
                pos += 1
            else:
                k = utf8_sequence_length(b, pos, n)
                if k == 0:
                    raise self.fail(E_INVALID_UTF8, pos)
                out += b[pos : pos + k]
                pos += k
        self.pos = pos
        if len(out) > MAX_ENTRY_LENGTH:
            raise self.fail(E_TOO_LARGE, start)
        return bytes(out)

    def number(self) -> _Num:
        b, n = self.b, self.n
        start = pos = self.pos
        if b[pos] == ord("-"):
            pos += 1
        if pos >= n:
            raise self.fail(E_INVALID_NUMBER, pos)
        if b[pos] == ord("0"):
            pos += 1
            if pos < n and b[pos] in _DIGITS:
                raise self.fail(E_INVALID_NUMBER, pos)
        elif b[pos] in _DIGITS:
            while pos < n and b[pos] in _DIGITS:
                pos += 1
        else:
            raise self.fail(E_INVALID_NUMBER, pos)
        is_float = False
        if pos < n and b[pos] == ord("."):
            is_float = True
            pos += 1
            if pos >= n or b[pos] not in _DIGITS:
                raise self.fail(E_INVALID_NUMBER, pos)
            while pos < n and b[pos] in _DIGITS:
                pos += 1
        if pos < n and b[pos] in b"eE":
            is_float = True
            pos += 1
            if pos < n and b[pos] in b"+-":
                pos += 1
            if pos >= n or b[pos] not in _DIGITS:
                raise self.fail(E_INVALID_NUMBER, pos)
            while pos < n and b[pos] in _DIGITS:
                pos += 1
        self.pos = pos
        token = b[start:pos]
        if not is_float and len(token.lstrip(b"-")) <= 20:
            v = int(token)
            if _I64_MIN <= v <= _U64_MAX:
                return _int_payload(v)
        return _float_payload(float(token))


def _int_payload(v: int) -> _Num:
    if v == 0:
        return NUM_ZERO, bytes([NUM_ZERO])
    if v > 0:
        for width, fmt in ((1, ">B"), (2, ">H"), (4, ">I"), (8, ">Q")):
            if v < 1 << (8 * width):
                return NUM_UINT, bytes([NUM_UINT]) + struct.pack(fmt, v)
    for width, fmt in ((1, ">b"), (2, ">h"), (4, ">i"), (8, ">q")):
        if v >= -(1 << (8 * width - 1)):
            return NUM_INT, bytes([NUM_INT]) + struct.pack(fmt, v)
    raise AssertionError(v)


def _float_payload(x: float) -> _Num:
    if math.isnan(x):
        return NUM_NAN, bytes([NUM_NAN])
    if math.isinf(x):
        tag = NUM_INF if x > 0 else NUM_NEG_INF
        return tag, bytes([tag])
    return NUM_FLOAT, bytes([NUM_FLOAT]) + struct.pack(">d", x)


# ---- value -> JSONB ---------------------------------------------------------------------------
def _entry(value: object) -> tuple[int, bytes]:
    """The JEntry type and payload of a parsed value inside a container."""
    if value is None:
        return JE_NULL, b""
    if value is True:
        return JE_TRUE, b""
    if value is False:
        return JE_FALSE, b""
    if isinstance(value, bytes):
        return JE_STRING, value
    if isinstance(value, tuple):
        return JE_NUMBER, value[1]
    payload = _container(value)
    if len(payload) > MAX_ENTRY_LENGTH:
        raise JsonbReferenceError(E_TOO_LARGE, 0)
    return JE_CONTAINER, payload


def _container(value: object) -> bytes:
    if isinstance(value, _Obj):
        n = len(value)
        entries = [_entry(v) for _, v in value]
        head = struct.pack(">I", HDR_OBJECT | n)
        keys = b"".join(struct.pack(">I", JE_STRING | len(k)) for k, _ in value)
        jes = b"".join(struct.pack(">I", t | len(p)) for t, p in entries)
        return head + keys + jes + b"".join(k for k, _ in value) + b"".join(p for _, p in entries)
    assert isinstance(value, list)
    entries = [_entry(v) for v in value]
    head = struct.pack(">I", HDR_ARRAY | len(value))
    jes = b"".join(struct.pack(">I", t | len(p)) for t, p in entries)
    return head + jes + b"".join(p for _, p in entries)


def encode_value(text: str | bytes) -> bytes:
    """JSONB bytes of one JSON document, exactly as pylance 14 writes them.

    Raises :class:`JsonbReferenceError` (``code``, byte ``pos``) for input that is not valid
    JSON, has a duplicate key, nests too deeply or does not fit JSONB.

    >>> encode_value('[1, 2]').hex()
    '80000002200000022000000250015002'
    >>> encode_value('"\\\\ud83d\\\\ude00"').hex()
    '2000000010000004f09f9880'
    >>> encode_value('{"a":1,"a":2}')
    Traceback (most recent call last):
    ...
    lance_semantic.codecs.json_reference.JsonbReferenceError: object has a duplicate key at byte 7
    """
    b = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    with _deep_recursion():
        value = _Parser(b).document()
        if isinstance(value, list):
            return _container(value)
        t, payload = _entry(value)
        return struct.pack(">II", HDR_SCALAR, t | len(payload)) + payload
