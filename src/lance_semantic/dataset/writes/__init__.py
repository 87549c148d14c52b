"""Writes that add rows (layer L5): ``write_dataset`` and the two-phase API (data files now,
one commit later, with pylance's ``LanceOperation`` names)."""

from .fragment_metadata import (
    DataFile,
    DeletionFile,
    FragmentMetadata,
    as_fragment_list,
    as_fragment_metadata,
    plain,
)
from .lance_operation import AnyOperation, LanceOperation
from .two_phase import commit_operation, write_fragments, write_uncommitted
from .write_dataset import write_request, write_snapshot

__all__ = [
    "write_snapshot",
    "write_request",
    "FragmentMetadata",
    "DataFile",
    "DeletionFile",
    "as_fragment_metadata",
    "as_fragment_list",
    "plain",
    "LanceOperation",
    "AnyOperation",
    "write_fragments",
    "write_uncommitted",
    "commit_operation",
]
