"""What every wing of ``dataset/`` shares (layer L5): the snapshot an operation reads, the
argument checks of the public API (a scan's keywords become one ``ScanRequest``), conflict
retries and progress bars."""

from .arguments import (
    check_bool,
    check_column_names,
    check_columns,
    check_filter,
    check_int,
    check_mode,
    check_on,
    check_optional_bool,
    check_optional_int,
    check_optional_str,
    check_real,
    check_reference,
    check_row_indices,
    check_storage_options,
    check_str,
    check_str_mapping,
    check_uri,
    check_version,
    shown,
)
from .index_object import Index, IndexFile, index_entry, index_of_entry
from .progress import DELAY_SECONDS, Progress, batches_with_progress, rows_of
from .retry import RETRIES, TIMEOUT, retrying
from .scan_arguments import chosen_fragments, scan_request
from .snapshot import Snapshot, TableHandle

__all__ = [
    "Snapshot",
    "TableHandle",
    "check_uri",
    "check_int",
    "check_optional_int",
    "check_version",
    "check_reference",
    "check_row_indices",
    "check_str",
    "check_optional_str",
    "check_bool",
    "check_optional_bool",
    "check_real",
    "check_mode",
    "check_str_mapping",
    "check_storage_options",
    "check_columns",
    "check_column_names",
    "check_filter",
    "check_on",
    "shown",
    "scan_request",
    "chosen_fragments",
    "RETRIES",
    "TIMEOUT",
    "retrying",
    "Progress",
    "batches_with_progress",
    "rows_of",
    "DELAY_SECONDS",
    "Index",
    "IndexFile",
    "index_entry",
    "index_of_entry",
]
