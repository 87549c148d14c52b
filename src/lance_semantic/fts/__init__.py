"""Full-text search over pylance's INVERTED indices (layer L3).

Below ``read/`` and ``dataset/``: it imports errors, types, codecs, manifest and storage,
never a layer above. :class:`TokenMap` reads an index's FST token map in place.
"""

# the token map and pylance's analyzer (i31/fts-tokens)
from .token_map import TOKEN_FST_COLUMN, TokenMap

__all__ = [
    # the token map and pylance's analyzer (i31/fts-tokens)
    "TOKEN_FST_COLUMN",
    "TokenMap",
]
