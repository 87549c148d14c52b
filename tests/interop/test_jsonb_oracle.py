"""The JSON codec against pylance 14.0.2 as the oracle (facts sheet §9).

pylance writes ``pa.json_()`` columns through its own parser; the data file then holds the
JSONB (read raw with ``LanceFileReader``) and ``to_table()`` renders it back as text. For a
corpus of tricky documents our :func:`encode_json` must produce the same bytes and our
:func:`decode_jsonb` the same text; invalid documents must be refused by both; and JSONB that
only pylance can produce (its extended syntax: NaN, Infinity, ``[1,,2]``...) or that a writer
stored pre-encoded must render as pylance renders it.
"""

from __future__ import annotations

import glob
import json
import math
import os
import random
import struct
from decimal import Decimal, getcontext
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

from lance_semantic.codecs import MAX_NESTING_DEPTH, decode_jsonb, encode_json, validate_jsonb
from lance_semantic.errors import InvalidJsonError

pytestmark = pytest.mark.interop

os.environ.setdefault("LANCE_LOG", "error")
JSON_META = {"ARROW:extension:name": "lance.json", "ARROW:extension:metadata": ""}


def pylance_roundtrip(docs: list[str | None], tmp: Path) -> tuple[list[bytes | None], list[str]]:
    """pylance's JSONB bytes (from the data files) and text (from ``to_table``) of ``docs``."""
    uri = str(tmp / f"t{len(list(tmp.iterdir()))}.lance")
    lance.write_dataset(pa.table({"j": pa.array(docs, pa.json_())}), uri)
    raw: list[bytes | None] = []
    for f in sorted(glob.glob(os.path.join(uri, "data", "*.lance"))):
        raw.extend(LanceFileReader(f).read_all().to_table().column("j").to_pylist())
    text = lance.dataset(uri).to_table().column("j")
    return raw, [str(v) if v is not None else v for v in text.to_pylist()]  # type: ignore[misc]


def pylance_refuses(doc: str, tmp: Path) -> bool:
    uri = str(tmp / f"r{len(list(tmp.iterdir()))}.lance")
    try:
        lance.write_dataset(pa.table({"j": pa.array([doc], pa.json_())}), uri)
    except OSError as e:
        assert "Failed to encode JSON" in str(e)
        return True
    return False


def pylance_renders(blobs: list[bytes | None], tmp: Path) -> list[str | None]:
    """The text pylance renders for pre-encoded lance.json values."""
    field = pa.field("j", pa.large_binary(), metadata=JSON_META)
    table = pa.table([pa.array(blobs, pa.large_binary())], schema=pa.schema([field]))
    uri = str(tmp / f"p{len(list(tmp.iterdir()))}.lance")
    lance.write_dataset(table, uri)
    return lance.dataset(uri).to_table().column("j").to_pylist()


def ours(docs: list[str | None]) -> tuple[list[bytes | None], list[str | None]]:
    enc = encode_json(pa.array(docs, pa.string()), path="j")
    return enc.to_pylist(), decode_jsonb(enc, path="j").to_pylist()


def _midpoint(x: float) -> str:
    getcontext().prec = 1000
    return format((Decimal(x) + Decimal(math.nextafter(x, math.inf))) / 2, "f")


CORPUS: list[str | None] = [
    # scalars and empties
    "null", "true", "false", '""', "[]", "{}", "[[]]", "[{}]", '{"":{}}', None,
    ' \t\n\r[ 1 , 2 ]\r\n ', '{ "a" : [ ] , "b" : { } }',
    # integers: every width and boundary
    "0", "-0", "1", "-1", "127", "128", "-128", "-129", "255", "256", "32767", "32768",
    "-32768", "-32769", "65535", "65536", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
    "18446744073709551616", "123456789012345678901234567890", "-" + "9" * 38, "1" + "0" * 80,
    # floats: formatting boundaries, extremes, rounding
    "0.0", "-0.0", "1.0", "1e0", "1E+2", "1e-0", "100.0", "1e10", "1e15", "1e16", "1e21",
    "1e22", "1e23", "9999999999999998", "9999999999999998.0", "123456789012345.6",
    "1234567890123456.7", "0.0001", "0.00001", "0.000015", "1.5e-5", "1.25e-5",
    "0.0000099999", "1e-6", "9.9e-6", "0.1", "0.3", "12.5", "-12.5", "3.141592653589793",
    "1.7976931348623157e308", "1.7976931348623159e308", "2.2250738585072014e-308",
    "2.2250738585072011e-308", "4.9e-324", "5e-324", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "1e-320", "1E400", "-1E400", "1e-400", "-1e-400",
    "0." + "0" * 80 + "1", "1." + "0" * 40, "123456789.123456789123456789",
    _midpoint(1.0), _midpoint(0.1), "-" + _midpoint(1e300),
    # strings: escapes, unicode, surrogates
    '"abc"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u0000\\u0001\\u001f\\u001F\\u0020"',
    '"\\u007f\\u0080\\u07ff\\u0800\\uffff"', '"\\u00e9\\u00E9"', '"é漢字😀"',
    '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"', '"\\ud800"', '"\\udc00"', '"\\uD800"',
    '"\\ud800x"', '"\\ud800\\u0041"', '"\\ud800\\ud800"', '"\\ud800\\ud800\\udc00"',
    '"\\ud800\\""', '"\\udbff\\udfff"', '"a/b\\/c"', '"\x7f\u2028\u2029"', '"\u00a0"',
    '"' + "x" * 5000 + '"',
    # objects: key order, escaped keys, unicode keys
    '{"b":1,"a":2}', '{"é":1,"e":2,"f":3,"Z":4,"_":5,"10":6,"9":7,"aaa":8,"ab":9,"":10}',
    '{"\\u0061b":1,"aa":2}', '{"\\ud800":1,"\\\\ud801":2}', '{"😀":1,"\uffff":2,"\u00ff":3}',
    '{"z":{"y":[1,{"x":null}]},"a":[true,false]}', json.dumps({f"k{i}": i for i in range(40)}),
    # nesting
    "[" * 100 + "]" * 100, '{"a":' * 100 + "1" + "}" * 100,
    "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH,
    json.dumps([[1, [2, [3, {"4": [5.5, None, "6"]}]]], {"k": [True, {"x": {}}]}]),
]  # fmt: skip


def test_corpus_bytes_and_text_match_pylance(tmp_path: Path) -> None:
    raw, text = pylance_roundtrip(CORPUS, tmp_path)
    mine, mine_text = ours(CORPUS)
    for doc, want, got in zip(CORPUS, raw, mine, strict=True):
        assert got == want, doc
    assert mine_text == text


def test_random_numbers_match_pylance(tmp_path: Path) -> None:
    r = random.Random(1405)
    docs: list[str | None] = []
    while len(docs) < 6000:
        x = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        if math.isfinite(x):
            docs.append(repr(x))
        docs.append(repr(round(r.uniform(-1e5, 1e5), r.randrange(0, 9))))
        docs.append(f"{r.randrange(1, 10 ** r.randrange(1, 25))}e{r.randrange(-340, 320)}")
        docs.append(str(r.randrange(-(2**65), 2**65)))
    raw, text = pylance_roundtrip(docs, tmp_path)
    assert ours(docs) == (raw, text)


# ---- refusals ---------------------------------------------------------------------------------
BOTH_REFUSE = [
    "[1,2", "[1 2]", '{"a" 1}', '{"a":1,}', "{,}", "[1]x", "[1] 2", "1.5.3", "1e", "1e+", "-",
    '"\\x41"', '"\\a"', '"\\u12"', '"\\uZZZZ"', '"abc', '{"a":1,"a":2}', '{"a":1,"\\u0061":2}',
    '{"x":{"k":1,"k":2}}', '"\\ud800\\uZZZZ"', "-inf", '"\\u{41}"', "\u00a01", "\x0b1",
]  # fmt: skip


@pytest.mark.parametrize("doc", BOTH_REFUSE)
def test_invalid_documents_are_refused_by_both(doc: str, tmp_path: Path) -> None:
    assert pylance_refuses(doc, tmp_path)
    with pytest.raises(InvalidJsonError) as info:
        encode_json(pa.array(["{}", None, doc]), path="doc")
    assert (info.value.field_path, info.value.row) == ("doc", 2)


#: pylance 14's parser runs in databend's "extended" mode: it accepts these, which are not
#: JSON (RFC 8259). The contract says invalid JSON fails the write, so we refuse them.
PYLANCE_ONLY = [
    "", "   ", "NaN", "nan", "Infinity", "-Infinity", "NULL", "True", "FALSE", "'abc'",
    "{a:1}", "{'a':1}", "[1,,2]", "[1,2,]", "[,]", "+1", ".5", "5.", "01", "00", "-01",
    "0x1F", "-0x10", "0x1.8", '"\\u{0041}"', '"a\nb"', '"\x01"', "\x0c1", "\\n[1]",
    "[1]\\n", "\\x0C1",
]  # fmt: skip


@pytest.mark.parametrize("doc", PYLANCE_ONLY)
def test_pylance_extended_syntax_is_refused_here(doc: str, tmp_path: Path) -> None:
    assert not pylance_refuses(doc, tmp_path)
    with pytest.raises(InvalidJsonError):
        encode_json(pa.array([doc]), path="doc")


def test_deep_nesting_limit(tmp_path: Path) -> None:
    # pylance 14 accepts deeper documents until its recursive parser overflows the stack
    # (SIGSEGV between 4,000 and 5,000 levels); we stop at MAX_NESTING_DEPTH
    deeper = "[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1)
    assert not pylance_refuses(deeper, tmp_path)
    with pytest.raises(InvalidJsonError, match="nested deeper"):
        encode_json(pa.array([deeper]), path="doc")


# ---- rendering what pylance wrote or stored ---------------------------------------------------
def test_jsonb_from_pylance_extended_syntax_renders_like_pylance(tmp_path: Path) -> None:
    docs: list[str | None] = [
        "NaN", "Infinity", "-Infinity", '{"x":NaN,"y":[Infinity,-Infinity]}', "[1,,2]", "",
        "{a:'b'}", "0x1F", "-0x10", "0x1.8", '"a\nb\x01"', "+1", ".5",
    ]  # fmt: skip
    raw, text = pylance_roundtrip(docs, tmp_path)
    assert decode_jsonb(pa.array(raw, pa.large_binary()), path="j").to_pylist() == text
    validate_jsonb(pa.array(raw, pa.large_binary()), path="j")  # well-formed JSONB, all


def _h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


#: pre-encoded values pylance stores unchecked and renders without crashing
STORED = [
    _h("40000002 10000001 10000001 20000002 20000002 62 61 5001 5002"),  # unsorted keys
    _h("40000002 10000001 10000001 20000002 20000002 61 61 5001 5002"),  # duplicate keys
    _h("20000000 20000002 5001 99"),  # trailing bytes
    _h("20000000 20000009 50 0000000000000001"),  # a non-minimal integer
    _h("20000000 20000002 0005"),  # zero tag with extra bytes
    _h("20000002 20000002 5001"),  # a scalar header with a count
    _h("20000000 a0000002 5001"),  # the offset flag
    _h("80000001 5000000a 20000000 20000002 5001"),  # a nested scalar container
    _h("80000001 50000008 80000000 ffff ffff"),  # trailing bytes inside a container
    _h("2000000050000004 80000000"),  # a container JEntry in a scalar: text fallback
    b"hello world",  # not JSONB: text fallback
    b"",  # empty: null
    None,
]


def test_stored_jsonb_renders_like_pylance(tmp_path: Path) -> None:
    want = pylance_renders(STORED, tmp_path)
    assert decode_jsonb(pa.array(STORED, pa.large_binary()), path="j").to_pylist() == want


def test_pylance_reads_our_jsonb(tmp_path: Path) -> None:
    docs = [d for d in CORPUS if d is not None]
    enc = encode_json(pa.array(docs), path="j")
    assert pylance_renders(enc.to_pylist(), tmp_path) == decode_jsonb(enc, path="j").to_pylist()
