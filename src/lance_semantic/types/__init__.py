"""The semantic type vocabulary (layer L1; spec "Proposed Design / Semantic Types").

:mod:`.semantic` holds the immutable type values, :mod:`.logical_type` parses and formats
``logical_type`` strings (canonical and legacy), :mod:`.layouts` holds the Arrow layout policy
tables. Only the first two are re-exported here, so importing the vocabulary does not import
pyarrow; import :mod:`lance_semantic.types.layouts` for the layout tables.
"""

from __future__ import annotations

from lance_semantic.types.logical_type import (
    format_logical_type,
    is_legacy_alias,
    parse_any_logical_type,
    parse_logical_type,
)
from lance_semantic.types.semantic import (
    BINARY,
    BLOB,
    JSON,
    LIST,
    MAP,
    STRING,
    STRUCT,
    Binary,
    Blob,
    Decimal,
    FixedSizeList,
    Json,
    Kind,
    ListType,
    MapType,
    Primitive,
    SemanticType,
    String,
    StructType,
)

__all__ = [
    "SemanticType",
    "Kind",
    "Primitive",
    "String",
    "Binary",
    "Decimal",
    "ListType",
    "StructType",
    "MapType",
    "FixedSizeList",
    "Json",
    "Blob",
    "STRING",
    "BINARY",
    "LIST",
    "STRUCT",
    "MAP",
    "JSON",
    "BLOB",
    "parse_logical_type",
    "parse_any_logical_type",
    "is_legacy_alias",
    "format_logical_type",
]
