"""Constants of the JSONB layout pylance 14 writes, and the failure codes shared by the fast
kernels and the reference implementation (layer L2, private).

JSONB is the databend ``jsonb`` crate's binary layout, as vendored by pylance 14
(docs/format/lance-format-facts.md §9). Every integer in it is big-endian.

* A value is a *container*: a u32 header whose top three bits give its kind (array, object or
  scalar) and whose low 29 bits give its element count, followed by u32 JEntries and payloads.
* A JEntry carries a type in bits 28–30 and the byte length of its payload in bits 0–27 (so no
  single string, number or nested container may reach 2**28 bytes).
* Object keys are sorted by their raw UTF-8 bytes and unique.
"""

from __future__ import annotations

__all__ = [
    "MAX_NESTING_DEPTH",
    "MAX_ENTRY_LENGTH",
    "MAX_CONTAINER_COUNT",
    "reason_of",
]

# ---- container headers ------------------------------------------------------------------------
HDR_ARRAY = 0x80000000
HDR_OBJECT = 0x40000000
HDR_SCALAR = 0x20000000
HDR_KIND_MASK = 0xE0000000
HDR_COUNT_MASK = 0x1FFFFFFF

# ---- JEntries ---------------------------------------------------------------------------------
JE_NULL = 0x00000000
JE_STRING = 0x10000000
JE_NUMBER = 0x20000000
JE_FALSE = 0x30000000
JE_TRUE = 0x40000000
JE_CONTAINER = 0x50000000
JE_EXTENSION = 0x60000000
JE_TYPE_MASK = 0x70000000
JE_LENGTH_MASK = 0x0FFFFFFF

# ---- number payload tags ----------------------------------------------------------------------
NUM_ZERO = 0x00
NUM_NAN = 0x10
NUM_INF = 0x20
NUM_NEG_INF = 0x30
NUM_INT = 0x40
NUM_UINT = 0x50
NUM_FLOAT = 0x60
NUM_DECIMAL = 0x70

#: deepest nesting of arrays/objects accepted on write and in pre-encoded JSONB. pylance 14's
#: recursive parser and renderer overflow their thread stack (SIGSEGV) somewhere between 4,000
#: and 6,000 levels; 1,024 keeps every value we accept readable by pylance.
MAX_NESTING_DEPTH = 1024
#: a JEntry stores a payload length in 28 bits
MAX_ENTRY_LENGTH = JE_LENGTH_MASK
#: a container header stores its element count in 29 bits
MAX_CONTAINER_COUNT = HDR_COUNT_MASK

# ---- failure codes (kernels return them; 0 = no failure) --------------------------------------
E_EOF = 1
E_EXPECTED_VALUE = 2
E_TRAILING = 3
E_EXPECTED_COMMA_OR_BRACKET = 4
E_EXPECTED_COMMA_OR_BRACE = 5
E_EXPECTED_KEY = 6
E_EXPECTED_COLON = 7
E_INVALID_LITERAL = 8
E_INVALID_NUMBER = 9
E_CONTROL_CHAR = 10
E_INVALID_ESCAPE = 11
E_INVALID_HEX = 12
E_INVALID_UTF8 = 13
E_UNTERMINATED_STRING = 14
E_DUPLICATE_KEY = 15
E_TOO_DEEP = 16
E_TOO_LARGE = 17
E_EMPTY = 18

B_EMPTY = 30
B_TRUNCATED = 31
B_BAD_HEADER = 32
B_BAD_ENTRY = 33
B_BAD_NUMBER = 34
B_BAD_UTF8 = 35
B_KEY_ORDER = 36
B_TRAILING = 37
B_TOO_DEEP = 38
B_KEY_TYPE = 39
B_BAD_LENGTH = 40

_REASONS = {
    E_EOF: "unexpected end of input",
    E_EXPECTED_VALUE: "expected a JSON value",
    E_TRAILING: "unexpected characters after the JSON value",
    E_EXPECTED_COMMA_OR_BRACKET: "expected ',' or ']'",
    E_EXPECTED_COMMA_OR_BRACE: "expected ',' or '}'",
    E_EXPECTED_KEY: "expected a double-quoted object key",
    E_EXPECTED_COLON: "expected ':' after an object key",
    E_INVALID_LITERAL: "invalid literal (expected true, false or null)",
    E_INVALID_NUMBER: "invalid number",
    E_CONTROL_CHAR: "unescaped control character in a string",
    E_INVALID_ESCAPE: "invalid escape sequence in a string",
    E_INVALID_HEX: "invalid \\u escape (expected four hex digits)",
    E_INVALID_UTF8: "invalid UTF-8 in a string",
    E_UNTERMINATED_STRING: "unterminated string",
    E_DUPLICATE_KEY: "object has a duplicate key",
    E_TOO_DEEP: f"arrays/objects nested deeper than {MAX_NESTING_DEPTH} levels",
    E_TOO_LARGE: "a string, array or object exceeds JSONB's 2**28 - 1 byte limit",
    E_EMPTY: "empty document",
    B_EMPTY: "empty JSONB value",
    B_TRUNCATED: "truncated JSONB value (a length points past its end)",
    B_BAD_HEADER: "invalid JSONB container header",
    B_BAD_ENTRY: "invalid JSONB entry type",
    B_BAD_NUMBER: "invalid JSONB number encoding",
    B_BAD_UTF8: "JSONB string is not valid UTF-8",
    B_KEY_ORDER: "JSONB object keys are not sorted by their bytes and unique",
    B_TRAILING: "trailing bytes after the JSONB value",
    B_TOO_DEEP: f"JSONB arrays/objects nested deeper than {MAX_NESTING_DEPTH} levels",
    B_KEY_TYPE: "JSONB object key is not a string",
    B_BAD_LENGTH: "JSONB null/true/false entry with a non-zero length",
}


def reason_of(code: int) -> str:
    """The human-readable reason of a failure code.

    >>> reason_of(E_DUPLICATE_KEY)
    'object has a duplicate key'
    """
    return _REASONS.get(code, f"invalid JSON (code {code})")
