"""Full-text search over pylance's INVERTED indices (layer L3).

Below ``read/`` and ``dataset/``: it imports errors, types, codecs, manifest and storage,
never a layer above. :class:`TokenMap` reads an index's FST token map in place;
:class:`Analyzer` gives the tokens pylance's analyzer makes of a text under an index's
:class:`AnalyzerParams` (:func:`analyzer_params` reads them from the index).
"""

# the token map and pylance's analyzer (i31/fts-tokens)
from .params import LANGUAGES, AnalyzerParams, analyzer_params
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
]
