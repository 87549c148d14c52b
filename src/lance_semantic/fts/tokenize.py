"""pylance 14's full-text analyzer, reproduced (layer L3): the tokens an INVERTED index
holds for a text, under the index's parameters (:class:`~.params.AnalyzerParams`).

pylance builds the analyzer as a base tokenizer followed by filters in this order (each
measured on pylance 14.0.3, see ``tests/interop/test_fts_tokens_like_pylance.py``):

1. the base tokenizer: ``simple`` (the default) keeps the maximal runs of alphanumeric
   characters (Rust's ``char::is_alphanumeric``: letters, marks of alphabetic scripts such
   as Devanagari vowel signs, circled letters, numbers; the table is measured over every
   code point, :mod:`._unicode_data`); ``whitespace`` splits on the five ASCII whitespace
   characters ``\\t \\n \\f \\r`` and space (not ``\\v``, not Unicode spaces); ``raw``
   keeps the whole text as one token; ``ngram`` gives every run of ``min_ngram_length`` to
   ``max_ngram_length`` characters of the whole text, spaces included (``prefix_only``:
   only those at its start);
2. remove long tokens: a token of ``max_token_length`` **bytes** (UTF-8) or more is
   dropped, measured before lower-casing (40 keeps a 39-byte token);
3. lower case, character by character (``"ΣΑΣ"`` gives ``"σασ"``: no final-sigma rule;
   ``"İ"`` gives ``"i̇"``);
4. stemming with the Snowball algorithm of ``language`` (pylance 14 links a 2026
   Snowball revision; PyStemmer's algorithms give the same stems on every language
   tested, the older ``rust-stemmers`` crate does not);
5. stop words, compared with the **stemmed** token: ``custom_stop_words`` if given, else
   pylance's list for ``language`` (:mod:`._stop_words`, measured: English holds 149
   NLTK-style words, "don't" and "should've" included);
6. ASCII folding of non-ASCII tokens, character by character: a few letters by a table
   (``ß`` → ``ss``, ``æ`` → ``ae``, ``ø`` → ``o``, ``ł`` → ``l``, ``þ`` → ``th``, ...),
   else the ASCII characters of the NFKD decomposition (marks dropped, ``é`` → ``e``,
   ``ﬁ`` → ``fi``, ``½`` → ``12``), else the character unchanged (Greek, Cyrillic, CJK).

:meth:`Analyzer.tokenize` analyzes a whole string column at once: the base tokenizer
splits every document in Arrow (``ngram``: in Python), the filters run once per distinct
token, and the tokens go back to their documents by index.

Differences from pylance: none seen on the parity tests' corpora (every option, 18
languages, every code point). What those tests cannot show: a stop word outside the
candidate lists the tables were measured over; a Unicode character Python's tables know
otherwise than Rust's outside the swept planes (4-13, 15-16 hold none assigned); the
positions of ``raw`` / ``ngram`` tokens (0, as lance-tokenizer's source sets them; phrase
queries confirmed the ``simple`` / ``whitespace`` ones); stems of words unlike the generated
vocabularies.

Not reproduced (refused with :class:`~lance_semantic.errors.NotSupportedYetError`): the
``icu`` / ``icu/split`` tokenizers (ICU dictionary segmentation), ``jieba/*`` and
``lindera/*`` (they need language-model downloads; pylance 14 refuses them without one),
the ``json`` document tokenizer and pylance 14's identifier options
(``split_identifiers``, ``split_on_numerics``, ``preserve_original``, ``index_operators``).

>>> a = Analyzer()
>>> a.tokens("The quick brown foxes jumped over the lazy dogs!")
['quick', 'brown', 'fox', 'jump', 'lazi', 'dog']
>>> accents = Analyzer(AnalyzerParams(stem=False, ascii_folding=False))
>>> accents.tokens("Crème brûlée, s'il vous plaît")
['crème', 'brûlée', 's', 'il', 'vous', 'plaît']
>>> [t.as_py() for t in a.tokenize(["Hello, world", None, ""])]
[['hello', 'world'], None, []]
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import Stemmer

from ..errors import NotSupportedYetError
from ._stop_words import STOP_WORDS
from ._unicode_data import ALNUM_RANGES, FOLD_EXCEPTIONS, LOWER_EXCEPTIONS
from .params import AnalyzerParams

__all__ = ["Analyzer", "BASE_TOKENIZERS"]

#: the base tokenizers reproduced here
BASE_TOKENIZERS = ("simple", "whitespace", "raw", "ngram")
#: base tokenizers pylance 14 knows that are not reproduced
_REFUSED_PREFIXES = ("icu", "jieba", "lindera")


def _class(escape: str) -> str:
    """The alphanumeric ranges as the body of a regex character class."""
    return "".join(
        (escape % a) if a == b else f"{escape % a}-{escape % b}" for a, b in ALNUM_RANGES
    )


_PY_ALNUM = re.compile(f"[{_class(chr(92) + 'U%08X')}]+")
#: RE2 (pyarrow): runs of characters that split ``simple`` tokens
_RE2_SPLIT = f"[^{_class(chr(92) + 'x{%X}')}]+"
_WHITESPACE = "[\t\n\f\r ]+"
_PY_NOT_WHITESPACE = re.compile("[^\t\n\f\r ]+")

# lower case: Python's str.lower after these (no final sigma, newer Unicode in Rust)
_PRE_LOWER = {0x03A3: "σ"} | dict(LOWER_EXCEPTIONS)

# the letters folded by a table (not by their decomposition)
_FOLD_LETTERS = {
    "ß": "ss",
    "ẞ": "SS",
    "Æ": "AE",
    "æ": "ae",
    "Œ": "OE",
    "œ": "oe",
    "Ø": "O",
    "ø": "o",
    "Ł": "L",
    "ł": "l",
    "Đ": "D",
    "Ð": "D",
    "đ": "d",
    "ð": "d",
    "Þ": "TH",
    "þ": "th",
    "Ħ": "H",
    "ħ": "h",
    "Ŧ": "T",
    "ŧ": "t",
    "Ŋ": "N",
    "ŋ": "n",
    "ı": "i",
    "ĸ": "k",
    "ſ": "s",
}
_MARKS = frozenset(("Mn", "Mc", "Me"))


def _fold_char(cp: int) -> str:
    """The ASCII folding of one character."""
    if cp in FOLD_EXCEPTIONS:
        return FOLD_EXCEPTIONS[cp]
    ch = chr(cp)
    if ch in _FOLD_LETTERS:
        return _FOLD_LETTERS[ch]
    out = []
    for d in unicodedata.normalize("NFKD", ch):
        if d.isascii():
            out.append(d)
        elif unicodedata.category(d) in _MARKS:
            continue
        elif d in _FOLD_LETTERS:
            out.append(_FOLD_LETTERS[d])
    return "".join(out) or ch


class _FoldTable(dict[int, str]):
    """``str.translate`` table of the folding, filled on first use of each character."""

    def __missing__(self, cp: int) -> str:
        folded = self[cp] = _fold_char(cp)
        return folded


_FOLD = _FoldTable()
_STEMMER_LOCK = threading.Lock()


def _byte_len(token: str) -> int:
    return len(token) if token.isascii() else len(token.encode("utf-8"))


class Analyzer:
    """pylance 14's analyzer for the parameters of an INVERTED index.

    Parameters
    ----------
    params
        The index's parameters (:func:`~.params.analyzer_params` reads them from an
        index), or a mapping of them by pylance's names (the ``params`` JSON's keys);
        pylance's defaults if None.

    Raises
    ------
    NotSupportedYetError
        For a base tokenizer or option pylance has that is not reproduced here.
    ValueError
        For a base tokenizer pylance does not know.
    """

    __slots__ = ("params", "_stop", "_stemmer", "_cache")

    def __init__(self, params: AnalyzerParams | Mapping[str, Any] | None = None) -> None:
        if params is None:
            p = AnalyzerParams()
        elif isinstance(params, AnalyzerParams):
            p = params
        else:
            p = AnalyzerParams(**params)
        name = p.base_tokenizer
        if name not in BASE_TOKENIZERS:
            if name.split("/")[0] in _REFUSED_PREFIXES:
                raise NotSupportedYetError(f"the {name!r} base tokenizer of full-text indices")
            raise ValueError(
                f"base_tokenizer must be one of {', '.join(BASE_TOKENIZERS)} "
                f"(or icu, jieba/*, lindera/*, not reproduced yet); got {name!r}"
            )
        if p.lance_tokenizer not in (None, "text"):
            raise NotSupportedYetError(
                f"the {p.lance_tokenizer!r} document tokenizer of full-text indices"
            )
        for option in ("split_identifiers", "split_on_numerics", "preserve_original"):
            if getattr(p, option):
                raise NotSupportedYetError(f"the {option}= option of full-text indices")
        if p.index_operators:
            raise NotSupportedYetError("the index_operators= option of full-text indices")
        self.params = p
        self._stop: frozenset[str] | None = None
        if p.remove_stop_words:
            words = p.custom_stop_words
            self._stop = frozenset(words if words is not None else STOP_WORDS[p.language].split())
        self._stemmer = Stemmer.Stemmer(p.language.lower()) if p.stem else None
        self._cache: dict[str, str | None] = {}

    def __repr__(self) -> str:
        return f"Analyzer({self.params!r})"

    # -- one text -------------------------------------------------------------------------

    def tokens(self, text: str) -> list[str]:
        """The tokens pylance's index holds for ``text``, in order (repeats kept)."""
        return [t for t, _ in self.tokens_with_positions(text)]

    def tokens_with_positions(self, text: str) -> list[tuple[str, int]]:
        """The tokens of ``text`` and their positions (as :meth:`tokenize_array` gives
        them: the base token's index, dropped tokens counted; 0 for ``raw`` and
        ``ngram``)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        pieces = self._split(text)
        cache = self._cache
        known = {t: cache[t] for t in dict.fromkeys(pieces) if t in cache}
        todo = [t for t in dict.fromkeys(pieces) if t not in known]
        if todo:
            known.update(zip(todo, self._filter(todo), strict=True))
            if len(cache) > 100_000:
                cache.clear()
            cache.update((t, known[t]) for t in todo)
        counted = self.params.base_tokenizer in ("simple", "whitespace")
        out = []
        for i, t in enumerate(pieces):
            kept = known[t]
            if kept is not None:
                out.append((kept, i if counted else 0))
        return out

    def _split(self, text: str) -> list[str]:
        name = self.params.base_tokenizer
        if name == "simple":
            return _PY_ALNUM.findall(text)
        if name == "whitespace":
            return _PY_NOT_WHITESPACE.findall(text)
        if name == "raw":
            return [text]
        return self._ngrams(text)

    def _ngrams(self, text: str) -> list[str]:
        lo, hi = self.params.min_ngram_length, self.params.max_ngram_length
        n = len(text)
        if self.params.prefix_only:
            return [text[:k] for k in range(lo, min(hi, n) + 1)]
        return [text[i : i + k] for i in range(n) for k in range(lo, min(hi, n - i) + 1)]

    # -- the filters, over distinct tokens ------------------------------------------------

    def _filter(self, tokens: Sequence[str]) -> list[str | None]:
        """Each token after the filters, None where a filter drops it."""
        p = self.params
        limit = p.max_token_length
        out: list[str | None] = list(tokens)
        if limit is not None:
            out = [t if t is not None and _byte_len(t) < limit else None for t in out]
        if p.lower_case:
            out = [
                None if t is None else t.lower() if t.isascii() else t.translate(_PRE_LOWER).lower()
                for t in out
            ]
        if self._stemmer is not None:
            live = [t for t in out if t is not None]
            with _STEMMER_LOCK:
                stems = iter(self._stemmer.stemWords(live))
            out = [None if t is None else next(stems) for t in out]
        if self._stop is not None:
            stop = self._stop
            out = [None if t in stop else t for t in out]
        if p.ascii_folding:
            out = [t if t is None or t.isascii() else t.translate(_FOLD) for t in out]
        return out

    # -- a column ---------------------------------------------------------------------------

    def tokenize(self, texts: pa.Array | pa.ChunkedArray | Iterable[str | None]) -> pa.ListArray:
        """The tokens of every document of a string column: one list per document (null
        for a null document), as :meth:`tokens` gives them.

        Parameters
        ----------
        texts
            A string / large_string / string_view / dictionary Arrow array (or chunked
            array), or Python strings and Nones.

        Returns
        -------
        pyarrow.ListArray
            ``list<string>``; ``pyarrow.compute.list_value_length`` gives each
            document's token count (pylance's ``_num_tokens``).
        """
        return self.tokenize_array(texts)[0]

    def tokenize_array(
        self,
        texts: pa.Array | pa.ChunkedArray | Iterable[str | None],
        positions: bool = False,
    ) -> tuple[pa.ListArray, pa.ListArray | None]:
        """The tokens of every document (as :meth:`tokenize`) and, with ``positions``,
        each token's position in its document: its index among the base tokenizer's
        tokens, those a filter dropped counted (pylance's phrase queries see the gap a
        stop word leaves), 0 for every token of ``raw`` and ``ngram``.

        Returns
        -------
        tuple
            ``list<string>`` tokens and ``list<uint32>`` positions (None without
            ``positions``), null lists for null documents.
        """
        arr = _as_string_array(texts)
        name = self.params.base_tokenizer
        if name == "ngram":
            pieces = pa.array(
                [None if t is None else self._ngrams(t) for t in arr.to_pylist()],
                pa.list_(pa.string()),
            )
            assert isinstance(pieces, pa.ListArray)
        elif name == "raw":
            valid = arr.is_valid().to_numpy(zero_copy_only=False)
            offsets = pa.array(np.concatenate(([0], np.cumsum(valid))).astype(np.int32))
            pieces = pa.ListArray.from_arrays(offsets, arr.drop_null(), mask=arr.is_null())
        elif name == "whitespace" and not pc.any(pc.match_substring(arr, "\v")).as_py():
            # Arrow's ASCII whitespace is pylance's and \v: 3x faster than the regex
            pieces = pc.ascii_split_whitespace(arr)
        else:
            pattern = _RE2_SPLIT if name == "simple" else _WHITESPACE
            pieces = pc.split_pattern_regex(arr, pattern=pattern)
        return self._filter_lists(
            pieces, split=name in ("simple", "whitespace"), positions=positions
        )

    def _filter_lists(
        self, lists: pa.ListArray, split: bool, positions: bool
    ) -> tuple[pa.ListArray, pa.ListArray | None]:
        """The filters applied to every value of ``lists`` (once per distinct value), and
        the kept values' positions. ``split``: the lists come from a regex split, whose
        empty pieces at a document's ends are no tokens."""
        if lists.offset or lists.type != pa.list_(pa.string()):
            lists = pa.concat_arrays([lists.cast(pa.list_(pa.string()))])
        offsets = lists.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        offsets -= offsets[0]
        values = lists.values[lists.offsets[0].as_py() : lists.offsets[-1].as_py()]
        encoded = pc.dictionary_encode(values)
        distinct = encoded.dictionary.to_pylist()
        filtered = self._filter(distinct)
        piece = np.ones(len(distinct), bool)
        if split:  # a stem may be empty, a piece of the split is not a token
            piece = np.fromiter((d != "" for d in distinct), bool, len(distinct))
            filtered = [t if p else None for t, p in zip(filtered, piece, strict=True)]
        keep_distinct = np.fromiter((t is not None for t in filtered), bool, len(filtered))
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        keep = keep_distinct[indices]
        kept_values = pc.take(pa.array(filtered, pa.string()), pa.array(indices[keep]))
        mask = lists.is_null()
        counts = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        tokens = pa.ListArray.from_arrays(
            pa.array(counts[offsets].astype(np.int32)), kept_values, mask=mask
        )
        if not positions:
            return tokens, None
        if self.params.base_tokenizer in ("raw", "ngram"):
            where = np.zeros(int(keep.sum()), np.uint32)
        else:
            # a token's position: the base tokens before it in its document
            real = np.concatenate(([0], np.cumsum(piece[indices], dtype=np.int64)))
            lengths = np.diff(offsets)
            before = np.repeat(real[offsets[:-1]], lengths)
            where = (real[1:] - before - 1)[keep].astype(np.uint32)
        places = pa.ListArray.from_arrays(
            pa.array(counts[offsets].astype(np.int32)), pa.array(where, pa.uint32()), mask=mask
        )
        return tokens, places


def _as_string_array(texts: Any) -> pa.Array:
    """``texts`` as one ``string`` Arrow array."""
    if isinstance(texts, pa.ChunkedArray):
        texts = pa.concat_arrays(texts.chunks) if texts.num_chunks else pa.array([], pa.string())
    if not isinstance(texts, pa.Array):
        if isinstance(texts, str):
            raise TypeError("texts must be a column of strings, not one str (use tokens())")
        texts = pa.array(list(texts), pa.string())
    t = texts.type
    if pa.types.is_dictionary(t):
        texts = texts.cast(t.value_type)
        t = texts.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)):
        raise TypeError(f"texts must be strings, got an Arrow array of {t}")
    if not pa.types.is_string(t):
        texts = texts.cast(pa.string())
    return texts
