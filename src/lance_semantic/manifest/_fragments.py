"""Decode a manifest's fragments at the cost of what changed since the previous version
(layer L3; the fast path of commits and opens).

Consecutive versions of a table share almost all of their fragments, and both pylance (prost)
and lance-semantic (upb) serialize a Manifest in field-number order: the schema (field 1),
then the fragments (field 2, one length-delimited entry each), then the rest. So the bytes of
a new version's message start with those of the previous version up to the first fragment
that changed. :func:`fragments_of` finds that common prefix with block comparisons, reuses
the fragments (the same objects) whose entries lie inside it, and decodes only the entries
after it. Anything unexpected (another field order, a count that disagrees with the parsed
message) falls back to decoding every fragment.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

from ._pb import lance_table_pb2 as tpb
from ._wire import read_varint
from .model import Fragment

__all__ = ["fragments_of", "common_prefix"]

_BLOCK = 4096
_FIELDS, _FRAGMENTS = 0x0A, 0x12  # tags of Manifest fields 1 and 2 (length-delimited)


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share.

    >>> common_prefix(b"abcdef", b"abcxyz"), common_prefix(b"ab", b"abc")
    (3, 2)
    """
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i : i + _BLOCK] == b[i : i + _BLOCK]:
        i += _BLOCK
    if i >= n:
        return n
    end = min(i + _BLOCK, n)
    lo, hi = i, end  # the first difference is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo if a[lo] != b[lo] else hi


def _first_fragment(raw: bytes) -> int | None:
    """Offset of the first fragment entry (after the schema's entries), or None when the
    message does not start with schema entries followed by fragment entries."""
    pos = 0
    while pos < len(raw) and raw[pos] == _FIELDS:
        length, start = read_varint(raw, pos + 1)
        pos = start + length
    if pos < len(raw) and raw[pos] != _FRAGMENTS:
        return pos if pos == len(raw) else None
    return pos


#: the schema bytes of a table's message -> (message bytes, end offset of each fragment
#: entry, the fragments) of the last version decoded with that schema
_LAST: dict[bytes, tuple[bytes, list[int], tuple[Fragment, ...]]] = {}


def fragments_of(
    raw: bytes,
    pb: tpb.Manifest,
    decode: Callable[[bytes], Fragment],
    fallback: Callable[[Sequence[tpb.DataFragment]], tuple[Fragment, ...]],
) -> tuple[Fragment, ...]:
    """The fragments of the Manifest message ``raw`` (parsed as ``pb``): reused from the
    previous version of the same schema where the bytes are the same, ``decode`` for each
    other entry, ``fallback(pb.fragments)`` when the layout is not the expected one."""
    try:
        first = _first_fragment(raw)
    except ValueError:  # cannot happen for a message that parsed; the parser knows better
        first = None
    if first is None:
        return fallback(pb.fragments)
    schema = raw[:first]
    kept: list[Fragment] = []
    ends: list[int] = []
    pos = first
    last = _LAST.get(schema)
    if last is not None:
        same = common_prefix(raw, last[0])
        k = bisect_right(last[1], same)
        kept, ends = list(last[2][:k]), last[1][:k]
        pos = ends[-1] if ends else first
    try:
        while pos < len(raw) and raw[pos] == _FRAGMENTS:
            length, start = read_varint(raw, pos + 1)
            pos = start + length
            kept.append(decode(raw[start:pos]))
            ends.append(pos)
    except ValueError:  # a truncated entry: the parsed message knows better
        return fallback(pb.fragments)
    if len(kept) != len(pb.fragments):
        return fallback(pb.fragments)
    fragments = tuple(kept)
    if len(_LAST) >= 64:
        _LAST.clear()
    _LAST[schema] = (raw, ends, fragments)
    return fragments
