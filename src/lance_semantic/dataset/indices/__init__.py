"""The indices of a table version (layer L5), as pylance 14 lists and builds them."""

from .create import create_index
from .listing import IndexInformation, list_indices

__all__ = [
    "IndexInformation",
    "list_indices",
    "create_index",
]
