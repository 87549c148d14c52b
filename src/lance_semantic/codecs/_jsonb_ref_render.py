"""JSONB -> JSON text in the JSON reference (layer L2): pylance's rendering, floats included, and
its fallback for bytes that are not JSONB. :mod:`lance_semantic.codecs.json_reference` states
the rules and exports :func:`render_value`, :func:`format_float` and :func:`render_fallback`.
"""

from __future__ import annotations

import math
import struct

from ._jsonb_format import (
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
    NUM_FLOAT,
    NUM_INF,
    NUM_INT,
    NUM_NAN,
    NUM_NEG_INF,
    NUM_UINT,
    NUM_ZERO,
)
from ._jsonb_ref_base import _deep_recursion, _is_utf8

__all__ = ["format_float", "render_fallback", "render_value"]


class _Malformed(Exception):
    """Raised inside the renderer: the value is not JSONB pylance can render."""


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
