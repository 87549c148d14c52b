"""Immutable values mirroring the messages of a Lance manifest and transaction (layer L3).

These dataclasses are what the rest of lance-semantic sees of ``_versions/*.manifest`` and
``_transactions/*.txn`` files; :mod:`lance_semantic.manifest.codec` converts them to and from
bytes (docs/format/lance-format-facts.md §2, §3, §8). Protobuf objects never leave the ``manifest``
package.

Parts of a message that lance-semantic does not interpret (stable row-id sequences, base
paths, branch, index metadata, newer fields) are kept as ``passthrough`` bytes: the serialized
protobuf of just those fields, merged back in when the value is encoded again, so a
decode/modify/encode cycle never drops them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

from ..schema import TableSchema

__all__ = [
    "DataFile",
    "DeletionFile",
    "Fragment",
    "WriterVersion",
    "Manifest",
    "Transaction",
    "Append",
    "Delete",
    "Overwrite",
    "CreateIndex",
    "Rewrite",
    "RewriteGroup",
    "Merge",
    "Restore",
    "ReserveFragments",
    "Update",
    "Project",
    "UpdateMap",
    "UpdateConfig",
    "OpaqueOperation",
    "OPAQUE_OPERATION_NAMES",
    "Operation",
    "preserves_nullability",
    "COMMIT_MESSAGE_KEY",
    "DEFAULT_DATA_FORMAT",
    "PYLANCE_14_WRITER_VERSION",
]

#: ``Transaction.properties`` key under which Lance stores the commit message
COMMIT_MESSAGE_KEY = "__lance_commit_message"
#: ``Manifest.data_format`` of a table written with pylance 14 defaults
DEFAULT_DATA_FORMAT: tuple[str, str] = ("lance", "2.2")

_EMPTY_STR: Mapping[str, str] = MappingProxyType({})


def _frozen_str_map(m: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(m)) if m else _EMPTY_STR


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _ints(values: Iterable[int]) -> tuple[int, ...]:
    if type(values) is tuple:
        return values
    return tuple(map(int, values))


# ---------------------------------------------------------------------------------------
# fragments


@dataclass(frozen=True, slots=True)
class DataFile:
    """One ``.lance`` data file of a fragment; ``path`` is relative to ``<root>/data/``.

    ``fields`` are the field ids stored in the file in file column order and
    ``column_indices`` the matching top-level column numbers (docs/format/lance-format-facts.md §4).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1], "s": ["a"]}), "t.lance")
    >>> data_file = ds.get_fragment(0).metadata.files[0]
    >>> data_file.path.endswith(".lance"), data_file.fields, data_file.column_indices
    (True, (0, 1), (0, 1))
    """

    path: str
    fields: tuple[int, ...]
    column_indices: tuple[int, ...]
    file_major_version: int
    file_minor_version: int
    file_size_bytes: int = 0
    base_id: int | None = None

    def __post_init__(self) -> None:
        _set(self, "fields", _ints(self.fields))
        _set(self, "column_indices", _ints(self.column_indices))

    @property
    def file_version(self) -> str:
        """``"major.minor"`` of the data file format, e.g. ``"2.2"``.

        >>> DataFile("a.lance", (0,), (0,), 2, 1).file_version
        '2.1'
        """
        return f"{self.file_major_version}.{self.file_minor_version}"


@dataclass(frozen=True, slots=True)
class DeletionFile:
    """Tombstones of a fragment's deleted rows (docs/format/lance-format-facts.md §7): an Arrow IPC
    file of row offsets (``"arrow"``) or a roaring bitmap (``"bitmap"``), named by the version it
    was written at and an id.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
    >>> _ = ds.delete("id = 2")
    >>> d = ds.get_fragment(0).metadata.deletion_file
    >>> d.file_type, d.read_version, d.num_deleted_rows
    ('arrow', 1, 1)
    """

    file_type: Literal["arrow", "bitmap"]
    read_version: int
    id: int
    num_deleted_rows: int = 0
    base_id: int | None = None

    def __post_init__(self) -> None:
        if self.file_type not in ("arrow", "bitmap"):
            raise ValueError(
                f"deletion file type must be 'arrow' or 'bitmap', not {self.file_type!r}"
            )

    @property
    def suffix(self) -> str:
        """The file name extension of its type: ``arrow`` or ``bin`` (a bitmap).

        >>> DeletionFile("arrow", 3, 7).suffix, DeletionFile("bitmap", 3, 7).suffix
        ('arrow', 'bin')
        """
        return "arrow" if self.file_type == "arrow" else "bin"

    def path(self, fragment_id: int) -> str:
        """Path relative to the dataset root: ``_deletions/{frag}-{read_version}-{id}.{ext}``.

        >>> DeletionFile("bitmap", 3, 7).path(fragment_id=0)
        '_deletions/0-3-7.bin'
        """
        return f"_deletions/{fragment_id}-{self.read_version}-{self.id}.{self.suffix}"


@dataclass(frozen=True, slots=True)
class Fragment:
    """A set of data files holding the same rows (``lance.table.DataFragment``).

    ``passthrough`` carries the serialized fields lance-semantic does not model (row-id and
    row-version sequences, overlays) so that they survive when the fragment is rewritten.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> fragment = ds.manifest.fragments[0]
    >>> fragment.id, fragment.physical_rows, len(fragment.files), fragment.deletion_file
    (0, 2, 1, None)
    """

    id: int
    files: tuple[DataFile, ...]
    physical_rows: int
    deletion_file: DeletionFile | None = None
    passthrough: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "files", tuple(self.files))

    @property
    def num_deleted_rows(self) -> int:
        """Rows its deletion file marks deleted (0 without one).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> _ = ds.delete("id < 3")
        >>> ds.manifest.fragments[0].num_deleted_rows
        2
        """
        return self.deletion_file.num_deleted_rows if self.deletion_file else 0

    @property
    def num_rows(self) -> int:
        """Rows not marked deleted (trusts ``DeletionFile.num_deleted_rows``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> _ = ds.delete("id = 1")
        >>> ds.manifest.fragments[0].physical_rows, ds.manifest.fragments[0].num_rows
        (3, 2)
        """
        return self.physical_rows - self.num_deleted_rows

    @property
    def field_ids(self) -> frozenset[int]:
        """Every field id stored by one of the fragment's data files (2.x files list the
        leaf fields: a struct's own id is not among them, as pylance writes them).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1], "st": [{"x": 1}]}), "t.lance")
        >>> sorted(ds.manifest.fragments[0].field_ids)
        [0, 2]
        """
        return frozenset(i for f in self.files for i in f.fields)


# ---------------------------------------------------------------------------------------
# manifest


@dataclass(frozen=True, slots=True)
class WriterVersion:
    """The library that wrote a manifest (``Manifest.writer_version``)."""

    library: str
    version: str
    prerelease: str | None = None
    build_metadata: str | None = None


#: what pylance 14.0.2 writes into ``Manifest.writer_version``
PYLANCE_14_WRITER_VERSION = WriterVersion("lance", "14.0.2")


@dataclass(frozen=True, slots=True)
class Manifest:
    """The content of one ``_versions/*.manifest`` file.

    ``schema`` holds the field tree and the schema metadata. ``index_section`` is the raw
    ``IndexSection`` message (kept byte for byte) or None when the version has no index.
    ``writer_version`` is ``WriterVersion("", "")`` for (old) manifests that have none, and
    such a value is not written. ``passthrough`` holds the serialized manifest fields
    lance-semantic does not model (base paths, branch, tag, fragment tree, clustering,
    unknown newer fields). The file
    offsets of the index section and inline transaction are not part of the value: the
    codec computes them when it lays out the file. ``legacy_dictionary_data`` is what
    precedes them at the start of the file: the dictionary value blobs of legacy (0.1)
    storage, which ``Field.dictionary`` offsets point into (empty for 2.x tables).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> manifest = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance").manifest
    >>> manifest.version, manifest.schema.names, len(manifest.fragments), manifest.max_fragment_id
    (1, ['id'], 1, 0)
    """

    schema: TableSchema
    fragments: tuple[Fragment, ...]
    version: int
    writer_version: WriterVersion = PYLANCE_14_WRITER_VERSION
    data_format: tuple[str, str] = DEFAULT_DATA_FORMAT
    reader_feature_flags: int = 0
    writer_feature_flags: int = 0
    max_fragment_id: int | None = None
    transaction_file: str = ""
    config: Mapping[str, str] = field(default_factory=lambda: _EMPTY_STR)
    table_metadata: Mapping[str, str] = field(default_factory=lambda: _EMPTY_STR)
    timestamp_ns: int | None = None
    next_row_id: int = 0
    index_section: bytes | None = None
    max_allocated_field_id: int | None = None
    passthrough: bytes = b""
    legacy_dictionary_data: bytes = b""

    def __post_init__(self) -> None:
        _set(self, "fragments", tuple(self.fragments))
        _set(self, "data_format", tuple(self.data_format))
        _set(self, "config", _frozen_str_map(self.config))
        _set(self, "table_metadata", _frozen_str_map(self.table_metadata))

    @property
    def data_storage_version(self) -> str:
        """The data storage version, e.g. ``"2.2"`` (legacy tables: ``"0.1"``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance", data_storage_version="2.1")
        >>> ds.manifest.data_storage_version, ds.manifest.data_format
        ('2.1', ('lance', '2.1'))
        """
        return self.data_format[1]

    @property
    def schema_metadata(self) -> Mapping[str, bytes]:
        """The schema's key-value metadata (``str`` -> ``bytes``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1]}).replace_schema_metadata({"owner": "ops"})
        >>> dict(ls.write_dataset(data, "t.lance").manifest.schema_metadata)
        {'owner': b'ops'}
        """
        return self.schema.metadata

    @property
    def num_rows(self) -> int:
        """Live rows of the version, from the fragments' counts.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> _ = ds.delete("id = 3")
        >>> ds.manifest.num_rows
        2
        """
        return sum(f.num_rows for f in self.fragments)

    @property
    def has_deletion_files(self) -> bool:
        """Whether any fragment has a deletion file.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> before = ds.manifest.has_deletion_files
        >>> before, ds.delete("id = 1").num_deleted_rows, ds.manifest.has_deletion_files
        (False, 1, True)
        """
        return any(f.deletion_file is not None for f in self.fragments)

    def fragment(self, fragment_id: int) -> Fragment:
        """The fragment with id ``fragment_id``; raises ``KeyError`` if absent.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> manifest = ls.write_dataset(pa.table({"id": [1]}), "t.lance").manifest
        >>> manifest.fragment(0).physical_rows
        1
        >>> manifest.fragment(4)
        Traceback (most recent call last):
        ...
        KeyError: 'no fragment 4 in manifest version 1'
        """
        for f in self.fragments:
            if f.id == fragment_id:
                return f
        raise KeyError(f"no fragment {fragment_id} in manifest version {self.version}")


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
