"""Pure-Python reference of the JSON text <-> JSONB conversion (layer L2).

This module states every rule of :mod:`lance_semantic.codecs.json` in plain, slow Python, one
value at a time. The fast path (numba kernels over Arrow buffers) must agree with it byte for
byte; the unit and property tests cross-check the two, and the fast path falls back to
:func:`encode_value` for the rare document whose floats it cannot round exactly by itself.

Rules (verified against pylance 14.0.2, see docs/format/lance-format-facts.md §9):

* **Input** is RFC 8259 JSON: whitespace is space, tab, LF, CR; strings hold no raw control
  characters; numbers follow ``-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?``. (pylance's
  parser is far more lenient -- it accepts ``NaN``, ``Infinity``, single quotes, unquoted keys,
  hex numbers, ``[1,,2]``, ``+1``, ``.5``, an empty document... -- we refuse all of that.)
  Objects must not repeat a key (compared after escapes are resolved); nesting is limited to
  :data:`~lance_semantic.codecs._jsonb_format.MAX_NESTING_DEPTH`.
* **Strings**: escapes are resolved; a surrogate pair becomes one 4-byte UTF-8 character; a lone
  surrogate escape stays as its six typed characters (``\\ud800`` is stored as the bytes
  ``\\``, ``u``, ``d``, ``8``, ``0``, ``0``). A high surrogate followed by a ``\\u`` escape that
  is not a low surrogate keeps *both* escapes as typed.
* **Numbers**: an integer literal is stored as an integer when it fits (0 and -0 as the zero tag,
  positives as the smallest of u8/u16/u32/u64, negatives as the smallest of i8/i16/i32/i64);
  anything with a fraction or exponent, or outside [-2**63, 2**64 - 1], is the correctly rounded
  f64 (``1E400`` is +Inf, stored with its own tag).
* **Objects** are stored with keys sorted by raw UTF-8 bytes.
* **Rendering** (JSONB -> text) is pylance's: compact, stored key order, integers exact, floats
  as the shortest round-trip digits in fixed notation for 1e-5 <= |x| < 1e16 (``.0`` appended to
  integral values) and ``d[.ddd]e±x`` otherwise, NaN/±Inf as ``null``; strings escape ``"``,
  ``\\``, ``\\b \\f \\n \\r \\t`` and other C0 controls as ``\\u00xx``; everything else raw.
  A value that is not well-formed JSONB renders like pylance renders it: as its bytes decoded
  with U+FFFD replacement (``null`` when empty).

>>> encode_value('{"b":[1,-1],"a":1.5}').hex()
'40000002100000011000000120000009500000106162603ff8000000000000800000022000000220000002500140ff'
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeAlias

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
    MAX_ENTRY_LENGTH,
    MAX_NESTING_DEPTH,
    NUM_FLOAT,
    NUM_INF,
    NUM_INT,
    NUM_NAN,
    NUM_NEG_INF,
    NUM_UINT,
    NUM_ZERO,
    reason_of,
)

__all__ = [
    "JsonbReferenceError",
    "encode_value",
    "render_value",
    "check_value",
    "format_float",
    "render_fallback",
]


class JsonbReferenceError(ValueError):
    """A document or JSONB value was refused: ``code`` (see ``_jsonb_format``) at byte ``pos``."""

    def __init__(self, code: int, pos: int) -> None:
        self.code = code
        self.pos = pos
        super().__init__(f"{reason_of(code)} at byte {pos}")


class _Malformed(Exception):
    """Raised inside the renderer: the value is not JSONB pylance can render."""


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


# ---- JSONB -> text ----------------------------------------------------------------------------
_ESCAPES = {
    0x22: '\\"',
    0x5C: "\\\\",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
}


def _quote(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if o in _ESCAPES:
            out.append(_ESCAPES[o])
        elif o < 0x20:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def format_float(x: float) -> str:
    """pylance's text of a finite f64 (serde_json through ``zmij``).

    >>> [format_float(v) for v in (1e10, 1e16, 0.00001, 1.25e-5, 1e-6, 5e-324, -0.0, 100.0)]
    ['10000000000.0', '1e+16', '0.00001', '0.0000125', '1e-6', '5e-324', '-0.0', '100.0']
    """
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp_s = r.partition("e")
    exp = int(exp_s) if exp_s else 0
    int_part, _, frac = mant.partition(".")
    all_digits = int_part + frac
    lz = len(all_digits) - len(all_digits.lstrip("0"))
    digits = all_digits[lz:].rstrip("0")
    dec_exp = len(int_part) - 1 - lz + exp
    n = len(digits)
    if -5 <= dec_exp <= 15:
        if n - 1 <= dec_exp:
            return sign + digits + "0" * (dec_exp - n + 1) + ".0"
        if dec_exp >= 0:
            return sign + digits[: dec_exp + 1] + "." + digits[dec_exp + 1 :]
        return sign + "0." + "0" * (-dec_exp - 1) + digits
    head = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{head}e{'+' if dec_exp >= 0 else '-'}{abs(dec_exp)}"


def _u32(b: bytes, i: int, end: int) -> int:
    if i + 4 > end:
        raise _Malformed
    return int.from_bytes(b[i : i + 4], "big")


def _render_number(p: bytes) -> str:
    if not p:
        raise _Malformed
    tag, rest = p[0], p[1:]
    if tag == NUM_ZERO:
        return "0"
    if tag in (NUM_NAN, NUM_INF, NUM_NEG_INF):
        return "null"
    if tag in (NUM_INT, NUM_UINT):
        if len(rest) not in (1, 2, 4, 8):
            raise _Malformed
        return str(int.from_bytes(rest, "big", signed=tag == NUM_INT))
    if tag == NUM_FLOAT:
        if len(rest) != 8:
            raise _Malformed
        x = struct.unpack(">d", rest)[0]
        return format_float(x) if math.isfinite(x) else "null"
    raise _Malformed  # decimals, unknown tags


def _render_scalar(t: int, b: bytes, start: int, end: int) -> str:
    """Render a JEntry of type ``t`` whose payload would be ``b[start:end]``."""
    if t == JE_NULL:
        return "null"
    if t == JE_TRUE:
        return "true"
    if t == JE_FALSE:
        return "false"
    if end > len(b):
        raise _Malformed
    if t == JE_NUMBER:
        return _render_number(b[start:end])
    if t == JE_STRING:
        s = b[start:end]
        if not _is_utf8(s):
            raise _Malformed
        return _quote(s.decode("utf-8"))
    raise _Malformed  # extension values and unknown types


def _render(b: bytes) -> str:
    end = len(b)
    header = _u32(b, 0, end)
    kind, n = header & HDR_KIND_MASK, header & HDR_COUNT_MASK
    if kind == HDR_SCALAR:
        je = _u32(b, 4, end)
        t = je & JE_TYPE_MASK
        if t == JE_CONTAINER:
            raise _Malformed
        return _render_scalar(t, b, 8, 8 + (je & JE_LENGTH_MASK))

    def item(je: int, start: int) -> tuple[str, int]:
        stop = start + (je & JE_LENGTH_MASK)
        if je & JE_TYPE_MASK == JE_CONTAINER:
            if stop > end:
                raise _Malformed
            return _render(b[start:stop]), stop
        return _render_scalar(je & JE_TYPE_MASK, b, start, stop), stop

    if kind == HDR_ARRAY:
        pos = 4 + 4 * n
        parts = []
        for i in range(n):
            text, pos = item(_u32(b, 4 + 4 * i, end), pos)
            parts.append(text)
        return "[" + ",".join(parts) + "]"
    if kind == HDR_OBJECT:
        pos = 4 + 8 * n
        keys = []
        for i in range(n):
            je = _u32(b, 4 + 4 * i, end)
            if je & JE_TYPE_MASK != JE_STRING:
                raise _Malformed
            keys.append(_render_scalar(JE_STRING, b, pos, pos + (je & JE_LENGTH_MASK)))
            pos += je & JE_LENGTH_MASK
        parts = []
        for i in range(n):
            text, pos = item(_u32(b, 4 + 4 * (n + i), end), pos)
            parts.append(keys[i] + ":" + text)
        return "{" + ",".join(parts) + "}"
    raise _Malformed


def render_fallback(data: bytes) -> str:
    """pylance's text for bytes that are not well-formed JSONB: the bytes decoded as UTF-8 with
    U+FFFD for invalid sequences, or ``null`` when empty.

    >>> render_fallback(b""), render_fallback(b"ab\\xffc")
    ('null', 'ab\\ufffdc')
    """
    return data.decode("utf-8", "replace") if data else "null"


def render_value(data: bytes) -> str:
    """The text pylance 14 renders for one JSONB value.

    >>> render_value(encode_value('{"b": 1e16, "a": [1.0, -0, "\\\\n"]}'))
    '{"a":[1.0,0,"\\\\n"],"b":1e+16}'
    """
    try:
        with _deep_recursion():
            return _render(bytes(data))
    except (_Malformed, RecursionError):
        return render_fallback(bytes(data))


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
