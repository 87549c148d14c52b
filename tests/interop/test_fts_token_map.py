"""The FST token map of pylance's INVERTED indices, read by :class:`TokenMap`: for indices
pylance builds over varied corpora (ASCII words, unicode, numbers, one token, 100k tokens),
iterating the map gives exactly the corpus's token set in key order with the ids
``0..n-1`` each once, and ``get``, ``prefix`` and ``range`` agree with it.

The corpora are whitespace-separated words indexed with pylance's ``whitespace`` tokenizer
and every filter that changes a token off, so the expected token set is the set of words.
"""

from __future__ import annotations

import random
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

from lance_semantic.errors import CorruptTableError
from lance_semantic.fts import TokenMap

pytestmark = pytest.mark.interop

PLAIN = dict(
    base_tokenizer="whitespace",
    lower_case=False,
    stem=False,
    remove_stop_words=False,
    ascii_folding=False,
)


def _index_files(tmp_path: Path, docs: list[str], **params: object) -> Path:
    uri = str(tmp_path / "t.lance")
    ds = lance.write_dataset(pa.table({"text": pa.array(docs, pa.string())}), uri)
    ds.create_scalar_index("text", "INVERTED", **params)
    (files,) = (tmp_path / "t.lance" / "_indices").iterdir()
    return files


def _token_table(tmp_path: Path, docs: list[str], **params: object) -> pa.Table:
    files = _index_files(tmp_path, docs, **params)
    return LanceFileReader(str(files / "part_0_tokens.lance")).read_all().to_table()


def _words(rng: random.Random, alphabet: str, n: int, lo: int = 1, hi: int = 12) -> set[str]:
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi))))
    return out


def _docs(words: set[str], rng: random.Random, per_doc: int = 20) -> list[str]:
    ws = sorted(words)
    rng.shuffle(ws)
    return [" ".join(ws[i : i + per_doc]) for i in range(0, len(ws), per_doc)]


_R = random.Random(31)
CORPORA: dict[str, set[str]] = {
    "one token": {"hello"},
    "ascii words": _words(_R, "abcdefghijklmnopqrstuvwxyz", 500),
    "mixed case and punctuation": _words(_R, "aAbBzZ09.,-_'!?@#/", 800, 1, 8),
    "numbers": {str(_R.randint(0, 10**9)) for _ in range(2000)} | {str(i) for i in range(300)},
    "unicode": _words(
        _R, "éèçßñøåæœ" + "αβγδεζ" + "абвгдеж" + "東京都日本語" + "😀🚀👍🏽" + "ab", 3000
    ),
    "shared suffixes": {
        p + s for p in ("un", "re", "pre", "", "over") for s in _words(_R, "abc", 60)
    },
    "prefixes of each other": {"a" * i for i in range(1, 39)} | {"ab" * i for i in range(1, 19)},
    # every printable ASCII byte after one prefix: nodes of more than 32 transitions
    "wide nodes": {f"x{chr(c)}" for c in range(33, 127)} | {chr(c) for c in range(33, 127)},
    "100k tokens": _words(_R, "abcdefghijklmnopqrstuvwxyz0123456789", 100_000, 2, 14),
}


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_token_map_is_the_token_set(tmp_path: Path, name: str) -> None:
    words = CORPORA[name]
    table = _token_table(tmp_path, _docs(words, random.Random(7)), **PLAIN)
    tokens = TokenMap.from_table(table)

    items = list(tokens.items())
    keys = [k for k, _ in items]
    assert keys == sorted(words, key=lambda w: w.encode("utf-8"))
    assert sorted(i for _, i in items) == list(range(len(words)))
    assert len(tokens) == len(words) == table.column("_token_next_id")[0].as_py()
    assert all(tokens.get(k) == i for k, i in items[:: max(1, len(items) // 5000)])
    assert all(k in tokens and tokens[k] == tokens.get(k) for k in keys[:100])

    # lookups of tokens the map does not hold: extensions, cut-offs, other bytes
    absent = {k + "\x01" for k in keys[:200]} | {k[:-1] + "\x7f" for k in keys[:200]}
    absent |= {"", "zzzzzzzzzzzzzzzz", "\U0010ffff"}
    absent -= words
    assert all(tokens.get(k) is None for k in absent)


@pytest.mark.parametrize("name", ["unicode", "shared suffixes", "prefixes of each other"])
def test_prefix_and_range_agree_with_the_token_set(tmp_path: Path, name: str) -> None:
    words = sorted(CORPORA[name], key=lambda w: w.encode("utf-8"))
    tokens = TokenMap.from_table(
        _token_table(tmp_path, _docs(set(words), random.Random(3)), **PLAIN)
    )
    for p in ["a", "ab", "un", "re", "é", "東", "😀", "q", "aaaa", ""]:
        assert [k for k, _ in tokens.prefix(p)] == [w for w in words if w.startswith(p)]
    cuts = [None, "", "a", "ab", "b", "re", "ü", "ж", "東京", "\U0010ffff"]
    for lo in cuts:
        for hi in cuts:
            lo_b = b"" if lo is None else lo.encode()
            want = [
                w for w in words if w.encode() >= lo_b and (hi is None or w.encode() < hi.encode())
            ]
            assert [k for k, _ in tokens.range(lo, hi)] == want
    assert dict(tokens.prefix("a")) == {w: tokens.get(w) for w in words if w.startswith("a")}


def test_the_default_analyzer_map_reads(tmp_path: Path) -> None:
    """The stemmed, lower-cased map pylance builds by default (the first pylance index read)."""
    table = _token_table(tmp_path, ["hello world", "the quick brown foxes jumped", "Hello again"])
    tokens = TokenMap.from_table(table)
    assert dict(tokens.items()) == {
        "brown": 3,
        "fox": 4,
        "hello": 0,
        "jump": 5,
        "quick": 2,
        "world": 1,
    }


def test_damaged_bytes_raise_corrupt_table_error(tmp_path: Path) -> None:
    data = _token_table(tmp_path, ["alpha beta gamma"], **PLAIN).column(0)[0].as_py()
    with pytest.raises(CorruptTableError, match="version"):
        TokenMap(b"\x09" + data[1:], "x")
    with pytest.raises(CorruptTableError, match="too few"):
        TokenMap(data[:20], "x")
    with pytest.raises(CorruptTableError, match="root"):
        TokenMap(data[:-12] + (10**6).to_bytes(8, "little") + data[-4:], "x")
    with pytest.raises(CorruptTableError, match="one row"):
        TokenMap.from_table(pa.table({"other": [b""]}), "x")
