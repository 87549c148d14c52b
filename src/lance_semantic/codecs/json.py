"""The JSON value codec: ``arrow.json`` text <-> JSONB (``lance.json``) (layer L2).

Spec, "Value-transforming types", row ``json``: arrow.json input over utf8 / large_utf8 /
utf8_view is validated, then converted to JSONB stored as large_binary; a read returns text
(arrow.json) or the JSONB itself (lance.json); lance.json input over large_binary is stored
unchanged. Failure table: "json input is not valid JSON -- the write fails; the error names the
field path and row".

Three functions, each over one Arrow array (the write boundary and the read projection recurse
through structs, lists and maps and call them on the json leaves):

* :func:`encode_json` -- text -> JSONB, byte-identical to pylance 14 for every document both
  accept (facts sheet §9); refuses invalid JSON with :class:`~lance_semantic.errors.InvalidJsonError`.
* :func:`decode_jsonb` -- JSONB -> text exactly as pylance 14 renders it.
* :func:`validate_jsonb` -- checks pre-encoded ``lance.json`` input before it is stored as-is.

The conversion rules, in plain Python, are in :mod:`lance_semantic.codecs.json_reference`; the
work itself is done by numba kernels over the Arrow buffers (``_jsonb_kernels``). The first call
in a process imports numba and loads (or, the first time, compiles -- some seconds) the kernels.

>>> import pyarrow as pa
>>> enc = encode_json(pa.array(['{"b": 1e16, "a": [1, null]}', None]), path="doc")
>>> enc.type, enc.null_count
(DataType(large_binary), 1)
>>> decode_jsonb(enc, path="doc").to_pylist()
['{"a":[1,null],"b":1e+16}', None]
>>> encode_json(pa.array(['[1, 2]', '{"a": 1, "a": 2}']), path="doc")
Traceback (most recent call last):
...
lance_semantic.errors.InvalidJsonError: field 'doc', row 1: invalid JSON: object has a duplicate key (near '{"a": 1, "a": 2}')
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, overload

import numpy as np
import pyarrow as pa

from ..errors import InvalidJsonError, UnsupportedInputTypeError
from . import json_reference as _ref
from ._jsonb_format import MAX_NESTING_DEPTH, reason_of

__all__ = ["encode_json", "decode_jsonb", "validate_jsonb", "MAX_NESTING_DEPTH"]

#: rows per thread below which a conversion stays on the calling thread
_MIN_ROWS_PER_THREAD = 16_384
#: bytes per thread below which a conversion stays on the calling thread
_MIN_BYTES_PER_THREAD = 4 << 20
_EXCERPT = 24  # characters of context either side of an error

_ST_DONE, _ST_NEED_SPACE, _ST_ERROR, _ST_FALLBACK, _ST_NEED_SCRATCH = 0, 1, 2, 3, 4
_NODES = 4096  # parsed values a row may hold before the scratch arrays are doubled
_DEPTH = 64  # nesting the renderer handles before its scratch arrays are doubled

_kernels_module: ModuleType | None = None
_kernels_lock = threading.Lock()


def _kernels() -> ModuleType:
    """The numba kernels, imported (and compiled or loaded from cache) on first use."""
    global _kernels_module
    if _kernels_module is None:
        with _kernels_lock:
            if _kernels_module is None:
                from . import _jsonb_kernels

                _kernels_module = _jsonb_kernels
    return _kernels_module


# ---- Arrow plumbing ---------------------------------------------------------------------------
class _Buffers:
    """offsets (int64, one per row + 1), data (uint8) and validity bitmap of a variable-width
    array, as numpy views (offsets are copied only when 32-bit)."""

    __slots__ = ("n", "offsets", "data", "validity", "vbit0", "has_validity", "null_count", "arr")

    def __init__(self, arr: pa.Array) -> None:
        self.arr = arr
        self.n = len(arr)
        bufs = arr.buffers()
        width = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(
            arr.type
        ) else np.int32
        raw = np.frombuffer(bufs[1], dtype=width) if bufs[1] is not None else np.zeros(1, width)
        offs = raw[arr.offset : arr.offset + self.n + 1]
        if self.n == 0 and offs.shape[0] == 0:
            offs = np.zeros(1, dtype=width)
        self.offsets = offs.astype(np.int64) if width is np.int32 else offs
        self.data = (
            np.frombuffer(bufs[2], dtype=np.uint8)
            if bufs[2] is not None and bufs[2].size
            else np.zeros(1, dtype=np.uint8)
        )
        self.null_count = arr.null_count
        self.has_validity = bufs[0] is not None and self.null_count > 0
        self.validity = (
            np.frombuffer(bufs[0], dtype=np.uint8) if self.has_validity else np.zeros(1, np.uint8)
        )
        self.vbit0 = arr.offset

    def row_bytes(self, row: int) -> bytes:
        return self.data[self.offsets[row] : self.offsets[row + 1]].tobytes()

    def total_bytes(self) -> int:
        return int(self.offsets[-1] - self.offsets[0]) if self.n else 0

    def validity_buffer(self) -> pa.Buffer | None:
        """A validity bitmap starting at bit 0 for the output array (or None: no nulls)."""
        if not self.has_validity:
            return None
        if self.arr.offset == 0:
            return self.arr.buffers()[0]
        return self.arr.is_valid().buffers()[1]


def _type_name(t: pa.DataType) -> str:
    return str(t)


def _text_storage(arr: Any, path: str) -> pa.Array:
    """The utf8 / large_utf8 array holding the JSON text of ``arr``."""
    if not isinstance(arr, pa.Array):
        raise UnsupportedInputTypeError(path, "json", type(arr).__name__)
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name != "arrow.json":
            raise UnsupportedInputTypeError(path, "json", _type_name(t))
        arr = arr.storage
        t = arr.type
    if pa.types.is_string_view(t):
        return arr.cast(pa.large_string())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    raise UnsupportedInputTypeError(path, "json", _type_name(t))


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
    if pa.types.is_large_binary(t) or pa.types.is_binary(t):
        return arr
    raise UnsupportedInputTypeError(path, "json", _type_name(t))


def _excerpt(raw: bytes, pos: int) -> str:
    lo = max(0, pos - _EXCERPT)
    text = raw[lo : pos + _EXCERPT].decode("utf-8", "replace")
    return ("…" if lo else "") + text + ("…" if pos + _EXCERPT < len(raw) else "")


def _hex_excerpt(raw: bytes, pos: int) -> str:
    lo = max(0, pos - 8)
    return raw[lo : pos + 8].hex(" ")


def _chunks(b: _Buffers, threads: int | None) -> list[tuple[int, int]]:
    """Row ranges to convert concurrently (one range unless the array is large)."""
    n = b.n
    if threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        threads = min(threads, os.cpu_count() or 1)
    k = max(1, min(threads, n // _MIN_ROWS_PER_THREAD, b.total_bytes() // _MIN_BYTES_PER_THREAD))
    if k <= 1:
        return [(0, n)]
    # split on bytes, not rows, so the ranges take about as long each
    targets = b.offsets[0] + (b.total_bytes() * np.arange(1, k)) // k
    cuts = np.searchsorted(b.offsets[:-1], targets).tolist()
    bounds = sorted({0, n, *cuts})
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _run_chunks(
    ranges: list[tuple[int, int]], convert: Any
) -> list[tuple[np.ndarray, np.ndarray, int]]:
    if len(ranges) == 1:
        return [convert(*ranges[0])]
    with ThreadPoolExecutor(max_workers=len(ranges)) as pool:
        return list(pool.map(lambda r: convert(*r), ranges))


def _assemble(
    parts: list[tuple[np.ndarray, np.ndarray, int]], n: int
) -> tuple[np.ndarray, np.ndarray]:
    """One (offsets, data) pair from per-range (offsets[lo:hi+1] relative, data, used)."""
    if len(parts) == 1:
        offs, data, used = parts[0]
        if data.shape[0] > used + max(used // 4, 1 << 20):
            data = data[:used].copy()  # do not keep a mostly empty buffer alive
        return offs, data[:used]
    offsets = np.empty(n + 1, dtype=np.int64)
    total = sum(used for _, _, used in parts)
    data = np.empty(total, dtype=np.uint8)
    row = 0
    base = 0
    offsets[0] = 0
    for offs, chunk, used in parts:
        k = offs.shape[0] - 1
        offsets[row + 1 : row + k + 1] = offs[1:] + base
        data[base : base + used] = chunk[:used]
        row += k
        base += used
    return offsets, data


def _grow(buf: np.ndarray, used: int, need: int) -> np.ndarray:
    size = max(2 * buf.shape[0], used + need, 64)
    bigger = np.empty(size, dtype=np.uint8)
    bigger[:used] = buf[:used]
    return bigger


# ---- text -> JSONB ----------------------------------------------------------------------------
@overload
def encode_json(
    arr: pa.ChunkedArray, *, path: str, threads: int | None = None
) -> pa.ChunkedArray: ...
@overload
def encode_json(arr: pa.Array, *, path: str, threads: int | None = None) -> pa.LargeBinaryArray: ...
def encode_json(arr: Any, *, path: str, threads: int | None = None) -> Any:
    """Validate JSON text and convert it to JSONB, byte-identical to pylance 14.

    Parameters
    ----------
    arr : pyarrow.Array or pyarrow.ChunkedArray
        JSON documents as ``utf8``, ``large_utf8`` or ``utf8_view``, or the ``arrow.json``
        extension over one of them. Null slots stay null.
    path : str
        The field path named by errors (for example ``"meta.tags"``).
    threads : int, optional
        Threads to convert with (default: the usable cores; small arrays use one).

    Returns
    -------
    pyarrow.LargeBinaryArray
        One JSONB value per row (a ChunkedArray, chunk for chunk, for ChunkedArray input). The
        caller attaches the ``lance.json`` field metadata.

    Raises
    ------
    InvalidJsonError
        A document is not RFC 8259 JSON, has an object with a duplicate key, nests deeper than
        :data:`MAX_NESTING_DEPTH` or holds a string/container of 2**28 bytes or more. ``row``
        is the index in ``arr`` of the first such document, ``excerpt`` the text near the error.
    UnsupportedInputTypeError
        ``arr`` is not text.

    Notes
    -----
    pylance's own parser accepts much that is not JSON (``NaN``, ``Infinity``, an empty
    document, single quotes, unquoted keys, ``0x1F``, ``+1``, ``.5``, ``[1,,2]``, raw control
    characters in strings, a form feed as whitespace...); these are refused here.
    """
    if isinstance(arr, pa.ChunkedArray):
        chunks = []
        base = 0
        for chunk in arr.chunks:
            try:
                chunks.append(encode_json(chunk, path=path, threads=threads))
            except InvalidJsonError as e:
                raise InvalidJsonError(path, base + e.row, e.reason, e.excerpt) from None
            base += len(chunk)
        return pa.chunked_array(chunks, type=pa.large_binary())
    b = _Buffers(_text_storage(arr, path))
    k = _kernels()

    def convert(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, int]:
        nbytes = int(b.offsets[hi] - b.offsets[lo])
        out = np.empty(int(nbytes * 1.5) + 16 * (hi - lo) + 64, dtype=np.uint8)
        offs = np.zeros(hi - lo + 1, dtype=np.int64)
        out_offsets = offs  # out_offsets[i + 1 - lo] is the end of row i
        nodes, text = _NODES, min(nbytes, 1 << 16)
        scratch = k.encode_scratch(nodes, text)
        row, pos = lo, 0
        while True:
            status, row, code, epos, pos, need = k.encode_rows(
                b.offsets[lo:],
                b.data,
                b.validity,
                b.vbit0 + lo,
                b.has_validity,
                row - lo,
                hi - lo,
                out,
                pos,
                out_offsets,
                *scratch,
            )
            row += lo
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
            elif status == _ST_ERROR:
                raw = b.row_bytes(row)
                raise InvalidJsonError(path, row, reason_of(code), _excerpt(raw, epos))
            else:  # _ST_FALLBACK: a float the fast path cannot round by itself
                raw = b.row_bytes(row)
                try:
                    value = _ref.encode_value(raw)
                except _ref.JsonbReferenceError as e:  # pragma: no cover - kernel found none
                    raise InvalidJsonError(path, row, reason_of(e.code), _excerpt(raw, e.pos))
                if pos + len(value) > out.shape[0]:
                    out = _grow(out, pos, len(value))
                out[pos : pos + len(value)] = np.frombuffer(value, dtype=np.uint8)
                pos += len(value)
                out_offsets[row - lo + 1] = pos
                row += 1

    parts = _run_chunks(_chunks(b, threads), convert)
    offsets, data = _assemble(parts, b.n)
    return pa.Array.from_buffers(
        pa.large_binary(),
        b.n,
        [b.validity_buffer(), pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=b.null_count,
    )


# ---- JSONB -> text ----------------------------------------------------------------------------
@overload
def decode_jsonb(
    arr: pa.ChunkedArray, *, path: str, threads: int | None = None
) -> pa.ChunkedArray: ...
@overload
def decode_jsonb(arr: pa.Array, *, path: str, threads: int | None = None) -> pa.Array: ...
def decode_jsonb(arr: Any, *, path: str, threads: int | None = None) -> Any:
    """Render JSONB values as JSON text, exactly as pylance 14 renders them.

    Parameters
    ----------
    arr : pyarrow.Array or pyarrow.ChunkedArray
        JSONB values (``large_binary``; ``binary`` and ``binary_view`` are accepted too).
    path : str
        The field path (kept for symmetry with the other functions; rendering never fails).
    threads : int, optional
        Threads to render with (default: the usable cores; small arrays use one).

    Returns
    -------
    pyarrow.StringArray
        Compact text, keys in stored order, integers exact, floats as pylance prints them,
        NaN/±Inf as ``null``. Null slots stay null. When the text of the whole array does not
        fit 32-bit offsets (2**31 - 1 bytes) a ``pyarrow.LargeStringArray`` is returned
        instead; callers that need utf8 split the input first. Wrap the result with
        ``pa.ExtensionArray.from_storage(pa.json_(), ...)`` for arrow.json.

    Notes
    -----
    Bytes that are not well-formed JSONB render like pylance renders them: the bytes decoded
    as UTF-8 with U+FFFD replacement (``null`` for an empty value). Where pylance 14 crashes
    instead (a length pointing past the end, invalid UTF-8 in a string, a float payload not 8
    bytes long) and for extension/decimal values (which JSON text never produces), the same
    fallback applies.
    """
    del path  # rendering cannot fail
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array(
            [decode_jsonb(c, path="", threads=threads) for c in arr.chunks],
            type=None if arr.num_chunks else pa.string(),
        )
    b = _Buffers(_jsonb_storage(arr, ""))
    k = _kernels()

    def convert(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, int]:
        nbytes = int(b.offsets[hi] - b.offsets[lo])
        out = np.empty(nbytes + nbytes // 4 + 64, dtype=np.uint8)
        offs = np.zeros(hi - lo + 1, dtype=np.int64)
        depth = _DEPTH
        frames, digits = k.render_scratch(depth)
        row, pos = lo, 0
        while True:
            status, row, pos, need = k.render_rows(
                b.offsets[lo:],
                b.data,
                b.validity,
                b.vbit0 + lo,
                b.has_validity,
                row - lo,
                hi - lo,
                out,
                pos,
                offs,
                frames,
                digits,
            )
            row += lo
            if status == _ST_DONE:
                return offs, out, pos
            if status == _ST_NEED_SPACE:
                out = _grow(out, pos, need)
            elif status == _ST_NEED_SCRATCH:
                depth = max(need, 2 * depth)
                frames, digits = k.render_scratch(depth)
            else:  # _ST_FALLBACK: not well-formed JSONB
                text = _ref.render_fallback(b.row_bytes(row)).encode("utf-8")
                if pos + len(text) > out.shape[0]:
                    out = _grow(out, pos, len(text))
                out[pos : pos + len(text)] = np.frombuffer(text, dtype=np.uint8)
                pos += len(text)
                offs[row - lo + 1] = pos
                row += 1

    parts = _run_chunks(_chunks(b, threads), convert)
    offsets, data = _assemble(parts, b.n)
    validity = b.validity_buffer()
    if offsets[-1] <= np.iinfo(np.int32).max:
        return pa.Array.from_buffers(
            pa.string(),
            b.n,
            [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
            null_count=b.null_count,
        )
    return pa.Array.from_buffers(
        pa.large_string(),
        b.n,
        [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=b.null_count,
    )


# ---- JSONB check ------------------------------------------------------------------------------
def validate_jsonb(arr: Any, *, path: str) -> None:
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
    lance_semantic.errors.InvalidJsonError: field 'j', row 1: invalid JSON: invalid JSONB container header (near '6a 75 6e 6b')
    """
    if isinstance(arr, pa.ChunkedArray):
        base = 0
        for chunk in arr.chunks:
            try:
                validate_jsonb(chunk, path=path)
            except InvalidJsonError as e:
                raise InvalidJsonError(path, base + e.row, e.reason, e.excerpt) from None
            base += len(chunk)
        return
    b = _Buffers(_jsonb_storage(arr, path))
    status, row, code, epos = _kernels().check_rows(
        b.offsets, b.data, b.validity, b.vbit0, b.has_validity, 0, b.n
    )
    if status != _ST_DONE:
        raise InvalidJsonError(path, row, reason_of(code), _hex_excerpt(b.row_bytes(row), epos))
