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

The rules are implemented in private parts (parsing and encoding, rendering, the strict JSONB
check); this module exports them, and they name it as their module.

>>> encode_value('{"b":[1,-1],"a":1.5}').hex()
'40000002100000011000000120000009500000106162603ff8000000000000800000022000000220000002500140ff'
"""

from __future__ import annotations

import inspect

from ._jsonb_ref_base import JsonbReferenceError
from ._jsonb_ref_base import utf8_sequence_length as utf8_sequence_length
from ._jsonb_ref_check import check_value
from ._jsonb_ref_encode import encode_value
from ._jsonb_ref_render import format_float, render_fallback, render_value

__all__ = [
    "JsonbReferenceError",
    "encode_value",
    "render_value",
    "check_value",
    "format_float",
    "render_fallback",
]


def _home_here() -> None:
    """Name this module as the module of the reference's public names (and of the error's
    methods), as when they were all defined here: reprs, tracebacks, pickles and doctests see
    ``lance_semantic.codecs.json_reference.X``."""
    for value in (*(globals()[name] for name in __all__), utf8_sequence_length):
        value.__module__ = __name__
        for member in vars(value).values() if isinstance(value, type) else ():
            if inspect.isfunction(member):
                member.__module__ = __name__


_home_here()
