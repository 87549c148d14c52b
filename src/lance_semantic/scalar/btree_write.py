"""pylance 14's BTREE scalar index, written (layer L3).

Two Lance 2.2 files under ``_indices/<uuid>/`` (measured on pylance 14, see
``docs/format/index-formats.md``):

- ``page_data.lance``: ``values`` (the key type, sorted nulls first, floats in total
  order) and ``ids: uint64 not null`` (the rows' addresses, ``fragment << 32 | offset``);
- ``page_lookup.lance``: one row per page of 4096 rows: ``min`` / ``max`` (the page's
  first and last value: a page holding nulls has a null ``min``, a page of nulls a null
  ``max`` too), ``null_count: uint32 not null``, ``page_idx: uint32 not null``; schema
  metadata ``batch_size`` = ``"4096"``, ``range_partitioned`` = ``"false"``.

No rows (``train=False``, an empty table): both files have no rows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..manifest import IndexFile
from ..storage import DataFileWriter, ObjectStore
from .key_order import sort_order

__all__ = ["BTREE_PAGE_ROWS", "INDEX_FILE_VERSION", "write_btree"]

#: rows per BTREE page (pylance 14's ``batch_size``)
BTREE_PAGE_ROWS = 4096
#: the Lance file version of scalar index files (pylance 14 writes 2.2)
INDEX_FILE_VERSION = "2.2"
#: rows per batch written to ``page_data.lance``
_WRITE_ROWS = 64 * BTREE_PAGE_ROWS


def _data_schema(value_type: pa.DataType) -> pa.Schema:
    return pa.schema([pa.field("values", value_type), pa.field("ids", pa.uint64(), False)])


def _lookup_schema(value_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [
            pa.field("min", value_type),
            pa.field("max", value_type),
            pa.field("null_count", pa.uint32(), False),
            pa.field("page_idx", pa.uint32(), False),
        ]
    )


def write_btree(
    store: ObjectStore,
    folder: str,
    values: pa.Array,
    addresses: npt.NDArray[np.uint64],
) -> list[IndexFile]:
    """Write the BTREE index of ``values`` (one per row, the rows at ``addresses``) into
    ``folder`` (``_indices/<uuid>``); the files written with their sizes."""
    order, _ = sort_order(values)
    sorted_values = values.take(pa.array(order)) if len(order) else values
    ids = addresses[order]
    n = len(sorted_values)
    nulls = sorted_values.null_count
    data = DataFileWriter(
        store, "page_data.lance", _data_schema(values.type), INDEX_FILE_VERSION, folder=folder
    )
    for start in range(0, n, _WRITE_ROWS):
        stop = min(n, start + _WRITE_ROWS)
        data.write(
            pa.record_batch(
                [sorted_values.slice(start, stop - start), pa.array(ids[start:stop], pa.uint64())],
                schema=data.schema,
            )
        )
    data_file = data.close()
    pages = (n + BTREE_PAGE_ROWS - 1) // BTREE_PAGE_ROWS
    firsts = np.arange(pages, dtype=np.int64) * BTREE_PAGE_ROWS
    lasts = np.minimum(firsts + BTREE_PAGE_ROWS, n) - 1
    null_counts = np.clip(nulls - firsts, 0, BTREE_PAGE_ROWS).astype(np.uint32)
    schema = _lookup_schema(values.type)
    lookup = DataFileWriter(store, "page_lookup.lance", schema, INDEX_FILE_VERSION, folder=folder)
    lookup.add_schema_metadata("range_partitioned", "false")
    lookup.add_schema_metadata("batch_size", str(BTREE_PAGE_ROWS))
    if pages:
        lookup.write(
            pa.record_batch(
                [
                    sorted_values.take(pa.array(firsts)),
                    sorted_values.take(pa.array(lasts)),
                    pa.array(null_counts, pa.uint32()),
                    pa.array(np.arange(pages, dtype=np.uint32), pa.uint32()),
                ],
                schema=schema,
            )
        )
    lookup_file = lookup.close()
    return [
        IndexFile("page_data.lance", data_file.size_bytes),
        IndexFile("page_lookup.lance", lookup_file.size_bytes),
    ]
