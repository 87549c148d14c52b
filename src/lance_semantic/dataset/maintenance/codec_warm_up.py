"""``ls.warm_up``: the JSON codec's compiled kernels, loaded or compiled ahead of need
(layer L5)."""

from __future__ import annotations

from ...codecs import json as json_codec

__all__ = ["warm_up"]


def warm_up() -> dict[str, float]:
    """Load the JSON codec's compiled kernels, or compile them into the user-wide cache now
    (the first time on a machine: 10 to 30 s each, said on stderr); seconds each took.

    Not needed: a process converts its first few MB of JSON without them and loads them when
    its work grows. Useful in an image build (``lance-semantic warm-up``) or before timing.

    >>> import lance_semantic as ls
    >>> sorted(ls.warm_up())
    ['check_rows', 'encode_rows', 'render_rows']
    """
    return json_codec.warm_up()
