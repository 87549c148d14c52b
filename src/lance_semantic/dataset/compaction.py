"""Compaction: ``ds.optimize.compact_files`` (layer L5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NotSupportedYetError

if TYPE_CHECKING:
    from .dataset import Dataset

__all__ = ["DatasetOptimizer"]


class DatasetOptimizer:
    """``ds.optimize``: maintenance that rewrites data files without changing rows."""

    def __init__(self, ds: Dataset) -> None:
        self._ds = ds

    def compact_files(self, **options: Any) -> Any:
        raise NotSupportedYetError("optimize.compact_files")
