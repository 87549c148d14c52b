"""Reads (layer L4): one fragment read through pylance's file codec, the table scan over
the fragments of a version (one ``ScanRequest`` planned and run), the concurrent row
streams, and the conversion of stored layouts to output layouts."""

from .blob_descriptors import BlobAwareReader, fragment_blob_files, late_columns
from .blob_files import blob_file, descriptors_to_values
from .deletions import deleted_rows, deletion_problems
from .fragment_reader import (
    ROW_ADDRESS,
    ROW_OFFSET,
    FragmentReader,
    empty_rows,
    per_fragment,
    read_together,
)
from .indexed_filter import SELECTIVE, ScalarChoice, indexed_batches, scalar_choice
from .output import (
    blob_values_schema,
    check_override_paths,
    output_field,
    output_schema,
    with_layered_extension,
)
from .plan import FilePlan, Retag, id_entries, merge_parts, plan_data_file, retag_array
from .prefetch import WORKERS, ordered, pool
from .readers import KEPT, Readers, clear
from .request import ROW_ADDR, ROW_ID, Columns, Filter, ScanRequest
from .row_streams import (
    EVAL_ROWS,
    WINDOW_ROWS,
    drop_rows,
    fields_where,
    filtered_batches,
    unfiltered_batches,
)
from .scan_plan import SearchPlan
from .table_scan import (
    DEFAULT_BATCH_SIZE,
    Output,
    Predicate,
    ScanPlan,
    plan_scan,
    project,
    run_scan,
    take_rows,
)

# full text search over a scan (i31/fts-search)
from .text_search import inverted_columns, text_batches, text_index
from .vector_search import nearest_batches, search_candidates, search_schema

__all__ = [
    "BlobAwareReader",
    "fragment_blob_files",
    "late_columns",
    "blob_file",
    "descriptors_to_values",
    "deleted_rows",
    "deletion_problems",
    "FragmentReader",
    "ROW_ADDRESS",
    "ROW_OFFSET",
    "empty_rows",
    "per_fragment",
    "read_together",
    "output_schema",
    "output_field",
    "with_layered_extension",
    "check_override_paths",
    "blob_values_schema",
    "FilePlan",
    "Retag",
    "plan_data_file",
    "id_entries",
    "retag_array",
    "merge_parts",
    "WORKERS",
    "ordered",
    "pool",
    "KEPT",
    "Readers",
    "clear",
    "EVAL_ROWS",
    "WINDOW_ROWS",
    "drop_rows",
    "fields_where",
    "filtered_batches",
    "unfiltered_batches",
    "Columns",
    "Filter",
    "ScanRequest",
    "ROW_ID",
    "ROW_ADDR",
    "Output",
    "Predicate",
    "ScanPlan",
    "plan_scan",
    "project",
    "run_scan",
    "take_rows",
    "DEFAULT_BATCH_SIZE",
    "SearchPlan",
    "nearest_batches",
    "search_candidates",
    "search_schema",
    # filters through scalar indices (i31/scalar-read)
    "SELECTIVE",
    "ScalarChoice",
    "indexed_batches",
    "scalar_choice",
    # full text search over a scan (i31/fts-search)
    "inverted_columns",
    "text_batches",
    "text_index",
]
