"""Blob columns in the table schema (layer L2; spec "Value-transforming types",
docs/format/lance-format-facts.md §10).

The contract only classifies blob; its representations belong to the Blob specification,
and this module describes them the way pylance 14 stores and returns them:

* **Blob v1**: a ``large_binary`` field marked ``lance-encoding:blob``, on data storage 2.0
  and 2.1. The data file holds the bytes; reads return ``struct<position, size>``
  descriptors (positions into the data file).
* **Blob v2**: a ``struct`` field with the ``lance.blob.v2`` extension, on data storage 2.2+.
  Writers accept the logical ``struct<data, uri[, position, size]>``; data files hold a
  packed descriptor ``struct<kind, position, size, blob_id, blob_uri>`` and the bytes
  inline, in sidecar files, or at an external URI; reads return the descriptors.

A v1 input written to 2.2+ storage becomes blob v2, as pylance does.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from ..errors import UnsupportedTypeError
from ..types.blob_layouts import (
    BLOB_V1_KEY,
    BLOB_V2_EXTENSION,
    V2_LOGICAL_TYPE,
    V2_MINIMAL_TYPE,
    is_logical_v2_type,
)
from ..types.metadata_keys import (
    DEDICATED_THRESHOLD_KEY,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    INLINE_THRESHOLD_KEY,
    PACK_FILE_THRESHOLD_KEY,
    PACKED_KEY,
)
from .field import Field, is_blob, is_blob_v1, is_blob_v2

__all__ = [
    "BLOB_V1_KEY",
    "BLOB_V2_EXTENSION",
    "PACKED_KEY",
    "INLINE_THRESHOLD_KEY",
    "DEDICATED_THRESHOLD_KEY",
    "PACK_FILE_THRESHOLD_KEY",
    "V1_DESCRIPTOR_FIELD",
    "V2_DESCRIPTOR_FIELD",
    "V2_LOGICAL_TYPE",
    "V2_MINIMAL_TYPE",
    "V2_PREPARED_TYPE",
    "is_blob",
    "is_blob_v1",
    "is_blob_v2",
    "is_v1_arrow_field",
    "is_v2_arrow_field",
    "descriptor_field",
    "is_logical_v2_type",
    "check_blob_v2_storage",
    "value_field",
    "is_descriptor_type",
]


#: what a read of a blob v1 column returns (pylance 14): positions into the data file
V1_DESCRIPTOR_FIELD = pa.field(
    "descriptor",
    pa.struct([pa.field("position", pa.uint64()), pa.field("size", pa.uint64())]),
    metadata={BLOB_V1_KEY: "true"},
)

#: what a read of a blob v2 column returns (pylance 14), and what its data files store
V2_DESCRIPTOR_FIELD = pa.field(
    "descriptor",
    pa.struct(
        [
            pa.field("kind", pa.uint8(), nullable=False),
            pa.field("position", pa.uint64(), nullable=False),
            pa.field("size", pa.uint64(), nullable=False),
            pa.field("blob_id", pa.uint32(), nullable=False),
            pa.field("blob_uri", pa.string(), nullable=False),
        ]
    ),
    metadata={BLOB_V1_KEY: "true", PACKED_KEY: "true"},
)

#: what pylance's blob v2 encoder accepts: one row per value, bytes inline or located
V2_PREPARED_TYPE = pa.struct(
    [
        pa.field("kind", pa.uint8()),
        pa.field("data", pa.large_binary()),
        pa.field("uri", pa.string()),
        pa.field("blob_id", pa.uint32()),
        pa.field("blob_size", pa.uint64()),
        pa.field("position", pa.uint64()),
    ]
)


def _arrow_extension(f: pa.Field) -> str | None:
    if isinstance(f.type, pa.BaseExtensionType):
        return str(f.type.extension_name)
    raw = (f.metadata or {}).get(EXTENSION_NAME_KEY.encode())
    return raw.decode("utf-8", "replace") if raw is not None else None


def is_v1_arrow_field(f: pa.Field) -> bool:
    """An Arrow input field asking for blob v1 storage."""
    return BLOB_V1_KEY.encode() in (f.metadata or {}) and _arrow_extension(f) is None


def is_v2_arrow_field(f: pa.Field) -> bool:
    """An Arrow field of the ``lance.blob.v2`` extension (type or field metadata)."""
    return _arrow_extension(f) == BLOB_V2_EXTENSION


def descriptor_field(field: Field, metadata: Mapping[str, bytes] | None = None) -> pa.Field:
    """The Arrow field a read of blob ``field`` returns: pylance's descriptor struct, with
    ``metadata`` added to the descriptor's own."""
    proto = V2_DESCRIPTOR_FIELD if is_blob_v2(field) else V1_DESCRIPTOR_FIELD
    md: dict[bytes | str, bytes | str] = dict(proto.metadata or {})
    md.update(metadata or {})
    return pa.field(field.name, proto.type, field.nullable, metadata=md)


def check_blob_v2_storage(dt: pa.DataType, path: str) -> None:
    """Raise :class:`UnsupportedTypeError` unless ``dt`` is a logical blob v2 layout."""
    if not is_logical_v2_type(dt):
        raise UnsupportedTypeError(
            path,
            f"lance.blob.v2<{dt}>",
            "blob v2 columns take struct<data: large_binary, uri: string> or "
            "struct<data: large_binary, uri: string, position: uint64, size: uint64>",
        )


def value_field(field: Field) -> pa.Field:
    """The Arrow field of ``field``'s *values*: what the write path hands on (and rewrites
    read back): v1 bytes with the marker, v2 the full logical struct with the extension
    keys, which the fragment writer turns into pylance's prepared layout per data file."""
    md = dict(field.metadata)
    if is_blob_v1(field):
        return pa.field(field.name, pa.large_binary(), field.nullable, metadata=md)
    md[EXTENSION_NAME_KEY] = BLOB_V2_EXTENSION.encode()
    md.setdefault(EXTENSION_METADATA_KEY, b"")
    # the logical layout only carries values to the encoder; data files hold descriptors
    return pa.field(field.name, V2_LOGICAL_TYPE, field.nullable, metadata=md)


def is_descriptor_type(dt: pa.DataType) -> bool:
    """Whether ``dt`` is one of pylance's blob descriptor types (what reads return)."""
    return dt in (V1_DESCRIPTOR_FIELD.type, V2_DESCRIPTOR_FIELD.type)
