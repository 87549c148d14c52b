"""The posting decoders on blocks encoded here (BitPacker4x lanes, varint tails), and the
query forms and their combination rules (MATCH / AND / OR, multi-match, boolean, boost) on
hand-made hits. Pure: no pylance (the interop suite holds both to pylance)."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

from lance_semantic.errors import NotSupportedYetError
from lance_semantic.fts import (
    BooleanQuery,
    BoostQuery,
    FullTextOperator,
    MatchQuery,
    MultiMatchQuery,
    Occur,
    PhraseQuery,
    Searcher,
    decode_positions,
    decode_postings,
    evaluate,
    full_text_query,
)
from lance_semantic.fts.postings import unpack4x, varints


def _pack4x(values: np.ndarray, width: int) -> bytes:
    """128 values as BitPacker4x packs them: lane ``i % 4``, LSB first, word ``w`` of lane
    ``j`` stored as u32 number ``4 w + j``."""
    words = np.zeros((width, 4), np.uint64)
    if not width:
        return b""
    for i, v in enumerate(values.tolist()):
        lane, k = i % 4, i // 4
        bit = k * width
        words[bit // 32, lane] |= np.uint64((v << (bit % 32)) & 0xFFFFFFFF)
        if bit % 32 + width > 32:
            words[bit // 32 + 1, lane] |= np.uint64(v >> (32 - bit % 32))
    return words.astype("<u4").tobytes()


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


@pytest.mark.parametrize("width", [0, 1, 3, 7, 13, 31, 32])
def test_unpack4x_inverts_the_lane_layout(width: int) -> None:
    rng = np.random.default_rng(width)
    values = (
        rng.integers(0, 1 << width, 128, dtype=np.uint64) if width else np.zeros(128, np.uint64)
    )
    data = np.frombuffer(b"\x00" * 5 + _pack4x(values, width), np.uint8)
    got = unpack4x(data, np.array([5]), width)
    assert got[0].tolist() == values.tolist()


def test_varints() -> None:
    raw = b"".join(_varint(v) for v in (0, 127, 128, 300, 2**32 - 1))
    values, end = varints(np.frombuffer(raw, np.uint8), 0, 5)
    assert values.tolist() == [0, 127, 128, 300, 2**32 - 1] and end == len(raw)


def _posting_list(docs: list[int], freqs: list[int]) -> pa.Array:
    """A ``_posting`` entry as pylance writes one: full blocks packed, the tail as varints."""
    blocks = []
    for lo in range(0, len(docs), 128):
        d, f = docs[lo : lo + 128], freqs[lo : lo + 128]
        head = struct.pack("<f", 1.0)
        if len(d) == 128:
            deltas = np.diff(np.asarray([d[0], *d], np.uint64))
            dw = max(int(deltas.max()).bit_length(), 0)
            fw = max(f).bit_length()
            body = struct.pack("<I", d[0]) + bytes([dw]) + _pack4x(deltas, dw)
            body += bytes([fw]) + _pack4x(np.asarray(f, np.uint64), fw)
        else:
            gaps = [d[0]] + [b - a for a, b in zip(d, d[1:], strict=False)]
            body = b"".join(_varint(v) for v in gaps + f)
        blocks.append(head + body)
    return pa.array(blocks, pa.large_binary())


@pytest.mark.parametrize("n", [1, 127, 128, 129, 300, 512])
def test_decode_postings(n: int) -> None:
    rng = np.random.default_rng(n)
    docs = np.cumsum(rng.integers(1, 40, n)).tolist()
    freqs = rng.integers(1, 9, n).tolist()
    got_docs, got_freqs = decode_postings(_posting_list(docs, freqs), n)
    assert got_docs.tolist() == docs and got_freqs.tolist() == freqs
    with pytest.raises(ValueError):
        decode_postings(_posting_list(docs, freqs), n + 128)


def test_decode_positions() -> None:
    rng = np.random.default_rng(2)
    freqs = rng.integers(1, 4, 200)  # two posting blocks
    per_doc = [np.sort(rng.choice(50, int(f), replace=False)) for f in freqs]
    stream, offsets = b"", []
    for lo in range(0, 200, 128):
        offsets.append(len(stream))
        deltas = np.concatenate([np.diff(p, prepend=0) for p in per_doc[lo : lo + 128]])
        for g in range(0, len(deltas) - len(deltas) % 128, 128):
            chunk = deltas[g : g + 128].astype(np.uint64)
            w = int(chunk.max()).bit_length()
            stream += bytes([w]) + _pack4x(chunk, w)
        stream += b"".join(_varint(int(v)) for v in deltas[len(deltas) - len(deltas) % 128 :])
    positions, starts = decode_positions(stream, np.asarray(offsets), freqs.astype(np.uint32))
    assert positions.tolist() == np.concatenate(per_doc).tolist()
    assert starts.tolist() == [0, *np.cumsum(freqs).tolist()]


# ---- query forms -------------------------------------------------------------------------
def test_query_forms() -> None:
    assert full_text_query("a b", ["t", "u"]) == MultiMatchQuery("a b", ["t", "u"])
    assert full_text_query({"query": "a", "columns": ["u"]}, ["t"]) == MultiMatchQuery("a", ["u"])
    assert full_text_query('"a b"', ["t"]) == PhraseQuery("a b", "t")
    q = MatchQuery("a", "t", boost=2.0)
    assert full_text_query(q, []) is q
    with pytest.raises(ValueError, match="the column must be specified"):
        full_text_query('"a b"', ["t", "u"])
    with pytest.raises(ValueError, match="no column has an INVERTED index"):
        full_text_query("a", [])
    with pytest.raises(TypeError, match="'match'"):
        full_text_query({"match": {"query": "a"}}, ["t"])
    with pytest.raises(TypeError, match="'query'"):
        full_text_query({"columns": ["t"]}, ["t"])
    with pytest.raises(TypeError):
        full_text_query(3, ["t"])
    with pytest.raises(ValueError, match="2 boosts for 1 columns"):
        MultiMatchQuery("a", ["t"], boosts=[1.0, 2.0])
    with pytest.raises(TypeError, match="Occur"):
        BooleanQuery([("MUST", q)])  # type: ignore[list-item]


def _searcher() -> Searcher:
    """Column ``t`` holds token ``x`` in rows 1, 2, 3 (score 1 each) and ``y`` in rows 2,
    4 (score 2); column ``u`` holds ``x`` in rows 3, 5 (score 5)."""
    table = {
        ("t", "x"): ([1, 2, 3], [1.0, 1.0, 1.0]),
        ("t", "y"): ([2, 4], [2.0, 2.0]),
        ("u", "x"): ([3, 5], [5.0, 5.0]),
    }

    def tokens(column: str, text: str) -> tuple[list[str], list[int]]:
        words = text.split()
        return words, list(range(len(words)))

    def match(column: str, toks: list[str], every: bool) -> tuple[np.ndarray, np.ndarray]:
        scores: dict[int, float] = {}
        held: dict[int, int] = {}
        for tok in toks:
            rows, sc = table.get((column, tok), ([], []))
            for r, s in zip(rows, sc, strict=True):
                scores[r] = scores.get(r, 0.0) + s
                held[r] = held.get(r, 0) + 1
        keep = sorted(r for r in scores if not every or held[r] == len(toks))
        return np.asarray(keep, np.uint64), np.asarray([scores[r] for r in keep], np.float32)

    def phrase(
        column: str, toks: list[str], pos: list[int], slop: int
    ) -> tuple[np.ndarray, np.ndarray]:
        return match(column, toks, True)

    return Searcher(tokens, match, phrase)


def _as_dict(hits: tuple[np.ndarray, np.ndarray]) -> dict[int, float]:
    return dict(zip(hits[0].tolist(), hits[1].tolist(), strict=True))


def test_combinations() -> None:
    s = _searcher()
    assert _as_dict(evaluate(MatchQuery("x y", "t"), s)) == {1: 1, 2: 3, 3: 1, 4: 2}
    and_ = MatchQuery("x y", "t", operator=FullTextOperator.AND, boost=2.0)
    assert _as_dict(evaluate(and_, s)) == {2: 6}
    multi = MultiMatchQuery("x", ["t", "u"], boosts=[1.0, 0.5])
    assert _as_dict(evaluate(multi, s)) == {1: 1, 2: 1, 3: 2.5, 5: 2.5}  # the best column's
    boolean = BooleanQuery(
        [
            (Occur.MUST, MatchQuery("x", "t")),
            (Occur.SHOULD, MatchQuery("y", "t")),
            (Occur.MUST_NOT, MatchQuery("x", "u")),
        ]
    )
    assert _as_dict(evaluate(boolean, s)) == {1: 1, 2: 3}
    should = BooleanQuery(
        [(Occur.SHOULD, MatchQuery("y", "t")), (Occur.SHOULD, MatchQuery("x", "u"))]
    )
    assert _as_dict(evaluate(should, s)) == {2: 2, 3: 5, 4: 2, 5: 5}
    boost = BoostQuery(MatchQuery("x", "t"), MatchQuery("y", "t"), negative_boost=0.25)
    assert _as_dict(evaluate(boost, s)) == {1: 1, 2: 0.5, 3: 1}
    with pytest.raises(NotSupportedYetError, match="fuzziness"):
        evaluate(MatchQuery("x", "t", fuzziness=None), s)
