"""What an operation reads: one version of a table (layer L5; the bottom of ``dataset/``).

Operations (``mutations``, ``evolution``, ``compaction``, ...) take a :class:`Snapshot`, write
their files, build an operation of ``manifest.model`` and commit it, then return the new
manifest (with whatever result the caller reports). They never hold a ``Dataset``: the
facade (``dataset.dataset``) builds the snapshot, calls them and advances itself, as
pylance and pyiceberg separate making the files from publishing a transaction.

Helpers that keep a handle on the table (a scanner, a fragment, the tags, a merge builder,
the optimizer) type it as :class:`TableHandle`, which ``Dataset`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

import pyarrow as pa

from ...manifest import Manifest, flags
from ...read import output_schema
from ...schema import TableSchema
from ...storage import ObjectStore

__all__ = ["Snapshot", "TableHandle"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One version of the table at ``uri``: its store and manifest."""

    store: ObjectStore
    uri: str
    manifest: Manifest

    @property
    def version(self) -> int:
        return self.manifest.version

    @property
    def data_storage_version(self) -> str:
        return self.manifest.data_storage_version

    @property
    def semantic_types(self) -> bool:
        return bool(self.manifest.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES)

    @property
    def semantic_schema(self) -> TableSchema:
        return self.manifest.schema

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema reads return (output encodings applied on flagged tables)."""
        return output_schema(self.manifest.schema, flagged=self.semantic_types)


class TableHandle(Protocol):
    """A handle on a table that moves to each version it commits (``Dataset``)."""

    def _snapshot(self) -> Snapshot:
        """The version the handle is at."""
        ...

    def _apply(
        self, operation: Callable[[Snapshot], tuple[Manifest, R]], *, retry: bool = False
    ) -> R:
        """Run ``operation`` on the handle's version (re-run on a retryable conflict when
        ``retry``), move the handle to the manifest it committed and return its result."""
        ...

    def __copy__(self) -> Self:
        """A handle on the same version that later commits through this one do not move."""
        ...
