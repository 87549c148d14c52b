"""Deletion files: the row offsets of a fragment that are deleted (layer L3;
docs/format/lance-format-facts.md §7).

Fewer than :data:`BITMAP_THRESHOLD` deleted rows are stored as a ZSTD-compressed Arrow IPC
file holding one non-nullable ``row_id: uint32`` column; from the threshold on, as a
portable 32-bit roaring bitmap.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
from pyroaring import BitMap

from ..errors import CorruptTableError
from .object_store import ObjectStore
from .paths import DELETIONS_DIR, deletion_file_name
from .uncommitted import UncommittedFiles

__all__ = ["BITMAP_THRESHOLD", "read_deleted_rows", "write_deleted_rows"]

BITMAP_THRESHOLD = 5000
_SCHEMA = pa.schema([pa.field("row_id", pa.uint32(), nullable=False)])


def read_deleted_rows(
    store: ObjectStore, fragment_id: int, read_version: int, file_id: int, bitmap: bool
) -> np.ndarray:
    """The deleted row offsets (sorted, uint32) of one deletion file.

    Raises
    ------
    CorruptTableError
        Naming the file, when it is missing, truncated, or not a deletion file.
    """
    name = f"{DELETIONS_DIR}/{deletion_file_name(fragment_id, read_version, file_id, bitmap)}"
    path = store.uri(name)
    try:
        data = store.get(name)
    except FileNotFoundError as e:
        raise CorruptTableError(path, "the deletion file is missing") from e
    except OSError as e:
        raise CorruptTableError(path, f"cannot read the deletion file: {e}") from e
    try:
        if bitmap:
            return np.asarray(BitMap.deserialize(data).to_array(), dtype=np.uint32)
        table = ipc.open_file(pa.py_buffer(data)).read_all()
    except (ValueError, OSError, IndexError, pa.ArrowException) as e:
        raise CorruptTableError(path, f"not a readable deletion file: {e}") from e
    if not table.schema.equals(_SCHEMA):
        raise CorruptTableError(
            path,
            f"deletion file schema is {table.schema}, expected {_SCHEMA} "
            "(docs/format/lance-format-facts.md §7)",
        )
    rows = table.column(0).to_numpy()
    return np.sort(rows.astype(np.uint32, copy=False))


def write_deleted_rows(
    store: ObjectStore,
    fragment_id: int,
    read_version: int,
    file_id: int,
    rows: np.ndarray,
    *,
    previous: str | None = None,
    files: UncommittedFiles | None = None,
) -> bool:
    """Write the full set of deleted ``rows`` (sorted, unique); returns True when a bitmap was
    written. ``previous`` is the type of the fragment's earlier deletion file, if any;
    ``files`` owns the new file until a commit publishes it.

    pylance 14's rule, measured: a fresh set becomes a bitmap at 5,000 rows; a set merged
    with an earlier arrow file only above 5,000; an earlier bitmap stays a bitmap.
    """
    rows = np.asarray(rows, dtype=np.uint32)
    if previous == "bitmap":
        bitmap = True
    elif previous == "arrow":
        bitmap = len(rows) > BITMAP_THRESHOLD
    else:
        bitmap = len(rows) >= BITMAP_THRESHOLD
    if bitmap:
        bm = BitMap(rows.tolist())
        data = bm.serialize()
    else:
        sink = pa.BufferOutputStream()
        options = ipc.IpcWriteOptions(compression="zstd")
        with ipc.new_file(sink, _SCHEMA, options=options) as w:
            w.write_batch(pa.record_batch([pa.array(rows, pa.uint32())], schema=_SCHEMA))
        data = sink.getvalue().to_pybytes()
    path = f"{DELETIONS_DIR}/{deletion_file_name(fragment_id, read_version, file_id, bitmap)}"
    if files is not None:
        files.add(path)
    store.put(path, data)
    return bitmap
