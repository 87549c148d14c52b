"""The table values of :mod:`lance_semantic.manifest.model` (layer L3): a manifest, its fragments,
their data and deletion files, the writer version. Import them from ``manifest.model``, which
they name as their module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from ..schema import TableSchema

__all__ = [
    "DEFAULT_DATA_FORMAT",
    "DataFile",
    "DeletionFile",
    "Fragment",
    "WriterVersion",
    "PYLANCE_14_WRITER_VERSION",
    "Manifest",
]


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
