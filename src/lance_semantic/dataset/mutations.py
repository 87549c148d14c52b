"""Row mutations: delete, update and merge_insert (layer L5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotSupportedYetError

if TYPE_CHECKING:
    from .dataset import Dataset

__all__ = [
    "DeleteResult",
    "UpdateResult",
    "MergeInsertResult",
    "delete",
    "update",
    "MergeInsertBuilder",
]


@dataclass(frozen=True, slots=True)
class DeleteResult:
    num_deleted_rows: int


@dataclass(frozen=True, slots=True)
class UpdateResult:
    num_rows_updated: int


@dataclass(frozen=True, slots=True)
class MergeInsertResult:
    num_inserted_rows: int
    num_updated_rows: int
    num_deleted_rows: int


def delete(ds: Dataset, predicate: Any) -> DeleteResult:
    raise NotSupportedYetError("delete")


def update(ds: Dataset, updates: Mapping[str, str], where: Any = None) -> UpdateResult:
    raise NotSupportedYetError("update")


class MergeInsertBuilder:
    def __init__(self, ds: Dataset, on: str | Sequence[str]) -> None:
        self._ds = ds
        self._on = [on] if isinstance(on, str) else list(on)

    def execute(self, data: Any) -> MergeInsertResult:
        raise NotSupportedYetError("merge_insert")
