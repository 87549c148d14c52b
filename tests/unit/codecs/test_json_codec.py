"""Unit tests of the JSON codec (``codecs/json.py``): every example of facts sheet §9, the
errors, the Arrow layouts, and the fast numba path checked against the pure-Python reference
(``codecs/json_reference.py``). pylance itself is the oracle of tests/interop."""

from __future__ import annotations

import json
import math
import random
import struct
from decimal import Decimal, getcontext

import numpy as np
import pyarrow as pa
import pytest

from lance_semantic.codecs import MAX_NESTING_DEPTH, decode_jsonb, encode_json, validate_jsonb
from lance_semantic.codecs import json as codec
from lance_semantic.codecs._jsonb_format import reason_of
from lance_semantic.codecs.json_reference import (
    JsonbReferenceError,
    check_value,
    encode_value,
    format_float,
    render_value,
)
from lance_semantic.errors import InvalidJsonError, UnsupportedInputTypeError


def enc(doc: str) -> bytes:
    out = encode_json(pa.array([doc]), path="j").to_pylist()[0]
    assert isinstance(out, bytes)
    return out


def dec(blob: bytes) -> str:
    out = decode_jsonb(pa.array([blob], pa.large_binary()), path="j").to_pylist()[0]
    assert isinstance(out, str)
    return out


def refused(doc: str) -> InvalidJsonError:
    with pytest.raises(InvalidJsonError) as info:
        encode_json(pa.array(["[]", doc]), path="a.b")
    return info.value


# ---- facts §9: JSONB bytes --------------------------------------------------------------------
FACTS_BYTES = [
    ("null", "2000000000000000"),
    ("true", "2000000040000000"),
    ("false", "2000000030000000"),
    ('"abc"', "2000000010000003616263"),
    ("[1,2]", "80000002200000022000000250015002"),
    ("[]", "80000000"),
    ('{"a":1}', "400000011000000120000002615001"),
    ("{}", "40000000"),
    ("0", "200000002000000100"),
    ("-0", "200000002000000100"),
    ("-1", "200000002000000240ff"),
    ("-128", "20000000200000024080"),
    ("-129", "200000002000000340ff7f"),
    ("-32769", "200000002000000540ffff7fff"),
    ("-2147483649", "200000002000000940ffffffff7fffffff"),
    ("-9223372036854775808", "2000000020000009408000000000000000"),
    ("1", "20000000200000025001"),
    ("255", "200000002000000250ff"),
    ("256", "2000000020000003500100"),
    ("65535", "200000002000000350ffff"),
    ("65536", "20000000200000055000010000"),
    ("4294967295", "200000002000000550ffffffff"),
    ("4294967296", "2000000020000009500000000100000000"),
    ("9223372036854775808", "2000000020000009508000000000000000"),
    ("18446744073709551615", "200000002000000950ffffffffffffffff"),
    ("18446744073709551616", "20000000200000096043f0000000000000"),  # beyond u64: f64
    ("-9223372036854775809", "200000002000000960c3e0000000000000"),  # beyond i64: f64
    ("1.0", "2000000020000009603ff0000000000000"),
    ("0.0", "2000000020000009600000000000000000"),
    ("-0.0", "2000000020000009608000000000000000"),
    ("1e10", "2000000020000009604202a05f20000000"),
    ("1E400", "200000002000000120"),  # +Inf
    ("-1E400", "200000002000000130"),  # -Inf
    ("1e-400", "2000000020000009600000000000000000"),  # underflow to 0.0
    ('"\\u00e9"', "2000000010000002c3a9"),
    ('"\\ud83d\\ude00"', "2000000010000004f09f9880"),  # surrogate pair -> 4-byte UTF-8
    ('"\\u0000"', "200000001000000100"),
    ('"\\ud800"', "20000000100000065c7564383030"),  # lone surrogate: the 6 typed characters
    ('["\\ud800\\u0041"]', "800000011000000c5c75643830305c7530303431"),  # both kept as typed
    (" [ 1 ,\t2 ]\r\n", "80000002200000022000000250015002"),
    (
        '{"z":{"y":[1,{"x":null}]},"a":[true,false]}',
        "4000000210000001100000015000000c50000028617a800000024000000030000000400000011000000150"
        "00001b7980000002200000025000000d500140000001100000010000000078",
    ),
    (  # keys sorted by raw UTF-8 bytes
        '{"é":1,"e":2,"f":3,"Z":4,"_":5,"10":6,"9":7,"aaa":8,"ab":9,"":10}',
        "4000000a100000001000000210000001100000011000000110000003100000021000000110000001100000"
        "022000000220000002200000022000000220000002200000022000000220000002200000022000000231"
        "30395a5f61616161626566c3a9500a500650075004500550085009500250035001",
    ),
]


@pytest.mark.parametrize(("doc", "hexed"), FACTS_BYTES, ids=[d for d, _ in FACTS_BYTES])
def test_facts_jsonb_bytes(doc: str, hexed: str) -> None:
    assert enc(doc).hex() == hexed
    assert encode_value(doc).hex() == hexed


# ---- facts §9: text rendering -----------------------------------------------------------------
FACTS_TEXT = [
    ('{"b": 1, "a": 2}', '{"a":2,"b":1}'),  # stored (sorted) key order, compact
    ("1e10", "10000000000.0"),
    ("100.0", "100.0"),
    ("0.00001", "0.00001"),
    ("1.25e-5", "0.0000125"),
    ("1e16", "1e+16"),
    ("1e15", "1000000000000000.0"),
    ("9999999999999998.0", "9999999999999998.0"),
    ("1.5e300", "1.5e+300"),
    ("12345678901234567890123", "1.2345678901234568e+22"),
    ("1e-6", "1e-6"),
    ("9.9e-6", "9.9e-6"),
    ("0.0000099999", "9.9999e-6"),
    ("5e-324", "5e-324"),
    ("4.9e-324", "5e-324"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("0.1", "0.1"),
    ("-12.5", "-12.5"),
    ("1234567890123456.7", "1234567890123456.8"),
    ("0.0", "0.0"),
    ("-0.0", "-0.0"),
    ("-0", "0"),
    ("18446744073709551616", "1.8446744073709552e+19"),
    ("1E400", "null"),
    ("-1E400", "null"),
    ('"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\"\\\\/\\b\\f\\n\\r\\t"'),
    ('"\\u0001\\u001F\\u000b"', '"\\u0001\\u001f\\u000b"'),  # lowercase hex
    ('"\\u007f\\u2028é😀/"', '"\x7f\u2028é😀/"'),  # DEL, U+2028, non-ASCII, '/' raw
    ('"\\ud800"', '"\\\\ud800"'),  # the kept backslash is escaped on the way out
]


@pytest.mark.parametrize(("doc", "text"), FACTS_TEXT, ids=[d for d, _ in FACTS_TEXT])
def test_facts_text_rendering(doc: str, text: str) -> None:
    assert dec(enc(doc)) == text
    assert render_value(encode_value(doc)) == text


def test_float_formatting_boundaries() -> None:
    vals = [1e15, 1e16, 1e-5, 1e-6, 1.5e-5, 123456789.0, 2.0**53, 2.0**63, 1e22, 1e23, 0.3]
    vals += [-v for v in vals]
    blobs = [struct.pack(">IIB", 0x20000000, 0x20000009, 0x60) + struct.pack(">d", v) for v in vals]
    got = decode_jsonb(pa.array(blobs, pa.large_binary()), path="j").to_pylist()
    assert got == [format_float(v) for v in vals]
    assert [json.loads(t) for t in got] == vals


# ---- refusals ---------------------------------------------------------------------------------
INVALID = [
    ("", "empty document"),
    ("   ", "empty document"),
    ("[1,2", "unexpected end of input"),
    ("[1 2]", "expected ',' or ']'"),
    ('{"a" 1}', "expected ':' after an object key"),
    ('{"a":1 "b":2}', "expected ',' or '}'"),
    ("{a:1}", "expected a double-quoted object key"),
    ('{"a":1,}', "expected a double-quoted object key"),
    ("[1,]", "expected a JSON value"),
    ("[1]x", "unexpected characters after the JSON value"),
    ("tru", "invalid literal (expected true, false or null)"),
    ("True", "expected a JSON value"),
    ("01", "invalid number"),
    ("-", "invalid number"),
    ("1.", "invalid number"),
    ("1e+", "invalid number"),
    (".5", "expected a JSON value"),
    ("+1", "expected a JSON value"),
    ('"a\nb"', "unescaped control character in a string"),
    ('"\\x41"', "invalid escape sequence in a string"),
    ('"\\u12G4"', "invalid \\u escape (expected four hex digits)"),
    ('"abc', "unterminated string"),
    ('{"a":1,"a":2}', "object has a duplicate key"),
    ('{"a":1,"\\u0061":2}', "object has a duplicate key"),  # compared after escapes
    ("[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1), "nested deeper"),
]


@pytest.mark.parametrize(("doc", "reason"), INVALID, ids=[d[:20] for d, _ in INVALID])
def test_invalid_json_is_refused_with_row_and_reason(doc: str, reason: str) -> None:
    err = refused(doc)
    assert err.field_path == "a.b"
    assert err.row == 1
    assert reason in err.reason
    with pytest.raises(JsonbReferenceError) as ref:
        encode_value(doc)
    assert reason_of(ref.value.code) == err.reason


#: accepted by pylance 14 (its parser's extended syntax) but not JSON: refused here
PYLANCE_EXTENSIONS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "NULL",
    "'abc'",
    "{'a':1}",
    "{a:1}",
    "[1,,2]",
    "[1,2,]",
    "+1",
    ".5",
    "5.",
    "00",
    "0x1F",
    '"\\u{0041}"',
    '"a\nb"',
    "\x0c1",
    "\\n[1]",
]


@pytest.mark.parametrize("doc", PYLANCE_EXTENSIONS)
def test_pylance_only_syntax_is_refused(doc: str) -> None:
    refused(doc)


def test_duplicate_key_error_names_the_later_key() -> None:
    err = refused('{"x": 1, "b": 2, "x": 3}')
    assert err.reason == "object has a duplicate key"
    assert '"x": 3' in err.excerpt


def test_first_invalid_row_is_reported_across_chunks_and_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(codec, "_MIN_BYTES_PER_UNIT", 64)
    docs = [f'{{"k": {i}}}' for i in range(3000)]
    docs[2500] = "{bad"
    docs[1700] = "[1,]"
    chunked = pa.chunked_array([pa.array(docs[:1000]), pa.array(docs[1000:])])
    with pytest.raises(InvalidJsonError) as info:
        encode_json(chunked, path="c", threads=4)
    assert (info.value.row, info.value.field_path) == (1700, "c")


def test_unsupported_input_types() -> None:
    with pytest.raises(UnsupportedInputTypeError):
        encode_json(pa.array([1, 2]), path="j")
    with pytest.raises(UnsupportedInputTypeError):
        encode_json(pa.array([b"{}"]), path="j")
    with pytest.raises(UnsupportedInputTypeError):
        decode_jsonb(pa.array(["{}"]), path="j")
    with pytest.raises(UnsupportedInputTypeError):
        validate_jsonb(pa.array([1]), path="j")


# ---- layouts, nulls, slices, chunks -----------------------------------------------------------
DOCS = ['{"a": [1, 2.5, "x"]}', None, "true", '"\\u00e9"', None, "[]"]


LAYOUTS = [pa.string(), pa.large_string(), pa.string_view()]
LAYOUTS += [pa.json_(pa.string()), pa.json_(pa.large_string()), pa.json_(pa.string_view())]


@pytest.mark.parametrize("typ", LAYOUTS, ids=str)
def test_every_accepted_input_layout(typ: pa.DataType) -> None:
    if isinstance(typ, pa.BaseExtensionType):
        arr = pa.ExtensionArray.from_storage(typ, pa.array(DOCS, typ.storage_type))
    else:
        arr = pa.array(DOCS, typ)
    out = encode_json(arr, path="j")
    assert out.type == pa.large_binary()
    assert out.null_count == 2
    assert out.to_pylist() == [None if d is None else encode_value(d) for d in DOCS]
    text = decode_jsonb(out, path="j")
    assert text.type == pa.string()
    assert text.to_pylist() == [None if d is None else render_value(encode_value(d)) for d in DOCS]


def test_sliced_arrays_keep_their_nulls() -> None:
    base = pa.array(["0", None, "[2]", "3", None, '{"5":5}', "6"] * 3)
    for off in range(0, 9):
        part = base.slice(off, 10)
        out = encode_json(part, path="j")
        assert out.to_pylist() == [None if d is None else encode_value(d) for d in part.to_pylist()]
        text = decode_jsonb(out.slice(1, 7), path="j")
        want = [None if d is None else render_value(encode_value(d)) for d in part.to_pylist()]
        assert text.to_pylist() == want[1:8]


def test_chunked_arrays_chunk_for_chunk() -> None:
    chunked = pa.chunked_array([pa.array(["1", None]), pa.array([], pa.string()), pa.array(["[]"])])
    out = encode_json(chunked, path="j")
    assert isinstance(out, pa.ChunkedArray)
    assert [len(c) for c in out.chunks] == [2, 0, 1]
    text = decode_jsonb(out, path="j")
    assert text.to_pylist() == ["1", None, "[]"]
    validate_jsonb(out, path="j")
    assert decode_jsonb(pa.chunked_array([], pa.large_binary()), path="j").type == pa.string()


def test_empty_and_all_null_arrays() -> None:
    assert encode_json(pa.array([], pa.string()), path="j").to_pylist() == []
    assert encode_json(pa.array([None, None], pa.string()), path="j").to_pylist() == [None, None]
    assert decode_jsonb(pa.array([None], pa.large_binary()), path="j").to_pylist() == [None]
    validate_jsonb(pa.array([None], pa.large_binary()), path="j")


def test_decode_accepts_binary_layouts() -> None:
    blob = enc('{"a": 1}')
    for typ in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert decode_jsonb(pa.array([blob], typ), path="j").to_pylist() == ['{"a":1}']


def test_text_too_large_for_utf8_is_large_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_MAX_UTF8_BYTES", 10)
    out = decode_jsonb(encode_json(pa.array(['"abcdefgh"', "[1]"]), path="j"), path="j")
    assert out.type == pa.large_string()
    assert out.to_pylist() == ['"abcdefgh"', "[1]"]
    small = decode_jsonb(encode_json(pa.array(["[1]"]), path="j"), path="j")
    assert small.type == pa.string()


def test_threads_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [json.dumps({"i": i, "s": "x" * (i % 50), "f": i / 7}) for i in range(5000)]
    docs[17] = None  # type: ignore[call-overload]
    arr = pa.array(docs)
    one = encode_json(arr, path="j", threads=1)
    monkeypatch.setattr(codec, "_MIN_BYTES_PER_UNIT", 1000)
    many = encode_json(arr, path="j", threads=3)
    assert many.equals(one)
    assert decode_jsonb(one, path="j", threads=3).equals(decode_jsonb(one, path="j", threads=1))


# ---- scratch and buffer growth, fallbacks -----------------------------------------------------
def test_growth_paths() -> None:
    docs = [
        "[" + ",".join(["1"] * 10_000) + "]",  # more values than the first scratch holds
        '"' + "\\n" * 70_000 + '"',  # a row longer than the first string scratch
        "[" * 200 + "]" * 200,  # deeper than the first render scratch
        json.dumps({f"k{i}": i for i in range(300)}),  # merge-sorted keys
        json.dumps("\u0001" * 10_000),  # renders 6x larger than stored
    ]
    out = encode_json(pa.array(docs), path="j")
    assert out.to_pylist() == [encode_value(d) for d in docs]
    assert decode_jsonb(out, path="j").to_pylist() == [render_value(encode_value(d)) for d in docs]
    validate_jsonb(out, path="j")


def test_nesting_limit_is_inclusive() -> None:
    deep = "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH
    assert enc(deep) == encode_value(deep)
    obj = '{"a":' * MAX_NESTING_DEPTH + "1" + "}" * MAX_NESTING_DEPTH
    assert dec(enc(obj)) == obj


def _midpoint_text(x: float) -> str:
    """The exact decimal halfway between x and the next double up: no 19-digit prefix decides
    its rounding, so the fast parser hands the document to the reference."""
    getcontext().prec = 1000
    mid = (Decimal(x) + Decimal(math.nextafter(x, math.inf))) / 2
    return format(mid, "f")


def test_undecidable_floats_fall_back_to_the_reference() -> None:
    hard = [_midpoint_text(1.0), _midpoint_text(123.456), "-" + _midpoint_text(1e-300)]
    docs = [f"[{h}, 1]" for h in hard] + ["[" + hard[0] + ", {]"]
    out = encode_json(pa.array(docs[:3]), path="j")
    assert out.to_pylist() == [encode_value(d) for d in docs[:3]]
    for h, blob in zip(hard, out.to_pylist(), strict=True):
        assert struct.unpack(">d", blob[13:21])[0] == float(h)  # round half to even
    with pytest.raises(InvalidJsonError) as info:
        encode_json(pa.array(docs), path="j")
    assert info.value.row == 3
    assert info.value.reason == "expected a double-quoted object key"


# ---- fast path == reference -------------------------------------------------------------------
_SAFE = [chr(c) for c in range(0x20, 0x7F) if chr(c) not in '\\"']
_ESCAPES = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001F"]
_ESCAPES += ["\\u00e9", "\\uFFFF", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\ud800\\u0041"]
_ESCAPES += ["\\ud800x", "\\ud800\\ud800\\udc00"]


def _string(r: random.Random) -> str:
    out = []
    for _ in range(r.randrange(0, 7)):
        k = r.random()
        if k < 0.55:
            out.append(r.choice(_SAFE))
        elif k < 0.75:
            out.append(r.choice(_ESCAPES))
        elif k < 0.9:
            out.append(r.choice("éß漢😀\u2028\x7f"))
        else:
            c = r.randrange(0x80, 0x110000)
            out.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "x")
    return '"' + "".join(out) + '"'


def _number(r: random.Random) -> str:
    k = r.random()
    if k < 0.3:
        return str(r.randrange(-(10 ** r.randrange(1, 21)), 10 ** r.randrange(1, 21)))
    if k < 0.55:
        return repr(r.uniform(-1e6, 1e6))
    if k < 0.7:
        return repr(r.random() * 10.0 ** r.randrange(-320, 308))
    if k < 0.85:
        e = r.choice(["e", "E", "e+", "e-"]) + str(r.randrange(0, 400))
        return f"{r.randrange(0, 100)}.{r.randrange(0, 10**6)}{e}"
    return r.choice(["0", "-0", "0.0", "-0.0", "1e400", "-1e400", "255", "-128", "65536"])


def _value(r: random.Random, depth: int = 0) -> str:
    ws = r.choice(["", "", " ", "\n\t", "\r "])
    k = r.random()
    if depth < 5 and k < 0.15:
        return "[" + ws + ",".join(_value(r, depth + 1) for _ in range(r.randrange(0, 5))) + "]"
    if depth < 5 and k < 0.3:
        keys = {_string(r) for _ in range(r.randrange(0, 6))}
        unique: dict[bytes, str] = {}
        for key in keys:
            unique.setdefault(encode_value(key)[8:], key)  # distinct after unescaping
        pairs = [f"{ws}{key}{ws}:{_value(r, depth + 1)}" for key in unique.values()]
        return "{" + ",".join(pairs) + ws + "}"
    if k < 0.55:
        return _string(r)
    if k < 0.85:
        return _number(r)
    return r.choice(["true", "false", "null"])


def _mutate(r: random.Random, doc: str) -> str:
    i = r.randrange(0, len(doc) + 1)
    m = r.choice(["", " ", "x", '"', "\\", ",", ":", "[", "]", "{", "}", "-", ".", "e", "\x01"])
    return doc[:i] + m + doc[i + r.randrange(0, 2) :]


def test_fast_path_matches_reference_on_random_documents() -> None:
    r = random.Random(20260614)
    docs = [_value(r) for _ in range(2000)]
    out = encode_json(pa.array(docs), path="j")
    refs = [encode_value(d) for d in docs]
    assert out.to_pylist() == refs
    assert decode_jsonb(out, path="j").to_pylist() == [render_value(b) for b in refs]
    validate_jsonb(out, path="j")


def test_fast_path_matches_reference_on_invalid_documents() -> None:
    r = random.Random(7)
    docs = [_value(r) for _ in range(300)]
    for _ in range(1500):
        doc = _mutate(r, r.choice(docs))
        try:
            want: object = encode_value(doc)
        except JsonbReferenceError as e:
            want = reason_of(e.code)
        try:
            got: object = enc(doc)
        except InvalidJsonError as e:
            got = e.reason
        assert got == want, doc


def _corrupt(r: random.Random, blob: bytes) -> bytes:
    b = bytearray(blob)
    k = r.random()
    if k < 0.5:
        b[r.randrange(len(b))] = r.randrange(256)
    elif k < 0.7:
        del b[r.randrange(len(b)) :]
    elif k < 0.85:
        b.append(r.randrange(256))
    else:
        b.insert(r.randrange(len(b)), r.randrange(256))
    return bytes(b)


def test_malformed_jsonb_renders_and_validates_like_the_reference() -> None:
    r = random.Random(3)
    blobs = [encode_value(_value(r)) for _ in range(300)]
    bad = [_corrupt(r, r.choice(blobs)) for _ in range(2000)] + [b"", b"\x00", b"junk"]
    texts = decode_jsonb(pa.array(bad, pa.large_binary()), path="j").to_pylist()
    assert texts == [render_value(b) for b in bad]
    for blob in bad:
        try:
            check_value(blob)
            want = None
        except JsonbReferenceError as e:
            want = reason_of(e.code)
        try:
            validate_jsonb(pa.array([None, blob], pa.large_binary()), path="x")
            got = None
        except InvalidJsonError as e:
            assert (e.row, e.field_path) == (1, "x")
            got = e.reason
        assert got == want, blob.hex()


# ---- validate_jsonb ---------------------------------------------------------------------------
def _hex(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


BAD_JSONB = [
    (b"", "empty JSONB value"),
    (b"junk", "invalid JSONB container header"),
    (_hex("8000 00"), "truncated JSONB value"),
    (_hex("80000001 20000002 50"), "truncated JSONB value"),
    (_hex("20000000 20000002 5001 99"), "trailing bytes after the JSONB value"),
    (_hex("20000001 20000002 5001"), "invalid JSONB container header"),  # scalar with a count
    (_hex("80000001 50000008 20000000 00000000"), "invalid JSONB container header"),  # nested
    (_hex("40000002 10000001 10000001 20000002 20000002 62 61 5001 5002"), "not sorted"),
    (_hex("40000002 10000001 10000001 20000002 20000002 61 61 5001 5002"), "not sorted"),
    (_hex("40000001 20000002 20000002 5001 5001"), "JSONB object key is not a string"),
    (_hex("20000000 2000000a 70 0000000000000001 00"), "invalid JSONB number encoding"),
    (_hex("20000000 20000004 50 000001"), "invalid JSONB number encoding"),
    (_hex("20000000 20000008 60 00000000000000"), "invalid JSONB number encoding"),
    (_hex("20000000 60000002 0000"), "invalid JSONB entry type"),  # an extension value
    (_hex("20000000 a0000002 5001"), "invalid JSONB entry type"),  # the offset flag
    (_hex("20000000 10000002 c328"), "JSONB string is not valid UTF-8"),
    (_hex("20000000 00000001 00"), "null/true/false entry with a non-zero length"),
]


@pytest.mark.parametrize(("blob", "reason"), BAD_JSONB, ids=[r for _, r in BAD_JSONB])
def test_validate_refuses_malformed_jsonb(blob: bytes, reason: str) -> None:
    first = pa.array([enc("1")], pa.large_binary())
    arr = pa.chunked_array([first, pa.array([None, blob], pa.large_binary())])
    with pytest.raises(InvalidJsonError) as info:
        validate_jsonb(arr, path="p")
    assert (info.value.field_path, info.value.row) == ("p", 2)
    assert reason in info.value.reason


def test_validate_accepts_non_minimal_integers_and_refuses_too_deep() -> None:
    validate_jsonb(pa.array([_hex("20000000 20000009 50 0000000000000001")]), path="j")
    nested = _hex("80000000")
    for _ in range(MAX_NESTING_DEPTH - 1):
        nested = struct.pack(">II", 0x80000001, 0x50000000 | len(nested)) + nested
    validate_jsonb(pa.array([nested], pa.large_binary()), path="j")
    deeper = struct.pack(">II", 0x80000001, 0x50000000 | len(nested)) + nested
    with pytest.raises(InvalidJsonError, match="nested deeper"):
        validate_jsonb(pa.array([deeper], pa.large_binary()), path="j")
    assert dec(deeper) == "[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1)


# ---- decoding what pylance tolerates ----------------------------------------------------------
def test_decode_renders_unsorted_keys_in_stored_order_and_ignores_trailing_bytes() -> None:
    unsorted = _hex("40000002 10000001 10000001 20000002 20000002 62 61 5001 5002")
    assert dec(unsorted) == '{"b":1,"a":2}'
    assert dec(_hex("20000000 20000002 5001 99")) == "1"
    assert dec(_hex("20000000 20000009 50 0000000000000001")) == "1"
    assert dec(_hex("80000001 5000000a 20000000 20000002 5001")) == "[1]"  # nested scalar


def test_decode_falls_back_to_the_raw_bytes() -> None:
    assert dec(b"") == "null"
    assert dec(b"hello world") == "hello world"
    bad_utf8 = _hex("20000000 10000002 c328")  # pylance 14 panics on this one
    assert dec(bad_utf8) == bad_utf8.decode("utf-8", "replace")


# ---- the float kernels ------------------------------------------------------------------------
def test_decimal_parsing_is_correctly_rounded() -> None:
    from lance_semantic.codecs import _jsonb_kernels as k

    r = random.Random(99)
    toks = []
    for _ in range(40_000):
        x = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        if math.isfinite(x):
            toks.append(repr(x))
        toks.append(f"{r.randrange(1, 10 ** r.randrange(1, 25))}e{r.randrange(-360, 330)}")
        toks.append(f"{r.randrange(10**6)}.{r.randrange(10 ** r.randrange(1, 18))}")
    toks += ["0.0", "1e400", "1e-400", "2.4703282292062328e-324", "1.7976931348623158e308"]
    enc_toks = [t.encode() for t in toks]
    offsets = np.zeros(len(toks) + 1, np.int64)
    offsets[1:] = np.cumsum([len(t) for t in enc_toks])
    data = np.frombuffer(b"".join(enc_toks), np.uint8)
    bits = np.zeros(len(toks), np.uint64)
    ok = np.zeros(len(toks), np.bool_)
    k.parse_decimals(offsets, data, bits, ok)
    assert ok.mean() > 0.99
    for t, b, decided in zip(toks, bits.tolist(), ok.tolist(), strict=True):
        if decided:
            assert b == struct.unpack("<Q", struct.pack("<d", float(t)))[0], t


def test_float_rendering_is_shortest_round_trip() -> None:
    r = random.Random(5)
    vals = []
    while len(vals) < 50_000:
        x = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        if math.isfinite(x):
            vals.append(x)
        vals.append(round(r.uniform(-1e4, 1e4), r.randrange(0, 8)))
    vals += [2.0**e for e in range(-1074, 1024)]
    blobs = [struct.pack(">IIB", 0x20000000, 0x20000009, 0x60) + struct.pack(">d", v) for v in vals]
    got = decode_jsonb(pa.array(blobs, pa.large_binary()), path="j").to_pylist()
    assert got == [format_float(v) for v in vals]
