"""The indices of a table version (layer L5), as pylance 14 lists, builds, describes, drops
and optimizes them."""

from .create import create_index
from .create_scalar import create_scalar_index
from .describe import (
    IndexDescription,
    IndexSegmentDescription,
    describe_indices,
    index_statistics,
    index_statistics_of,
)
from .drop import drop_index
from .listing import IndexInformation, list_indices
from .optimize import OPTIMIZE_OPTIONS, optimize_indices

__all__ = [
    "IndexInformation",
    "list_indices",
    "create_index",
    "create_scalar_index",
    "IndexDescription",
    "IndexSegmentDescription",
    "describe_indices",
    "index_statistics",
    "index_statistics_of",
    "drop_index",
    "optimize_indices",
    "OPTIMIZE_OPTIONS",
]
