"""``Dataset.create_scalar_index`` for BTREE, BITMAP, LABEL_LIST, ZONEMAP and BLOOMFILTER,
in pylance 14's formats (layer L5; docs/format/index-formats.md).

The build reads the key column once with the rows' addresses (deleted rows are not
indexed, as in pylance), sorts the keys (scalar/key_order.py) and writes the index files
(scalar/btree_write.py, bitmap_write.py, zonemap_write.py, bloom_write.py) under
``_indices/<uuid>/``; one ``CreateIndex`` transaction commits the entry
(``/lance.table.BTreeIndexDetails`` / ``BitmapIndexDetails`` with ``index_version`` 0,
``LabelListIndexDetails`` with 1, all with empty details; ``ZoneMapIndexDetails`` 0 with
pylance's details; ``/lance.index.pb.BloomFilterIndexDetails`` 0, empty; name
``<column>_idx``, every fragment of the version) and removes an index of the same name
(``replace=True``, pylance's default). On any error nothing is committed and the files
written are removed.

On a flagged table a column's data files may hold different layouts of one semantic type
(utf8 / large_utf8 / dictionary, decimal128 / decimal256): the index's key column holds the
semantic type's default layout, whatever the field's recorded output encoding.

As pylance 14: ``train=False`` commits an empty index (no rows, no fragments);
``fragment_ids`` is refused with pylance's ValueError (its distributed build goes through
``create_index_uncommitted``); an unknown type is its NotImplementedError, a column the
type cannot hold its TypeError naming the column (a BLOOMFILTER: its ValueError); a
missing column is ``ColumnNotFoundError`` (a KeyError, as pylance's). INVERTED / FTS,
NGRAM, RTREE and MINHASHLSH are ``NotSupportedYetError``, as is a ZONEMAP on a nested type
(pylance takes lists and structs) and an option this library does not implement.
"""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any, Final, Literal, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import ColumnNotFoundError, NotSupportedYetError
from ...manifest import (
    IndexEntry,
    IndexFile,
    Manifest,
)
from ...read import ScanPlan, ScanRequest, plan_scan, run_scan
from ...scalar.bitmap_write import write_bitmap
from ...scalar.bloom_write import BLOOM_FILE, bloom_key_type_ok, write_bloomfilter
from ...scalar.btree_write import write_btree
from ...scalar.zonemap_write import ZONEMAP_DETAILS, ZONEMAP_FILE, write_zonemap
from ...storage import UncommittedFiles
from ...types.layouts import default_output_encoding
from ..core import Snapshot
from .commit_index import commit_new_index
from .create_inverted import create_inverted_index

__all__ = [
    "create_scalar_index",
    "build_scalar_index",
    "scalar_kind",
    "SCALAR_WRITTEN",
    "scalar_key_type_ok",
]

ScalarKind = Literal["BTREE", "BITMAP", "LABEL_LIST", "ZONEMAP", "BLOOMFILTER"]

#: index type -> (``index_details`` type_url, ``index_version``) as pylance 14 commits them
SCALAR_WRITTEN: Final[dict[str, tuple[str, int]]] = {
    "BTREE": ("/lance.table.BTreeIndexDetails", 0),
    "BITMAP": ("/lance.table.BitmapIndexDetails", 0),
    "LABEL_LIST": ("/lance.table.LabelListIndexDetails", 1),
    "ZONEMAP": ("/lance.table.ZoneMapIndexDetails", 0),
    "BLOOMFILTER": ("/lance.index.pb.BloomFilterIndexDetails", 0),
}
#: index type -> its ``index_details`` value (empty for the others)
_DETAILS: Final = {"ZONEMAP": ZONEMAP_DETAILS}
#: pylance 14's other scalar types (refused here by name)
_NOT_YET: Final = ("NGRAM", "RTREE", "MINHASHLSH")
#: the full-text index types (dataset/indices/create_inverted.py)
_FULL_TEXT: Final = ("INVERTED", "FTS")
_PYLANCE_TYPES: Final = (
    '"BTREE", "BITMAP", "NGRAM", "ZONEMAP", "LABEL_LIST", "INVERTED", "BLOOMFILTER", "RTREE" '
    'or "MINHASHLSH"'
)
_BATCH = 1 << 16


def scalar_key_type_ok(t: pa.DataType) -> bool:
    """Whether BTREE / BITMAP take keys of ``t`` (pylance 14: int, float, bool, str,
    large_str, binary, large_binary, decimal, fixed-size-binary, temporal)."""
    return (
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_decimal(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_temporal(t)
    )


def _kind(index_type: object) -> ScalarKind:
    if not isinstance(index_type, str):
        if type(index_type).__name__ == "IndexConfig":
            raise NotSupportedYetError("create_scalar_index: an IndexConfig index_type")
        raise TypeError(f"index_type must be str or IndexConfig, got {type(index_type).__name__}")
    upper = index_type.upper()
    if upper in SCALAR_WRITTEN:
        return cast(ScalarKind, upper)
    if upper in _NOT_YET:
        raise NotSupportedYetError(f"create_scalar_index: index_type {upper}")
    raise NotImplementedError(
        f"Only {_PYLANCE_TYPES} are supported for scalar columns.  Received {index_type}"
    )


def _column_path(column: object) -> str:
    if isinstance(column, (list, tuple)):
        if len(column) != 1:
            raise NotSupportedYetError("create_scalar_index: an index over several columns")
        column = column[0]
    if not isinstance(column, str):
        raise TypeError(f"column must be a str, got {type(column).__name__}")
    return column


def _key_column(
    snap: Snapshot, column: str, kind: ScalarKind
) -> tuple[int, dict[str, str] | None, pa.DataType]:
    """The column's field id, the output encodings that read its keys in the semantic
    type's default layout (flagged tables; None: as stored) and the type read."""
    if "." in column and column not in snap.schema.names:
        known = {f.path for f in snap.semantic_schema}
        if column in known:
            raise NotSupportedYetError(
                f"create_scalar_index: an index on the nested field {column}"
            )
    if column not in snap.schema.names:
        raise ColumnNotFoundError(column, tuple(snap.schema.names))
    field = next(f for f in snap.semantic_schema if f.path == column)
    encodings: dict[str, str] | None = None
    if snap.semantic_types:
        encodings = {}
        for f in snap.semantic_schema:
            if f.path == column or f.path.startswith(column + "."):
                default = default_output_encoding(f.semantic_type)
                if default is not None:
                    encodings[f.path] = default
    request = ScanRequest(columns=[column], output_encodings=encodings or None)
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    read_type = _planned_type(plan, column)
    if kind == "LABEL_LIST":
        if not (pa.types.is_list(read_type) or pa.types.is_large_list(read_type)):
            raise TypeError(f"LABEL_LIST index column {column} must be a list or large list")
        if not scalar_key_type_ok(read_type.value_type):
            raise TypeError(
                f"LABEL_LIST index column {column} must hold items of int, float, bool, str, "
                f"large_str, binary, large_binary, decimal, fixed-size-binary, or temporal, "
                f"got {read_type.value_type}"
            )
    elif kind == "BLOOMFILTER":
        if not bloom_key_type_ok(read_type):
            raise ValueError(
                f"Invalid user input: Bloom filter index does not support data type: "
                f"{read_type} (column {column}). Supported types: integers, float32, float64, "
                "strings, binaries, dates, times, timestamps"
            )
    elif kind == "ZONEMAP" and not scalar_key_type_ok(read_type):
        raise NotSupportedYetError(
            f"create_scalar_index: a ZONEMAP index on column {column} of type {read_type} "
            "(numbers, booleans, strings, binaries, decimals, fixed-size binaries and "
            "temporal types only)"
        )
    elif not scalar_key_type_ok(read_type):
        raise TypeError(
            f"BTREE/BITMAP index column {column} must be int, float, bool, str, large_str, "
            f"binary, large_binary, decimal, fixed-size-binary, or temporal, got {read_type}"
        )
    return field.id, encodings or None, read_type


def _planned_type(plan: ScanPlan, column: str) -> pa.DataType:
    """The Arrow type a scan of ``plan`` returns for ``column``."""
    return plan.output_schema.field(column).type


def _read_keys(
    snap: Snapshot, column: str, encodings: dict[str, str] | None, read_type: pa.DataType
) -> tuple[pa.Array, npt.NDArray[np.uint64]]:
    """The column's values over every live row and their row addresses (ascending)."""
    request = ScanRequest(
        columns=[column], with_row_address=True, batch_size=_BATCH, output_encodings=encodings
    )
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    chunks: list[pa.Array] = []
    addresses: list[npt.NDArray[np.uint64]] = []
    for batch in run_scan(snap.store, snap.semantic_schema, snap.manifest.fragments, plan, request):
        arr = batch.column(column)
        if isinstance(arr, pa.ChunkedArray):  # pragma: no cover - batches hold arrays
            arr = arr.combine_chunks()
        chunks.append(arr)
        addresses.append(np.asarray(batch.column("_rowaddr").to_numpy(), np.uint64))
    if not chunks:
        return pa.array([], read_type), np.empty(0, np.uint64)
    values = pa.concat_arrays([c.cast(read_type) if c.type != read_type else c for c in chunks])
    ids = np.concatenate(addresses)
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        values = values.take(pa.array(order))
    return values, ids


def _items(
    lists: pa.Array, ids: npt.NDArray[np.uint64]
) -> tuple[pa.Array, npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """A list column's items with their rows' addresses, and the addresses of the null
    lists."""
    items = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    nulls = ids[lists.is_null().to_numpy(zero_copy_only=False)]
    if isinstance(items, pa.ChunkedArray):  # pragma: no cover - one array in, one out
        items = items.combine_chunks()
    return items, ids[parents.astype(np.int64)], nulls


def _check_params(kind: ScalarKind, params: dict[str, Any]) -> None:
    callback = params.pop("progress_callback", None)
    if callback is not None:
        raise NotSupportedYetError("create_scalar_index: progress_callback")
    for key in ("format_version", "document_granularity"):
        params.pop(key, None)  # full-text options (pylance ignores them for these types)
    if params:
        raise TypeError(
            f"create_scalar_index: unknown option {', '.join(map(repr, sorted(params)))} for "
            f"a {kind} index (pylance 14 ignores it silently)"
        )


def create_scalar_index(
    snap: Snapshot,
    column: object,
    index_type: object,
    name: object = None,
    *,
    replace: bool = True,
    train: bool = True,
    fragment_ids: Sequence[int] | None = None,
    index_uuid: str | None = None,
    params: dict[str, Any],
) -> tuple[Manifest, None]:
    """Build and commit the index; the new manifest. See ``Dataset.create_scalar_index``."""
    if isinstance(index_type, str) and index_type.upper() in _FULL_TEXT:
        return _full_text(snap, column, name, replace, train, fragment_ids, index_uuid, params)
    kind = _kind(index_type)
    path = _column_path(column)
    if fragment_ids is not None:
        raise ValueError(
            f'{kind} distributed indexing uses create_index_uncommitted(..., index_type="{kind}", '
            "fragment_ids=...)"
        )
    _check_params(kind, dict(params))
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    index_name = name or f"{path}_idx"
    index_uuid = _uuid(index_uuid)
    _key_column(snap, path, kind)  # the column's checks, before anything is written
    manifest = commit_new_index(
        snap,
        index_name,
        replace,
        index_uuid,
        lambda files, uuid: build_scalar_index(
            snap, files, kind, path, index_name, uuid, train=train
        ),
    )
    return manifest, None


def _full_text(
    snap: Snapshot,
    column: object,
    name: object,
    replace: bool,
    train: bool,
    fragment_ids: Sequence[int] | None,
    index_uuid: str | None,
    params: dict[str, Any],
) -> tuple[Manifest, None]:
    path = _column_path(column)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    return create_inverted_index(
        snap,
        path,
        name or f"{path}_idx",
        replace=replace,
        train=train,
        fragment_ids=fragment_ids,
        index_uuid=_uuid(index_uuid),
        options=params,
    )


def _uuid(index_uuid: str | None) -> str | None:
    if index_uuid is None:
        return None
    try:
        return str(uuidlib.UUID(str(index_uuid)))
    except ValueError as e:
        raise ValueError(f"Invalid UUID string for index_uuid: {e}") from None


def scalar_kind(entry: IndexEntry) -> ScalarKind | None:
    """The type of a BTREE / BITMAP / LABEL_LIST index entry written here (None: another
    type or version)."""
    for kind, (type_url, version) in SCALAR_WRITTEN.items():
        if entry.type_url == type_url and entry.index_version == version:
            return cast(ScalarKind, kind)
    return None


def build_scalar_index(
    snap: Snapshot,
    files: UncommittedFiles,
    kind: ScalarKind,
    path: str,
    name: str,
    uuid: str,
    *,
    train: bool = True,
) -> IndexEntry:
    """Write the files of a ``kind`` index named ``name`` over column ``path`` (every
    fragment of the snapshot; none without ``train``) into ``_indices/<uuid>/`` (each
    registered in ``files``); its entry, uncommitted."""
    field_id, encodings, read_type = _key_column(snap, path, kind)
    if train:
        values, ids = _read_keys(snap, path, encodings, read_type)
        fragments = tuple(sorted(f.id for f in snap.manifest.fragments))
    else:
        values, ids, fragments = pa.array([], read_type), np.empty(0, np.uint64), ()
    written = _write(files, f"_indices/{uuid}", kind, values, ids)
    type_url, version = SCALAR_WRITTEN[kind]
    return IndexEntry(
        uuid=uuid,
        name=name,
        fields=(field_id,),
        dataset_version=snap.version,
        fragment_ids=fragments,
        type_url=type_url,
        details=_DETAILS.get(kind, b""),
        index_version=version,
        created_at_ms=int(time.time() * 1000),
        base_id=None,
        files=tuple(written),
    )


def _write(
    files: UncommittedFiles,
    folder: str,
    kind: ScalarKind,
    values: pa.Array,
    ids: npt.NDArray[np.uint64],
) -> list[IndexFile]:
    store = files.store
    if kind == "BTREE":
        files.add(f"{folder}/page_data.lance")
        files.add(f"{folder}/page_lookup.lance")
        return write_btree(store, folder, values, ids)
    if kind == "BLOOMFILTER":
        files.add(f"{folder}/{BLOOM_FILE}")
        return write_bloomfilter(store, folder, values, ids)
    if kind == "ZONEMAP":
        files.add(f"{folder}/{ZONEMAP_FILE}")
        return write_zonemap(store, folder, values, ids)
    files.add(f"{folder}/bitmap_page_lookup.lance")
    if kind == "BITMAP":
        return write_bitmap(store, folder, values, ids)
    items, item_ids, nulls = _items(values, ids)
    return write_bitmap(store, folder, items, item_ids, null_lists=nulls)
