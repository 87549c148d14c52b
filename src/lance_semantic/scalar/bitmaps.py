"""pylance's BITMAP and LABEL_LIST scalar indices, read (layer L3).

``bitmap_page_lookup.lance`` holds one row per distinct key (``keys``, sorted, a null key
for the rows whose value is null) and its rows (``bitmaps``) in pylance's RowIdTreeMap
framing: ``u32`` count, then per fragment ``u32`` fragment id, ``u32`` size and ``size``
bytes of portable roaring of the row offsets (size 0: every row of the fragment). A
LABEL_LIST index is the same over the lists' items, with ``lance:label_list_nulls`` in
its schema metadata and the rows whose list is null in global buffer 1.

The keys are read once per index; a query decodes only the bitmaps of the keys it meets
(read with ``take_rows``, kept decoded).
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from ..errors import CorruptTableError
from ..storage import ObjectStore
from .files import IndexFile
from .rowsets import RowSelection, key_value, whole_fragment

__all__ = ["BitmapIndex", "LabelListIndex", "decode_row_id_tree_map"]

#: a BITMAP of at most this many keys looks its values up in a dict of its keys
_KEYS_BY_VALUE = 100_000

#: a decoded RowIdTreeMap: fragment id -> offsets (None: every row of the fragment)
TreeMap = dict[int, BitMap | None]


def decode_row_id_tree_map(data: bytes) -> TreeMap:
    """A RowIdTreeMap (pylance's framing of per-fragment roaring bitmaps), decoded.

    >>> from pyroaring import BitMap
    >>> raw = BitMap([1, 4]).serialize()
    >>> data = struct.pack("<III", 2, 7, len(raw)) + raw + struct.pack("<II", 9, 0)
    >>> decode_row_id_tree_map(data)
    {7: BitMap([1, 4]), 9: None}
    """
    out: TreeMap = {}
    if not data:
        return out
    try:
        (count,) = struct.unpack_from("<I", data, 0)
        at = 4
        for _ in range(count):
            fid, size = struct.unpack_from("<II", data, at)
            at += 8
            out[fid] = BitMap.deserialize(data[at : at + size]) if size else None
            at += size
    except (struct.error, ValueError) as e:
        raise ValueError(f"a malformed row bitmap: {e}") from e
    return out


def _resolve(
    tree: TreeMap, fragments: frozenset[int], physical: Mapping[int, int]
) -> dict[int, BitMap]:
    """``tree``'s rows in each of ``fragments`` that is scanned (``physical``: their
    physical row counts)."""
    out: dict[int, BitMap] = {}
    for fid in fragments & physical.keys():
        if fid not in tree:
            out[fid] = BitMap()
            continue
        b = tree[fid]
        out[fid] = whole_fragment(physical[fid]) if b is None else b
    return out


class BitmapIndex:
    """A BITMAP index of one column over ``fragments`` (its fragment bitmap)."""

    kind = "BITMAP"

    def __init__(self, store: ObjectStore, base: str, name: str, fragments: frozenset[int]) -> None:
        self.name, self.fragments = name, fragments
        rel = f"{base}/bitmap_page_lookup.lance"
        self._keys_file = IndexFile(store, rel, ["keys"])
        self._bitmaps = IndexFile(store, rel, ["bitmaps"])
        self._keys: pa.Array | None = None
        self._decoded: dict[int, TreeMap] = {}
        self._rows_by_key: dict[object, int] | bool | None = None
        self._lock = threading.Lock()
        #: bitmaps read so far (what tests and explain look at)
        self.bitmaps_read = 0

    def keys(self) -> pa.Array:
        if self._keys is None:
            self._keys = self._keys_file.read_all().column("keys").combine_chunks()
        return self._keys

    @property
    def value_type(self) -> pa.DataType:
        return self.keys().type

    def _cast(self, value: pa.Scalar) -> pa.Scalar | None:
        return key_value(value, self.value_type)

    def _trees(self, rows: np.ndarray) -> list[TreeMap]:
        """The decoded bitmaps of key rows ``rows``."""
        with self._lock:
            missing = [int(r) for r in rows if int(r) not in self._decoded]
        if missing:
            got = self._bitmaps.take(missing).column("bitmaps").to_pylist()
            try:
                decoded = {
                    r: decode_row_id_tree_map(b or b"") for r, b in zip(missing, got, strict=True)
                }
            except ValueError as e:
                raise CorruptTableError(self._bitmaps.rel, str(e)) from e
            with self._lock:
                self.bitmaps_read += len(missing)
                self._decoded.update(decoded)
        with self._lock:
            return [self._decoded[int(r)] for r in rows]

    def _union(self, rows: np.ndarray, physical: Mapping[int, int], exact: bool) -> RowSelection:
        out = {f: BitMap() for f in self.fragments & physical.keys()}
        for tree in self._trees(rows):
            for fid, b in _resolve(tree, self.fragments, physical).items():
                out[fid] |= b
        return RowSelection(out, exact, (self.name,))

    def _floating(self) -> bool:
        return pa.types.is_floating(self.value_type)

    def _nan_keys(self) -> np.ndarray:
        if not self._floating():
            return np.zeros(len(self.keys()), dtype=bool)
        return pc.fill_null(pc.is_nan(self.keys()), False).to_numpy(zero_copy_only=False)

    def in_values(
        self,
        values: Sequence[pa.Scalar],
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None:
        """Rows whose value is one of ``values`` (``budget``: unused, bitmaps are small)."""
        cast = [self._cast(v) for v in values]
        if any(c is None for c in cast):
            return None
        keys = self.keys()
        if self._floating():  # compared, not hashed: -0.0 and 0.0 are distinct keys, one value
            flags = self._nan_keys()
            for c in cast:
                flags |= pc.fill_null(pc.equal(keys, c), False).to_numpy(zero_copy_only=False)
        else:
            where = self._key_rows()
            if where is not None:  # (the keys by value: one look-up per value)
                found = {where.get(c.as_py(), -1) for c in cast}  # type: ignore[union-attr]
                found.discard(-1)
                return self._union(np.asarray(sorted(found), np.int64), physical, True)
            value_set = pa.array([c.as_py() for c in cast], self.value_type)  # type: ignore[union-attr]
            hit = pc.fill_null(pc.is_in(keys, value_set=value_set), False)
            flags = hit.to_numpy(zero_copy_only=False)
        return self._union(np.flatnonzero(flags), physical, not self._floating())

    def _key_rows(self) -> dict[object, int] | None:
        """Each non-null key's row, made once (None: too many keys, or a key type whose
        Python values may compare equal where Arrow's do not: only integers, strings and
        binaries)."""
        if self._rows_by_key is None:
            keys, t = self.keys(), self.value_type
            plain = (
                pa.types.is_integer(t)
                or pa.types.is_string(t)
                or pa.types.is_large_string(t)
                or pa.types.is_binary(t)
                or pa.types.is_large_binary(t)
            )
            if not plain or len(keys) > _KEYS_BY_VALUE:
                self._rows_by_key = False
            else:
                values = keys.to_pylist()
                made = {v: i for i, v in enumerate(values) if v is not None}
                # (keys are distinct as pylance writes them; if not, the kernels answer)
                distinct = len(made) == len(values) - keys.null_count
                self._rows_by_key = made if distinct else False
        return (
            self._rows_by_key if isinstance(self._rows_by_key, dict) and self._rows_by_key else None
        )

    def between(
        self,
        low: pa.Scalar | None,
        low_in: bool,
        high: pa.Scalar | None,
        high_in: bool,
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None:
        """Rows whose value is within the bounds (``budget``: unused, bitmaps are small)."""
        lo = None if low is None else self._cast(low)
        hi = None if high is None else self._cast(high)
        if (low is not None and lo is None) or (high is not None and hi is None):
            return None
        if self._floating():
            low_in = high_in = True
        keys = self.keys()
        mask = pc.is_valid(keys)
        if lo is not None:
            mask = pc.and_(mask, (pc.greater_equal if low_in else pc.greater)(keys, lo))
        if hi is not None:
            mask = pc.and_(mask, (pc.less_equal if high_in else pc.less)(keys, hi))
        flags = pc.fill_null(mask, False).to_numpy(zero_copy_only=False) | self._nan_keys()
        return self._union(np.flatnonzero(flags), physical, not self._floating())

    def is_null(self, physical: Mapping[int, int]) -> RowSelection:
        flags = pc.is_null(self.keys()).to_numpy(zero_copy_only=False)
        return self._union(np.flatnonzero(flags), physical, True)

    def is_not_null(self, physical: Mapping[int, int]) -> RowSelection:
        nulls = self.is_null(physical)
        rows = {f: whole_fragment(physical[f]) - b for f, b in nulls.rows.items()}
        return RowSelection(rows, True, (self.name,))


class LabelListIndex(BitmapIndex):
    """A LABEL_LIST index of one list column: bitmaps per list item."""

    kind = "LABEL_LIST"

    def __init__(self, store: ObjectStore, base: str, name: str, fragments: frozenset[int]) -> None:
        super().__init__(store, base, name, fragments)
        self._nulls: TreeMap | None = None

    def _rows_of(self, values: Sequence[pa.Scalar]) -> list[np.ndarray] | None:
        cast = [self._cast(v) for v in values]
        if not cast or any(c is None or not c.is_valid for c in cast):
            return None
        keys = self.keys()
        return [
            np.flatnonzero(pc.fill_null(pc.equal(keys, c), False).to_numpy(zero_copy_only=False))
            for c in cast
        ]

    def has_any(
        self, values: Sequence[pa.Scalar], physical: Mapping[int, int]
    ) -> RowSelection | None:
        """Rows whose list holds any of ``values`` (``array_has_any``, ``array_has``)."""
        found = self._rows_of(values)
        if found is None:
            return None
        rows = np.unique(np.concatenate(found)) if found else np.empty(0, np.int64)
        return self._union(rows, physical, not self._floating())

    def has_all(
        self, values: Sequence[pa.Scalar], physical: Mapping[int, int]
    ) -> RowSelection | None:
        """Rows whose list holds every one of ``values`` (``array_has_all``)."""
        found = self._rows_of(values)
        if found is None:
            return None
        out: RowSelection | None = None
        for rows in found:
            one = self._union(rows, physical, not self._floating())
            out = one if out is None else out.intersect(one)
        assert out is not None
        return out

    def in_values(
        self,
        values: Sequence[pa.Scalar],
        physical: Mapping[int, int],
        *,
        budget: int | None = None,
    ) -> RowSelection | None:
        return None  # (a list column is not compared with scalars)

    def between(self, *args: object, **kwargs: object) -> RowSelection | None:
        return None

    def _null_lists(self) -> TreeMap | None:
        """The rows whose list is null (None: the index does not record them)."""
        if self._nulls is None:
            meta = self._keys_file.schema_metadata()
            if b"lance:label_list_nulls" not in meta:
                return None
            raw = self._keys_file.global_buffer(1)
            try:
                self._nulls = decode_row_id_tree_map(raw)
            except ValueError as e:
                raise CorruptTableError(self._keys_file.rel, str(e)) from e
        return self._nulls

    def is_null(self, physical: Mapping[int, int]) -> RowSelection:
        """Rows whose list is null."""
        nulls = self._null_lists()
        if nulls is None:  # not recorded: every row may be one
            rows = {f: whole_fragment(physical[f]) for f in self.fragments & physical.keys()}
            return RowSelection(rows, False, (self.name,))
        return RowSelection(_resolve(nulls, self.fragments, physical), True, (self.name,))

    def is_not_null(self, physical: Mapping[int, int]) -> RowSelection:
        nulls = self.is_null(physical)
        if not nulls.exact:
            return nulls
        return super().is_not_null(physical)
