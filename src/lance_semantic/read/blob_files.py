"""Blob bytes as file objects (layer L4; docs/format/lance-format-facts.md §10): where each
descriptor points.

Blob v1 descriptors locate bytes in the data file. Blob v2 descriptors have a kind: inline
(in the data file), packed (a range of a sidecar), dedicated (a whole sidecar) or external
(a URI, a zero size meaning the whole object).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..schema import Field, is_blob_v2
from ..storage import DATA_DIR, BlobFile, ObjectStore, sidecar_path
from ..types.blob_layouts import V2_LOGICAL_TYPE

__all__ = ["blob_file", "descriptors_to_values"]

_INLINE, _PACKED, _DEDICATED, _EXTERNAL = 0, 1, 2, 3


def blob_file(
    store: ObjectStore, data_file: str, field: Field, d: dict[str, Any] | None
) -> BlobFile | None:
    """Where descriptor ``d`` of ``data_file`` points (None for a null value)."""
    if d is None:
        return None
    if not is_blob_v2(field):
        # 2.0 files leak a null's definition level into position (size 0)
        null = d["size"] == 0 and d["position"] != 0
        return None if null else _in_table(store, data_file, d["position"], d["size"])
    if d["kind"] == _INLINE:
        return _in_table(store, data_file, d["position"], d["size"])
    if d["kind"] in (_PACKED, _DEDICATED):
        side = sidecar_path(data_file, d["blob_id"])
        return _in_table(store, side, d["position"], d["size"], sidecar=True)
    if d["kind"] == _EXTERNAL:
        return BlobFile(d["blob_uri"], d["position"], d["size"] or None)
    raise ValueError(f"field '{field.path}': unknown blob kind {d['kind']}")


def _in_table(
    store: ObjectStore, name: str, offset: int, size: int, *, sidecar: bool = False
) -> BlobFile:
    """A blob inside the table: ``name`` (under ``data/``) from ``offset``. A local
    sidecar must not resolve outside the table (a symbolic link)."""
    path = f"{DATA_DIR}/{name}"
    if not store.is_local:
        return BlobFile.in_store(store, path, offset, size)
    inside = store.root if sidecar else None
    return BlobFile(store.local_path(path), offset, size, inside=inside)


def descriptors_to_values(
    store: ObjectStore, data_file: str, field: Field, descriptors: pa.Array
) -> pa.StructArray:
    """Blob v2 descriptors of ``data_file`` as the logical values they stand for,
    ``struct<data, uri, position, size>``: the bytes of inline, packed and dedicated blobs,
    the URI (and range, if any) of external ones. What a rewrite (update, compaction) hands
    back to the writer, which stores them afresh."""
    data: list[bytes | None] = []
    uri: list[str | None] = []
    position: list[int | None] = []
    size: list[int | None] = []
    for d in descriptors.to_pylist():
        external = d is not None and d["kind"] == _EXTERNAL
        ranged = external and bool(d["size"])
        uri.append(d["blob_uri"] if external else None)
        position.append(d["position"] if ranged else None)
        size.append(d["size"] if ranged else None)
        if d is None or external:
            data.append(None)
            continue
        f = blob_file(store, data_file, field, d)
        assert f is not None
        with f:
            data.append(f.readall())
    mask = descriptors.is_null() if descriptors.null_count else None
    return pa.StructArray.from_arrays(
        [
            pa.array(data, pa.large_binary()),
            pa.array(uri, pa.string()),
            pa.array(position, pa.uint64()),
            pa.array(size, pa.uint64()),
        ],
        fields=list(V2_LOGICAL_TYPE),
        mask=mask,
    )
