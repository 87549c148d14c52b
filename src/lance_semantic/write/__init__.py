"""Writes (layer L4): the writer boundary (accept-check, value codecs, the layout
invariant), the write decision and rows written into new, uncommitted fragments."""

from .blob_values import (
    BlobPreparer,
    blob_columns,
    bytes_as_logical,
    logical_blob_array,
    logical_blob_type,
    table_blob_inputs,
    v1_inputs_as_v2,
)
from .boundary import (
    OFFSET_LIMIT,
    Boundary,
    bind_input,
    check_file_layout,
    check_invariant,
    declared_field,
    legacy_physical,
    to_physical,
)
from .defaults import MAX_BYTES_PER_FILE, MAX_ROWS_PER_FILE, MAX_ROWS_PER_GROUP
from .fragments import (
    coerce_reader,
    in_order_of,
    parse_storage_version,
    unsliced_array,
    write_fragments,
)
from .json_values import JSONB_TYPE, encode_json_values, has_json
from .request import WriteMode, WriteRequest
from .target import DEFAULT_STORAGE_VERSION, WriteTarget, storage_version, write_rows, write_target

__all__ = [
    "v1_inputs_as_v2",
    "table_blob_inputs",
    "bytes_as_logical",
    "logical_blob_array",
    "logical_blob_type",
    "BlobPreparer",
    "blob_columns",
    "Boundary",
    "bind_input",
    "check_file_layout",
    "declared_field",
    "legacy_physical",
    "to_physical",
    "check_invariant",
    "OFFSET_LIMIT",
    "MAX_ROWS_PER_FILE",
    "MAX_ROWS_PER_GROUP",
    "MAX_BYTES_PER_FILE",
    "coerce_reader",
    "in_order_of",
    "write_fragments",
    "parse_storage_version",
    "unsliced_array",
    "has_json",
    "encode_json_values",
    "JSONB_TYPE",
    "WriteRequest",
    "WriteMode",
    "DEFAULT_STORAGE_VERSION",
    "WriteTarget",
    "write_target",
    "write_rows",
    "storage_version",
]
