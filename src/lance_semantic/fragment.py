"""``ls.fragment``: the first phase of a two-phase write, with pylance's names
(``lance.fragment``): :func:`write_fragments` writes data files without committing them and
returns :class:`FragmentMetadata`, which ``ls.LanceOperation`` takes and
``ls.Dataset.commit`` publishes. Re-exports only (layer L6).
"""

from __future__ import annotations

from .dataset.fragment import LanceFragment
from .dataset.fragment_metadata import DataFile, DeletionFile, FragmentMetadata
from .dataset.two_phase import write_fragments

__all__ = ["write_fragments", "FragmentMetadata", "DataFile", "DeletionFile", "LanceFragment"]
