"""``ls.warm_up``: the compiled kernels of the JSON codec, of vector search's index
building and searching and of the full-text index build, loaded or compiled ahead of need
(layer L5)."""

from __future__ import annotations

from ...codecs import json as json_codec
from ...fts.inverted_write import warm_up as warm_up_fts_kernels
from ...vector import warm_up_ivf_kernels, warm_up_search_kernels

__all__ = ["warm_up"]


def warm_up() -> dict[str, float]:
    """Load the JSON codec's, the IVF index builder's, the IVF search's and the full-text
    index builder's compiled kernels,
    or compile them into the user-wide cache now (the first time on a machine: 10 to 30 s
    each for the JSON codec, a few seconds each for the IVF kernels, said on stderr);
    seconds each took.

    Not needed: a process converts its first few MB of JSON without them and loads them when
    its work grows; ``create_index`` loads the IVF kernels on its first call, and a search
    through an IVF index the search kernels once its work grows. Useful in an
    image build (``lance-semantic warm-up``) or before timing.

    >>> import lance_semantic as ls
    >>> sorted(ls.warm_up())  # doctest: +NORMALIZE_WHITESPACE
    ['accumulate', 'assign', 'check_rows', 'encode_postings', 'encode_rows', 'flat_scan',
     'pq_encode', 'pq_scan', 'render_rows', 'seed_distances', 'seed_pick', 'sq_encode',
     'sq_scan']
    """
    return {
        **json_codec.warm_up(),
        **warm_up_ivf_kernels(),
        **warm_up_search_kernels(),
        **warm_up_fts_kernels(),
    }
