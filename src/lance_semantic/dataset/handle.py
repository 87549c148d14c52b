"""The state of a ``Dataset`` and how it moves (layer L5).

:class:`Handle` holds the version a ``Dataset`` is at (store, URI, manifest) and answers
what it is (``version``, ``schema``, ``feature_flags``, ...). It makes the
:class:`~.snapshot.Snapshot` operations read, and is the one place a handle moves: to each
manifest an operation commits (``_apply``, with retry on conflict for the row mutations).
The verbs are its subclasses ``Reads``, ``Changes`` and ``History``; ``Dataset`` is all three.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Self, TypeVar

import pyarrow as pa

from ..commit import load_manifest
from ..manifest import Manifest, flags
from ..read import output_schema
from ..schema import TableSchema
from ..storage import ObjectStore
from .core import Snapshot, retrying

__all__ = ["Handle", "FeatureFlags"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class FeatureFlags:
    """The feature flags of a version: the ``reader`` and ``writer`` bit sets of its
    manifest, and their ``names``.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance", semantic_types=True)
    >>> flags = ds.feature_flags
    >>> flags.reader == flags.writer == ls.FLAG_SEMANTIC_TYPES
    True
    """

    reader: int
    writer: int

    @property
    def names(self) -> list[str]:
        """The names of the bits set in either flag set.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance", semantic_types=True)
        >>> ds.feature_flags.names
        ['semantic_types']
        """
        return flags.flag_names(self.reader | self.writer)


class Handle:
    """One version of a table, as a handle that moves to the versions it commits."""

    def __init__(self, store: ObjectStore, uri: str, manifest: Manifest) -> None:
        # (no super().__init__: pyarrow's forbids direct construction)
        flags.check_readable(manifest, uri)
        self._store = store
        self._uri = uri
        self._manifest = manifest

    @classmethod
    def _open(cls, store: ObjectStore, uri: str, version: int | None) -> Self:
        return cls(store, uri, load_manifest(store, version))

    @property
    def uri(self) -> str:
        """The table's location, as given when it was opened or created.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").uri
        't.lance'
        """
        return self._uri

    @property
    def version(self) -> int:
        """The version this handle reads (1 for a new table).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.version, ds.insert(pa.table({"id": [2]})).version
        (1, 2)
        """
        return self._manifest.version

    @property
    def data_storage_version(self) -> str:
        """The Lance file format version of the table's data files (``"2.2"`` by default).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").data_storage_version
        '2.2'
        """
        return self._manifest.data_storage_version

    @property
    def feature_flags(self) -> FeatureFlags:
        """The reader and writer feature flags of this version.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.feature_flags
        FeatureFlags(reader=0, writer=0)
        """
        return FeatureFlags(
            self._manifest.reader_feature_flags, self._manifest.writer_feature_flags
        )

    @property
    def semantic_types(self) -> bool:
        """Whether the table follows the Semantic Type Contract (``FLAG_SEMANTIC_TYPES``):
        new tables on data storage 2.3, or ``semantic_types=True``, or after
        :meth:`upgrade_semantic_types`.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1]})
        >>> ls.write_dataset(data, "legacy.lance").semantic_types
        False
        >>> ls.write_dataset(data, "flagged.lance", data_storage_version="2.3").semantic_types
        True
        """
        return bool(self._manifest.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES)

    @property
    def semantic_schema(self) -> TableSchema:
        """The table's field tree as stored: field ids, ``logical_type`` names, metadata
        (output encodings among it). :attr:`schema` is the Arrow schema reads return.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"s": pa.array(["a"], pa.large_string())})
        >>> ds = ls.write_dataset(data, "t.lance", semantic_types=True)
        >>> field = ds.semantic_schema.field("s")
        >>> field.id, field.logical_type, field.output_encoding
        (0, 'string', 'large_utf8')
        """
        return self._manifest.schema

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema reads return (output encodings applied on flagged tables).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "s": pa.array(["a"], pa.large_string())})
        >>> ls.write_dataset(data, "t.lance", semantic_types=True).schema
        id: int64
        s: large_string
        """
        return output_schema(self._manifest.schema, flagged=self.semantic_types)

    @property
    def manifest(self) -> Manifest:
        """The decoded manifest of this version (fragments, schema, flags, config).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> ds.manifest.version, ds.manifest.num_rows, len(ds.manifest.fragments)
        (1, 2, 1)
        """
        return self._manifest

    def _advance(self, manifest: Manifest) -> None:
        self._manifest = manifest

    def _snapshot(self) -> Snapshot:
        return Snapshot(self._store, self._uri, self._manifest)

    def _apply(
        self, operation: Callable[[Snapshot], tuple[Manifest, R]], *, retry: bool = False
    ) -> R:
        if retry:
            manifest, result = retrying(
                self._snapshot(), operation, reloaded=lambda s: self._advance(s.manifest)
            )
        else:
            manifest, result = operation(self._snapshot())
        self._advance(manifest)
        return result

    def __copy__(self) -> Self:
        return type(self)(self._store, self._uri, self._manifest)
