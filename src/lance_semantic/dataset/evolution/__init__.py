"""Schema evolution (layer L5): ``add_columns``, ``drop_columns``, ``alter_columns``."""

from .add import add_columns
from .alter import ColumnNotFoundError, SchemaEvolutionError, alter_columns
from .common import (
    TOMBSTONE_FIELD_ID,
    ColumnSource,
    field_at,
    next_field_id,
    scan_columns,
    with_files,
    write_column_files,
)
from .drop import drop_columns

__all__ = [
    "add_columns",
    "drop_columns",
    "alter_columns",
    "ColumnNotFoundError",
    "SchemaEvolutionError",
    "field_at",
    "next_field_id",
    "ColumnSource",
    "write_column_files",
    "TOMBSTONE_FIELD_ID",
    "with_files",
    "scan_columns",
]
