"""Verbs that change rows (layer L5): ``delete``, ``update`` and ``merge_insert``."""

from .delete_update import DeleteResult, MergeInsertResult, UpdateResult, delete, update
from .json_inputs import conform_json, on_rows, plain_json
from .merge_insert import MergeInsertBuilder
from .rows_to_change import BATCH, matching_rows, rows_plan, scan
from .source_rows import Origin, RowOrigins, first_invalid_json_row

__all__ = [
    "DeleteResult",
    "UpdateResult",
    "MergeInsertResult",
    "delete",
    "update",
    "MergeInsertBuilder",
    "BATCH",
    "matching_rows",
    "rows_plan",
    "scan",
    "conform_json",
    "on_rows",
    "plain_json",
    "Origin",
    "RowOrigins",
    "first_invalid_json_row",
]
