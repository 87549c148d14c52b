"""Blob values on the write path (layer L4; spec "Value-transforming types",
docs/format/lance-format-facts.md §10).

Blob is value-transforming: blob v1 bytes pass to the encoder unchanged, but blob v2 values
are turned, per data file, into the *prepared* layout pylance's blob v2 encoder takes: each
row becomes inline bytes (stored in the data file), a range of a packed sidecar, a
dedicated sidecar, or an external URI, by size thresholds read from the field's metadata
(defaults 64 KiB inline, 4 MiB dedicated, 1 GiB per packed sidecar), exactly as pylance
chooses. Inline bytes are handed over without copying.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InvalidBlobError, UnsupportedTypeError
from ..schema import (
    BLOB_V1_KEY,
    BLOB_V2_EXTENSION,
    DEDICATED_THRESHOLD_KEY,
    INLINE_THRESHOLD_KEY,
    PACK_FILE_THRESHOLD_KEY,
    V2_MINIMAL_TYPE,
    V2_PREPARED_TYPE,
    TableSchema,
    is_blob_v2,
    is_logical_v2_type,
    is_v1_arrow_field,
    is_v2_arrow_field,
)
from ..storage import BlobSidecarWriter
from ..types.metadata_keys import EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY

__all__ = [
    "v1_inputs_as_v2",
    "table_blob_inputs",
    "bytes_as_logical",
    "logical_blob_array",
    "logical_blob_type",
    "BlobPreparer",
    "blob_columns",
]

_EXT_NAME = EXTENSION_NAME_KEY.encode()
_EXT_META = EXTENSION_METADATA_KEY.encode()
_INLINE, _PACKED, _DEDICATED, _EXTERNAL = 0, 1, 2, 3


def bytes_as_logical(arr: pa.Array, dt: pa.DataType = V2_MINIMAL_TYPE) -> pa.StructArray:
    """``large_binary`` blob bytes as the logical blob v2 struct ``dt`` (``data`` set)."""
    data = arr if arr.type == pa.large_binary() else arr.cast(pa.large_binary())
    children = [data] + [pa.nulls(len(arr), dt.field(i).type) for i in range(1, dt.num_fields)]
    mask = arr.is_null() if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(dt), mask=mask)


def logical_blob_array(arr: pa.Array) -> pa.Array:
    """A blob v2 input as its logical struct: extension arrays as their storage, v1-style
    bytes as ``struct<data, uri>``."""
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    if pa.types.is_large_binary(arr.type):
        return bytes_as_logical(arr)
    return arr


def logical_blob_type(dt: pa.DataType) -> pa.DataType:
    """The type :func:`logical_blob_array` gives an input of type ``dt``."""
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    return V2_MINIMAL_TYPE if pa.types.is_large_binary(dt) else dt


def _v2_field(f: pa.Field) -> pa.Field:
    md = {k: v for k, v in (f.metadata or {}).items() if k != BLOB_V1_KEY.encode()}
    md[_EXT_NAME] = BLOB_V2_EXTENSION.encode()
    return pa.field(f.name, V2_MINIMAL_TYPE, f.nullable, metadata=md)


def v1_inputs_as_v2(
    reader: pa.RecordBatchReader, names: Collection[str] | None = None
) -> pa.RecordBatchReader:
    """The input with blob v1 columns (``large_binary`` + ``lance-encoding:blob``) turned into
    blob v2, as pylance does on 2.2+ storage: ``struct<data, uri>`` carrying only the
    ``ARROW:extension:name`` key. ``names``: only the columns of these names (an append:
    the table's blob v2 fields)."""
    v1 = [
        i
        for i, f in enumerate(reader.schema)
        if is_v1_arrow_field(f) and (names is None or f.name in names)
    ]
    if not v1:
        return reader
    fields = list(reader.schema)
    for i in v1:
        fields[i] = _v2_field(fields[i])
    schema = pa.schema(fields, metadata=reader.schema.metadata)

    def batches() -> Iterator[pa.RecordBatch]:
        for b in reader:
            cols = list(b.columns)
            for i in v1:
                cols[i] = bytes_as_logical(cols[i])
            yield pa.RecordBatch.from_arrays(cols, schema=schema)

    return pa.RecordBatchReader.from_batches(schema, batches())


def table_blob_inputs(reader: pa.RecordBatchReader, table: TableSchema) -> pa.RecordBatchReader:
    """``reader`` with v1-style bytes for ``table``'s blob v2 fields turned into v2, as
    pylance takes them in appends and merges (see :func:`v1_inputs_as_v2`)."""
    blobs = [f.name for f in table.fields if is_blob_v2(f)]
    return v1_inputs_as_v2(reader, blobs) if blobs else reader


def blob_columns(schema: pa.Schema) -> list[int]:
    """Positions of the blob v2 columns of a physical batch schema."""
    return [i for i, f in enumerate(schema) if is_v2_arrow_field(f)]


@dataclass(frozen=True, slots=True)
class _Thresholds:
    inline: int
    dedicated: int
    pack_file: int


def _threshold(md: dict[bytes, bytes], key: str, default: int, zero_ok: bool, path: str) -> int:
    raw = md.get(key.encode())
    if raw is None:
        return default
    text = raw.decode("utf-8", "replace")
    if not text.isdigit() or (int(text) == 0 and not zero_ok):
        raise UnsupportedTypeError(path, "blob", f"invalid {key} {text!r}")
    return int(text)


def _thresholds(f: pa.Field) -> _Thresholds:
    md = dict(f.metadata or {})
    return _Thresholds(
        inline=_threshold(md, INLINE_THRESHOLD_KEY, 64 * 1024, True, f.name),
        dedicated=_threshold(md, DEDICATED_THRESHOLD_KEY, 4 * 1024 * 1024, False, f.name),
        pack_file=_threshold(md, PACK_FILE_THRESHOLD_KEY, 1024 * 1024 * 1024, False, f.name),
    )


def _prepared_field(f: pa.Field) -> pa.Field:
    return pa.field(
        f.name,
        V2_PREPARED_TYPE,
        f.nullable,
        metadata={_EXT_NAME: BLOB_V2_EXTENSION.encode(), _EXT_META: b""},
    )


def _valid(arr: pa.Array) -> np.ndarray:
    if not arr.null_count:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


class BlobPreparer:
    """Turns the blob v2 columns of one data file's batches into pylance's prepared layout,
    writing the sidecars that data file owns."""

    def __init__(
        self, sidecars: BlobSidecarWriter, schema: pa.Schema, *, allow_external: bool
    ) -> None:
        self._sidecars = sidecars
        self._columns = blob_columns(schema)
        self._thresholds = {i: _thresholds(schema.field(i)) for i in self._columns}
        self._allow_external = allow_external
        fields = list(schema)
        for i in self._columns:
            fields[i] = _prepared_field(fields[i])
        self.schema = pa.schema(fields, metadata=schema.metadata)

    def prepare(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` in the prepared layout, its values stored; an :class:`InvalidBlobError`
        names a row of ``batch`` (the caller knows where it starts)."""
        cols = list(batch.columns)
        for i in self._columns:
            name = batch.schema.field(i).name
            cols[i] = self._column(cols[i], name, self._thresholds[i])
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def _column(self, arr: pa.Array, path: str, limits: _Thresholds) -> pa.StructArray:
        if not is_logical_v2_type(arr.type):
            raise UnsupportedTypeError(path, str(arr.type), "not a logical blob v2 layout")
        n = len(arr)
        data, uri = arr.field(0), arr.field(1)
        valid = _valid(arr)
        has_data = _valid(data) & valid
        has_uri = _valid(uri) & valid
        bad = valid & (has_data == has_uri)
        if bad.any():
            raise InvalidBlobError(
                path, int(np.argmax(bad)), "exactly one of data and uri must be set"
            )
        offsets = np.frombuffer(data.buffers()[1], dtype=np.int64)[
            data.offset : data.offset + n + 1
        ]
        sizes = np.where(has_data, np.diff(offsets), 0).astype(np.uint64)
        kind = np.full(n, _INLINE, dtype=np.uint8)
        kind[has_data & (sizes > limits.inline)] = _PACKED
        kind[has_data & (sizes > limits.dedicated)] = _DEDICATED
        kind[has_uri] = _EXTERNAL
        blob_id = np.zeros(n, dtype=np.uint32)
        blob_size = np.where(has_data, sizes, 0).astype(np.uint64)
        position = np.zeros(n, dtype=np.uint64)
        if has_uri.any():
            self._external(arr, has_uri, blob_size, position, path)
        values = data.buffers()[2]
        for row in np.flatnonzero((kind == _PACKED) | (kind == _DEDICATED)):
            start, stop = int(offsets[row]), int(offsets[row + 1])
            payload = memoryview(values)[start:stop]
            if kind[row] == _DEDICATED:
                blob_id[row] = self._sidecars.dedicated(payload)
            else:
                blob_id[row], position[row] = self._sidecars.packed(payload, limits.pack_file)
        mask = ~valid
        children = [
            pa.array(kind, mask=mask),
            data,
            uri,
            pa.array(blob_id),
            pa.array(blob_size),
            pa.array(position),
        ]
        return pa.StructArray.from_arrays(
            children, fields=list(V2_PREPARED_TYPE), mask=pa.array(mask) if mask.any() else None
        )

    def _external(
        self,
        arr: pa.StructArray,
        rows: np.ndarray,
        blob_size: np.ndarray,
        position: np.ndarray,
        path: str,
    ) -> None:
        uris = arr.field(1)
        if not self._allow_external:
            row = int(np.argmax(rows))
            raise InvalidBlobError(
                path,
                row,
                f"external blob URI {uris[row].as_py()!r} is outside the table's registered "
                "bases; pass allow_external_blob_outside_bases=True to store it as an absolute "
                "URI",
            )
        absolute = pc.fill_null(pc.match_substring(uris, "://"), False).to_numpy(
            zero_copy_only=False
        )
        relative = rows & ~absolute
        if relative.any():
            row = int(np.argmax(relative))
            text = uris[row].as_py()
            raise InvalidBlobError(path, row, f"external URI {text!r} is not absolute")
        if arr.type.num_fields < 4:
            return
        pos, size = arr.field(2), arr.field(3)
        has_pos, has_size = _valid(pos) & rows, _valid(size) & rows
        half = has_pos != has_size
        if half.any():
            raise InvalidBlobError(
                path,
                int(np.argmax(half)),
                "position and size of an external range must both be set or both be null",
            )
        if has_size.any():
            p = pc.fill_null(pos, 0).to_numpy()
            s = pc.fill_null(size, 0).to_numpy()
            zero = has_size & (s == 0)
            if zero.any():
                raise InvalidBlobError(
                    path, int(np.argmax(zero)), "an external range needs size > 0"
                )
            position[has_pos] = p[has_pos].astype(np.uint64)
            blob_size[has_size] = s[has_size].astype(np.uint64)
