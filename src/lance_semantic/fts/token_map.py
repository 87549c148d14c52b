"""The token map of pylance's INVERTED index: an ``fst``-crate FST read lazily (layer L3).

pylance 14 keeps an index partition's tokens in ``part_<n>_tokens.lance``: one row whose
``_token_fst_bytes`` holds a map token (UTF-8 bytes) → token id serialized by the Rust
``fst`` crate (format version 3). :class:`TokenMap` reads that buffer in place: opening it
reads the 36 bytes of header and footer; a lookup walks one node per byte of the token from
the root; iteration walks the whole automaton in key order. Nothing is materialised.

The layout, as written by ``fst`` 0.4 and checked against pylance's maps:

- a 16-byte header (``u64`` version, ``u64`` type) and a footer (``u64`` number of keys,
  ``u64`` root address, then in version 3 a ``u32`` CRC32C of everything before it);
- nodes written back to front: a node's address is the position of its *state byte*, its
  other bytes lie at lower addresses. Address 0 is the final node without transitions.
- state ``11iiiiii`` *one transition, to the node just below, output 0*: ``i`` indexes a
  table of 63 common bytes (0: the input byte precedes the state byte);
- state ``10iiiiii`` *one transition*: input as above, then a pack-size byte (high nibble:
  bytes of the address delta, low nibble: bytes of the output), the delta and the output,
  little endian; the target is the node's lowest address minus the delta (delta 0: node 0);
- state ``0fnnnnnn`` *any transitions*: ``f`` final, ``n`` the number of transitions (0:
  in the byte below; a stored 1 there means 256), the pack sizes, then (version ≥ 2, more
  than 32 transitions) a 256-byte table input → transition index, the inputs (the highest
  transition first), the deltas and the outputs (likewise), and last the final output.

A key's value is the sum of the outputs along its path plus its final node's output.

>>> import glob, lance, pyarrow as pa
>>> from lance.file import LanceFileReader
>>> ds = lance.write_dataset(pa.table({"text": ["red apples", "green apples"]}), "t.lance")
>>> ds.create_scalar_index("text", "INVERTED", stem=False)
>>> (path,) = glob.glob("t.lance/_indices/*/part_0_tokens.lance")
>>> tokens = LanceFileReader(path)
>>> tokens = TokenMap.from_table(tokens.read_all().to_table())
>>> sorted(tokens.keys()), len(tokens), tokens.get("apples") is not None, tokens.get("pear")
(['apples', 'green', 'red'], 3, True, None)
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ..errors import CorruptTableError

__all__ = ["TOKEN_FST_COLUMN", "TokenMap"]

#: the column of ``part_<n>_tokens.lance`` that holds the FST
TOKEN_FST_COLUMN = "_token_fst_bytes"

# the inputs a one-transition state names by index (1-based): fst's most common bytes
_COMMON = b"te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG"
assert len(_COMMON) == 63
# above this many transitions a version >= 2 node holds a 256-byte input -> index table
_INDEXED = 32
_HEADER = 16


class TokenMap:
    """A read-only map token → token id over the FST bytes of an INVERTED index.

    Parameters
    ----------
    data
        The FST bytes (``_token_fst_bytes``).
    where
        What the bytes are, for error messages (a file path).

    Raises
    ------
    CorruptTableError
        If the bytes are not an ``fst`` map of a version this reader knows.
    """

    __slots__ = ("_data", "_root", "_len", "_indexed", "_where")

    def __init__(self, data: bytes | bytearray | memoryview, where: str = "token map") -> None:
        d = bytes(data)
        self._where = where
        if len(d) < _HEADER + 16:
            raise CorruptTableError(where, f"the FST holds {len(d)} bytes, too few for one")
        version = int.from_bytes(d[0:8], "little")
        if version not in (1, 2, 3):
            raise CorruptTableError(where, f"unknown FST format version {version}")
        end = len(d) - 4 if version >= 3 else len(d)
        self._len = int.from_bytes(d[end - 16 : end - 8], "little")
        self._root = int.from_bytes(d[end - 8 : end], "little")
        if self._root >= end - 16 or (self._root < _HEADER and self._root != 0):
            raise CorruptTableError(where, f"the FST's root address {self._root} is outside it")
        self._data = d
        self._indexed = version >= 2

    @classmethod
    def from_table(cls, table: pa.Table, where: str = "token map") -> TokenMap:
        """The map in the first row of a ``part_<n>_tokens.lance`` table."""
        if TOKEN_FST_COLUMN not in table.column_names or table.num_rows != 1:
            raise CorruptTableError(
                where, f"a token file holds one row with {TOKEN_FST_COLUMN}; this one does not"
            )
        value = table.column(TOKEN_FST_COLUMN)[0].as_py()
        if not isinstance(value, bytes):
            raise CorruptTableError(where, f"{TOKEN_FST_COLUMN} is null")
        return cls(value, where)

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"TokenMap({self._len} tokens, {len(self._data)} bytes)"

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return self.items()

    def __getitem__(self, token: str) -> int:
        found = self.get(token)
        if found is None:
            raise KeyError(token)
        return found

    def get(self, token: str) -> int | None:
        """The id of ``token``, or None if the map does not hold it."""
        d = self._data
        addr, out = self._root, 0
        try:
            for b in token.encode("utf-8"):
                step = self._step(d, addr, b)
                if step is None:
                    return None
                addr, o = step
                out += o
            final = self._final(d, addr)
        except IndexError:
            raise CorruptTableError(self._where, "the FST ends inside a node") from None
        return None if final is None else out + final

    def keys(self) -> Iterator[str]:
        """Every token, in key (UTF-8 byte, = code point) order."""
        return (k for k, _ in self.items())

    def items(self) -> Iterator[tuple[str, int]]:
        """Every ``(token, id)``, in key order."""
        return self._walk(self._root, b"", 0, None, None)

    def prefix(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Every ``(token, id)`` whose token starts with ``prefix``, in key order."""
        d, addr, out = self._data, self._root, 0
        p = prefix.encode("utf-8")
        for b in p:
            step = self._step(d, addr, b)
            if step is None:
                return iter(())
            addr, o = step
            out += o
        return self._walk(addr, p, out, None, None)

    def range(self, start: str | None = None, stop: str | None = None) -> Iterator[tuple[str, int]]:
        """Every ``(token, id)`` with ``start <= token < stop`` (None: unbounded), in order."""
        lo = None if start is None else start.encode("utf-8")
        hi = None if stop is None else stop.encode("utf-8")
        return self._walk(self._root, b"", 0, lo, hi)

    # -- nodes ------------------------------------------------------------------------------

    def _step(self, d: bytes, addr: int, b: int) -> tuple[int, int] | None:
        """The transition on byte ``b`` from the node at ``addr``: (target, output)."""
        if addr == 0:
            return None
        v = d[addr]
        kind = v >> 6
        if kind >= 2:
            ci = v & 0x3F
            if ci:
                inp, ilen = _COMMON[ci - 1], 0
            else:
                inp, ilen = d[addr - 1], 1
            if inp != b:
                return None
            if kind == 3:
                return addr - ilen - 1, 0
            at = addr - ilen - 1
            s = d[at]
            ts, os_ = s >> 4, s & 15
            delta = int.from_bytes(d[at - ts : at], "little")
            end = at - ts - os_
            o = int.from_bytes(d[end : at - ts], "little") if os_ else 0
            return (end - delta if delta else 0), o
        n = v & 0x3F
        at = addr - 1
        if not n:
            n = d[at]
            at -= 1
            if n == 1:
                n = 256
        s = d[at]
        ts, os_ = s >> 4, s & 15
        if self._indexed and n > _INDEXED:
            i = d[at - 256 + b]
            if i >= n:
                return None
            base = at - 256
        else:
            base = at
            p = d.find(bytes((b,)), base - n, base)
            if p < 0:
                return None
            i = base - 1 - p
        trans = base - n - i * ts - ts
        delta = int.from_bytes(d[trans : trans + ts], "little")
        outs = base - n - n * ts
        o = int.from_bytes(d[outs - i * os_ - os_ : outs - i * os_], "little") if os_ else 0
        if delta:
            end = outs - n * os_ - (os_ if v & 0x40 else 0)
            return end - delta, o
        return 0, o

    def _final(self, d: bytes, addr: int) -> int | None:
        """The final output of the node at ``addr``, or None if it is not final."""
        if addr == 0:
            return 0
        v = d[addr]
        if v >> 7 or not v & 0x40:
            return None
        n = v & 0x3F
        at = addr - 1
        if not n:
            n = d[at]
            at -= 1
            if n == 1:
                n = 256
        s = d[at]
        ts, os_ = s >> 4, s & 15
        if not os_:
            return 0
        index = 256 if self._indexed and n > _INDEXED else 0
        fo = at - index - n - n * ts - n * os_
        return int.from_bytes(d[fo - os_ : fo], "little")

    def _node(self, addr: int) -> tuple[int | None, list[tuple[int, int, int]]]:
        """The node at ``addr``: its final output (None: not final) and its transitions
        ``(input byte, output, target)`` in input order."""
        d = self._data
        if addr == 0:
            return 0, []
        v = d[addr]
        kind = v >> 6
        if kind >= 2:
            ci = v & 0x3F
            inp = _COMMON[ci - 1] if ci else d[addr - 1]
            step = self._step(d, addr, inp)
            assert step is not None
            return None, [(inp, step[1], step[0])]
        n = v & 0x3F
        at = addr - 1
        if not n:
            n = d[at]
            at -= 1
            if n == 1:
                n = 256
        s = d[at]
        ts, os_ = s >> 4, s & 15
        base = at - 256 if self._indexed and n > _INDEXED else at
        trans = base - n
        outs = trans - n * ts
        final_at = outs - n * os_
        is_final = bool(v & 0x40)
        end = final_at - (os_ if is_final else 0)
        final: int | None = None
        if is_final:
            final = int.from_bytes(d[end:final_at], "little") if os_ else 0
        result = []
        for i in range(n):
            inp = d[base - 1 - i]
            t = trans - i * ts
            delta = int.from_bytes(d[t - ts : t], "little")
            o = outs - i * os_
            out = int.from_bytes(d[o - os_ : o], "little") if os_ else 0
            result.append((inp, out, end - delta if delta else 0))
        return final, result

    def _walk(
        self, addr: int, key: bytes, out: int, lo: bytes | None, hi: bytes | None
    ) -> Iterator[tuple[str, int]]:
        """Every key below the node at ``addr`` (reached by ``key`` with output ``out``),
        in order, within ``[lo, hi)``."""
        stack: list[tuple[int, bytes, int]] = [(addr, key, out)]
        try:
            while stack:
                addr, key, out = stack.pop()
                final, trans = self._node(addr)
                if final is not None and (lo is None or key >= lo):
                    yield key.decode("utf-8"), out + final
                children = []
                for inp, o, target in trans:
                    k = key + bytes((inp,))
                    if hi is not None and k >= hi:
                        break
                    if lo is not None and k < lo[: len(k)]:
                        continue
                    children.append((target, k, out + o))
                stack.extend(reversed(children))
        except IndexError:
            raise CorruptTableError(self._where, "the FST ends inside a node") from None
