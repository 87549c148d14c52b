"""numba kernels of the JSON codec: text -> JSONB, JSONB -> text, JSONB well-formedness (L2).

Private to :mod:`lance_semantic.codecs.json`, which imports this module when a call needs a
kernel (:mod:`~lance_semantic.codecs._kernel_gate`). Each kernel is compiled on its first call
(``encode_rows`` about 20 s on two cores, ``render_rows`` and ``check_rows`` about 10 s) and
cached on disk in the user-wide folder of :mod:`~lance_semantic.codecs._kernel_cache`, keyed
by this file's text rather than its path, so a new virtual environment loads it (about a
second with numba's import). Where that folder is not writable numba's own locations are
tried (``__pycache__`` next to this file, ...); with none writable the kernels are compiled
in every process. Every input array reaches a kernel read-only, so each kernel has exactly
one signature.

Every kernel works on whole Arrow buffers -- ``offsets`` (int64), ``data`` (uint8), a validity
bitmap -- over a range of rows, and writes into a caller-owned output buffer. A kernel stops
early and tells the caller why:

``ST_DONE``        every row of the range was written
``ST_NEED_SPACE``  row ``row`` does not fit the output buffer (rows before it are written)
``ST_ERROR``       row ``row`` is invalid: failure ``code`` at byte ``pos`` of the row
``ST_FALLBACK``    row ``row`` must be converted by the reference implementation (a float
                   whose correctly rounded value the fast parser cannot decide; JSONB that is
                   not well-formed and renders as its raw bytes)
``ST_NEED_SCRATCH`` row ``row`` needs bigger scratch arrays (more values, a longer row or
                   deeper nesting than they hold)

The caller resolves the condition and calls again from ``row``. The rules implemented are
those of :mod:`lance_semantic.codecs.json_reference`.

Float conversions: text -> f64 uses the Eisel-Lemire algorithm (as fast_float and Rust's
``dec2flt`` do; exact for 10**-27 <= 10**q <= 10**55, and it reports the rare input it cannot
decide, which then goes to Python's correctly rounded ``float`` through the reference); f64 ->
text uses Ryu (shortest round-trip digits, the closest of them), laid out as pylance's
``zmij`` does.

Performance notes: helpers take scalars only (an array argument of a helper costs atomic
reference counting on every call, which also serializes threads sharing the array); byte loops
index with unsigned integers (numba tests every signed index for wraparound); 128-bit products
are one LLVM ``i128`` multiply. Every kernel releases the GIL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros
from numba.extending import intrinsic

from . import _kernel_cache
from ._jsonb_format import (
    B_BAD_ENTRY,
    B_BAD_HEADER,
    B_BAD_LENGTH,
    B_BAD_NUMBER,
    B_BAD_UTF8,
    B_EMPTY,
    B_KEY_ORDER,
    B_KEY_TYPE,
    B_TOO_DEEP,
    B_TRAILING,
    B_TRUNCATED,
    E_CONTROL_CHAR,
    E_DUPLICATE_KEY,
    E_EMPTY,
    E_EOF,
    E_EXPECTED_COLON,
    E_EXPECTED_COMMA_OR_BRACE,
    E_EXPECTED_COMMA_OR_BRACKET,
    E_EXPECTED_KEY,
    E_EXPECTED_VALUE,
    E_INVALID_ESCAPE,
    E_INVALID_HEX,
    E_INVALID_LITERAL,
    E_INVALID_NUMBER,
    E_INVALID_UTF8,
    E_TOO_DEEP,
    E_TOO_LARGE,
    E_TRAILING,
    E_UNTERMINATED_STRING,
    MAX_CONTAINER_COUNT,
    MAX_ENTRY_LENGTH,
    MAX_NESTING_DEPTH,
)
from ._kernel_jit import cached_jit

__all__ = [
    "encode_rows",
    "render_rows",
    "check_rows",
    "encode_scratch",
    "render_scratch",
    "ST_DONE",
    "ST_NEED_SPACE",
    "ST_ERROR",
    "ST_FALLBACK",
    "ST_NEED_SCRATCH",
]

_log = logging.getLogger(__name__)

ST_DONE = 0
ST_NEED_SPACE = 1
ST_ERROR = 2
ST_FALLBACK = 3
ST_NEED_SCRATCH = 4


#: ``njit(nogil=True)`` with the user-wide disk cache (:mod:`._kernel_jit`)
_jit = cached_jit(_kernel_cache.JSON_KERNELS)


def _inline(fn: Callable[..., Any]) -> Any:
    """A helper inlined into its callers at numba IR level: array arguments then cost no
    reference counting (an out-of-line call increfs/decrefs every array it is passed)."""
    import os

    if os.environ.get("JX_INLINE") == "never":
        return njit(nogil=True)(fn)
    return njit(inline="always", nogil=True)(fn)


# ---- constants (numpy scalars keep numba's integer types exact) -------------------------------
U0 = np.uint64(0)
U1 = np.uint64(1)
U2 = np.uint64(2)
U3 = np.uint64(3)
U4 = np.uint64(4)
U5 = np.uint64(5)
U8 = np.uint64(8)
U9 = np.uint64(9)
U10 = np.uint64(10)
U32 = np.uint64(32)
U52 = np.uint64(52)
U63 = np.uint64(63)
U64_ = np.uint64(64)
U100 = np.uint64(100)
U10000 = np.uint64(10000)
U255 = np.uint64(255)
M32 = np.uint64(0xFFFFFFFF)
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
HIDDEN = np.uint64(1 << 52)
MANT_MASK = np.uint64((1 << 52) - 1)
SIGN = np.uint64(1 << 63)
INF_BITS = np.uint64(0x7FF << 52)
U64_MAX_DIV10 = np.uint64(((1 << 64) - 1) // 10)
TEN19 = np.uint64(10**19)
I64_MIN_MAG = np.uint64(1 << 63)

I_MAX_ENTRY = np.int64(MAX_ENTRY_LENGTH)
I_MAX_COUNT = np.int64(MAX_CONTAINER_COUNT)
I_MAX_DEPTH = np.int64(MAX_NESTING_DEPTH)

# node types of the parse tape
T_NULL = 0
T_FALSE = 1
T_TRUE = 2
T_STRING = 3
T_NUMBER = 4
T_ARRAY = 5
T_OBJECT = 6

_JE_OF_TYPE = np.array(
    [0x00000000, 0x30000000, 0x40000000, 0x10000000, 0x20000000, 0x50000000, 0x50000000],
    dtype=np.int64,
)

_DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8).copy()


def _eisel_lemire_table() -> np.ndarray:
    """128-bit truncated significands of 5**q, q in [-342, 308] (fast_float's table)."""
    rows = []
    for q in range(-342, 0):
        power5 = 5**-q
        z = power5.bit_length()
        if (1 << (z - 1)) == power5:  # never for q < 0 (5**k is not a power of two)
            z -= 1
        b = 2 * z + 2 * 64 if q < -27 else z + 127
        c = (1 << b) // power5 + 1
        while c >= 1 << 128:
            c //= 2
        rows.append((c >> 64, c & ((1 << 64) - 1)))
    for q in range(0, 309):
        power5 = 5**q
        while power5 < 1 << 127:
            power5 *= 2
        while power5 >= 1 << 128:
            power5 //= 2
        rows.append((power5 >> 64, power5 & ((1 << 64) - 1)))
    return np.array(rows, dtype=np.uint64)


def _ryu_tables() -> tuple[np.ndarray, np.ndarray]:
    """Ryu's DOUBLE_POW5_INV_SPLIT (342) and DOUBLE_POW5_SPLIT (326), as (lo, hi) rows."""
    inv, pos = [], []
    for i in range(342):
        p = 5**i
        v = (1 << (p.bit_length() - 1 + 125)) // p + 1
        inv.append((v & ((1 << 64) - 1), v >> 64))
    for i in range(326):
        p = 5**i
        shift = p.bit_length() - 125
        v = p >> shift if shift >= 0 else p << -shift
        pos.append((v & ((1 << 64) - 1), v >> 64))
    return np.array(inv, dtype=np.uint64), np.array(pos, dtype=np.uint64)


_POW5_128 = _eisel_lemire_table()
_RYU_INV, _RYU_POW = _ryu_tables()


def encode_scratch(nodes: int, text: int) -> tuple[np.ndarray, ...]:
    """Scratch arrays of :func:`encode_rows` for ``nodes`` values and rows of ``text`` bytes."""
    return (
        np.empty(nodes, dtype=np.int8),
        np.empty((10, nodes), dtype=np.int64),
        np.empty(nodes, dtype=np.uint64),
        np.empty(max(text, 1), dtype=np.uint8),
    )


def render_scratch(depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch arrays of :func:`render_rows` for containers nested ``depth`` deep."""
    return np.empty((8, depth), dtype=np.int64), np.empty(32, dtype=np.uint8)


# ---- small helpers ----------------------------------------------------------------------------
@intrinsic
def _mul128_native(typingctx: Any, a: Any, b: Any) -> Any:
    """(hi, lo) of the 128-bit product of two uint64, as one native multiplication (LLVM i128;
    numba has no 128-bit integer type)."""
    if a != types.uint64 or b != types.uint64:
        return None
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64, i128 = ir.IntType(64), ir.IntType(128)
        prod = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        hi = builder.trunc(builder.lshr(prod, ir.Constant(i128, 64)), i64)
        lo = builder.trunc(prod, i64)
        return context.make_tuple(builder, signature.return_type, [hi, lo])

    return sig, codegen


@_jit
def _mul128(a: Any, b: Any) -> Any:
    """(hi, lo) of the 128-bit product of two uint64."""
    return _mul128_native(a, b)  # type: ignore[call-arg]


@_jit
def _hexval(c: Any) -> Any:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


@_jit
def _be32(b0: Any, b1: Any, b2: Any, b3: Any) -> Any:
    """The big-endian u32 of four bytes (helpers take scalars: an array argument would cost
    reference counting on every call, and atomic counts serialize threads sharing the array)."""
    return (np.int64(b0) << 24) | (np.int64(b1) << 16) | (np.int64(b2) << 8) | np.int64(b3)


# ---- text -> f64 ------------------------------------------------------------------------------
@_jit
def _eisel_lemire(q: Any, w: Any) -> Any:
    """(ok, bits) of the f64 nearest to ``w * 10**q`` (w > 0), without the sign. ``ok`` is
    False when the algorithm cannot decide (the caller then uses an exact method)."""
    if q < -342:
        return True, U0
    if q > 308:
        return True, np.uint64(0x7FF) << U52
    lz: Any = leading_zeros(w)  # type: ignore[call-arg]
    w = w << np.uint64(lz)
    idx = q + 342
    hi5 = _POW5_128[idx, 0]
    lo5 = _POW5_128[idx, 1]
    first_hi, first_lo = _mul128(w, hi5)
    mask = np.uint64(0x1FF)  # 0xFFFF_FFFF_FFFF_FFFF >> (52 + 3)
    if (first_hi & mask) == mask:
        second_hi, _second_lo = _mul128(w, lo5)
        first_lo = first_lo + second_hi
        if second_hi > first_lo:
            first_hi = first_hi + U1
    lo = first_lo
    hi = first_hi
    if lo == M64 and (q < -27 or q > 55):
        return False, U0
    upperbit = hi >> U63
    mantissa = hi >> (upperbit + np.uint64(9))
    power2 = ((q * (152170 + 65536)) >> 16) + 63 + np.int64(upperbit) - np.int64(lz) + 1023
    if power2 <= 0:
        if -power2 + 1 >= 64:
            return True, U0
        mantissa = mantissa >> np.uint64(-power2 + 1)
        mantissa = mantissa + (mantissa & U1)
        mantissa = mantissa >> U1
        p2 = U1 if mantissa >= HIDDEN else U0
        return True, (p2 << U52) | mantissa
    if (
        lo <= U1
        and q >= -4
        and q <= 23
        and (mantissa & U3) == U1
        and (mantissa << (upperbit + np.uint64(9))) == hi
    ):
        mantissa = mantissa & ~U1
    mantissa = mantissa + (mantissa & U1)
    mantissa = mantissa >> U1
    if mantissa >= (U2 << U52):
        mantissa = HIDDEN
        power2 += 1
    mantissa = mantissa & ~HIDDEN
    if power2 >= 0x7FF:
        return True, np.uint64(0x7FF) << U52
    return True, (np.uint64(power2) << U52) | mantissa


@_jit
def _decimal_to_f64(w: Any, q: Any, truncated: Any) -> Any:
    """(ok, bits) of the f64 nearest to ``w * 10**q`` (significant digits ``w``, which were cut
    to 19 when ``truncated``). Eisel-Lemire cannot fail for 10**-27 <= 10**q <= 10**55, which
    covers the exact (Clinger) cases; outside, it fails on rare near-halfway inputs, and a
    truncated ``w`` fails when ``w`` and ``w + 1`` round differently."""
    if w == U0:
        return True, U0
    ok, bits = _eisel_lemire(q, w)
    if not ok:
        return False, U0
    if truncated:
        ok2, bits2 = _eisel_lemire(q, w + U1)
        if not ok2 or bits2 != bits:
            return False, U0
    return True, bits


# ---- text -> JSONB ----------------------------------------------------------------------------
@_jit
def _i64(x: Any) -> Any:
    """An unsigned index back as a signed one."""
    return np.int64(x)


@_jit
def _is_ws(c: Any) -> Any:
    return c == 32 or c == 10 or c == 13 or c == 9


@_jit
def _utf8_seq(c0: Any, c1: Any, c2: Any, c3: Any, avail: Any) -> Any:
    """Length of the well-formed UTF-8 sequence led by ``c0`` (>= 0x80) and continued by
    ``c1..c3`` of which ``avail`` exist, or 0."""
    if 0xC2 <= c0 <= 0xDF:
        n = 2
        lo = 0x80
        hi = 0xBF
    elif c0 == 0xE0:
        n = 3
        lo = 0xA0
        hi = 0xBF
    elif (0xE1 <= c0 <= 0xEC) or c0 == 0xEE or c0 == 0xEF:
        n = 3
        lo = 0x80
        hi = 0xBF
    elif c0 == 0xED:
        n = 3
        lo = 0x80
        hi = 0x9F
    elif c0 == 0xF0:
        n = 4
        lo = 0x90
        hi = 0xBF
    elif 0xF1 <= c0 <= 0xF3:
        n = 4
        lo = 0x80
        hi = 0xBF
    elif c0 == 0xF4:
        n = 4
        lo = 0x80
        hi = 0x8F
    else:
        return 0
    if avail < n - 1:
        return 0
    if c1 < lo or c1 > hi:
        return 0
    if n >= 3 and (c2 < 0x80 or c2 > 0xBF):
        return 0
    if n == 4 and (c3 < 0x80 or c3 > 0xBF):
        return 0
    return n


@_jit
def _je_type(t: Any) -> Any:
    """The JEntry type bits of a parse-tape node type."""
    if t == T_STRING:
        return 0x10000000
    if t == T_NUMBER:
        return 0x20000000
    if t == T_FALSE:
        return 0x30000000
    if t == T_TRUE:
        return 0x40000000
    if t == T_NULL:
        return 0
    return 0x50000000


@_inline
def _merge_sort_pairs(pend: Any, p0: Any, npairs: Any, na: Any, nb: Any, sc: Any, tmp: Any) -> None:
    """Stable bottom-up merge sort of the (key, value) node pairs pend[p0:p0+2*npairs] by key
    bytes (keys live in ``sc``); ``tmp`` holds at least 2 * npairs entries."""
    width = 1
    src_is_pend = True
    while width < npairs:
        lo = 0
        while lo < npairs:
            mid = min(lo + width, npairs)
            hi = min(lo + 2 * width, npairs)
            i = lo
            j = mid
            k = lo
            while k < hi:
                take_left = i < mid
                if i < mid and j < hi:
                    if src_is_pend:
                        ka = pend[p0 + 2 * i]
                        kb = pend[p0 + 2 * j]
                    else:
                        ka = tmp[2 * i]
                        kb = tmp[2 * j]
                    sa = na[ka]
                    la = nb[ka]
                    sb = na[kb]
                    lb = nb[kb]
                    m = la if la < lb else lb
                    r = 0
                    for x in range(m):
                        ca = sc[sa + x]
                        cb = sc[sb + x]
                        if ca != cb:
                            r = -1 if ca < cb else 1
                            break
                    if r == 0:
                        r = -1 if la < lb else (1 if la > lb else 0)
                    take_left = r <= 0
                src = i if take_left else j
                if take_left:
                    i += 1
                else:
                    j += 1
                if src_is_pend:
                    tmp[2 * k] = pend[p0 + 2 * src]
                    tmp[2 * k + 1] = pend[p0 + 2 * src + 1]
                else:
                    pend[p0 + 2 * k] = tmp[2 * src]
                    pend[p0 + 2 * k + 1] = tmp[2 * src + 1]
                k += 1
            lo = hi
        src_is_pend = not src_is_pend
        width *= 2
    if not src_is_pend:
        for k in range(2 * npairs):
            pend[p0 + k] = tmp[k]


@_jit
def encode_rows(
    offsets: Any,
    data: Any,
    validity: Any,
    vbit0: Any,
    has_validity: Any,
    row: Any,
    row_end: Any,
    out: Any,
    out_pos: Any,
    out_offsets: Any,
    ntyp: Any,
    ints: Any,
    nu: Any,
    sc: Any,
) -> Any:
    """JSONB of JSON text rows ``row`` .. ``row_end - 1``.

    Scratch (caller-owned, see :func:`encode_scratch`): ``ntyp`` int8[cap], ``ints``
    int64[10, cap], ``nu`` uint64[cap] -- one entry per parsed value --, ``sc`` uint8 (at least
    the longest row: unescaped strings and every key are copied there).

    Returns ``(status, row, code, pos, out_pos, need)``; ``out_offsets[i + 1]`` is the end of
    row ``i``'s bytes in ``out`` for every row written.
    """
    # the parse tape: one node per value (and per key); containers list their children in cl
    na = ints[0]  # string: start; number: tag; container: first child in cl
    nb = ints[1]  # string: length; number: payload length; container: encoded size
    npos = ints[2]  # byte position of the value in the row (for errors)
    pend = ints[3]  # children of the open containers, in order
    cl = ints[4]  # children of closed containers
    tmp = ints[5]  # merge sort buffer
    work = ints[6]  # emission work list: node ...
    work_pos = ints[7]  # ... and where it goes
    cstk = ints[8]  # open containers
    cstk_p0 = ints[9]  # ... and where their children start in pend
    cap_nodes = ntyp.shape[0]
    cap_sc = sc.shape[0]
    cap = out.shape[0]
    while row < row_end:
        if has_validity:
            bit = vbit0 + row
            if ((validity[bit >> 3] >> (bit & 7)) & 1) == 0:
                out_offsets[row + 1] = out_pos
                row += 1
                continue
        s = offsets[row]
        e = offsets[row + 1]
        if e - s > cap_sc:
            return ST_NEED_SCRATCH, row, 0, 0, out_pos, e - s
        nn = 0
        pt = 0
        cl_top = 0
        sc_top = 0
        depth = 0
        root = 0
        code = 0
        epos = 0
        status = ST_DONE
        pos = s
        while pos < e and _is_ws(data[pos]):
            pos += 1
        if pos >= e:
            return ST_ERROR, row, E_EMPTY, pos - s, out_pos, 0
        # 0: a value is expected at pos; 1: a value just ended; 2: close the innermost
        # container; 3: an object key is expected at pos; 4: a string value starts at pos;
        # 5: attach the scalar node just parsed
        state = 0
        while True:
            if state == 0:
                while pos < e and _is_ws(data[pos]):
                    pos += 1
                if pos >= e:
                    code = E_EOF
                    epos = pos
                    break
                if nn + 2 > cap_nodes:
                    status = ST_NEED_SCRATCH
                    break
                c = data[pos]
                if c == 91 or c == 123:  # [ {
                    if depth >= I_MAX_DEPTH:
                        code = E_TOO_DEEP
                        epos = pos
                        break
                    node = nn
                    nn += 1
                    ntyp[node] = T_ARRAY if c == 91 else T_OBJECT
                    npos[node] = pos
                    if depth > 0:
                        pend[pt] = node
                        pt += 1
                    else:
                        root = node
                    cstk[depth] = node
                    cstk_p0[depth] = pt
                    depth += 1
                    pos += 1
                    while pos < e and _is_ws(data[pos]):
                        pos += 1
                    if pos >= e:
                        code = E_EOF
                        epos = pos
                        break
                    if (c == 91 and data[pos] == 93) or (c == 123 and data[pos] == 125):
                        pos += 1
                        state = 2
                    elif c == 123:
                        state = 3
                    continue
                node = nn
                nn += 1
                npos[node] = pos
                if c == 34:  # "
                    state = 4
                elif c == 116:  # t
                    if (
                        pos + 4 <= e
                        and data[pos + 1] == 114
                        and data[pos + 2] == 117
                        and (data[pos + 3] == 101)
                    ):
                        ntyp[node] = T_TRUE
                        pos += 4
                        state = 5
                    else:
                        code = E_INVALID_LITERAL
                        epos = pos
                        break
                elif c == 102:  # f
                    if (
                        pos + 5 <= e
                        and data[pos + 1] == 97
                        and data[pos + 2] == 108
                        and (data[pos + 3] == 115 and data[pos + 4] == 101)
                    ):
                        ntyp[node] = T_FALSE
                        pos += 5
                        state = 5
                    else:
                        code = E_INVALID_LITERAL
                        epos = pos
                        break
                elif c == 110:  # n
                    if (
                        pos + 4 <= e
                        and data[pos + 1] == 117
                        and data[pos + 2] == 108
                        and (data[pos + 3] == 108)
                    ):
                        ntyp[node] = T_NULL
                        pos += 4
                        state = 5
                    else:
                        code = E_INVALID_LITERAL
                        epos = pos
                        break
                elif c == 45 or (48 <= c <= 57):  # - digit
                    neg = c == 45
                    p = pos + 1 if neg else pos
                    if p >= e:
                        code = E_INVALID_NUMBER
                        epos = p
                        break
                    int_start = p
                    d = data[p]
                    if d == 48:
                        p += 1
                        if p < e and 48 <= data[p] <= 57:
                            code = E_INVALID_NUMBER
                            epos = p
                            break
                    elif 49 <= d <= 57:
                        p += 1
                        while p < e and 48 <= data[p] <= 57:
                            p += 1
                    else:
                        code = E_INVALID_NUMBER
                        epos = p
                        break
                    int_end = p
                    frac_start = p
                    frac_end = p
                    is_float = False
                    exp = 0
                    if p < e and data[p] == 46:
                        is_float = True
                        p += 1
                        frac_start = p
                        if p >= e or not (48 <= data[p] <= 57):
                            code = E_INVALID_NUMBER
                            epos = p
                            break
                        while p < e and 48 <= data[p] <= 57:
                            p += 1
                        frac_end = p
                    if p < e and (data[p] == 101 or data[p] == 69):
                        is_float = True
                        p += 1
                        eneg = False
                        if p < e and (data[p] == 43 or data[p] == 45):
                            eneg = data[p] == 45
                            p += 1
                        if p >= e or not (48 <= data[p] <= 57):
                            code = E_INVALID_NUMBER
                            epos = p
                            break
                        while p < e and 48 <= data[p] <= 57:
                            if exp < 100000:
                                exp = exp * 10 + (data[p] - 48)
                            p += 1
                        if eneg:
                            exp = -exp
                    pos = p
                    ntyp[node] = T_NUMBER
                    as_int = False
                    if not is_float and int_end - int_start <= 20:
                        w = U0
                        as_int = True
                        for k in range(int_start, int_end):
                            dg = np.uint64(data[k] - 48)
                            if w > U64_MAX_DIV10 or (w == U64_MAX_DIV10 and dg > U5):
                                as_int = False
                                break
                            w = w * U10 + dg
                        if as_int and neg and w > I64_MIN_MAG:
                            as_int = False
                        if as_int:
                            if w == U0:
                                na[node] = 0x00
                                nb[node] = 1
                                nu[node] = U0
                            elif not neg:
                                na[node] = 0x50
                                if w <= U255:
                                    nb[node] = 2
                                elif w <= np.uint64(0xFFFF):
                                    nb[node] = 3
                                elif w <= M32:
                                    nb[node] = 5
                                else:
                                    nb[node] = 9
                                nu[node] = w
                            else:
                                na[node] = 0x40
                                if w <= np.uint64(128):
                                    nb[node] = 2
                                elif w <= np.uint64(32768):
                                    nb[node] = 3
                                elif w <= np.uint64(2147483648):
                                    nb[node] = 5
                                else:
                                    nb[node] = 9
                                nu[node] = (~w) + U1  # two's complement of -w
                    if not as_int:
                        # significant digits of the integer and fraction parts
                        w = U0
                        kept = 0
                        total = 0
                        truncated = False
                        started = False
                        for k in range(int_start, frac_end):
                            if k == int_end:
                                continue  # the '.'
                            dg8 = data[k] - 48
                            if not started:
                                if dg8 == 0:
                                    continue
                                started = True
                            total += 1
                            if kept < 19:
                                w = w * U10 + np.uint64(dg8)
                                kept += 1
                            elif dg8 != 0:
                                truncated = True
                        q = exp - (frac_end - frac_start) + (total - kept)
                        if q > 100000:
                            q = 100000
                        elif q < -100000:
                            q = -100000
                        ok, bits = _decimal_to_f64(w, q, truncated)
                        if not ok:
                            status = ST_FALLBACK
                            break
                        if bits == INF_BITS:
                            na[node] = 0x30 if neg else 0x20
                            nb[node] = 1
                            nu[node] = U0
                        else:
                            na[node] = 0x60
                            nb[node] = 9
                            nu[node] = (bits | SIGN) if neg else bits
                    state = 5
                else:
                    code = E_EXPECTED_VALUE
                    epos = pos
                    break
            if state == 3 or state == 4:
                # a string at pos: an object key (3) or a value (4, node allocated)
                is_key = state == 3
                if is_key:
                    if data[pos] != 34:
                        code = E_EXPECTED_KEY
                        epos = pos
                        break
                    if nn + 2 > cap_nodes:
                        status = ST_NEED_SCRATCH
                        break
                    node = nn
                    nn += 1
                    npos[node] = pos
                else:
                    node = nn - 1
                str_start = pos + 1
                p = str_start
                has_esc = False
                while True:
                    pu = np.uint64(p)  # skip plain bytes, indexed unsigned (no wraparound test)
                    eu = np.uint64(e)
                    while pu < eu:
                        ch = data[pu]
                        if ch < 32 or ch == 34 or ch == 92 or ch >= 128:
                            break
                        pu += U1
                    p = _i64(pu)
                    if p >= e:
                        code = E_UNTERMINATED_STRING
                        epos = e
                        break
                    ch = data[p]
                    if ch == 34:
                        break
                    if ch == 92:
                        has_esc = True
                        break
                    if ch < 32:
                        code = E_CONTROL_CHAR
                        epos = p
                        break
                    if ch >= 128:
                        av = e - p - 1
                        k = _utf8_seq(
                            ch,
                            data[p + 1] if av >= 1 else 0,
                            data[p + 2] if av >= 2 else 0,
                            data[p + 3] if av >= 3 else 0,
                            av,
                        )
                        if k == 0:
                            code = E_INVALID_UTF8
                            epos = p
                            break
                        p += k
                    else:
                        p += 1
                if code != 0:
                    break
                ntyp[node] = T_STRING
                if not has_esc and not is_key:
                    na[node] = str_start
                    nb[node] = p - str_start
                    nu[node] = U0
                else:
                    sc0 = sc_top
                    for k in range(str_start, p):
                        sc[sc_top] = data[k]
                        sc_top += 1
                    while has_esc:
                        if p >= e:
                            code = E_UNTERMINATED_STRING
                            epos = e
                            break
                        ch = data[p]
                        if ch == 34:
                            break
                        if ch == 92:
                            if p + 1 >= e:
                                code = E_UNTERMINATED_STRING
                                epos = e
                                break
                            x = data[p + 1]
                            if x == 34 or x == 92 or x == 47:
                                sc[sc_top] = x
                                sc_top += 1
                                p += 2
                            elif x == 98:
                                sc[sc_top] = 8
                                sc_top += 1
                                p += 2
                            elif x == 102:
                                sc[sc_top] = 12
                                sc_top += 1
                                p += 2
                            elif x == 110:
                                sc[sc_top] = 10
                                sc_top += 1
                                p += 2
                            elif x == 114:
                                sc[sc_top] = 13
                                sc_top += 1
                                p += 2
                            elif x == 116:
                                sc[sc_top] = 9
                                sc_top += 1
                                p += 2
                            elif x == 117:
                                cp = 0
                                for k in range(4):
                                    if p + 2 + k >= e:
                                        code = E_UNTERMINATED_STRING
                                        epos = e
                                        break
                                    hv = _hexval(data[p + 2 + k])
                                    if hv < 0:
                                        code = E_INVALID_HEX
                                        epos = p + 2 + k
                                        break
                                    cp = cp * 16 + hv
                                if code != 0:
                                    break
                                keep = 0  # bytes of escapes kept as typed
                                if 0xDC00 <= cp <= 0xDFFF:
                                    keep = 6
                                elif 0xD800 <= cp <= 0xDBFF:
                                    if p + 7 < e and data[p + 6] == 92 and data[p + 7] == 117:
                                        cp2 = 0
                                        for k in range(4):
                                            if p + 8 + k >= e:
                                                code = E_UNTERMINATED_STRING
                                                epos = e
                                                break
                                            hv = _hexval(data[p + 8 + k])
                                            if hv < 0:
                                                code = E_INVALID_HEX
                                                epos = p + 8 + k
                                                break
                                            cp2 = cp2 * 16 + hv
                                        if code != 0:
                                            break
                                        if 0xDC00 <= cp2 <= 0xDFFF:
                                            cp = 0x10000 + ((cp - 0xD800) << 10) + (cp2 - 0xDC00)
                                            sc[sc_top] = 0xF0 | (cp >> 18)
                                            sc[sc_top + 1] = 0x80 | ((cp >> 12) & 0x3F)
                                            sc[sc_top + 2] = 0x80 | ((cp >> 6) & 0x3F)
                                            sc[sc_top + 3] = 0x80 | (cp & 0x3F)
                                            sc_top += 4
                                            p += 12
                                        else:
                                            keep = 12
                                    else:
                                        keep = 6
                                elif cp < 0x80:
                                    sc[sc_top] = cp
                                    sc_top += 1
                                    p += 6
                                elif cp < 0x800:
                                    sc[sc_top] = 0xC0 | (cp >> 6)
                                    sc[sc_top + 1] = 0x80 | (cp & 0x3F)
                                    sc_top += 2
                                    p += 6
                                else:
                                    sc[sc_top] = 0xE0 | (cp >> 12)
                                    sc[sc_top + 1] = 0x80 | ((cp >> 6) & 0x3F)
                                    sc[sc_top + 2] = 0x80 | (cp & 0x3F)
                                    sc_top += 3
                                    p += 6
                                for k in range(keep):
                                    sc[sc_top] = data[p + k]
                                    sc_top += 1
                                p += keep
                            else:
                                code = E_INVALID_ESCAPE
                                epos = p
                                break
                        elif ch < 32:
                            code = E_CONTROL_CHAR
                            epos = p
                            break
                        elif ch < 128:
                            sc[sc_top] = ch
                            sc_top += 1
                            p += 1
                        else:
                            av = e - p - 1
                            k = _utf8_seq(
                                ch,
                                data[p + 1] if av >= 1 else 0,
                                data[p + 2] if av >= 2 else 0,
                                data[p + 3] if av >= 3 else 0,
                                av,
                            )
                            if k == 0:
                                code = E_INVALID_UTF8
                                epos = p
                                break
                            for kk in range(k):
                                sc[sc_top] = data[p + kk]
                                sc_top += 1
                            p += k
                    if code != 0:
                        break
                    na[node] = sc0
                    nb[node] = sc_top - sc0
                    nu[node] = U1
                pos = p + 1
                if nb[node] > I_MAX_ENTRY:
                    code = E_TOO_LARGE
                    epos = str_start - 1
                    break
                if is_key:
                    pend[pt] = node
                    pt += 1
                    while pos < e and _is_ws(data[pos]):
                        pos += 1
                    if pos >= e:
                        code = E_EOF
                        epos = pos
                        break
                    if data[pos] != 58:
                        code = E_EXPECTED_COLON
                        epos = pos
                        break
                    pos += 1
                    state = 0
                    continue
                state = 5
            if state == 5:
                if depth > 0:
                    pend[pt] = nn - 1
                    pt += 1
                else:
                    root = nn - 1
                state = 1
                continue
            if state == 2:
                # close the innermost container: sort an object's keys, size it
                d = depth - 1
                node = cstk[d]
                p0 = cstk_p0[d]
                cnt = pt - p0
                is_obj = ntyp[node] == T_OBJECT
                npairs = cnt // 2 if is_obj else cnt
                if npairs > I_MAX_COUNT:
                    code = E_TOO_LARGE
                    epos = npos[node]
                    break
                size = 4 + 4 * cnt  # header and JEntries (keys included)
                if is_obj:
                    if npairs <= 16:  # insertion sort (stable)
                        for i in range(1, npairs):
                            kk = pend[p0 + 2 * i]
                            vv = pend[p0 + 2 * i + 1]
                            ks = na[kk]
                            kl = nb[kk]
                            j = i - 1
                            while j >= 0:
                                o = pend[p0 + 2 * j]
                                os_ = na[o]
                                ol = nb[o]
                                m = ol if ol < kl else kl
                                r = 0
                                for x in range(m):
                                    ca = sc[os_ + x]
                                    cb = sc[ks + x]
                                    if ca != cb:
                                        r = 1 if ca > cb else -1
                                        break
                                if r == 0:
                                    r = 1 if ol > kl else 0
                                if r <= 0:
                                    break
                                pend[p0 + 2 * j + 2] = o
                                pend[p0 + 2 * j + 3] = pend[p0 + 2 * j + 1]
                                j -= 1
                            pend[p0 + 2 * j + 2] = kk
                            pend[p0 + 2 * j + 3] = vv
                    else:
                        _merge_sort_pairs(pend, p0, npairs, na, nb, sc, tmp)
                    for i in range(1, npairs):
                        a = pend[p0 + 2 * i - 2]
                        b = pend[p0 + 2 * i]
                        la = nb[a]
                        if la == nb[b]:
                            sa = na[a]
                            sb = na[b]
                            same = True
                            for x in range(la):
                                if sc[sa + x] != sc[sb + x]:
                                    same = False
                                    break
                            if same:
                                code = E_DUPLICATE_KEY
                                epos = npos[b]
                                break
                    if code != 0:
                        break
                for i in range(cnt):
                    ch_node = pend[p0 + i]
                    t = ntyp[ch_node]
                    if t >= T_STRING:
                        ps = nb[ch_node]
                        if ps > I_MAX_ENTRY:
                            code = E_TOO_LARGE
                            epos = npos[ch_node]
                            break
                        size += ps
                    cl[cl_top + i] = ch_node
                if code != 0:
                    break
                na[node] = cl_top
                nu[node] = np.uint64(npairs)
                nb[node] = size
                cl_top += cnt
                pt = p0
                depth -= 1
                state = 1
                continue
            # state 1: after a value
            while pos < e and _is_ws(data[pos]):
                pos += 1
            if depth == 0:
                if pos != e:
                    code = E_TRAILING
                    epos = pos
                break
            if pos >= e:
                code = E_EOF
                epos = pos
                break
            c = data[pos]
            if ntyp[cstk[depth - 1]] == T_ARRAY:
                if c == 44:
                    pos += 1
                    state = 0
                elif c == 93:
                    pos += 1
                    state = 2
                else:
                    code = E_EXPECTED_COMMA_OR_BRACKET
                    epos = pos
                    break
            else:
                if c == 44:
                    pos += 1
                    while pos < e and _is_ws(data[pos]):
                        pos += 1
                    if pos >= e:
                        code = E_EOF
                        epos = pos
                        break
                    state = 3
                elif c == 125:
                    pos += 1
                    state = 2
                else:
                    code = E_EXPECTED_COMMA_OR_BRACE
                    epos = pos
                    break
        if status != ST_DONE:
            return status, row, 0, 0, out_pos, 2 * cap_nodes
        if code != 0:
            return ST_ERROR, row, code, epos - s, out_pos, 0

        # ---- emit: containers write their header and JEntries and queue their children ----
        rt = ntyp[root]
        if rt >= T_ARRAY:
            total = nb[root]
        else:
            ps = nb[root] if rt >= T_STRING else 0
            if ps > I_MAX_ENTRY:
                return ST_ERROR, row, E_TOO_LARGE, 0, out_pos, 0
            total = 8 + ps
        if out_pos + total > cap:
            return ST_NEED_SPACE, row, 0, 0, out_pos, total
        work[0] = root
        if rt >= T_ARRAY:
            work_pos[0] = out_pos
        else:
            at = out_pos
            v32 = np.int64(0x20000000)
            out[at] = (v32 >> 24) & 0xFF
            out[at + 1] = (v32 >> 16) & 0xFF
            out[at + 2] = (v32 >> 8) & 0xFF
            out[at + 3] = v32 & 0xFF
            at = out_pos + 4
            v32 = _je_type(rt) | (nb[root] if rt >= T_STRING else 0)
            out[at] = (v32 >> 24) & 0xFF
            out[at + 1] = (v32 >> 16) & 0xFF
            out[at + 2] = (v32 >> 8) & 0xFF
            out[at + 3] = v32 & 0xFF
            work_pos[0] = out_pos + 8
        wt = 1
        while wt > 0:
            wt -= 1
            node = work[wt]
            p = work_pos[wt]
            t = ntyp[node]
            if t == T_STRING:
                st = na[node]
                ln = nb[node]
                su = np.uint64(st)
                pu = np.uint64(p)
                if nu[node] == U1:
                    for k in range(np.uint64(ln)):
                        out[pu + k] = sc[su + k]
                else:
                    for k in range(np.uint64(ln)):
                        out[pu + k] = data[su + k]
            elif t == T_NUMBER:
                ln = nb[node]
                out[p] = na[node]
                v = nu[node]
                for k in range(ln - 1):
                    out[p + ln - 1 - k] = np.uint8(v & U255)
                    v = v >> U8
            elif t >= T_ARRAY:
                n = np.int64(nu[node])
                base = na[node]
                if t == T_OBJECT:
                    at = p
                    v32 = 0x40000000 | n
                    out[at] = (v32 >> 24) & 0xFF
                    out[at + 1] = (v32 >> 16) & 0xFF
                    out[at + 2] = (v32 >> 8) & 0xFF
                    out[at + 3] = v32 & 0xFF
                    je = p + 4
                    pay = p + 4 + 8 * n
                    for i in range(n):
                        kn = cl[base + 2 * i]
                        ks = na[kn]
                        kl = nb[kn]
                        at = je
                        v32 = 0x10000000 | kl
                        out[at] = (v32 >> 24) & 0xFF
                        out[at + 1] = (v32 >> 16) & 0xFF
                        out[at + 2] = (v32 >> 8) & 0xFF
                        out[at + 3] = v32 & 0xFF
                        je += 4
                        su = np.uint64(ks)
                        pu = np.uint64(pay)
                        for k in range(np.uint64(kl)):
                            out[pu + k] = sc[su + k]
                        pay += kl
                    stride = 2
                    first = base + 1
                else:
                    at = p
                    v32 = 0x80000000 | n
                    out[at] = (v32 >> 24) & 0xFF
                    out[at + 1] = (v32 >> 16) & 0xFF
                    out[at + 2] = (v32 >> 8) & 0xFF
                    out[at + 3] = v32 & 0xFF
                    je = p + 4
                    pay = p + 4 + 4 * n
                    stride = 1
                    first = base
                for i in range(n):
                    ch_node = cl[first + stride * i]
                    tc = ntyp[ch_node]
                    ps = nb[ch_node] if tc >= T_STRING else 0
                    at = je
                    v32 = _je_type(tc) | ps
                    out[at] = (v32 >> 24) & 0xFF
                    out[at + 1] = (v32 >> 16) & 0xFF
                    out[at + 2] = (v32 >> 8) & 0xFF
                    out[at + 3] = v32 & 0xFF
                    je += 4
                    if tc >= T_STRING:
                        work[wt] = ch_node
                        work_pos[wt] = pay
                        wt += 1
                    pay += ps
        out_pos += total
        out_offsets[row + 1] = out_pos
        row += 1
    return ST_DONE, row, 0, 0, out_pos, 0


# ---- f64 -> text (Ryu) ------------------------------------------------------------------------
@_jit
def _count_digits(v: Any) -> Any:
    """Decimal digits of a uint64 (1 for 0)."""
    n = 1
    while v >= U10000:
        v = v // U10000
        n += 4
    if v >= U100:
        v = v // U100
        n += 2
    if v >= U10:
        n += 1
    return n


@_jit
def _pow5bits(e: Any) -> Any:
    return ((e * 1217359) >> 19) + 1


@_jit
def _mul_shift64(m: Any, lo: Any, hi: Any, j: Any) -> Any:
    b0_hi, _b0_lo = _mul128(m, lo)
    b2_hi, b2_lo = _mul128(m, hi)
    s_lo = b2_lo + b0_hi
    s_hi = b2_hi + (U1 if s_lo < b0_hi else U0)
    sh = np.uint64(j - 64)
    return (s_hi << (U64_ - sh)) | (s_lo >> sh)


@_jit
def _pow5_factor(v: Any) -> Any:
    count = 0
    while v > U0:
        if v % U5 != U0:
            break
        v = v // U5
        count += 1
    return count


@_jit
def _ryu(mant: Any, exp_bits: Any) -> Any:
    """Shortest decimal (digits, exponent10) of the positive finite double with the given
    mantissa and biased exponent fields (Ryu, d2d)."""
    if exp_bits == 0:
        e2 = 1 - 1023 - 52 - 2
        m2 = mant
    else:
        e2 = exp_bits - 1023 - 52 - 2
        m2 = HIDDEN | mant
    accept_bounds = (m2 & U1) == U0
    mv = U4 * m2
    mm_shift = U1 if (mant != U0 or exp_bits <= 1) else U0
    vm_tz = False
    vr_tz = False
    if e2 >= 0:
        q = ((e2 * 78913) >> 18) - (1 if e2 > 3 else 0)
        e10 = q
        k = 125 + _pow5bits(q) - 1
        i = -e2 + q + k
        lo = _RYU_INV[q, 0]
        hi = _RYU_INV[q, 1]
        vr = _mul_shift64(U4 * m2, lo, hi, i)
        vp = _mul_shift64(U4 * m2 + U2, lo, hi, i)
        vm = _mul_shift64(U4 * m2 - U1 - mm_shift, lo, hi, i)
        if q <= 21:
            if mv % U5 == U0:
                vr_tz = _pow5_factor(mv) >= q
            elif accept_bounds:
                vm_tz = _pow5_factor(mv - U1 - mm_shift) >= q
            else:
                if _pow5_factor(mv + U2) >= q:
                    vp = vp - U1
    else:
        q = (((-e2) * 732923) >> 20) - (1 if -e2 > 1 else 0)
        e10 = q + e2
        i = -e2 - q
        k = _pow5bits(i) - 125
        j = q - k
        lo = _RYU_POW[i, 0]
        hi = _RYU_POW[i, 1]
        vr = _mul_shift64(U4 * m2, lo, hi, j)
        vp = _mul_shift64(U4 * m2 + U2, lo, hi, j)
        vm = _mul_shift64(U4 * m2 - U1 - mm_shift, lo, hi, j)
        if q <= 1:
            vr_tz = True
            if accept_bounds:
                vm_tz = mm_shift == U1
            else:
                vp = vp - U1
        elif q < 63:
            vr_tz = (mv & ((U1 << np.uint64(q)) - U1)) == U0
    removed = 0
    last = U0
    if vm_tz or vr_tz:
        while vp // U10 > vm // U10:
            vm_tz = vm_tz and (vm % U10 == U0)
            vr_tz = vr_tz and last == U0
            last = vr % U10
            vr = vr // U10
            vp = vp // U10
            vm = vm // U10
            removed += 1
        if vm_tz:
            while vm % U10 == U0:
                vr_tz = vr_tz and last == U0
                last = vr % U10
                vr = vr // U10
                vp = vp // U10
                vm = vm // U10
                removed += 1
        if vr_tz and last == U5 and vr % U2 == U0:
            last = U4
        up = (vr == vm and (not accept_bounds or not vm_tz)) or last >= U5
        output = vr + (U1 if up else U0)
    else:
        # Only the last removed digit decides the rounding, so digits may go in chunks: if
        # vp / 10**k > vm / 10**k then every single-digit step on the way would be taken.
        round_up = False
        while vp // U10000 > vm // U10000:
            round_up = vr % U10000 >= np.uint64(5000)
            vr = vr // U10000
            vp = vp // U10000
            vm = vm // U10000
            removed += 4
        if vp // U100 > vm // U100:
            round_up = vr % U100 >= np.uint64(50)
            vr = vr // U100
            vp = vp // U100
            vm = vm // U100
            removed += 2
        while vp // U10 > vm // U10:
            round_up = vr % U10 >= U5
            vr = vr // U10
            vp = vp // U10
            vm = vm // U10
            removed += 1
        output = vr + (U1 if (vr == vm or round_up) else U0)
    exp10 = e10 + removed
    while output != U0 and output % U10 == U0:
        output = output // U10
        exp10 += 1
    return output, exp10


@_jit
def render_rows(
    offsets: Any,
    data: Any,
    validity: Any,
    vbit0: Any,
    has_validity: Any,
    row: Any,
    row_end: Any,
    out: Any,
    out_pos: Any,
    out_offsets: Any,
    frames: Any,
    digits: Any,
) -> Any:
    """Text of JSONB rows ``row`` .. ``row_end - 1``, rendered as pylance 14 renders them.

    Scratch (caller-owned, see :func:`render_scratch`): ``frames`` int64[8, depth capacity],
    ``digits`` uint8[32].

    Returns ``(status, row, out_pos, need)``. A row that is not well-formed JSONB gives
    ``ST_FALLBACK`` (its text is its bytes, decoded with replacement, by the caller).
    """
    # one frame per open container: kind (0 array, 1 object, 2 the scalar of a scalar
    # container), end of its bytes, element count, next element, next key JEntry, next value
    # JEntry, next key payload, next value payload
    f_kind = frames[0]
    f_end = frames[1]
    f_n = frames[2]
    f_i = frames[3]
    f_jk = frames[4]
    f_jv = frames[5]
    f_kp = frames[6]
    f_vp = frames[7]
    cap_f = frames.shape[1]
    cap = out.shape[0]
    while row < row_end:
        if has_validity:
            bit = vbit0 + row
            if ((validity[bit >> 3] >> (bit & 7)) & 1) == 0:
                out_offsets[row + 1] = out_pos
                row += 1
                continue
        s = offsets[row]
        e = offsets[row + 1]
        p = out_pos
        status = ST_DONE
        depth = 0
        c_start = s  # the container to open next
        c_end = e
        opening = True
        while True:
            if opening:
                # ---- open the container at [c_start, c_end) ----
                opening = False
                if c_end - c_start < 4:
                    status = ST_FALLBACK
                    break
                if depth >= cap_f:
                    status = ST_NEED_SCRATCH
                    break
                if p + 2 > cap:
                    status = ST_NEED_SPACE
                    break
                at = c_start
                header = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                kind = header & 0xE0000000
                n = header & 0x1FFFFFFF
                f_end[depth] = c_end
                f_i[depth] = 0
                if kind == 0x20000000:
                    if c_end - c_start < 8:
                        status = ST_FALLBACK
                        break
                    at = c_start + 4
                    je = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                    if (je & 0x70000000) == 0x50000000:
                        status = ST_FALLBACK  # a scalar container holds no container
                        break
                    f_kind[depth] = 2
                    f_n[depth] = 1
                    f_jv[depth] = c_start + 4
                    f_vp[depth] = c_start + 8
                elif kind == 0x80000000:
                    if c_start + 4 + 4 * n > c_end:
                        status = ST_FALLBACK
                        break
                    f_kind[depth] = 0
                    f_n[depth] = n
                    f_jv[depth] = c_start + 4
                    f_vp[depth] = c_start + 4 + 4 * n
                    out[p] = 91
                    p += 1
                elif kind == 0x40000000:
                    if c_start + 4 + 8 * n > c_end:
                        status = ST_FALLBACK
                        break
                    kp = c_start + 4 + 8 * n
                    f_kp[depth] = kp
                    for i in range(n):
                        at = c_start + 4 + 4 * i
                        kj = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                        if (kj & 0x70000000) != 0x10000000:
                            status = ST_FALLBACK
                            break
                        kp += kj & 0x0FFFFFFF
                    if status != ST_DONE:
                        break
                    if kp > c_end:
                        status = ST_FALLBACK
                        break
                    f_kind[depth] = 1
                    f_n[depth] = n
                    f_jk[depth] = c_start + 4
                    f_jv[depth] = c_start + 4 + 4 * n
                    f_vp[depth] = kp
                    out[p] = 123
                    p += 1
                else:
                    status = ST_FALLBACK
                    break
                depth += 1
            if depth == 0:
                break
            # ---- the elements of the innermost container, until a nested one opens ----
            d = depth - 1
            kind = f_kind[d]
            fend = f_end[d]
            n = f_n[d]
            i = f_i[d]
            jk = f_jk[d]
            jv = f_jv[d]
            kp = f_kp[d]
            vp = f_vp[d]
            while i < n:
                if p + 2 > cap:
                    status = ST_NEED_SPACE
                    break
                if i > 0 and kind != 2:
                    out[p] = 44
                    p += 1
                ph = 0 if kind == 1 else 1  # an object's element is a key, then a value
                while ph < 2:
                    if ph == 0:
                        at = jk
                        kj = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                        jk += 4
                        t = 1
                        ln = kj & 0x0FFFFFFF
                        ps = kp
                        kp += ln
                    else:
                        at = jv
                        vj = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                        jv += 4
                        t = (vj & 0x70000000) >> 28
                        ln = vj & 0x0FFFFFFF
                        ps = vp
                        vp += ln
                        if t == 5:
                            break
                    lim = fend
                    # ---- one scalar: null, true, false, a number or a string ----
                    if p + (6 * ln + 8 if t == 1 else 40) > cap:
                        status = ST_NEED_SPACE
                        break
                    if t == 0:
                        out[p] = 110
                        out[p + 1] = 117
                        out[p + 2] = 108
                        out[p + 3] = 108
                        p += 4
                    elif t == 4:
                        out[p] = 116
                        out[p + 1] = 114
                        out[p + 2] = 117
                        out[p + 3] = 101
                        p += 4
                    elif t == 3:
                        out[p] = 102
                        out[p + 1] = 97
                        out[p + 2] = 108
                        out[p + 3] = 115
                        out[p + 4] = 101
                        p += 5
                    elif ps + ln > lim or (t != 1 and t != 2):
                        status = ST_FALLBACK
                        break
                    elif t == 1:
                        out[p] = 34
                        p += 1
                        k = ps
                        end = ps + ln
                        while k < end:
                            # a run of bytes printed as they are, indexed unsigned (numba
                            # tests every signed index for wraparound)
                            ku = np.uint64(k)
                            pu = np.uint64(p)
                            eu = np.uint64(end)
                            while ku < eu:
                                c = data[ku]
                                if c < 32 or c == 34 or c == 92 or c >= 128:
                                    break
                                out[pu] = c
                                ku += U1
                                pu += U1
                            k = _i64(ku)
                            p = _i64(pu)
                            if k >= end:
                                break
                            c = data[k]
                            if c >= 128:
                                av = end - k - 1
                                m = _utf8_seq(
                                    c,
                                    data[k + 1] if av >= 1 else 0,
                                    data[k + 2] if av >= 2 else 0,
                                    data[k + 3] if av >= 3 else 0,
                                    av,
                                )
                                if m == 0:
                                    status = ST_FALLBACK
                                    break
                                for j in range(m):
                                    out[p + j] = data[k + j]
                                p += m
                                k += m
                                continue
                            if c == 34 or c == 92:
                                out[p] = 92
                                out[p + 1] = c
                                p += 2
                            elif c < 32:
                                out[p] = 92
                                if c == 8:
                                    out[p + 1] = 98
                                    p += 2
                                elif c == 9:
                                    out[p + 1] = 116
                                    p += 2
                                elif c == 10:
                                    out[p + 1] = 110
                                    p += 2
                                elif c == 12:
                                    out[p + 1] = 102
                                    p += 2
                                elif c == 13:
                                    out[p + 1] = 114
                                    p += 2
                                else:
                                    out[p + 1] = 117
                                    out[p + 2] = 48
                                    out[p + 3] = 48
                                    out[p + 4] = 48 + (c >> 4)
                                    lo4 = c & 15
                                    out[p + 5] = (48 + lo4) if lo4 < 10 else (87 + lo4)
                                    p += 6
                            else:
                                out[p] = c
                                p += 1
                            k += 1
                        if status != ST_DONE:
                            break
                        out[p] = 34
                        p += 1
                    else:  # a number
                        if ln < 1:
                            status = ST_FALLBACK
                            break
                        tag = data[ps]
                        # what to print: nothing more (0), an integer (1) or a float (2) whose
                        # decimal digits are those of dv
                        kind_n = 0
                        dv = U0
                        dexp = 0
                        if tag == 0x00:
                            out[p] = 48
                            p += 1
                        elif tag == 0x10 or tag == 0x20 or tag == 0x30:
                            out[p] = 110
                            out[p + 1] = 117
                            out[p + 2] = 108
                            out[p + 3] = 108
                            p += 4
                        elif tag == 0x40 or tag == 0x50:
                            w = ln - 1
                            if w != 1 and w != 2 and w != 4 and w != 8:
                                status = ST_FALLBACK
                                break
                            for k in range(w):
                                dv = (dv << U8) | np.uint64(data[ps + 1 + k])
                            if tag == 0x40 and ((dv >> np.uint64(8 * w - 1)) & U1) == U1:
                                out[p] = 45
                                p += 1
                                dv = (~dv) + U1  # the magnitude, modulo 2**64 ...
                                if w < 8:  # ... of a w-byte two's complement value
                                    dv = dv & ((U1 << np.uint64(8 * w)) - U1)
                            kind_n = 1
                        elif tag == 0x60:
                            if ln != 9:
                                status = ST_FALLBACK
                                break
                            bits = U0
                            for k in range(8):
                                bits = (bits << U8) | np.uint64(data[ps + 1 + k])
                            exp_bits = np.int64((bits >> U52) & np.uint64(0x7FF))
                            mant = bits & MANT_MASK
                            if exp_bits == 0x7FF:  # NaN, ±Inf
                                out[p] = 110
                                out[p + 1] = 117
                                out[p + 2] = 108
                                out[p + 3] = 108
                                p += 4
                            else:
                                if (bits & SIGN) != U0:
                                    out[p] = 45
                                    p += 1
                                if exp_bits == 0 and mant == U0:
                                    out[p] = 48
                                    out[p + 1] = 46
                                    out[p + 2] = 48
                                    p += 3
                                else:
                                    dv, dexp = _ryu(mant, exp_bits)
                                    kind_n = 2
                        else:
                            status = ST_FALLBACK
                            break
                        if kind_n != 0:
                            nd = _count_digits(dv)
                            # where the digits go: w0 .. w0 + nd; the float layouts then move
                            # the integer digits or the first digit one to the left for the '.'
                            w0 = p
                            if kind_n == 2:
                                dexp += nd - 1  # the exponent of the first digit
                                if -5 <= dexp <= 15:
                                    if nd - 1 <= dexp:  # 1234e7 -> 12340000000.0
                                        w0 = p
                                    elif dexp >= 0:  # 1234e-2 -> 12.34
                                        w0 = p + 1
                                    else:  # 1234e-6 -> 0.001234
                                        out[p] = 48
                                        out[p + 1] = 46
                                        for k in range(-dexp - 1):
                                            out[p + 2 + k] = 48
                                        w0 = p + 1 - dexp
                                else:  # 1234e30 -> 1.234e+33
                                    w0 = p + 1
                            # the digits of dv, two at a time from the last
                            k = w0 + nd
                            while dv >= U100:
                                qv = dv // U100
                                r2 = np.int64(dv - qv * U100) * 2
                                out[k - 1] = _DIGIT_PAIRS[r2 + 1]
                                out[k - 2] = _DIGIT_PAIRS[r2]
                                k -= 2
                                dv = qv
                            if dv >= U10:
                                r2 = np.int64(dv) * 2
                                out[w0 + 1] = _DIGIT_PAIRS[r2 + 1]
                                out[w0] = _DIGIT_PAIRS[r2]
                            else:
                                out[w0] = 48 + np.int64(dv)
                            if kind_n == 1:
                                p += nd
                            elif -5 <= dexp <= 15:
                                if nd - 1 <= dexp:
                                    p += nd
                                    for k in range(dexp - nd + 1):
                                        out[p + k] = 48
                                    p += dexp - nd + 1
                                    out[p] = 46
                                    out[p + 1] = 48
                                    p += 2
                                elif dexp >= 0:
                                    for k in range(dexp + 1):
                                        out[p + k] = out[p + 1 + k]
                                    out[p + dexp + 1] = 46
                                    p += nd + 1
                                else:
                                    p = w0 + nd
                            else:
                                out[p] = out[p + 1]
                                p += 1
                                if nd > 1:
                                    out[p] = 46
                                    p += nd
                                out[p] = 101
                                if dexp < 0:
                                    out[p + 1] = 45
                                    dexp = -dexp
                                else:
                                    out[p + 1] = 43
                                p += 2
                                if dexp >= 100:
                                    out[p] = 48 + dexp // 100
                                    p += 1
                                if dexp >= 10:
                                    out[p] = 48 + (dexp // 10) % 10
                                    p += 1
                                out[p] = 48 + dexp % 10
                                p += 1
                    if ph == 0:
                        out[p] = 58
                        p += 1
                    ph += 1
                if status != ST_DONE:
                    break
                i += 1
                if ph == 1 and t == 5:  # open the nested container of element i - 1
                    if ps + ln > fend:
                        status = ST_FALLBACK
                        break
                    c_start = ps
                    c_end = ps + ln
                    opening = True
                    break
            if status != ST_DONE:
                break
            if opening:
                f_i[d] = i
                f_jk[d] = jk
                f_jv[d] = jv
                f_kp[d] = kp
                f_vp[d] = vp
                continue
            if kind != 2:
                out[p] = 125 if kind == 1 else 93
                p += 1
            depth -= 1
        if status == ST_NEED_SCRATCH:
            return ST_NEED_SCRATCH, row, out_pos, 2 * cap_f
        if status == ST_NEED_SPACE:
            return ST_NEED_SPACE, row, out_pos, 6 * (e - s) + 64
        if status == ST_FALLBACK:
            return ST_FALLBACK, row, out_pos, 0
        out_pos = p
        out_offsets[row + 1] = out_pos
        row += 1
    return ST_DONE, row, out_pos, 0


# ---- strict JSONB check -----------------------------------------------------------------------
@_inline
def _check_scalar(b: Any, je: Any, ps: Any, end: Any) -> Any:
    """0 if the JEntry ``je`` (not a container) with payload at ``ps`` is well-formed JSONB,
    else a failure code; the caller checks that the payload fits."""
    if je & 0x80000000:
        return B_BAD_ENTRY
    t = je & 0x70000000
    ln = je & 0x0FFFFFFF
    if t == 0x00000000 or t == 0x30000000 or t == 0x40000000:
        return B_BAD_LENGTH if ln != 0 else 0
    if ps + ln > end:
        return B_TRUNCATED
    if t == 0x10000000:
        k = ps
        while k < ps + ln:
            if b[k] < 128:
                k += 1
            else:
                av = ps + ln - k - 1
                m = _utf8_seq(
                    b[k],
                    b[k + 1] if av >= 1 else 0,
                    b[k + 2] if av >= 2 else 0,
                    b[k + 3] if av >= 3 else 0,
                    av,
                )
                if m == 0:
                    return B_BAD_UTF8
                k += m
        return 0
    if t == 0x20000000:
        if ln == 0:
            return B_BAD_NUMBER
        tag = b[ps]
        if tag == 0x00 or tag == 0x10 or tag == 0x20 or tag == 0x30:
            return 0 if ln == 1 else B_BAD_NUMBER
        if tag == 0x40 or tag == 0x50:
            return 0 if (ln == 2 or ln == 3 or ln == 5 or ln == 9) else B_BAD_NUMBER
        if tag == 0x60:
            return 0 if ln == 9 else B_BAD_NUMBER
        return B_BAD_NUMBER
    return B_BAD_ENTRY


@_inline
def _key_less(b: Any, a0: Any, al: Any, b0: Any, bl: Any) -> Any:
    m = al if al < bl else bl
    for k in range(m):
        ca = b[a0 + k]
        cb = b[b0 + k]
        if ca != cb:
            return ca < cb
    return al < bl


@_jit
def check_rows(
    offsets: Any,
    data: Any,
    validity: Any,
    vbit0: Any,
    has_validity: Any,
    row: Any,
    row_end: Any,
) -> Any:
    """Check that rows ``row`` .. ``row_end - 1`` are JSONB as pylance writes it.

    Returns ``(status, row, code, pos)``: ``ST_DONE`` or ``ST_ERROR`` at the first bad row.
    """
    f_kind = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    f_start = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    f_end = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    f_n = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    f_i = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    f_pay = np.empty(MAX_NESTING_DEPTH + 1, dtype=np.int64)
    while row < row_end:
        if has_validity:
            bit = vbit0 + row
            if ((validity[bit >> 3] >> (bit & 7)) & 1) == 0:
                row += 1
                continue
        s = offsets[row]
        e = offsets[row + 1]
        if e == s:
            return ST_ERROR, row, B_EMPTY, 0
        code = 0
        epos = 0
        depth = 0
        c_start = s
        c_end = e
        opening = True
        while True:
            if opening:
                opening = False
                if c_start + 4 > c_end:
                    code = B_TRUNCATED
                    epos = c_start
                    break
                at = c_start
                header = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                kind = header & 0xE0000000
                n = header & 0x1FFFFFFF
                if kind == 0x20000000 and depth == 0:
                    if n != 0:
                        code = B_BAD_HEADER
                        epos = c_start
                        break
                    if c_start + 8 > c_end:
                        code = B_TRUNCATED
                        epos = c_start
                        break
                    at = c_start + 4
                    je = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                    if (je & 0x70000000) == 0x50000000:
                        code = B_BAD_ENTRY
                        epos = c_start + 4
                        break
                    code = _check_scalar(data, je, c_start + 8, c_end)
                    if code != 0:
                        epos = c_start + 8
                        break
                    stop = c_start + 8 + (je & 0x0FFFFFFF)
                    if stop != c_end:
                        code = B_TRAILING if stop < c_end else B_TRUNCATED
                        epos = stop
                    break
                if kind != 0x80000000 and kind != 0x40000000:
                    code = B_BAD_HEADER
                    epos = c_start
                    break
                if depth + 1 > I_MAX_DEPTH:
                    code = B_TOO_DEEP
                    epos = c_start
                    break
                is_obj = kind == 0x40000000
                width = 8 if is_obj else 4
                pay = c_start + 4 + width * n
                if pay > c_end:
                    code = B_TRUNCATED
                    epos = c_start
                    break
                if is_obj:
                    prev_s = -1
                    prev_l = 0
                    for i in range(n):
                        je_at = c_start + 4 + 4 * i
                        at = je_at
                        kj = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
                        if (kj & 0x70000000) != 0x10000000 or (kj & 0x80000000):
                            code = B_KEY_TYPE
                            epos = je_at
                            break
                        code = _check_scalar(data, kj, pay, c_end)
                        if code != 0:
                            epos = pay
                            break
                        kl = kj & 0x0FFFFFFF
                        if prev_s >= 0 and not _key_less(data, prev_s, prev_l, pay, kl):
                            code = B_KEY_ORDER
                            epos = pay
                            break
                        prev_s = pay
                        prev_l = kl
                        pay += kl
                    if code != 0:
                        break
                f_kind[depth] = 1 if is_obj else 0
                f_start[depth] = c_start
                f_end[depth] = c_end
                f_n[depth] = n
                f_i[depth] = 0
                f_pay[depth] = pay
                depth += 1
            if depth == 0:
                break
            d = depth - 1
            i = f_i[d]
            n = f_n[d]
            if i == n:
                if f_pay[d] != f_end[d]:
                    code = B_TRAILING
                    epos = f_pay[d]
                    break
                depth -= 1
                continue
            first = f_start[d] + 4 + (4 * n if f_kind[d] == 1 else 0)
            je_at = first + 4 * i
            at = je_at
            je = _be32(data[at], data[at + 1], data[at + 2], data[at + 3])
            f_i[d] = i + 1
            ps = f_pay[d]
            ln = je & 0x0FFFFFFF
            if (je & 0x70000000) == 0x50000000 and not (je & 0x80000000):
                if ps + ln > f_end[d]:
                    code = B_TRUNCATED
                    epos = ps
                    break
                f_pay[d] = ps + ln
                c_start = ps
                c_end = ps + ln
                opening = True
                continue
            code = _check_scalar(data, je, ps, f_end[d])
            if code != 0:
                epos = ps
                break
            f_pay[d] = ps + ln
        if code != 0:
            return ST_ERROR, row, code, epos - s
        row += 1
    return ST_DONE, row, 0, 0


@_jit
def ryu_digits(bits: Any) -> Any:
    """(digits, exponent10) of a positive finite double's bits -- exposed for tests."""
    return _ryu(bits & MANT_MASK, np.int64((bits >> U52) & np.uint64(0x7FF)))


@_jit
def parse_decimals(offsets: Any, data: Any, out_bits: Any, out_ok: Any) -> None:
    """f64 bits of each decimal token ``[-]digits[.digits][e[+-]digits]`` (well-formed) and
    whether the fast path could decide it -- exposed for tests."""
    for r in range(offsets.shape[0] - 1):
        s = offsets[r]
        e = offsets[r + 1]
        neg = data[s] == 45
        p = s + 1 if neg else s
        w = U0
        kept = 0
        total = 0
        truncated = False
        started = False
        nfrac = 0
        in_frac = False
        exp = 0
        while p < e:
            c = data[p]
            if c == 46:
                in_frac = True
                p += 1
                continue
            if c == 101 or c == 69:
                p += 1
                eneg = False
                if data[p] == 45 or data[p] == 43:
                    eneg = data[p] == 45
                    p += 1
                while p < e:
                    if exp < 100000:
                        exp = exp * 10 + (data[p] - 48)
                    p += 1
                if eneg:
                    exp = -exp
                break
            dg = c - 48
            if in_frac:
                nfrac += 1
            p += 1
            if not started:
                if dg == 0:
                    continue
                started = True
            total += 1
            if kept < 19:
                w = w * U10 + np.uint64(dg)
                kept += 1
            elif dg != 0:
                truncated = True
        q = exp - nfrac + (total - kept)
        ok, bits = _decimal_to_f64(w, q, truncated)
        out_ok[r] = ok
        out_bits[r] = (bits | SIGN) if neg else bits
