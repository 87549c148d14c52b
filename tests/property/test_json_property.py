"""Properties of the JSON codec (``codecs/json.py``) on random documents (STYLE.md §(c)
Tests/Properties: "JSON text -> JSONB -> text is json.loads-equal").

* With pylance 14 as the oracle (one pylance write per batch of documents): our JSONB bytes
  equal pylance's, our text equals pylance's.
* Without pylance: the text round trip is ``json.loads``-equal to the input, modulo the
  normalisation JSONB implies (integers outside [-2**63, 2**64) become floats, ±Inf becomes
  null); the fast path equals the pure-Python reference; an invalid document is refused with
  its row named.
"""

from __future__ import annotations

import glob
import json
import math
import os
import tempfile
from typing import Any

import lance
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.file import LanceFileReader

from lance_semantic.codecs import decode_jsonb, encode_json
from lance_semantic.codecs.json_reference import encode_value, render_value
from lance_semantic.errors import InvalidJsonError

os.environ.setdefault("LANCE_LOG", "error")

EXAMPLES = int(os.environ.get("LS_PROP_EXAMPLES", "40"))
FAST = settings(
    max_examples=EXAMPLES * 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ORACLE = settings(FAST, max_examples=max(5, EXAMPLES // 2))

# ---- strategies -------------------------------------------------------------------------------
NUMBER_TEXT = st.from_regex(r"\A-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?\Z")
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A JSON document: a dumped value in a random style, or a bare number literal."""
    if draw(st.integers(0, 5)) == 0:
        return draw(NUMBER_TEXT)
    value = draw(values)
    indent = draw(st.sampled_from([None, None, 0, 2, "\t"]))
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=indent, separators=separators)
    return (
        draw(st.sampled_from(["", " ", "\n", "\r\n\t"])) + text + draw(st.sampled_from(["", " \n"]))
    )


def normalise(v: Any) -> Any:
    """What survives JSONB: big integers become floats, ±Inf becomes null."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**64 else float(v)
    if isinstance(v, float):
        return None if math.isinf(v) else v
    if isinstance(v, list):
        return [normalise(x) for x in v]
    return {k: normalise(x) for k, x in v.items()}


def pylance_roundtrip(docs: list[str]) -> tuple[list[bytes], list[str]]:
    with tempfile.TemporaryDirectory(prefix="ls-json-prop-") as d:
        uri = os.path.join(d, "t.lance")
        lance.write_dataset(pa.table({"j": pa.array(docs, pa.json_())}), uri)
        raw: list[bytes] = []
        for f in sorted(glob.glob(os.path.join(uri, "data", "*.lance"))):
            raw.extend(LanceFileReader(f).read_all().to_table().column("j").to_pylist())
        return raw, lance.dataset(uri).to_table().column("j").to_pylist()


# ---- properties -------------------------------------------------------------------------------
@pytest.mark.interop
@ORACLE
@given(st.lists(documents(), min_size=1, max_size=60))
def test_bytes_and_text_equal_pylance(docs: list[str]) -> None:
    raw, text = pylance_roundtrip(docs)
    enc = encode_json(pa.array(docs), path="j")
    assert enc.to_pylist() == raw
    assert decode_jsonb(enc, path="j").to_pylist() == text


@FAST
@given(st.lists(documents(), min_size=1, max_size=30))
def test_text_round_trip_is_json_equal(docs: list[str]) -> None:
    text = decode_jsonb(encode_json(pa.array(docs), path="j"), path="j").to_pylist()
    for doc, out in zip(docs, text, strict=True):
        assert json.loads(out) == normalise(json.loads(doc))


@FAST
@given(st.lists(documents(), min_size=1, max_size=30))
def test_fast_path_equals_reference(docs: list[str]) -> None:
    enc = encode_json(pa.array(docs), path="j").to_pylist()
    assert enc == [encode_value(d) for d in docs]
    assert decode_jsonb(pa.array(enc, pa.large_binary()), path="j").to_pylist() == [
        render_value(b) for b in enc
    ]


@FAST
@given(
    st.lists(documents(), min_size=1, max_size=20),
    st.data(),
    st.sampled_from(["x", ",", "]", "}", ":", '"', "\x01", "'"]),
)
def test_invalid_document_is_refused_with_its_row(
    docs: list[str], data: st.DataObject, junk: str
) -> None:
    row = data.draw(st.integers(0, len(docs) - 1))
    bad = list(docs)
    bad[row] = bad[row] + junk if data.draw(st.booleans()) else junk + bad[row]
    with pytest.raises(InvalidJsonError) as info:
        encode_json(pa.array(bad), path="a.j")
    assert (info.value.field_path, info.value.row) == ("a.j", row)
