"""numba kernels of the INVERTED index build (layer L3; imports numba).

Private to :mod:`lance_semantic.fts.inverted_write`, which loads this module through its
kernel gate. :func:`encode_postings` turns every token's posting list (ascending document
ids and their frequencies, tokens one after another) into the bytes pylance 14 keeps in
``part_<n>_invert.lance``; it runs twice, first measuring (``write`` false: only the sizes
are filled in), then writing into buffers of exactly those sizes.

Per token, blocks of :data:`BLOCK` postings, each its own ``_posting`` entry:

- an f32 (little endian): the block's score, ``max(f / (f + norm(dl))) * idf * (K1 + 1)``
  with pylance's f32 operation order (``norm(dl) = K1 * ((1 - B) + B * dl / avgdl)``,
  ``idf = ln((N - n + 0.5) / (n + 0.5) + 1)``);
- a full block: the first document id (u32), a bit width (u8) and the 128 document-id
  deltas (the first 0) BitPacker4x-packed, a bit width and the frequencies packed likewise;
- the last, partial block: varints, the document ids as deltas (the first absolute), then
  the frequencies.

BitPacker4x packs 128 values in four interleaved lanes: value ``i`` goes to lane ``i % 4``,
each lane LSB first into 32-bit words, word ``w`` of lane ``j`` stored as u32 number
``4w + j``: a width of ``b`` bits takes ``16 b`` bytes.

``_impacts``: one entry per block, then one per :data:`LEVEL1` blocks (over their documents
together). An entry is the varints ``last document id`` and ``pair count``, then per pair of
the (frequency, quantized document length) frontier ``(frequency delta - 1) << 1 |
explicit``, followed by a byte of the length delta when it is not 1. The frontier keeps,
for each frequency, its shortest document, then only the pairs no pair of a higher
frequency beats on length; lengths are quantized (below 8 as they are, else 3 mantissa bits
and the shift), and pairs whose quantized lengths are equal merge into the higher frequency.
No ``fastmath``: the scores are pylance's to the bit.
"""

from __future__ import annotations

import numpy as np

from ..codecs._kernel_jit import cached_jit
from .inverted_write import KERNEL_CACHE

__all__ = ["encode_postings"]

_jit = cached_jit(KERNEL_CACHE, error_model="numpy")

BLOCK = 128
LEVEL1 = 32
_K1 = np.float32(1.2)
_B = np.float32(0.75)
_ONE = np.float32(1.0)
_HALF = np.float32(0.5)


@_jit
def _bits(v: int) -> int:  # pragma: no cover - compiled
    n = 0
    while v:
        n += 1
        v >>= 1
    return n


@_jit
def _varint_len(v: int) -> int:  # pragma: no cover - compiled
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


@_jit
def _put_varint(out: np.ndarray, at: int, v: int) -> int:  # pragma: no cover - compiled
    while v >= 0x80:
        out[at] = (v & 0x7F) | 0x80
        at += 1
        v >>= 7
    out[at] = v
    return at + 1


@_jit
def _put_u32(out: np.ndarray, at: int, v: int) -> int:  # pragma: no cover - compiled
    for k in range(4):
        out[at + k] = (v >> (8 * k)) & 0xFF
    return at + 4


@_jit
def _f32_bits(x: np.float32) -> int:  # pragma: no cover - compiled
    return int(np.array([x], np.float32).view(np.uint32)[0])


@_jit
def _pack(values: np.ndarray, width: int, out: np.ndarray, at: int) -> int:  # pragma: no cover
    """BitPacker4x: 128 values of ``width`` bits at ``out[at:]``; the end."""
    if width == 0:
        return at
    words = np.zeros(4 * width, np.uint32)
    for j in range(4):
        for i in range(32):
            v = np.uint64(values[4 * i + j])
            bit = i * width
            w = bit >> 5
            shift = bit & 31
            words[4 * w + j] |= np.uint32((v << np.uint64(shift)) & np.uint64(0xFFFFFFFF))
            if shift + width > 32:
                words[4 * (w + 1) + j] |= np.uint32(v >> np.uint64(32 - shift))
    for k in range(4 * width):
        at = _put_u32(out, at, int(words[k]))
    return at


@_jit
def _quantize(dl: int) -> int:  # pragma: no cover - compiled
    bits = _bits(dl)
    if bits < 4:
        return dl
    shift = bits - 4
    return ((dl >> shift) & 7) | ((shift + 1) << 3)


@_jit
def _impact(
    docs: np.ndarray, freqs: np.ndarray, lens: np.ndarray, write: bool, out: np.ndarray, at: int
) -> int:  # pragma: no cover - compiled
    """The impact entry of the postings ``docs`` / ``freqs`` (their documents' lengths
    ``lens``) at ``out[at:]`` (measured only unless ``write``); the end."""
    n = docs.shape[0]
    keys = np.empty(n, np.int64)
    for i in range(n):
        keys[i] = (np.int64(freqs[i]) << 32) | np.int64(lens[i])
    keys.sort()
    # per frequency its shortest document (the first of its run)
    ufreq = np.empty(n, np.int64)
    ulen = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        f = keys[i] >> 32
        if m and ufreq[m - 1] == f:
            continue
        ufreq[m] = f
        ulen[m] = keys[i] & 0xFFFFFFFF
        m += 1
    # the frontier: from the highest frequency down, a strictly shorter document each time
    ffreq = np.empty(m, np.int64)
    fnorm = np.empty(m, np.int64)
    k = 0
    best = np.int64(1) << 40
    for i in range(m - 1, -1, -1):
        if ulen[i] < best:
            ffreq[k] = ufreq[i]
            fnorm[k] = _quantize(ulen[i])
            best = ulen[i]
            k += 1
    # ascending, equal quantized lengths merged into the higher frequency
    qfreq = np.empty(k, np.int64)
    qnorm = np.empty(k, np.int64)
    q = 0
    for i in range(k - 1, -1, -1):
        if q and qnorm[q - 1] == fnorm[i]:
            qfreq[q - 1] = ffreq[i]
        else:
            qfreq[q] = ffreq[i]
            qnorm[q] = fnorm[i]
            q += 1
    last = int(docs[n - 1])
    if not write:
        size = _varint_len(last) + _varint_len(q)
        pf, pn = 0, 0
        for i in range(q):
            delta = (qnorm[i] - pn) & 0xFF
            size += _varint_len(((qfreq[i] - pf - 1) << 1) | (1 if delta != 1 else 0))
            if delta != 1:
                size += 1
            pf, pn = qfreq[i], qnorm[i]
        return at + size
    at = _put_varint(out, at, last)
    at = _put_varint(out, at, q)
    pf, pn = 0, 0
    for i in range(q):
        delta = (qnorm[i] - pn) & 0xFF
        explicit = 1 if delta != 1 else 0
        at = _put_varint(out, at, ((qfreq[i] - pf - 1) << 1) | explicit)
        if explicit:
            out[at] = delta
            at += 1
        pf, pn = qfreq[i], qnorm[i]
    return at


@_jit
def _block(
    docs: np.ndarray,
    freqs: np.ndarray,
    score: np.float32,
    write: bool,
    out: np.ndarray,
    at: int,
) -> int:  # pragma: no cover - compiled
    """One posting block at ``out[at:]`` (measured only unless ``write``); the end."""
    n = docs.shape[0]
    if n == BLOCK:
        deltas = np.empty(BLOCK, np.uint32)
        anyd = 0
        anyf = 0
        for i in range(BLOCK):
            d = int(docs[i]) - int(docs[i - 1 if i else 0])
            deltas[i] = d
            anyd |= d
            anyf |= int(freqs[i])
        wd, wf = _bits(anyd), _bits(anyf)
        if not write:
            return at + 4 + 4 + 1 + 16 * wd + 1 + 16 * wf
        at = _put_u32(out, at, _f32_bits(score))
        at = _put_u32(out, at, int(docs[0]))
        out[at] = wd
        at = _pack(deltas, wd, out, at + 1)
        out[at] = wf
        return _pack(freqs, wf, out, at + 1)
    if not write:
        size = 4
        for i in range(n):
            size += _varint_len(int(docs[i]) - (int(docs[i - 1]) if i else 0))
            size += _varint_len(int(freqs[i]))
        return at + size
    at = _put_u32(out, at, _f32_bits(score))
    for i in range(n):
        at = _put_varint(out, at, int(docs[i]) - (int(docs[i - 1]) if i else 0))
    for i in range(n):
        at = _put_varint(out, at, int(freqs[i]))
    return at


@_jit
def encode_postings(
    starts: np.ndarray,
    docs: np.ndarray,
    freqs: np.ndarray,
    doc_lens: np.ndarray,
    total_tokens: int,
    write: bool,
    post_ends: np.ndarray,
    post_bytes: np.ndarray,
    impact_ends: np.ndarray,
    impact_bytes: np.ndarray,
    max_scores: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Every token's posting blocks and impact entries. Token ``t``'s postings are
    ``docs[starts[t]:starts[t + 1]]`` (u32, ascending) and ``freqs`` likewise;
    ``doc_lens[d]`` is document ``d``'s token count. Block ``b`` (tokens' blocks in order)
    ends at ``post_ends[b]`` of ``post_bytes``, impact entry ``e`` at ``impact_ends[e]``;
    measuring (``write`` false) fills in the ends (and ``max_scores``), writing fills in
    the bytes."""
    num_docs = doc_lens.shape[0]
    n_docs = np.float32(num_docs)
    avgdl = np.float32(total_tokens) / n_docs
    b = 0
    e = 0
    pat = 0
    iat = 0
    for t in range(starts.shape[0] - 1):
        lo, hi = starts[t], starts[t + 1]
        length = hi - lo
        nt = np.float32(length)
        idf = np.float32(np.log((n_docs - nt + _HALF) / (nt + _HALF) + _ONE))
        scale = idf * (_K1 + _ONE)
        best_block = np.float32(-np.inf)
        blocks = 0
        for at in range(lo, hi, BLOCK):
            end = min(at + BLOCK, hi)
            best = np.float32(-np.inf)
            lens = np.empty(end - at, np.int64)
            for i in range(at, end):
                dl = doc_lens[docs[i]]
                lens[i - at] = dl
                norm = _K1 * ((_ONE - _B) + _B * np.float32(dl) / avgdl)
                f = np.float32(freqs[i])
                w = f / (f + norm)
                if w > best:
                    best = w
            score = np.float32(best * scale)
            if score > best_block:
                best_block = score
            pat = _block(docs[at:end], freqs[at:end], score, write, post_bytes, pat)
            post_ends[b] = pat
            b += 1
            iat = _impact(docs[at:end], freqs[at:end], lens, write, impact_bytes, iat)
            impact_ends[e] = iat
            e += 1
            blocks += 1
        # one entry per LEVEL1 blocks, after the per-block ones
        for g in range(0, blocks, LEVEL1):
            a0 = lo + g * BLOCK
            a1 = min(lo + (g + LEVEL1) * BLOCK, hi)
            lens = np.empty(a1 - a0, np.int64)
            for i in range(a0, a1):
                lens[i - a0] = doc_lens[docs[i]]
            iat = _impact(docs[a0:a1], freqs[a0:a1], lens, write, impact_bytes, iat)
            impact_ends[e] = iat
            e += 1
        max_scores[t] = best_block


@_jit
def encode_positions(
    starts: np.ndarray,
    pos_starts: np.ndarray,
    positions: np.ndarray,
    write: bool,
    stream_ends: np.ndarray,
    stream_bytes: np.ndarray,
    block_offsets: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Every token's ``_compressed_position`` stream (``packed_delta_v1``) and the offset
    of each of its posting blocks in it. Posting ``p`` (tokens' postings in order, as
    :func:`encode_postings` takes them) holds the positions
    ``positions[pos_starts[p]:pos_starts[p + 1]]`` (ascending). A block's values are each
    document's positions as deltas (the first absolute), its documents in order; they go in
    groups of 128 (a bit width, then BitPacker4x), the rest as varints. Token ``t``'s stream
    ends at ``stream_ends[t]`` of ``stream_bytes``; block ``b``'s offset (from its token's
    stream start) is ``block_offsets[b]``."""
    at = 0
    b = 0
    group = np.empty(BLOCK, np.uint32)
    for t in range(starts.shape[0] - 1):
        base = at
        for lo in range(starts[t], starts[t + 1], BLOCK):
            hi = min(lo + BLOCK, starts[t + 1])
            block_offsets[b] = at - base
            b += 1
            n = 0
            for p in range(lo, hi):
                prev = 0
                for k in range(pos_starts[p], pos_starts[p + 1]):
                    v = int(positions[k])
                    group[n] = v - prev if k > pos_starts[p] else v
                    prev = v
                    n += 1
                    if n == BLOCK:
                        width = 0
                        for i in range(BLOCK):
                            width |= int(group[i])
                        width = _bits(width)
                        if write:
                            stream_bytes[at] = width
                            _pack(group, width, stream_bytes, at + 1)
                        at += 1 + 16 * width
                        n = 0
            for i in range(n):
                if write:
                    at = _put_varint(stream_bytes, at, int(group[i]))
                else:
                    at += _varint_len(int(group[i]))
        stream_ends[t] = at
