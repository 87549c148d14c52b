"""The JSON value codec: ``arrow.json`` text <-> JSONB (``lance.json``) (layer L2).

Spec, "Value-transforming types", row ``json``: arrow.json input over utf8 / large_utf8 /
utf8_view is validated, then converted to JSONB stored as large_binary; a read returns text
(arrow.json) or the JSONB itself (lance.json); lance.json input over large_binary is stored
unchanged. Failure table: "json input is not valid JSON -- the write fails; the error names the
field path and row".

Three functions, each over one Arrow array (the write boundary and the read projection recurse
through structs, lists and maps and call them on the json leaves):

* :func:`encode_json` -- text -> JSONB, byte-identical to pylance 14 for every document both
  accept (docs/format/lance-format-facts.md §9); refuses invalid JSON with
  :class:`~lance_semantic.errors.InvalidJsonError`.
* :func:`decode_jsonb` -- JSONB -> text exactly as pylance 14 renders it.
* :func:`validate_jsonb` -- checks pre-encoded ``lance.json`` input before it is stored as-is.

The conversion rules, in plain Python, are in :mod:`lance_semantic.codecs.json_reference`; the
work itself is done by numba kernels over the Arrow buffers (``_jsonb_kernels``), on several
threads for large inputs. A process converts its first few MB with the reference instead, and
loads a kernel from the user-wide disk cache (about a second) or compiles it (10 to 30 s, said
once on stderr) only when its work grows: see :mod:`~lance_semantic.codecs._kernel_gate` and
:mod:`~lance_semantic.codecs._kernel_cache`. :func:`warm_up` compiles them all up front.

>>> import pyarrow as pa
>>> enc = encode_json(pa.array(['{"b": 1e16, "a": [1, null]}', None]), path="doc")
>>> enc.type, enc.null_count
(DataType(large_binary), 1)
>>> decode_jsonb(enc, path="doc").to_pylist()
['{"a":[1,null],"b":1e+16}', None]
>>> encode_json(pa.array(['[1, 2]', '{"a": 1, "a": 2}']), path="doc")
Traceback (most recent call last):
...
lance_semantic.errors.InvalidJsonError: field 'doc', row 1: invalid JSON: ...
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from ..errors import InvalidJsonError, UnsupportedInputTypeError
from ..types.families import is_binary_like, is_string_like
from . import json_reference as _ref
from ._buffers import Buffers, Piece, reference_range, valid_rows
from ._jsonb_format import MAX_NESTING_DEPTH, reason_of
from ._kernel_gate import KernelGate

__all__ = ["encode_json", "decode_jsonb", "validate_jsonb", "warm_up", "MAX_NESTING_DEPTH"]

#: a range of rows is split over threads only when each part gets at least this many bytes
_MIN_BYTES_PER_UNIT = 8 << 20
_EXCERPT = 24  # characters of context either side of an error
_MAX_UTF8_BYTES = 2**31 - 1  # text beyond this per array is returned as large_utf8

_ST_DONE, _ST_NEED_SPACE, _ST_ERROR, _ST_FALLBACK, _ST_NEED_SCRATCH = 0, 1, 2, 3, 4
_NODES = 4096  # parsed values per row before the parser's scratch arrays are doubled
_DEPTH = 64  # nesting the renderer handles before its scratch arrays are doubled

_kernels_module: ModuleType | None = None
_kernels_lock = threading.Lock()
T = TypeVar("T")


def _kernels() -> ModuleType:
    """The numba kernels module, imported on first use (each kernel is compiled, or loaded
    from the disk cache, on its first call)."""
    global _kernels_module
    if _kernels_module is None:
        with _kernels_lock:
            if _kernels_module is None:
                from . import _jsonb_kernels

                _kernels_module = _jsonb_kernels
    return _kernels_module


# ---- Arrow plumbing ---------------------------------------------------------------------------
def _text_storage(arr: Any, path: str) -> pa.Array:
    """The utf8 / large_utf8 array holding the JSON text of ``arr``."""
    if not isinstance(arr, pa.Array):
        raise UnsupportedInputTypeError(path, "json", type(arr).__name__)
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name != "arrow.json":
            raise UnsupportedInputTypeError(path, "json", str(t))
        arr = arr.storage
        t = arr.type
    if pa.types.is_string_view(t):
        return arr.cast(pa.large_string())
    if is_string_like(t, view=False):
        return arr
    raise UnsupportedInputTypeError(path, "json", str(t))


def _jsonb_storage(arr: Any, path: str) -> pa.Array:
    """The large_binary / binary array holding JSONB values."""
    if not isinstance(arr, pa.Array):
        raise UnsupportedInputTypeError(path, "json", type(arr).__name__)
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        arr = arr.storage
        t = arr.type
    if pa.types.is_binary_view(t):
        return arr.cast(pa.large_binary())
    if is_binary_like(t, view=False):
        return arr
    raise UnsupportedInputTypeError(path, "json", str(t))


def _excerpt(raw: bytes, pos: int) -> str:
    lo = max(0, pos - _EXCERPT)
    text = raw[lo : pos + _EXCERPT].decode("utf-8", "replace")
    return ("…" if lo else "") + text + ("…" if pos + _EXCERPT < len(raw) else "")


def _hex_excerpt(raw: bytes, pos: int) -> str:
    return raw[max(0, pos - 8) : pos + 8].hex(" ")


def _grow(buf: np.ndarray, used: int, need: int) -> np.ndarray:
    bigger = np.empty(max(2 * buf.shape[0], used + need, 64), dtype=np.uint8)
    bigger[:used] = buf[:used]
    return bigger


# ---- work split -------------------------------------------------------------------------------
class _RowError(Exception):
    """An invalid row found by a worker (re-raised as InvalidJsonError by the caller)."""

    def __init__(self, row: int, reason: str, excerpt: str) -> None:
        self.row, self.reason, self.excerpt = row, reason, excerpt


def _thread_count(threads: int | None) -> int:
    if threads is not None:
        return max(1, threads)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return max(1, min(usable, os.cpu_count() or 1))


def _units(parts: Sequence[Buffers], threads: int) -> list[tuple[int, int, int]]:
    """(part, first row, end row) ranges: every part whole, large ones split so that the
    threads get about equal bytes."""
    total = sum(b.nbytes() for b in parts)
    target = max(_MIN_BYTES_PER_UNIT, -(-total // threads)) if threads > 1 else total + 1
    units = []
    for i, b in enumerate(parts):
        k = max(1, min(round(b.nbytes() / target), b.n))
        if k <= 1:
            units.append((i, 0, b.n))
            continue
        targets = b.offsets[0] + (b.nbytes() * np.arange(1, k)) // k
        cuts = np.searchsorted(b.offsets[:-1], targets).tolist()
        bounds = sorted({0, b.n, *cuts})
        units.extend((i, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))
    return units


def _run(units: list[tuple[int, int, int]], fn: Callable[..., T], threads: int) -> list[T]:
    if threads <= 1 or len(units) <= 1:
        return [fn(*u) for u in units]
    with ThreadPoolExecutor(max_workers=min(threads, len(units))) as pool:
        return list(pool.map(lambda u: fn(*u), units))


def _move_left(buf: np.ndarray, src: int, dst: int, n: int) -> None:
    """buf[dst:dst+n] = buf[src:src+n] for dst < src, without a temporary copy."""
    step = src - dst
    if step >= n or step < (1 << 20):
        buf[dst : dst + n] = buf[src : src + n]  # numpy buffers an overlapping copy itself
        return
    for k in range(0, n, step):
        m = min(step, n - k)
        buf[dst + k : dst + k + m] = buf[src + k : src + k + m]


_RangeFn = Callable[[ModuleType | None, "Buffers", int, int, np.ndarray], Piece]


def _convert(
    parts: list[Buffers],
    threads: int,
    k: ModuleType | None,
    convert: _RangeFn,
    capacity: Callable[[Buffers, int, int], int],
    on_error: Callable[[int, _RowError], _RowError] | None = None,
) -> list[tuple[np.ndarray, np.ndarray]] | _RowError:
    """(offsets, data) of every part, its rows converted by ``convert`` (given the kernels
    module ``k``, or None for the reference) on up to ``threads`` threads. The ranges of one
    part write into one buffer, each from its estimated start, and are then moved together in
    place (a range that outgrows its estimate gets its own buffer and is copied). Returns the
    first row error instead, if any."""
    if k is None:
        threads = 1  # the reference holds the GIL
    units = _units(parts, threads)
    bufs, starts = [], []
    for i, b in enumerate(parts):
        caps = [capacity(b, lo, hi) for j, lo, hi in units if j == i]
        bufs.append(np.empty(max(sum(caps), 1), dtype=np.uint8))
        starts.append(np.concatenate([[0], np.cumsum(caps)]).astype(np.int64).tolist())
    slot = [0] * len(parts)
    views, begins = [], []
    for i, _lo, _hi in units:
        s0, s1 = starts[i][slot[i]], starts[i][slot[i] + 1]
        views.append(bufs[i][s0:s1])
        begins.append(s0)
        slot[i] += 1

    def work(u: int) -> Piece | _RowError:
        i, lo, hi = units[u]
        try:
            return convert(k, parts[i], lo, hi, views[u])
        except _RowError as e:
            return on_error(i, e) if on_error is not None else e

    results = _run([(u, 0, 0) for u in range(len(units))], lambda u, _a, _b: work(u), threads)
    pieces: list[Piece] = []
    for r in results:
        if isinstance(r, _RowError):
            return min((e for e in results if isinstance(e, _RowError)), key=lambda e: e.row)
        pieces.append(r)
    out = []
    for i, b in enumerate(parts):
        mine = [(u, r) for u, r in enumerate(pieces) if units[u][0] == i]
        offsets = np.empty(b.n + 1, dtype=np.int64)
        offsets[0] = 0
        buf, total = bufs[i], sum(r[2] for _, r in mine)
        in_place = all(r[1] is views[u] for u, r in mine)
        data = buf if in_place else np.empty(max(total, 1), dtype=np.uint8)
        row = dst = 0
        for u, (offs, chunk, used) in mine:
            n = offs.shape[0] - 1
            offsets[row + 1 : row + n + 1] = offs[1:] + dst
            if in_place:
                if begins[u] != dst:
                    _move_left(buf, begins[u], dst, used)
            else:
                data[dst : dst + used] = chunk[:used]
            row += n
            dst += used
        if data.shape[0] > 2 * total + (1 << 20):
            data = data[:total].copy()  # do not keep a mostly empty buffer alive
        out.append((offsets, data[:total]))
    return out


def _build(
    parts: list[Buffers], converted: list[tuple[np.ndarray, np.ndarray]], kind: str
) -> list[pa.Array]:
    """The output array of every part."""
    arrays = []
    for b, (offsets, data) in zip(parts, converted, strict=True):
        validity = b.validity_buffer()
        if kind == "binary":
            t, offs = pa.large_binary(), offsets
        elif offsets[-1] <= _MAX_UTF8_BYTES:
            t, offs = pa.string(), offsets.astype(np.int32)
        else:
            t, offs = pa.large_string(), offsets
        arrays.append(
            pa.Array.from_buffers(
                t, b.n, [validity, pa.py_buffer(offs), pa.py_buffer(data)], null_count=b.nulls
            )
        )
    return arrays


# ---- text -> JSONB ----------------------------------------------------------------------------
def _encode_capacity(b: Buffers, lo: int, hi: int) -> int:
    nbytes = b.nbytes(lo, hi)
    return nbytes + nbytes // 2 + 16 * (hi - lo) + 64


def _encode_row(row: int, raw: bytes) -> bytes:
    try:
        return _ref.encode_value(raw)
    except _ref.JsonbReferenceError as e:
        raise _RowError(row, reason_of(e.code), _excerpt(raw, e.pos)) from None


def _encode_range(k: ModuleType | None, b: Buffers, lo: int, hi: int, out: np.ndarray) -> Piece:
    """JSONB of rows [lo, hi) of ``b``, written into ``out`` (or a bigger buffer)."""
    if k is None:
        return reference_range(b, lo, hi, _encode_row)
    nbytes = b.nbytes(lo, hi)
    offs = np.zeros(hi - lo + 1, dtype=np.int64)
    nodes, text = _NODES, min(nbytes, 1 << 16)
    scratch = k.encode_scratch(nodes, text)
    offsets = b.offsets[lo:]
    row, pos = 0, 0  # row relative to lo
    while True:
        status, row, code, epos, pos, need = k.encode_rows(
            offsets, b.data, b.validity, b.vbit0 + lo, b.has_validity, row, hi - lo, out, pos,
            offs, *scratch,
        )  # fmt: skip
        if status == _ST_DONE:
            return offs, out, pos
        if status == _ST_NEED_SPACE:
            out = _grow(out, pos, need)
        elif status == _ST_NEED_SCRATCH:
            if need > text:  # a row longer than the string scratch
                text = max(need, 2 * text)
            else:  # a row with more values than the node scratch
                nodes = max(need, 2 * nodes)
            scratch = k.encode_scratch(nodes, text)
        else:
            raw = b.row_bytes(lo + row)
            if status == _ST_ERROR:
                raise _RowError(lo + row, reason_of(code), _excerpt(raw, epos))
            # _ST_FALLBACK: a float the fast path cannot round by itself
            value = _encode_row(lo + row, raw)  # (or an error after that float)
            if pos + len(value) > out.shape[0]:
                out = _grow(out, pos, len(value))
            out[pos : pos + len(value)] = np.frombuffer(value, dtype=np.uint8)
            pos += len(value)
            offs[row + 1] = pos
            row += 1


def encode_json(
    arr: pa.Array | pa.ChunkedArray, *, path: str, threads: int | None = None
) -> pa.LargeBinaryArray | pa.ChunkedArray:
    """Validate JSON text and convert it to JSONB, byte-identical to pylance 14.

    Parameters
    ----------
    arr : pyarrow.Array or pyarrow.ChunkedArray
        JSON documents as ``utf8``, ``large_utf8`` or ``utf8_view``, or the ``arrow.json``
        extension over one of them. Null slots stay null.
    path : str
        The field path named by errors (for example ``"meta.tags"``).
    threads : int, optional
        Threads to convert with (default: the usable cores; small inputs use one).

    Returns
    -------
    pyarrow.LargeBinaryArray
        One JSONB value per row (a ChunkedArray, chunk for chunk, for ChunkedArray input). The
        caller attaches the ``lance.json`` field metadata.

    Raises
    ------
    InvalidJsonError
        A document is not RFC 8259 JSON, has an object with a duplicate key, nests deeper than
        :data:`MAX_NESTING_DEPTH` or holds a string/array/object of 2**28 bytes or more. ``row``
        is the index in ``arr`` of the first such document, ``excerpt`` the text near the error.
    UnsupportedInputTypeError
        ``arr`` is not text (or an extension other than arrow.json).

    Notes
    -----
    pylance's own parser accepts much that is not JSON (``NaN``, ``Infinity``, an empty
    document, single quotes, unquoted keys, ``0x1F``, ``+1``, ``.5``, ``[1,,2]``, raw control
    characters in strings, a form feed as whitespace...); these are refused here.
    """
    chunked = isinstance(arr, pa.ChunkedArray)
    chunks = arr.chunks if chunked else [arr]
    parts = [Buffers(_text_storage(c, path)) for c in chunks]

    def global_row(i: int, e: _RowError) -> _RowError:
        e.row += sum(p.n for p in parts[:i])
        return e

    k = _GATE.kernels_for("encode_rows", sum(p.nbytes() for p in parts))
    threads_ = _thread_count(threads)
    converted = _convert(parts, threads_, k, _encode_range, _encode_capacity, global_row)
    if isinstance(converted, _RowError):
        raise InvalidJsonError(path, converted.row, converted.reason, converted.excerpt)
    arrays = _build(parts, converted, "binary")
    return pa.chunked_array(arrays, type=pa.large_binary()) if chunked else arrays[0]


# ---- JSONB -> text ----------------------------------------------------------------------------
def _render_capacity(b: Buffers, lo: int, hi: int) -> int:
    nbytes = b.nbytes(lo, hi)
    return nbytes + nbytes // 4 + 64


def _render_row(_row: int, raw: bytes) -> bytes:
    return _ref.render_value(raw).encode("utf-8")


def _render_range(k: ModuleType | None, b: Buffers, lo: int, hi: int, out: np.ndarray) -> Piece:
    """Text of rows [lo, hi) of ``b``, written into ``out`` (or a bigger buffer)."""
    if k is None:
        return reference_range(b, lo, hi, _render_row)
    offs = np.zeros(hi - lo + 1, dtype=np.int64)
    depth = _DEPTH
    frames, digits = k.render_scratch(depth)
    offsets = b.offsets[lo:]
    row, pos = 0, 0
    while True:
        status, row, pos, need = k.render_rows(
            offsets, b.data, b.validity, b.vbit0 + lo, b.has_validity, row, hi - lo, out, pos,
            offs, frames, digits,
        )  # fmt: skip
        if status == _ST_DONE:
            return offs, out, pos
        if status == _ST_NEED_SPACE:
            out = _grow(out, pos, need)
        elif status == _ST_NEED_SCRATCH:
            depth = max(need, 2 * depth)
            frames, digits = k.render_scratch(depth)
        else:  # _ST_FALLBACK: not well-formed JSONB
            text = _ref.render_fallback(b.row_bytes(lo + row)).encode("utf-8")
            if pos + len(text) > out.shape[0]:
                out = _grow(out, pos, len(text))
            out[pos : pos + len(text)] = np.frombuffer(text, dtype=np.uint8)
            pos += len(text)
            offs[row + 1] = pos
            row += 1


def decode_jsonb(
    arr: pa.Array | pa.ChunkedArray, *, path: str, threads: int | None = None
) -> pa.StringArray | pa.LargeStringArray | pa.ChunkedArray:
    """Render JSONB values as JSON text, exactly as pylance 14 renders them.

    Parameters
    ----------
    arr : pyarrow.Array or pyarrow.ChunkedArray
        JSONB values (``large_binary``; ``binary`` and ``binary_view`` are accepted too).
    path : str
        The field path (for symmetry with the other functions: rendering never fails).
    threads : int, optional
        Threads to render with (default: the usable cores; small inputs use one).

    Returns
    -------
    pyarrow.StringArray
        Compact text, keys in stored order, integers exact, floats as pylance prints them,
        NaN/±Inf as ``null``. Null slots stay null. When the text of one array (one chunk)
        does not fit 32-bit offsets (2**31 - 1 bytes), that array is a
        ``pyarrow.LargeStringArray`` instead; a caller that needs utf8 splits its input
        first. Wrap with ``pa.ExtensionArray.from_storage(pa.json_(), ...)`` for arrow.json.
        ChunkedArray input gives a ChunkedArray, chunk for chunk.

    Notes
    -----
    Bytes that are not well-formed JSONB render like pylance renders them: the bytes decoded
    as UTF-8 with U+FFFD replacement (``null`` for an empty value). Where pylance 14 crashes
    instead (a length pointing past the end, invalid UTF-8 in a string, a float payload that
    is not 8 bytes) and for extension/decimal values (which JSON text never produces), the same
    fallback applies.
    """
    del path  # rendering cannot fail
    chunked = isinstance(arr, pa.ChunkedArray)
    chunks = arr.chunks if chunked else [arr]
    parts = [Buffers(_jsonb_storage(c, "")) for c in chunks]
    k = _GATE.kernels_for("render_rows", sum(p.nbytes() for p in parts))
    converted = _convert(parts, _thread_count(threads), k, _render_range, _render_capacity)
    assert not isinstance(converted, _RowError)  # rendering never fails
    arrays = _build(parts, converted, "text")
    if not chunked:
        return arrays[0]
    if not arrays:
        return pa.chunked_array([], type=pa.string())
    if len({a.type for a in arrays}) > 1:  # some chunk needed 64-bit offsets
        arrays = [a.cast(pa.large_string()) for a in arrays]
    return pa.chunked_array(arrays)


# ---- JSONB check ------------------------------------------------------------------------------
def validate_jsonb(arr: pa.Array | pa.ChunkedArray, *, path: str) -> None:
    """Refuse pre-encoded ``lance.json`` values that are not JSONB as pylance writes it.

    Checked per value: container headers, JEntry types and lengths (nothing past the end,
    nothing left over), number encodings, UTF-8 of strings and keys, object keys strictly
    increasing by their bytes, nesting depth (:data:`MAX_NESTING_DEPTH`). Extension and
    decimal values (which JSON text never produces) are refused. Integer widths need not be
    minimal. Null slots are fine.

    Raises
    ------
    InvalidJsonError
        ``row`` is the first bad value, ``reason`` what is wrong, ``excerpt`` the bytes near the
        problem in hex.
    UnsupportedInputTypeError
        ``arr`` is not binary.

    >>> import pyarrow as pa
    >>> validate_jsonb(encode_json(pa.array(['{"a": 1}']), path="j"), path="j")
    >>> validate_jsonb(pa.array([b"\\x80\\x00\\x00\\x00", b"junk"], pa.large_binary()), path="j")
    Traceback (most recent call last):
    ...
    lance_semantic.errors.InvalidJsonError: field 'j', row 1: invalid JSON: invalid JSONB ...
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = [Buffers(_jsonb_storage(chunk, path)) for chunk in chunks]
    k = _GATE.kernels_for("check_rows", sum(p.nbytes() for p in parts))
    base = 0
    for b in parts:
        found = _check_part(k, b)
        if found is not None:
            row, code, epos = found
            excerpt = _hex_excerpt(b.row_bytes(row), epos)
            raise InvalidJsonError(path, base + row, reason_of(code), excerpt)
        base += b.n


def _check_part(k: ModuleType | None, b: Buffers) -> tuple[int, int, int] | None:
    """(row, code, byte) of the first value of ``b`` that is not JSONB, if any."""
    if k is not None:
        status, row, code, epos = k.check_rows(
            b.offsets, b.data, b.validity, b.vbit0, b.has_validity, 0, b.n
        )
        return None if status == _ST_DONE else (row, code, epos)
    for row, ok in enumerate(valid_rows(b, 0, b.n).tolist()):
        if ok:
            try:
                _ref.check_value(b.row_bytes(row))
            except _ref.JsonbReferenceError as e:
                return row, e.code, e.pos
    return None


# ---- first use --------------------------------------------------------------------------------
def _sample(values: list[bytes], t: pa.DataType) -> Buffers:
    return Buffers(pa.array(values, t))


def _warm_encode(k: ModuleType) -> None:
    _encode_range(k, _sample([b"[0]"], pa.large_string()), 0, 1, np.empty(64, np.uint8))


def _warm_render(k: ModuleType) -> None:
    jsonb = _ref.encode_value("[0]")
    _render_range(k, _sample([jsonb], pa.large_binary()), 0, 1, np.empty(64, np.uint8))


def _warm_check(k: ModuleType) -> None:
    _check_part(k, _sample([_ref.encode_value("[0]")], pa.large_binary()))


#: which calls run the kernels (see :mod:`~lance_semantic.codecs._kernel_gate`)
_GATE = KernelGate(
    _kernels, {"encode_rows": _warm_encode, "render_rows": _warm_render, "check_rows": _warm_check}
)


def warm_up() -> dict[str, float]:
    """Load every kernel of the JSON codec from the disk cache, or compile it there now
    (10 to 30 s each the first time on a machine); seconds each took. Without this, a
    process uses the pure-Python reference for its first small conversions and loads or
    compiles a kernel when its work grows."""
    return _GATE.warm_up()
