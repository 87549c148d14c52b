"""Our analyzer against pylance's INVERTED indices: for multilingual corpora under pylance's
defaults and each option, the token set pylance's index holds (its FST token map, read by
``TokenMap``) equals the tokens ``Analyzer`` makes of the same documents, and every
document's token count equals ``part_0_docs.lance``'s ``_num_tokens``.

Also over every code point (the alphanumeric class of the ``simple`` tokenizer, lower
case, ASCII folding), over every built-in stop word of the 18 languages, and over words of
each language for stemming; and ``analyzer_params`` reads what pylance recorded.

Differences left: none seen on these corpora. What is not reproduced is refused with
``NotSupportedYetError`` (``icu``, ``jieba``, ``lindera``, the ``json`` document tokenizer,
the identifier-splitting options).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance.file import LanceFileReader
from tests.fts_support import (
    SWEPT,
    build_index,
    chunked,
    index_token_counts,
    index_tokens,
)

from lance_semantic.errors import NotSupportedYetError
from lance_semantic.fts import LANGUAGES, Analyzer, AnalyzerParams, analyzer_params
from lance_semantic.fts._stop_words import STOP_WORDS
from lance_semantic.manifest import index_entries

pytestmark = pytest.mark.interop

ENGLISH = [
    "It's a truth universally acknowledged, that a single man in possession of a good "
    "fortune must be in want of a wife.",
    "Don't stop—we're almost there! The state-of-the-art e-mail client (v2.0.1) costs "
    "$19.99, or 15% off; isn't that the runners' dream?",
    "Visit https://example.com/path?q=lance&page=2 or mail john.doe+fts@example.org "
    "before 2026-12-06 at 09:30.",
    "Running runners ran; the runner's shoes were running-shoes. Generalizations, "
    "generously generalized, were being generalised by the generalizers.",
    "HTML5 and CSS3 are W3C standards; IPv6 addresses look like 2001:db8::1 and "
    "MAC addresses like 00:1A:2b:3C:4d:5E.",
    "McDonald's iPhone eBay NASA's JavaScript camelCaseIdentifier snake_case_identifier "
    "kebab-case-identifier ALLCAPS MiXeD CaSe",
    "3.14159 1,000,000 1e10 0x1F 42nd ½ ² ³ ① Ⅻ ⅔ 10km/h 5°C №7",
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX! the quick brown fox?",
    "tab\tseparated\nnew line\x0bvertical\x0cform\rcarriage\u00a0nbsp\u3000ideographic"
    "\u2003em\u200bzero-width",
    "She said: «Bonjour», “hello”, ‘hi’ — and… left (quietly) [really] {yes} <no> | ok",
]
LATIN = [
    "L'été dernier, nous sommes allés à la plage près de Nice ; c'était magnifique, "
    "n'est-ce pas ? Les élèves étudiaient également l'économie et la théorie.",
    "Die Straße war nass, weil es die ganze Nacht geregnet hatte. Über 100 Bürgerinnen "
    "und Bürger größerer Städte äußerten sich zur Fußgängerzone.",
    "¿Dónde está la biblioteca? El niño comió mañana piñas y jalapeños. ¡Qué maravilloso "
    "día! Los pingüinos están en la Antártida.",
    "Ça va? Œuvre, cœur, Ærø, Øresund, Łódź, Þingvellir, Đà Nẵng, ſtraße, Ħamrun, ĸ.",
    "La città più bella è Firenze; perché non andiamo lì? São Paulo é a maior cidade do "
    "Brasil, não é? Açúcar e maçã.",
    "İstanbul'da ılık bir gün; IĞDIR ŞİŞLİ Çanakkale Gümüşhane. Vad händer på Öland?",
]
OTHER_SCRIPTS = [
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. ΟΔΥΣΣΕΥΣ και Σίσυφος, "
    "ΣΑΣ, ΆΝΘΡΩΠΟΣ, ἀρχή, ὁ λόγος.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Ёлка и ЁЖИК бегут по "
    "лесу; Москва — столица России.",
    "東京都は日本の首都です。北京欢迎你！서울특별시는 대한민국의 수도이다。カタカナとひらがな、"
    "ｶﾀｶﾅ全角ＡＢＣ１２３",
    "I ❤️ Lance 🚀🔥 — 👍🏽 family: 👨\u200d👩\u200d👧 flags 🇫🇷🇩🇪 smile😀face ☕️ ✔︎",
    "हिन्दी भाषा में लिखा गया वाक्य। தமிழ் மொழி அழகானது. اللغة العربية جميلة جدا. "
    "עברית יפה. ภาษาไทย ສະບາຍດີ",
    "Ⓐⓑⓒ ⒜⒝ ㈱ ㍿ ﬁne ﬂow ﬀ Ǆemal ǅ ǆ Ⅳ ⅳ ℌ ℍ ℡ ™ ㎏ ㎞",
]
LONG = [
    " ".join(
        [
            "a" * 38,
            "b" * 39,
            "c" * 40,
            "d" * 41,
            "é" * 19,
            "è" * 20,
            "Ⱥ" * 13 + "z",  # 27 bytes; lower case makes it 40: removed before lower-casing?
            "İ" * 19 + "x",  # 39 bytes upper, 58 lower
            "x" * 35 + "ß",  # 37 bytes; folded to 37 ASCII
            "supercalifragilisticexpialidocious",
            "pneumonoultramicroscopicsilicovolcanoconiosis",
            "🚀" * 9 + "abc",
            "🚀" * 10,
        ]
    ),
    "Donaudampfschifffahrtsgesellschaftskapitän Rindfleischetikettierungsüberwachungs"
    "aufgabenübertragungsgesetz",
]
EDGE: list[str | None] = [None, "", "   ", "!!!", "a", "A", "1", "_", "-", "🚀", "\u0301e"]
CORPUS: list[str | None] = [*ENGLISH, *LATIN, *OTHER_SCRIPTS, *LONG, *EDGE]

OFF = dict(stem=False, remove_stop_words=False, lower_case=False, ascii_folding=False)
OPTIONS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "with_position": dict(with_position=True),
    "no stem": dict(stem=False),
    "stop words kept": dict(remove_stop_words=False),
    "case kept": dict(lower_case=False),
    "accents kept": dict(ascii_folding=False),
    "no filter": OFF,
    "no length limit": dict(max_token_length=None),
    "max 10 bytes": dict(max_token_length=10),
    "max 1 byte": dict(max_token_length=1, stem=False),
    "custom stop words": dict(custom_stop_words=["lance", "the", "run", "été", "quick"]),
    "whitespace": dict(base_tokenizer="whitespace"),
    "whitespace, no filter": dict(base_tokenizer="whitespace", max_token_length=None, **OFF),
    "raw": dict(base_tokenizer="raw"),
    "raw, no limit, no filter": dict(base_tokenizer="raw", max_token_length=None, **OFF),
    "ngram": dict(base_tokenizer="ngram"),
    "ngram 1-4": dict(base_tokenizer="ngram", min_ngram_length=1, max_ngram_length=4),
    "ngram prefixes 2-5": dict(
        base_tokenizer="ngram", min_ngram_length=2, max_ngram_length=5, prefix_only=True
    ),
    "ngram, stemmed, case kept": dict(base_tokenizer="ngram", stem=True, lower_case=False),
    **{lang: dict(language=lang) for lang in ("French", "German", "Spanish", "Russian")},
    **{
        f"{lang}, accents kept": dict(language=lang, ascii_folding=False)
        for lang in ("Greek", "Turkish", "Arabic", "Italian", "Portuguese", "Swedish")
    },
}


def _check(tmp_path: Path, docs: list[str | None], **params: Any) -> Analyzer:
    """Assert our token set and per-document counts are pylance's; our analyzer."""
    files = build_index(tmp_path, docs, **params)
    analyzer = Analyzer(AnalyzerParams.for_create(**params))
    lists = analyzer.tokenize(docs)
    ours = set(pc.list_flatten(lists).to_pylist())
    theirs = index_tokens(files)
    assert sorted(ours - theirs) == [] and sorted(theirs - ours) == []
    counts = pc.fill_null(pc.list_value_length(lists), 0).to_pylist()
    recorded = index_token_counts(files)
    assert {r: counts[r] for r in recorded} == recorded
    assert all(counts[r] == 0 for r in range(len(docs)) if r not in recorded)
    return analyzer


@pytest.mark.parametrize("name", list(OPTIONS))
def test_corpus_tokens_are_pylances(tmp_path: Path, name: str) -> None:
    analyzer = _check(tmp_path, CORPUS, **OPTIONS[name])
    # one text at a time gives the column's lists
    lists = analyzer.tokenize(pa.array(CORPUS, pa.large_string())).to_pylist()
    assert lists == [None if d is None else analyzer.tokens(d) for d in CORPUS]


def test_documents_split_over_chunks_and_views(tmp_path: Path) -> None:
    analyzer = Analyzer()
    docs = [d for d in CORPUS if d is not None]
    whole = analyzer.tokenize(docs).to_pylist()
    chunked_docs = pa.chunked_array([docs[:5], docs[5:]], pa.string())
    assert analyzer.tokenize(chunked_docs).to_pylist() == whole
    assert analyzer.tokenize(pa.array(docs, pa.string())[3:]).to_pylist() == whole[3:]
    assert analyzer.tokenize(pa.array(docs, pa.string_view())).to_pylist() == whole
    assert analyzer.tokenize(pa.array(docs).dictionary_encode()).to_pylist() == whole
    assert analyzer.tokenize([]).to_pylist() == []


def test_whitespace_split_without_vertical_tab_is_pylances(tmp_path: Path) -> None:
    """Columns without ``\\v`` split through Arrow's ASCII whitespace (another path)."""
    docs = [None if d is None else d.replace("\v", "") for d in CORPUS]
    docs += [" \t lead and trail \r\n", "\f", "a\u00a0b\u2003c\u3000d"]
    analyzer = _check(tmp_path, docs, base_tokenizer="whitespace", max_token_length=None, **OFF)
    assert analyzer.tokenize(docs).to_pylist() == [
        None if d is None else analyzer.tokens(d) for d in docs
    ]


# -- every code point ---------------------------------------------------------------------

RAW = dict(stem=False, remove_stop_words=False, max_token_length=None)


def test_simple_tokenizer_keeps_pylances_alphanumerics(tmp_path: Path) -> None:
    docs = chunked(f"q{c:x}x{chr(c)}z" for c in SWEPT)
    _check(tmp_path, docs, lower_case=False, ascii_folding=False, **RAW)


@pytest.mark.parametrize(
    "lower_case, ascii_folding", [(True, False), (False, True)], ids=["lower", "fold"]
)
def test_per_character_filters_are_pylances(
    tmp_path: Path, lower_case: bool, ascii_folding: bool
) -> None:
    docs = chunked(f"q{c:x}.{chr(c)}" for c in SWEPT)
    params = dict(lower_case=lower_case, ascii_folding=ascii_folding, **RAW)
    _check(tmp_path, docs, base_tokenizer="whitespace", **params)


# -- stop words and stems of every language -----------------------------------------------

ALL_STOP_WORDS = sorted({w for ws in STOP_WORDS.values() for w in ws.split()})


@pytest.mark.parametrize("language", LANGUAGES)
def test_stop_words_are_pylances(tmp_path: Path, language: str) -> None:
    """Every built-in word of every language as a candidate: pylance removes exactly the
    language's words (no filter changes a token before)."""
    params = dict(base_tokenizer="whitespace", max_token_length=None, **OFF)
    params["remove_stop_words"] = True
    _check(tmp_path, chunked(ALL_STOP_WORDS, 500), language=language, **params)


def _vocabulary(language: str) -> list[str]:
    """Words to stem: the language's stop words and corpus words, and made-up words of its
    letters ending like its words."""
    base = set(STOP_WORDS[language].split())
    for doc in [*ENGLISH, *LATIN, *OTHER_SCRIPTS, *LONG]:
        base.update(Analyzer(AnalyzerParams(**OFF)).tokens(doc))
    base = {w.lower() for w in base}
    rng = random.Random(language)
    letters = sorted({ch for w in STOP_WORDS[language].split() for ch in w if ch.isalpha()})
    endings = sorted({w[-k:] for w in base for k in (1, 2, 3, 4) if len(w) > k})
    words = set(base)
    for _ in range(3000):
        w = "".join(rng.choice(letters) for _ in range(rng.randint(2, 8)))
        words.add(w + rng.choice(endings))
    for w in sorted(base)[:300]:
        words.update(w + e for e in rng.sample(endings, 3))
    return sorted(w for w in words if " " not in w)


@pytest.mark.parametrize("language", LANGUAGES)
def test_stems_are_pylances(tmp_path: Path, language: str) -> None:
    words = _vocabulary(language)
    params = dict(base_tokenizer="whitespace", max_token_length=None, **OFF)
    params["stem"] = True
    _check(tmp_path, chunked(words, 500), language=language, **params)


# -- the parameters pylance recorded ------------------------------------------------------

RECORDED = [
    {},
    dict(with_position=True, language="French", max_token_length=None, stem=False),
    dict(base_tokenizer="whitespace", lower_case=False, ascii_folding=False),
    dict(remove_stop_words=False, custom_stop_words=["alpha", "beta"]),
    dict(base_tokenizer="ngram", min_ngram_length=2, max_ngram_length=4, prefix_only=True),
    dict(base_tokenizer="raw", max_token_length=7, language="Greek"),
]


@pytest.mark.parametrize("params", RECORDED, ids=lambda p: ",".join(p) or "defaults")
def test_analyzer_params_reads_what_pylance_recorded(
    tmp_path: Path, params: dict[str, Any]
) -> None:
    import lance_semantic as ls

    files = build_index(tmp_path, ["alpha beta gamma"], **params)
    want = AnalyzerParams.for_create(**params)
    meta = LanceFileReader(str(files / "metadata.lance")).metadata().schema.metadata
    assert analyzer_params(meta) == want
    assert analyzer_params({k.decode(): v.decode() for k, v in meta.items()}) == want

    (entry,) = index_entries(ls.dataset(str(files.parents[1]))._snapshot().manifest.index_section)
    assert entry.type_url == "/lance.table.InvertedIndexDetails"
    from_details = analyzer_params(details=entry.details)
    # custom stop words are only in metadata.lance
    assert from_details == AnalyzerParams(
        **{**{f: getattr(want, f) for f in want.__slots__}, "custom_stop_words": None}
    )


def test_analyzer_params_defaults_and_damage() -> None:
    from lance_semantic.errors import CorruptTableError

    assert analyzer_params() == AnalyzerParams()
    assert analyzer_params({b"params": b"{}"}) == AnalyzerParams(max_token_length=None)
    for bad in (b"[1]", b"{", b'{"language": "Klingon"}', b'{"stem": "yes"}'):
        with pytest.raises(CorruptTableError, match="analyzer parameters"):
            analyzer_params({b"params": bad}, where="x/metadata.lance")
    with pytest.raises(CorruptTableError, match="analyzer parameters"):
        analyzer_params(details=b"\x0a\x10short")
    assert json.loads(json.dumps({"ok": 1}))  # the JSON path is plain json


# -- what is refused ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        dict(base_tokenizer="icu"),
        dict(base_tokenizer="icu/split"),
        dict(base_tokenizer="jieba/default"),
        dict(base_tokenizer="lindera/ipadic"),
        dict(lance_tokenizer="json"),
        dict(split_identifiers=True),
        dict(split_on_numerics=True),
        dict(preserve_original=True),
        dict(index_operators=True),
    ],
    ids=lambda p: str(next(iter(p.values()))),
)
def test_options_not_reproduced_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(NotSupportedYetError, match="full-text"):
        Analyzer(AnalyzerParams(**params))


def test_bad_parameters_name_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="base_tokenizer"):
        Analyzer(AnalyzerParams(base_tokenizer="nonsense"))
    with pytest.raises(Exception, match="nonsense"):  # pylance refuses it too
        build_index(tmp_path, ["a"], base_tokenizer="nonsense")
    with pytest.raises(ValueError, match="language"):
        AnalyzerParams(language="Klingon")
    with pytest.raises(ValueError, match="max_token_length"):
        AnalyzerParams(max_token_length=-1)
    with pytest.raises(ValueError, match="min_ngram_length"):
        AnalyzerParams(min_ngram_length=4, max_ngram_length=3)
    with pytest.raises(TypeError, match="stem"):
        AnalyzerParams(stem="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="custom_stop_words"):
        AnalyzerParams(custom_stop_words="the")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown analyzer parameter"):
        AnalyzerParams.for_create(stemming=True)
    with pytest.raises(TypeError, match="text must be a str"):
        Analyzer().tokens(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="strings"):
        Analyzer().tokenize(pa.array([1, 2]))
    with pytest.raises(TypeError, match="not one str"):
        Analyzer().tokenize("one text")


# -- positions ----------------------------------------------------------------------------

PHRASE_DOCS = [
    *ENGLISH,
    *LONG,
    "quick the fox; quick fox; the quick and the brown fox",
    "alpha " + "x" * 45 + " beta, alpha beta; gamma!!! delta — epsilon",
    "to be or not to be that is the question whether tis nobler in the mind",
]


def test_positions_count_dropped_tokens_as_pylances_phrases_do(tmp_path: Path) -> None:
    """Phrase queries through pylance's index match exactly the documents where our
    positions put the words at the query's distance (a stop word or a long token between
    two words leaves a gap)."""
    import lance
    from lance.query import PhraseQuery

    params = dict(with_position=True, stem=False)
    files = build_index(tmp_path, PHRASE_DOCS, **params)
    ds = lance.dataset(str(files.parents[1]))
    analyzer = Analyzer(AnalyzerParams.for_create(**params))
    tokens, places = analyzer.tokenize_array(PHRASE_DOCS, positions=True)
    assert places is not None
    docs = [
        list(zip(t, p, strict=True))
        for t, p in zip(tokens.to_pylist(), places.to_pylist(), strict=True)
    ]
    assert docs == [analyzer.tokens_with_positions(d) for d in PHRASE_DOCS]
    queries = set()
    for doc in docs:
        for (a, pa_), (b, pb) in zip(doc, doc[1:], strict=False):
            if pb - pa_ in (1, 2):
                queries.add((a, b, pb - pa_))
    queries |= {(a, b, 3 - gap) for a, b, gap in list(queries)}
    assert len(queries) > 40
    for a, b, gap in sorted(queries):
        text = f"{a} {'the ' * (gap - 1)}{b}"
        if analyzer.tokens_with_positions(text) != [(a, 0), (b, gap)]:
            continue  # a token that analyzes to another (a lower case past the limit)
        want = {
            i for i, doc in enumerate(docs) if any((b, p + gap) in doc for t, p in doc if t == a)
        }
        got = ds.to_table(full_text_query=PhraseQuery(text, "text"), with_row_id=True)
        assert set(got["_rowid"].to_pylist()) == want, text
