"""The Arrow layouts writers hand over for blob columns (layer L1;
docs/format/lance-format-facts.md §10).

The contract only classifies blob as value-transforming; the Blob specification defines
these layouts. Blob v1 takes ``large_binary``; blob v2 (the ``lance.blob.v2`` extension)
takes a logical struct holding either the bytes or a URI (optionally a range of it).
"""

from __future__ import annotations

import pyarrow as pa

from lance_semantic.types.metadata_keys import BLOB_KEY, BLOB_V2_EXTENSION

__all__ = [
    "BLOB_V1_KEY",
    "BLOB_V2_EXTENSION",
    "V2_LOGICAL_TYPE",
    "V2_MINIMAL_TYPE",
    "is_logical_v2_type",
]

BLOB_V1_KEY = BLOB_KEY

V2_LOGICAL_TYPE = pa.struct(
    [
        pa.field("data", pa.large_binary()),
        pa.field("uri", pa.string()),
        pa.field("position", pa.uint64()),
        pa.field("size", pa.uint64()),
    ]
)
V2_MINIMAL_TYPE = pa.struct([pa.field("data", pa.large_binary()), pa.field("uri", pa.string())])


def _matches(dt: pa.DataType, expected: pa.StructType) -> bool:
    if not pa.types.is_struct(dt) or dt.num_fields != expected.num_fields:
        return False
    for i in range(dt.num_fields):
        got, want = dt.field(i), expected.field(i)
        if got.name != want.name or got.type != want.type:
            return False
        if i < 2 and not got.nullable:  # data and uri must be nullable (pylance's rule)
            return False
    return True


def is_logical_v2_type(dt: pa.DataType) -> bool:
    """``struct<data, uri>`` or ``struct<data, uri, position, size>``: the layouts writers
    accept for blob v2.

    >>> is_logical_v2_type(V2_MINIMAL_TYPE), is_logical_v2_type(pa.struct([("data", pa.binary())]))
    (True, False)
    """
    return _matches(dt, V2_MINIMAL_TYPE) or _matches(dt, V2_LOGICAL_TYPE)
