"""Full-text search over pylance's INVERTED indices (layer L3).

Below ``read/`` and ``dataset/``: it imports errors, types, codecs, manifest and storage
(and the scalar indices' index file reader), never a layer above. :class:`TokenMap` reads
an index's FST token map in place; :class:`Analyzer` gives the tokens pylance's analyzer
makes of a text under an index's :class:`AnalyzerParams` (:func:`analyzer_params` reads
them from the index). :class:`InvertedIndex` reads an index's posting lists and searches
them with BM25 as pylance scores; :func:`full_text_query` checks pylance's query forms.
"""

# the token map and pylance's analyzer (i31/fts-tokens)
# posting lists, BM25 search and full_text_query (i31/fts-search)
from .indices import INVERTED_DETAILS, clear_kept_inverted, open_inverted_index  # noqa: I001
from .inverted import InvertedIndex, TermMatches, bm25_weights, idf
from .params import LANGUAGES, AnalyzerParams, analyzer_params
from .postings import Postings, decode_positions, decode_postings
from .query import (
    PHRASE_WITHOUT_POSITIONS,
    SCORE,
    BooleanQuery,
    BoostQuery,
    FullTextOperator,
    FullTextQuery,
    Hits,
    MatchQuery,
    MultiMatchQuery,
    Occur,
    PhraseQuery,
    Searcher,
    TextSearch,
    evaluate,
    full_text_query,
)
from .token_map import TOKEN_FST_COLUMN, TokenMap
from .tokenize import BASE_TOKENIZERS, Analyzer

__all__ = [
    # the token map and pylance's analyzer (i31/fts-tokens)
    "Analyzer",
    "AnalyzerParams",
    "BASE_TOKENIZERS",
    "LANGUAGES",
    "TOKEN_FST_COLUMN",
    "TokenMap",
    "analyzer_params",
    # posting lists, BM25 search and full_text_query (i31/fts-search)
    "BooleanQuery",
    "BoostQuery",
    "FullTextOperator",
    "FullTextQuery",
    "Hits",
    "INVERTED_DETAILS",
    "InvertedIndex",
    "MatchQuery",
    "MultiMatchQuery",
    "Occur",
    "PHRASE_WITHOUT_POSITIONS",
    "PhraseQuery",
    "Postings",
    "SCORE",
    "Searcher",
    "TermMatches",
    "TextSearch",
    "bm25_weights",
    "clear_kept_inverted",
    "decode_positions",
    "decode_postings",
    "evaluate",
    "full_text_query",
    "idf",
    "open_inverted_index",
]
