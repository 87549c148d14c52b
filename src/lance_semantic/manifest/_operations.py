"""The transaction values of :mod:`lance_semantic.manifest.model` (layer L3): a transaction and
its operations (the ``Transaction.operation`` oneof). Import them from ``manifest.model``,
which they name as their module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

from ..schema import TableSchema
from ._table import _EMPTY_STR, Fragment, _frozen_str_map, _ints, _set

__all__ = [
    "COMMIT_MESSAGE_KEY",
    "Append",
    "Delete",
    "Overwrite",
    "CreateIndex",
    "RewriteGroup",
    "Rewrite",
    "preserves_nullability",
    "Merge",
    "Restore",
    "ReserveFragments",
    "Update",
    "Project",
    "UpdateMap",
    "UpdateConfig",
    "OPAQUE_OPERATION_NAMES",
    "OpaqueOperation",
    "Operation",
    "Transaction",
]


#: ``Transaction.properties`` key under which Lance stores the commit message
COMMIT_MESSAGE_KEY = "__lance_commit_message"


# ---------------------------------------------------------------------------------------
# transaction operations (Transaction.operation oneof, fields 100..)


@dataclass(frozen=True, slots=True)
class Append:
    """New fragments (ids not yet assigned, usually 0) added to the table."""

    fragments: tuple[Fragment, ...]

    def __post_init__(self) -> None:
        _set(self, "fragments", tuple(self.fragments))


@dataclass(frozen=True, slots=True)
class Delete:
    """Rows marked deleted: fragments with new deletion files, fragments removed entirely."""

    updated_fragments: tuple[Fragment, ...] = ()
    deleted_fragment_ids: tuple[int, ...] = ()
    predicate: str = ""

    def __post_init__(self) -> None:
        _set(self, "updated_fragments", tuple(self.updated_fragments))
        _set(self, "deleted_fragment_ids", _ints(self.deleted_fragment_ids))


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Create or replace the table; ``schema.metadata`` is the transaction's schema metadata.

    ``passthrough`` keeps unmodelled fields such as ``initial_bases``.
    """

    fragments: tuple[Fragment, ...]
    schema: TableSchema
    config_upsert_values: Mapping[str, str] = field(default_factory=lambda: _EMPTY_STR)
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "fragments", tuple(self.fragments))
        _set(self, "config_upsert_values", _frozen_str_map(self.config_upsert_values))


@dataclass(frozen=True, slots=True)
class CreateIndex:
    """Index changes; each entry is a serialized ``IndexMetadata`` message (not interpreted)."""

    new_indices: tuple[bytes, ...] = ()
    removed_indices: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        _set(self, "new_indices", tuple(self.new_indices))
        _set(self, "removed_indices", tuple(self.removed_indices))


@dataclass(frozen=True, slots=True)
class RewriteGroup:
    """Old fragments replaced by new ones holding the same rows (compaction)."""

    old_fragments: tuple[Fragment, ...]
    new_fragments: tuple[Fragment, ...]

    def __post_init__(self) -> None:
        _set(self, "old_fragments", tuple(self.old_fragments))
        _set(self, "new_fragments", tuple(self.new_fragments))


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Fragments rearranged without changing data.

    ``rewritten_indices`` are serialized ``RewrittenIndex`` messages (not interpreted);
    ``passthrough`` keeps the deprecated top-level old/new fragment lists if present.
    """

    groups: tuple[RewriteGroup, ...]
    rewritten_indices: tuple[bytes, ...] = ()
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "groups", tuple(self.groups))
        _set(self, "rewritten_indices", tuple(self.rewritten_indices))


def preserves_nullability(old: TableSchema, new: TableSchema) -> bool:
    """Whether going from ``old`` to ``new`` makes no nullability-affecting change.

    pylance 14 writes this as ``Merge`` field 4 / ``Project`` field 2 (measured): it is false
    when ``new`` tightens a field that exists in ``old`` from nullable to non-nullable, or
    adds a non-nullable field whose parent is not itself new (a new non-nullable top-level
    column, or a new non-nullable member of an existing struct). New non-nullable children
    of a new nullable parent keep it true. Concurrent writers use it to decide whether data
    staged against ``old`` may still be committed.

    >>> from lance_semantic.schema.field import Field
    >>> old = TableSchema.from_flat([Field("a", 0, -1, "int64")])
    >>> preserves_nullability(old, TableSchema.from_flat(
    ...     [Field("a", 0, -1, "int64"), Field("n", 1, -1, "int64", nullable=False)]))
    False
    """
    before = {f.id: f for f in old}
    for f in new:
        prior = before.get(f.id)
        if prior is not None:
            if prior.nullable and not f.nullable:
                return False
        elif not f.nullable and (f.parent_id == -1 or f.parent_id in before):
            return False
    return True


@dataclass(frozen=True, slots=True)
class Merge:
    """Columns added or rewritten: every fragment with its new file list, plus the new schema.

    ``preserves_nullability`` (field 4): pylance 14 sets it as :func:`preserves_nullability`
    computes (true for nullable additions and type changes, false when a non-nullable
    column is added); compute it from the old and new schema for byte parity.
    """

    fragments: tuple[Fragment, ...]
    schema: TableSchema
    preserves_nullability: bool = True

    def __post_init__(self) -> None:
        _set(self, "fragments", tuple(self.fragments))


@dataclass(frozen=True, slots=True)
class Restore:
    """Make an older version the newest one again."""

    version: int


@dataclass(frozen=True, slots=True)
class ReserveFragments:
    """Reserve fragment ids (bumps ``max_fragment_id``) ahead of a rewrite."""

    num_fragments: int


@dataclass(frozen=True, slots=True)
class Update:
    """Rows rewritten (update / merge_insert).

    ``passthrough`` keeps unmodelled fields (mem-WAL bookkeeping, newer additions).
    """

    removed_fragment_ids: tuple[int, ...] = ()
    updated_fragments: tuple[Fragment, ...] = ()
    new_fragments: tuple[Fragment, ...] = ()
    fields_modified: tuple[int, ...] = ()
    fields_for_preserving_frag_bitmap: tuple[int, ...] = ()
    update_mode: Literal["rewrite_rows", "rewrite_columns"] = "rewrite_rows"
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "removed_fragment_ids", _ints(self.removed_fragment_ids))
        _set(self, "updated_fragments", tuple(self.updated_fragments))
        _set(self, "new_fragments", tuple(self.new_fragments))
        _set(self, "fields_modified", _ints(self.fields_modified))
        _set(
            self,
            "fields_for_preserving_frag_bitmap",
            _ints(self.fields_for_preserving_frag_bitmap),
        )
        if self.update_mode not in ("rewrite_rows", "rewrite_columns"):
            raise ValueError(f"unknown update_mode {self.update_mode!r}")


@dataclass(frozen=True, slots=True)
class Project:
    """Columns dropped or renamed: the new schema only.

    ``preserves_nullability`` (field 2): pylance 14 sets it for drop / rename / relaxing
    nullability, and clears it when a field is made non-nullable (see
    :func:`preserves_nullability`). The message has no schema-metadata field:
    ``schema.metadata`` is not stored and decodes empty (the manifest keeps the table's
    schema metadata).
    """

    schema: TableSchema
    preserves_nullability: bool = True


@dataclass(frozen=True, slots=True)
class UpdateMap:
    """Key changes of a string map: a ``None`` value removes the key.

    With ``replace=True`` the map is replaced by the non-None entries instead of merged.
    Entry order is kept (it is the on-disk order).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> op = ls.LanceOperation.UpdateConfig(config_updates=ls.LanceOperation.UpdateMap({"k": "v"}))
    >>> dict(ls.Dataset.commit("t.lance", op, read_version=1).manifest.config)
    {'k': 'v'}
    """

    updates: Mapping[str, str | None]
    replace: bool = False

    def __post_init__(self) -> None:
        _set(self, "updates", MappingProxyType(dict(self.updates)))

    def apply(self, current: Mapping[str, str]) -> dict[str, str]:
        """The map that results from applying these changes to ``current``.

        >>> UpdateMap({"a": None, "c": "3"}).apply({"a": "1", "b": "2"})
        {'b': '2', 'c': '3'}
        >>> UpdateMap({"a": None, "c": "3"}, replace=True).apply({"a": "1", "b": "2"})
        {'c': '3'}
        """
        out: dict[str, str] = {} if self.replace else dict(current)
        for key, value in self.updates.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class UpdateConfig:
    """Table config / table metadata / schema metadata / field metadata changes.

    Each ``UpdateMap`` is None when that map is not touched. ``field_metadata_updates`` is
    keyed by field id. ``passthrough`` keeps the deprecated fields 1–4 if an older writer set
    them.
    """

    config_updates: UpdateMap | None = None
    table_metadata_updates: UpdateMap | None = None
    schema_metadata_updates: UpdateMap | None = None
    field_metadata_updates: Mapping[int, UpdateMap] = field(
        default_factory=lambda: MappingProxyType({})
    )
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "field_metadata_updates", MappingProxyType(dict(self.field_metadata_updates)))


#: Transaction oneof members lance-semantic carries without interpreting them
OPAQUE_OPERATION_NAMES: Mapping[int, str] = MappingProxyType(
    {
        111: "data_replacement",
        112: "update_mem_wal_state",
        113: "clone",
        114: "update_bases",
        115: "data_overlay",  # number from newer Lance source, unverified for pylance 14
        116: "append_fri_transitions",  # idem
    }
)


@dataclass(frozen=True, slots=True)
class OpaqueOperation:
    """An operation lance-semantic does not interpret, kept as its serialized message."""

    field_number: int
    payload: bytes

    def __post_init__(self) -> None:
        if self.field_number not in OPAQUE_OPERATION_NAMES:
            raise ValueError(f"no opaque operation with field number {self.field_number}")

    @property
    def name(self) -> str:
        return OPAQUE_OPERATION_NAMES[self.field_number]


Operation: TypeAlias = (
    Append
    | Delete
    | Overwrite
    | CreateIndex
    | Rewrite
    | Merge
    | Restore
    | ReserveFragments
    | Update
    | Project
    | UpdateConfig
    | OpaqueOperation
)


@dataclass(frozen=True, slots=True)
class Transaction:
    """One commit (``lance.table.Transaction``).

    ``operation`` is None only when a newer writer used an operation this library has no
    field number for; its bytes are then in ``passthrough`` together with any other
    unmodelled fields.
    """

    read_version: int
    uuid: str
    operation: Operation | None
    tag: str | None = None
    properties: Mapping[str, str] = field(default_factory=lambda: _EMPTY_STR)
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "properties", _frozen_str_map(self.properties))

    @property
    def file_name(self) -> str:
        """``{read_version}-{uuid}.txn``, the name under ``_transactions/``."""
        return f"{self.read_version}-{self.uuid}.txn"

    @property
    def commit_message(self) -> str | None:
        return self.properties.get(COMMIT_MESSAGE_KEY)
