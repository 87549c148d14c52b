"""Full text search through pylance's INVERTED indices, against pylance 14 itself.

The decoders (``fts.postings``) are held to the corpus: every token's documents,
frequencies and positions, and each document's frequencies summing to its ``_num_tokens``.
The searches run twins: the same table queried by pylance (``lance.dataset``) and by us
(``ls.dataset``), which must return the same rows (up to ties at the k-th score) with
``_score`` equal to 1e-5 relative.

Most corpora are ASCII lower-case words indexed with ``stem=False, remove_stop_words=False,
ascii_folding=False``, where a whitespace split gives the expected tokens and positions;
queries go through pylance's analyzer (``fts.tokenize``) as the index's parameters say.
Every table here is legacy (pylance cannot open a flagged one, so an index pylance built
cannot exist there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.errors import ColumnNotFoundError, NotSupportedYetError
from lance_semantic.fts import (
    PHRASE_WITHOUT_POSITIONS,
    BooleanQuery,
    BoostQuery,
    FullTextOperator,
    MatchQuery,
    MultiMatchQuery,
    Occur,
    PhraseQuery,
    TokenMap,
    decode_positions,
    decode_postings,
)

pytestmark = pytest.mark.interop

EXACT = dict(stem=False, remove_stop_words=False, ascii_folding=False)


def _corpus(n: int, seed: int, longest: int = 12, vocab: int = 60) -> list[str]:
    """``n`` documents of Zipf-distributed words (some empty: not documents)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(vocab)])
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    return [" ".join(rng.choice(words, size=rng.integers(0, longest), p=p)) for _ in range(n)]


def _index_dir(uri: str) -> Path:
    (files,) = (Path(uri) / "_indices").iterdir()
    return files


# ---- decoders ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "vocab", "longest"),
    [(20_000, 300, 30), (3_000, 5, 200), (128 * 3, 1, 2), (600, 2, 400)],
    ids=["zipf", "long-docs", "full-blocks-only", "wide-frequencies"],
)
def test_postings_and_positions_decode_to_the_corpus(
    tmp_path: Path, n: int, vocab: int, longest: int
) -> None:
    if vocab == 1:  # every document one word once: 3 full blocks, no tail
        docs = ["w0"] * n
    else:
        docs = _corpus(n, 5, longest, vocab)
    uri = str(tmp_path / "t.lance")
    pl = lance.write_dataset(pa.table({"text": docs}), uri, max_rows_per_file=n // 3 + 1)
    pl.create_scalar_index("text", "INVERTED", with_position=True, **EXACT)
    d = _index_dir(uri)
    doc_table = LanceFileReader(str(d / "part_0_docs.lance")).read_all().to_table()
    inv = LanceFileReader(str(d / "part_0_invert.lance")).read_all().to_table()
    tokens = TokenMap.from_table(
        LanceFileReader(str(d / "part_0_tokens.lance")).read_all().to_table()
    )
    addresses = doc_table["_rowid"].to_numpy()
    lengths = doc_table["_num_tokens"].to_numpy()
    per_fragment = n // 3 + 1
    expected: dict[str, dict[int, list[int]]] = {}
    for doc, addr in enumerate(addresses.tolist()):
        row = (addr >> 32) * per_fragment + (addr & 0xFFFFFFFF)
        for pos, word in enumerate(docs[row].split()):
            expected.setdefault(word, {}).setdefault(doc, []).append(pos)
    assert len(tokens) == inv.num_rows == len(expected)
    summed = np.zeros(len(addresses), np.int64)
    for word, by_doc in expected.items():
        tid = tokens.get(word)
        assert tid is not None
        length = inv["_length"][tid].as_py()
        ids, freqs = decode_postings(inv["_posting"][tid].values, length)
        want = np.array(sorted(by_doc))
        assert ids.tolist() == want.tolist()
        assert freqs.tolist() == [len(by_doc[d]) for d in want.tolist()]
        positions, starts = decode_positions(
            inv["_compressed_position"][tid].as_buffer(),
            inv["_position_block_offset"][tid].values.to_numpy(),
            freqs,
        )
        assert positions.tolist() == [p for d in want.tolist() for p in by_doc[d]]
        assert starts[-1] == len(positions)
        summed[ids] += freqs
    assert summed.tolist() == lengths.tolist()


# ---- twins ------------------------------------------------------------------------------
@pytest.fixture
def twins(tmp_path: Path) -> tuple[lance.LanceDataset, str]:
    uri = str(tmp_path / "t.lance")
    docs = _corpus(3000, 1, 10, 40)
    table = pa.table({"id": np.arange(3000), "text": docs, "t2": docs[::-1], "n": np.arange(3000)})
    pl = lance.write_dataset(table, uri, max_rows_per_file=1000)
    pl.create_scalar_index("text", "INVERTED", with_position=True, **EXACT)
    pl.create_scalar_index("t2", "INVERTED", with_position=False, **EXACT)
    return pl, uri


def _pylance_query(q: object) -> object:
    return q.to_pylance() if hasattr(q, "to_pylance") else q


def _same(expected: pa.Table, got: pa.Table, limit: int | None = None) -> None:
    """The same rows (up to ties at the k-th score), scores to 1e-5 relative, best first."""
    assert got.schema.names == expected.schema.names
    assert got.schema.field("_score").type == pa.float32()
    want = dict(zip(expected["id"].to_pylist(), expected["_score"].to_pylist(), strict=True))
    have = dict(zip(got["id"].to_pylist(), got["_score"].to_pylist(), strict=True))
    assert len(have) == len(want)
    scores = got["_score"].to_numpy()
    assert (np.diff(scores) <= 0).all()
    if want:
        kth = min(want.values())
        for k in set(want) ^ set(have):  # only ties at the cut-off may differ
            assert limit is not None
            assert abs(want.get(k, have.get(k, 0.0)) - kth) <= 1e-5 * abs(kth)
    for k in set(want) & set(have):
        assert have[k] == pytest.approx(want[k], rel=1e-5)


QUERIES: list[tuple[str, object]] = [
    ("plain", "w1 w2"),
    ("plain-repeat", "w3 w1 w3"),
    ("dict", {"query": "w1 w2", "columns": ["text"]}),
    ("dict-other-column", {"query": "w4", "columns": ["t2"]}),
    ("quoted", {"query": '"w1 w2"', "columns": ["text"]}),
    ("match", MatchQuery("w1 w5", "text")),
    ("match-and", MatchQuery("w1 w2", "text", operator=FullTextOperator.AND)),
    ("match-boost", MatchQuery("w1 w3", "text", boost=2.5)),
    ("phrase", PhraseQuery("w1 w2", "text")),
    ("phrase-repeat", PhraseQuery("w1 w1", "text")),
    ("phrase-3", PhraseQuery("w0 w1 w0", "text")),
    ("multi", MultiMatchQuery("w1 w2", ["text", "t2"], boosts=[1.0, 2.0])),
    ("multi-and", MultiMatchQuery("w1 w2", ["text", "t2"], operator=FullTextOperator.AND)),
    (
        "boolean",
        BooleanQuery(
            [
                (Occur.MUST, MatchQuery("w1", "text")),
                (Occur.SHOULD, MatchQuery("w2", "text")),
                (Occur.MUST_NOT, MatchQuery("w3", "text")),
            ]
        ),
    ),
    (
        "boolean-should",
        BooleanQuery(
            [(Occur.SHOULD, MatchQuery("w1", "text")), (Occur.SHOULD, MatchQuery("w2", "t2"))]
        ),
    ),
    ("boost", BoostQuery(MatchQuery("w1", "text"), MatchQuery("w2", "text"), negative_boost=0.3)),
    ("unknown-token", "zzz"),
    ("empty", ""),
]


@pytest.mark.parametrize(("name", "query"), QUERIES, ids=[n for n, _ in QUERIES])
@pytest.mark.parametrize("limit", [None, 10])
def test_queries_like_pylance(
    twins: tuple[lance.LanceDataset, str], name: str, query: object, limit: int | None
) -> None:
    pl, uri = twins
    expected = pl.to_table(full_text_query=_pylance_query(query), columns=["id"], limit=limit)
    got = ls.dataset(uri).to_table(full_text_query=query, columns=["id"], limit=limit)
    _same(expected, got, limit)


@pytest.mark.parametrize(
    "options",
    [
        dict(filter="id < 1500", limit=20),
        dict(filter="id < 1500", limit=20, prefilter=True),
        dict(filter="id % 3 = 0"),
        dict(filter="id % 3 = 0", prefilter=True),
        dict(limit=5, offset=3),
        dict(limit=1),
    ],
    ids=["postfilter", "prefilter", "postfilter-all", "prefilter-all", "offset", "one"],
)
def test_filters_and_windows_like_pylance(
    twins: tuple[lance.LanceDataset, str], options: dict[str, Any]
) -> None:
    pl, uri = twins
    expected = pl.to_table(full_text_query="w1 w2", columns=["id"], **options)
    got = ls.dataset(uri).to_table(full_text_query="w1 w2", columns=["id"], **options)
    _same(expected, got, options.get("limit"))


def test_columns_row_ids_and_scanner_like_pylance(twins: tuple[lance.LanceDataset, str]) -> None:
    pl, uri = twins
    ours = ls.dataset(uri)
    kw: dict[str, Any] = dict(full_text_query=MatchQuery("w7", "text"), limit=8)
    pq = dict(kw, full_text_query=MatchQuery("w7", "text").to_pylance())
    expected = pl.to_table(with_row_id=True, **pq)
    got = ours.to_table(with_row_id=True, **kw)
    assert got.schema == expected.schema  # every column, then _score, then _rowid
    _same(expected.select(["id", "_score"]), got.select(["id", "_score"]), 8)
    rows = dict(zip(got["id"].to_pylist(), got["_rowid"].to_pylist(), strict=True))
    want = dict(zip(expected["id"].to_pylist(), expected["_rowid"].to_pylist(), strict=True))
    assert {k: rows[k] for k in rows.keys() & want.keys()} == {
        k: want[k] for k in rows.keys() & want.keys()
    }
    placed = ours.to_table(columns=["_score", "id"], **kw)
    assert placed.schema.names == ["_score", "id"]
    sc = ours.scanner(columns=["id"], **kw)
    assert sc.projected_schema.names == ["id", "_score"]
    assert sc.count_rows() == 8
    assert sum(b.num_rows for b in ours.to_batches(columns=["id"], batch_size=3, **kw)) == 8
    everything = pl.to_table(full_text_query="w7")
    assert ours.to_table(full_text_query="w7").schema == everything.schema


def test_deleted_rows_never_come_back_and_keep_the_scores(
    twins: tuple[lance.LanceDataset, str],
) -> None:
    pl, uri = twins
    pl.delete("id < 300 or id % 7 = 0")
    for limit in (None, 10):
        expected = pl.to_table(full_text_query="w1 w2", columns=["id"], limit=limit)
        got = ls.dataset(uri).to_table(full_text_query="w1 w2", columns=["id"], limit=limit)
        _same(expected, got, limit)
        ids = np.asarray(got["id"])
        assert not ((ids < 300) | (ids % 7 == 0)).any()


@pytest.mark.parametrize(
    ("query", "options"),
    [
        ("w1 w2", {}),
        ("w1 w2", dict(limit=10)),
        (PhraseQuery("w1 w2", "text"), {}),
        ("w1 w2", dict(filter="id > 2500", prefilter=True)),
        ("w1 w2", dict(filter="id > 2500", prefilter=True, limit=15)),
        ("w1 w2", dict(filter="id > 2500", limit=30)),
        ("w1 w2", dict(fast_search=True)),
        (MatchQuery("w3 w1", "text", operator=FullTextOperator.AND), {}),
    ],
    ids=["match", "limit", "phrase", "prefilter", "prefilter-limit", "postfilter", "fast", "and"],
)
def test_appended_fragments_like_pylance(
    twins: tuple[lance.LanceDataset, str], query: object, options: dict[str, Any]
) -> None:
    """Fragments the index does not cover are tokenized when searched (with the index's
    statistics plus theirs, live and prefiltered rows only); ``fast_search=True`` leaves
    them out. The new fragment has deletions too."""
    pl, uri = twins
    more = _corpus(1000, 9, 10, 40)
    pl.insert(
        pa.table({"id": np.arange(3000, 4000), "text": more, "t2": more, "n": np.arange(1000)})
    )
    pl.delete("id >= 3900 or id % 11 = 0")
    expected = pl.to_table(full_text_query=_pylance_query(query), columns=["id"], **options)
    got = ls.dataset(uri).to_table(full_text_query=query, columns=["id"], **options)
    _same(expected, got, options.get("limit"))
    ids = np.asarray(got["id"])
    assert not ((ids >= 3900) | (ids % 11 == 0)).any()
    if options.get("fast_search"):
        assert (ids < 3000).all()
    elif not options:
        assert (ids >= 3000).any()


@pytest.mark.parametrize("query", ["w1 w2", PhraseQuery("w1 w2", "text"), "w5"])
def test_index_of_two_partitions_like_pylance(
    twins: tuple[lance.LanceDataset, str], query: object
) -> None:
    """pylance's ``optimize_indices`` after an append writes an index of two partitions
    (``part_0_*``, ``part_1_*``): ``N``, ``n`` and the lengths count over both."""
    pl, uri = twins
    more = _corpus(1000, 9, 10, 40)
    pl.insert(
        pa.table({"id": np.arange(3000, 4000), "text": more, "t2": more, "n": np.arange(1000)})
    )
    pl.optimize.optimize_indices()
    pl = lance.dataset(uri)
    for limit in (None, 10):
        expected = pl.to_table(full_text_query=_pylance_query(query), columns=["id"], limit=limit)
        got = ls.dataset(uri).to_table(full_text_query=query, columns=["id"], limit=limit)
        _same(expected, got, limit)


def test_fragments_scanned(twins: tuple[lance.LanceDataset, str]) -> None:
    _, uri = twins
    ours = ls.dataset(uri)
    part = ours.to_table(full_text_query="w1", fragments=ours.get_fragments()[1:2])
    ids = np.asarray(part["id"])
    assert len(ids) and ((ids >= 1000) & (ids < 2000)).all()
    whole = ours.to_table(full_text_query="w1", columns=["id"])
    scores = dict(zip(whole["id"].to_pylist(), whole["_score"].to_pylist(), strict=True))
    pairs = zip(part["id"].to_pylist(), part["_score"].to_pylist(), strict=True)
    assert all(scores[i] == s for i, s in pairs)


# ---- errors -----------------------------------------------------------------------------
def test_errors_like_pylance(twins: tuple[lance.LanceDataset, str]) -> None:
    pl, uri = twins
    ours = ls.dataset(uri)
    # a phrase on an index without positions: pylance's ValueError and message
    with pytest.raises(ValueError, match=PHRASE_WITHOUT_POSITIONS):
        pl.to_table(full_text_query=PhraseQuery("w1 w2", "t2").to_pylance())
    with pytest.raises(ValueError, match=PHRASE_WITHOUT_POSITIONS):
        ours.to_table(full_text_query=PhraseQuery("w1 w2", "t2"))
    # a column that is not a string: a ValueError naming it (pylance's)
    with pytest.raises(ValueError, match="'n'"):
        pl.to_table(full_text_query=MatchQuery("1", "n").to_pylance())
    with pytest.raises(ValueError, match="FTS field 'n' must resolve to Utf8"):
        ours.scanner(full_text_query=MatchQuery("1", "n"))
    with pytest.raises(ColumnNotFoundError):
        ours.scanner(full_text_query=MatchQuery("w1", "nope"))
    # a quoted string over several indexed columns: pylance wants the column
    with pytest.raises(ValueError, match="the column must be specified"):
        pl.to_table(full_text_query='"w1 w2"')
    with pytest.raises(ValueError, match="the column must be specified"):
        ours.to_table(full_text_query='"w1 w2"')
    # dict keys: those of pylance's full_text_search only
    with pytest.raises(TypeError, match="'match'"):
        pl.to_table(full_text_query={"match": {"query": "w1"}})
    with pytest.raises(TypeError, match="'match'"):
        ours.to_table(full_text_query={"match": {"query": "w1"}})
    # pylance's query objects are opaque (a Rust object): refused, naming ours
    with pytest.raises(NotSupportedYetError, match="lance_semantic.fts.MatchQuery"):
        ours.to_table(full_text_query=MatchQuery("w1", "text").to_pylance())
    # fuzzy matches are not here yet
    with pytest.raises(NotSupportedYetError, match="fuzziness"):
        ours.to_table(full_text_query=MatchQuery("w1", "text", fuzziness=1))
    with pytest.raises(NotSupportedYetError, match="slop"):
        ours.to_table(full_text_query=PhraseQuery("w1 w2 w3", "text", slop=1))
    with pytest.raises(TypeError):
        ours.to_table(full_text_query=3)


@pytest.mark.parametrize(
    "query",
    ["dogs", "DOGS", "running", "Running", "the", "Über", "über", "cafe", "dogs run"],
)
@pytest.mark.parametrize("limit", [None, 2])
def test_column_without_index_like_pylance(tmp_path: Path, query: str, limit: int | None) -> None:
    """A column without an INVERTED index is searched flat: pylance's ``simple`` splitting
    alone (case kept, no stems, no stop words, no folding), the rows' own statistics, and
    without a limit the rows in scan order."""
    uri = str(tmp_path / "t.lance")
    texts = ["Running DOGS quickly", "the dogs run", "dogs DOGS dogs", "Über naïve café", "a an"]
    pl = lance.write_dataset(pa.table({"id": np.arange(5), "t": texts, "u": texts}), uri)
    pl.create_scalar_index("u", "INVERTED")  # (a string query needs an indexed column)
    q = MatchQuery(query, "t")
    expected = pl.to_table(full_text_query=q.to_pylance(), columns=["id"], limit=limit)
    got = ls.dataset(uri).to_table(full_text_query=q, columns=["id"], limit=limit)
    if limit is None:
        assert got["id"].to_pylist() == expected["id"].to_pylist()
        assert got["_score"].to_pylist() == pytest.approx(expected["_score"].to_pylist(), rel=1e-5)
    else:
        _same(expected, got, limit)


@pytest.mark.parametrize(
    "query",
    [
        "running dogs",
        "The quick brown foxes",
        "jumped over",
        "café naïve",
        "a the of",
        '"quick brown"',
        '"brown the fox"',
    ],
)
def test_default_analyzer_like_pylance(tmp_path: Path, query: str) -> None:
    """pylance's default analyzer (lower case, English stems, stop words, ASCII folding)
    on the index and the query."""
    uri = str(tmp_path / "t.lance")
    rng = np.random.default_rng(4)
    vocab = (
        "The quick brown fox jumps over the lazy dog running dogs ran runs Café naïve "
        "résumé of a an quickly Jumped foxes BROWN the-end it's"
    ).split()
    texts = [" ".join(rng.choice(vocab, size=rng.integers(1, 12))) for _ in range(800)]
    pl = lance.write_dataset(pa.table({"id": np.arange(800), "t": texts}), uri)
    pl.create_scalar_index("t", "INVERTED", with_position=True)
    expected = pl.to_table(full_text_query=query, columns=["id"], limit=20)
    got = ls.dataset(uri).to_table(full_text_query=query, columns=["id"], limit=20)
    _same(expected, got, 20)


def test_no_index_at_all(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    pl = lance.write_dataset(pa.table({"text": ["w1 w2", "w2"]}), uri)
    with pytest.raises(ValueError):
        pl.to_table(full_text_query="w1")
    with pytest.raises(ValueError, match="no column has an INVERTED index"):
        ls.dataset(uri).to_table(full_text_query="w1")


# ---- indices built here -----------------------------------------------------------------
@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_our_index_searched_like_pylance_searches_its_own(tmp_path: Path, flagged: bool) -> None:
    """An INVERTED index built here (``create_scalar_index``), searched here, gives what
    pylance gives through its own index on a twin table; on a flagged table too (which
    pylance cannot open)."""
    docs = _corpus(2000, 3, 12, 50)
    table = pa.table({"id": np.arange(2000), "text": docs})
    theirs = str(tmp_path / "theirs.lance")
    pl = lance.write_dataset(table, theirs, max_rows_per_file=700)
    pl.create_scalar_index("text", "INVERTED", with_position=True, **EXACT)
    ours = ls.write_dataset(
        table, str(tmp_path / "ours.lance"), max_rows_per_file=700, semantic_types=flagged
    )
    assert ours.semantic_types is flagged
    ours.create_scalar_index("text", "INVERTED", with_position=True, **EXACT)
    for query in ("w1 w2", PhraseQuery("w0 w1", "text"), MatchQuery("w4 w9", "text", boost=3.0)):
        for limit in (None, 10):
            expected = pl.to_table(
                full_text_query=_pylance_query(query), columns=["id"], limit=limit
            )
            got = ours.to_table(full_text_query=query, columns=["id"], limit=limit)
            _same(expected, got, limit)


def test_untrained_index_like_pylance(tmp_path: Path) -> None:
    """An index built over no rows (``metadata.lance`` alone, no partition): every row is
    searched flat, in scan order without a limit, as pylance."""
    uri = str(tmp_path / "t.lance")
    empty = pa.table({"id": pa.array([], pa.int64()), "text": pa.array([], pa.string())})
    pl = lance.write_dataset(empty, uri)
    pl.create_scalar_index("text", "INVERTED", **EXACT)
    pl.insert(pa.table({"id": np.arange(300), "text": _corpus(300, 8, 10, 20)}))
    for limit in (None, 5):
        expected = pl.to_table(full_text_query="w1 w3", columns=["id"], limit=limit)
        got = ls.dataset(uri).to_table(full_text_query="w1 w3", columns=["id"], limit=limit)
        if limit is None:
            assert got["id"].to_pylist() == expected["id"].to_pylist()
            want = expected["_score"].to_pylist()
            assert got["_score"].to_pylist() == pytest.approx(want, rel=1e-5)
        else:
            _same(expected, got, limit)


@pytest.mark.parametrize("column", ["t", "u"], ids=["indexed", "flat"])
@pytest.mark.parametrize("phrase", ["a1 b1", "a1 a1", "c1 a1"])
@pytest.mark.parametrize("slop", [0, 1, 2, 5])
def test_two_term_phrases_with_slop_like_pylance(
    tmp_path: Path, column: str, phrase: str, slop: int
) -> None:
    """A phrase of two terms with ``slop``: the terms in order, at most ``slop`` positions
    between them (through the index, and flat on a column without one)."""
    rng = np.random.default_rng(5)
    words = ["a1", "b1", "c1", "d1", "e1"]
    docs = [" ".join(rng.choice(words, size=rng.integers(1, 9))) for _ in range(1500)]
    uri = str(tmp_path / "t.lance")
    table = pa.table({"id": np.arange(1500), "t": docs, "u": docs})
    pl = lance.write_dataset(table, uri, max_rows_per_file=600)
    pl.create_scalar_index("t", "INVERTED", with_position=True, **EXACT)
    q = PhraseQuery(phrase, column, slop=slop)
    for limit in (None, 10):
        expected = pl.to_table(full_text_query=q.to_pylance(), columns=["id"], limit=limit)
        got = ls.dataset(uri).to_table(full_text_query=q, columns=["id"], limit=limit)
        if column == "u" and limit is None:  # flat: scan order
            assert got["id"].to_pylist() == expected["id"].to_pylist()
            want = expected["_score"].to_pylist()
            assert got["_score"].to_pylist() == pytest.approx(want, rel=1e-5)
        else:
            _same(expected, got, limit)


def test_json_column_refused(tmp_path: Path) -> None:
    ds = ls.write_dataset(
        pa.table({"j": pa.array(['{"a": "hello"}'], pa.json_(pa.string())), "s": ["x"]}),
        str(tmp_path / "t.lance"),
    )
    with pytest.raises(NotSupportedYetError, match="JSON column 'j'"):
        ds.to_table(full_text_query={"query": "hello", "columns": ["j"]})


def test_stable_row_ids_refused(tmp_path: Path) -> None:
    """The index of a table with stable row ids holds row ids (not read yet): refused, never
    searched another way."""
    uri = str(tmp_path / "t.lance")
    table = pa.table({"id": [1, 2], "text": ["hello world", "World"]})
    pl = lance.write_dataset(table, uri, enable_stable_row_ids=True)
    pl.create_scalar_index("text", "INVERTED")
    assert pl.to_table(full_text_query="world").num_rows == 2
    with pytest.raises(NotSupportedYetError, match="stable row ids"):
        ls.dataset(uri).to_table(full_text_query="world")
