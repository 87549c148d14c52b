"""Schema evolution: add, drop and alter columns (layer L5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import NotSupportedYetError

if TYPE_CHECKING:
    from .dataset import Dataset

__all__ = ["add_columns", "drop_columns", "alter_columns"]


def add_columns(ds: Dataset, transforms: Any, read_columns: Sequence[str] | None = None) -> Dataset:
    raise NotSupportedYetError("add_columns")


def drop_columns(ds: Dataset, columns: Sequence[str]) -> Dataset:
    raise NotSupportedYetError("drop_columns")


def alter_columns(ds: Dataset, alterations: Sequence[Mapping[str, Any]]) -> Dataset:
    raise NotSupportedYetError("alter_columns")
