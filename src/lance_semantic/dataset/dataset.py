"""The user-facing table handle, with Lance's verbs (layer L5).

A :class:`Dataset` is one version of a table. Reads never change it; mutating operations
commit a new version and advance the handle to it, as pylance does.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds

from ..commit.committer import list_versions, load_manifest
from ..errors import ReadError
from ..manifest import flags
from ..manifest.model import Manifest
from ..read.output import output_schema
from ..read.scan import FragmentReader
from ..schema.field import TableSchema
from ..storage.blobs import BlobFile
from ..storage.object_store import ObjectStore, open_store
from ..write.fragments import MAX_BYTES_PER_FILE
from . import arguments as args
from . import arrow_dataset, evolution, maintenance, mutations
from .blobs import take_blobs
from .cleanup import CleanupStats, cleanup_old_versions
from .compaction import DatasetOptimizer
from .fragment import LanceFragment
from .indices import IndexInformation, list_indices
from .lance_operation import AnyOperation
from .mutations import DeleteResult, MergeInsertBuilder, UpdateResult
from .retry import retrying
from .scan import Columns, Filter, ScanPlan, plan_scan, run_scan, take_rows
from .scanner import TABLE_BATCH, Scanner, make_scanner
from .snapshot import Snapshot
from .tags import Reference, Tags, resolve_reference
from .two_phase import commit_operation
from .versions import LanceStats, Version, all_versions, version_entry
from .writing import write_snapshot

__all__ = ["Dataset", "dataset", "write_dataset", "upgrade", "FeatureFlags"]

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


def dataset(
    uri: str | os.PathLike[str],
    *,
    version: Reference = None,
    storage_options: Mapping[str, str] | None = None,
) -> Dataset:
    """Open the table at ``uri``: the latest version, or the one ``version`` names (a
    version number, a tag name, or a ``(branch, version)`` tuple of the main branch).

    Raises
    ------
    DatasetNotFoundError
        No table at ``uri``; ``VersionNotFoundError`` (a subclass) for a missing version.
    TagNotFoundError
        ``version`` is a name that is not a tag of the table.
    UnsupportedFeatureError
        The table needs reader features this library does not have.
    TypeError, ValueError
        ``uri`` is not a path, ``version`` not a positive int, a str or a tuple.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> ds.insert(pa.table({"id": [3]})).version
    2
    >>> ls.dataset("t.lance").count_rows(), ls.dataset("t.lance", version=1).count_rows()
    (3, 2)
    >>> ls.dataset("missing.lance")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lance_semantic.errors.DatasetNotFoundError: Dataset not found: /.../missing.lance
    """
    uri = args.check_uri("uri", uri)
    reference = args.check_reference(version)
    store = open_store(uri, args.check_storage_options(storage_options))
    return Dataset._open(store, uri, resolve_reference(store, reference))


def write_dataset(
    data: Any,
    uri: str | os.PathLike[str] | ObjectStore,
    schema: pa.Schema | None = None,
    mode: Literal["create", "append", "overwrite"] = "create",
    *,
    data_storage_version: str | None = None,
    semantic_types: bool | None = None,
    max_rows_per_file: int = 1_048_576,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    storage_options: Mapping[str, str] | None = None,
    allow_external_blob_outside_bases: bool = False,
    progress: bool = False,
    _uri: str | None = None,
    _base: Manifest | None = None,
) -> Dataset:
    """Write ``data`` as a Lance table at ``uri``.

    Parameters
    ----------
    data
        A ``pa.Table``, ``pa.RecordBatch``, ``pa.RecordBatchReader``, an iterable of batches,
        a pandas DataFrame, or anything exposing ``__arrow_c_stream__``.
    mode
        ``"create"`` (fails if a table exists), ``"append"`` or ``"overwrite"``. Append and
        overwrite create the table when there is none, as in pylance.
    data_storage_version
        ``"2.0"`` … ``"2.3"`` (or ``"stable"`` / ``"next"``) for new tables; default ``"2.2"``.
    schema
        The schema to write ``data`` as (columns are selected and cast to it), as pylance.
    max_rows_per_file
        Rows per data file; larger inputs are split into several fragments.
    max_bytes_per_file
        A soft limit on each data file's size, as pylance's: a new file starts once the rows
        written to the current one hold this many bytes in Arrow memory (default 90 GiB).
    allow_external_blob_outside_bases
        Store blob v2 values given as URIs as absolute external URIs (as pylance's option of
        the same name; without it such values are refused).
    progress
        Show a progress bar of the rows written on stderr (``tqdm``).

    Raises
    ------
    DatasetExistsError
        ``mode="create"`` over an existing table.
    SchemaMismatchError
        Appended data whose types differ from the table's (legacy rule: exact Arrow types).

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> ds.version, ds.count_rows(), ds.semantic_types
    (1, 2, False)
    >>> ls.write_dataset(pa.table({"id": [3]}), "t.lance", mode="append").count_rows()
    3
    >>> ls.write_dataset(pa.table({"id": [3]}), "t.lance")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lance_semantic.errors.DatasetExistsError: Dataset already exists: t.lance (use ...)

    Data storage 2.3 makes a table with semantic types: appends may bring any accepted
    layout of a column's type.

    >>> ds = ls.write_dataset(pa.table({"s": ["a"]}), "s.lance", data_storage_version="2.3")
    >>> large = pa.table({"s": pa.array(["b"], pa.large_string())})
    >>> ls.write_dataset(large, "s.lance", mode="append").to_table().to_pydict()
    {'s': ['a', 'b']}
    """
    snapshot = write_snapshot(
        data,
        uri,
        schema,
        mode,
        data_storage_version=data_storage_version,
        semantic_types=semantic_types,
        max_rows_per_file=max_rows_per_file,
        max_bytes_per_file=max_bytes_per_file,
        storage_options=storage_options,
        allow_external_blob_outside_bases=allow_external_blob_outside_bases,
        progress=progress,
        _uri=_uri,
        _base=_base,
    )
    return Dataset(snapshot.store, snapshot.uri, snapshot.manifest)


def upgrade(
    uri: str | os.PathLike[str], *, storage_options: Mapping[str, str] | None = None
) -> Dataset:
    """Open the table at ``uri`` and upgrade it to semantic types in one metadata-only
    commit (see :func:`upgrade_dataset`); a flagged table is left as it is.

    Returns
    -------
    Dataset
        The table at its new version.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"s": pa.array(["a"], pa.large_string())}), "t.lance")
    >>> ds = ls.upgrade("t.lance")
    >>> ds.semantic_types, ds.version, ds.semantic_schema.field("s").output_encoding
    (True, 2, 'large_utf8')
    >>> ls.upgrade("t.lance").version  # already upgraded: nothing committed
    2
    """
    return maintenance.upgrade_dataset(dataset(uri, storage_options=storage_options))


class Dataset(pds.Dataset):
    """One version of a Lance table.

    Made by :func:`lance_semantic.dataset` (open) and :func:`lance_semantic.write_dataset`
    (create). Reads never change the handle; the verbs that commit (``insert``, ``delete``,
    ``update``, ``merge_insert``, schema changes, ...) advance it to the version they
    commit, as pylance's do. A ``pyarrow.dataset.Dataset``, so that DuckDB and Polars push
    projections and filters into :meth:`scanner` / :meth:`to_batches` (see
    ``dataset.arrow_dataset``).

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
    >>> ds
    Dataset(uri='t.lance', version=1, rows=3)
    >>> ds.delete("id = 2").num_deleted_rows, ds.version
    (1, 2)
    >>> ds.to_table().to_pydict()
    {'id': [1, 3]}
    """

    def __init__(self, store: ObjectStore, uri: str, manifest: Manifest) -> None:
        # (no super().__init__: pyarrow's forbids direct construction)
        flags.check_readable(manifest, uri)
        self._store = store
        self._uri = uri
        self._manifest = manifest

    @classmethod
    def _open(cls, store: ObjectStore, uri: str, version: int | None) -> Dataset:
        return cls(store, uri, load_manifest(store, version))

    @classmethod
    def commit(
        cls,
        uri: str | os.PathLike[str],
        operation: AnyOperation,
        read_version: int | None = None,
        *,
        storage_options: Mapping[str, str] | None = None,
        data_storage_version: str | None = None,
        semantic_types: bool | None = None,
        commit_message: str | None = None,
        max_retries: int = 20,
    ) -> Dataset:
        """Publish ``operation`` (an ``ls.LanceOperation``) as the table's next version: the
        second phase of a two-phase write (pylance's ``LanceDataset.commit``).

        ``read_version`` is the version the operation was prepared against (required but
        for ``Overwrite`` and ``Restore``); when others committed since, the operation is
        rebased with the usual conflict rules. ``data_storage_version`` and
        ``semantic_types`` decide a created or overwritten table's format and flag as in
        ``write_dataset`` (default: the fragments' data storage version).
        See :mod:`lance_semantic.dataset.two_phase`.

        Raises
        ------
        ValueError
            No ``read_version`` for an operation that needs one; fragments of mixed or other
            data storage versions.
        SchemaMismatchError, UnsupportedInputTypeError
            A data file whose recorded layout does not fit the table's schema.
        CommitConflictError, DatasetExistsError
            The rebase failed, or a create lost to another create.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> fragments = ls.fragment.write_fragments(pa.table({"id": [2]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [3]}))  # another writer, meanwhile
        >>> op = ls.LanceOperation.Append(fragments)
        >>> ls.Dataset.commit("t.lance", op, read_version=1).to_table().to_pydict()  # rebased
        {'id': [1, 3, 2]}
        >>> ls.Dataset.commit("t.lance", op)
        Traceback (most recent call last):
        ...
        ValueError: read_version is required for all operations except Overwrite and Restore
        """
        store, display, manifest = commit_operation(
            uri,
            operation,
            read_version,
            storage_options=storage_options,
            data_storage_version=data_storage_version,
            semantic_types=semantic_types,
            commit_message=commit_message,
            max_retries=max_retries,
        )
        return cls(store, display, manifest)

    # ---- metadata -------------------------------------------------------------------------
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

    def __repr__(self) -> str:
        return f"Dataset(uri={self._uri!r}, version={self.version}, rows={self.count_rows()})"

    # ---- versions -------------------------------------------------------------------------
    def versions(self) -> list[Version]:
        """Every version of the table, oldest first, as pylance reports them: ``version``,
        ``timestamp`` (naive local datetime) and ``metadata`` (the manifest summary).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> _ = ds.delete("id = 1")
        >>> [(v["version"], v["metadata"]["total_rows"]) for v in ds.versions()]
        [(1, '2'), (2, '1')]
        """
        return all_versions(self._store)

    @property
    def latest_version(self) -> int:
        """The newest version of the table (this handle may read an older one).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> old = ds.checkout_version(1)
        >>> old.version, old.latest_version
        (1, 2)
        """
        return max(list_versions(self._store))

    def checkout_version(self, version: Reference) -> Dataset:
        """A new handle on ``version`` (a number, a tag name or a ``(branch, version)``
        tuple); this one is unchanged.

        Raises
        ------
        VersionNotFoundError
            No such version.
        TagNotFoundError
            ``version`` is a name that is not a tag of the table.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.tags.create("first")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.checkout_version(1).count_rows(), ds.checkout_version("first").version
        (1, 1)
        >>> ds.version
        2
        """
        reference = args.check_reference(version)
        return Dataset._open(self._store, self._uri, resolve_reference(self._store, reference))

    def restore(self) -> Dataset:
        """Commit this (older) version as the newest one: its schema, fragments and
        indices become a new version; the versions between stay.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> restored = ds.checkout_version(1).restore()
        >>> restored.version, restored.count_rows()
        (3, 1)
        """
        self._advance(maintenance.restore_version(self._snapshot()))
        return self

    # ---- reads ----------------------------------------------------------------------------
    def get_fragments(self) -> list[LanceFragment]:
        """The fragments of this version, in table order (each write adds at least one).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [3]}))
        >>> [(f.fragment_id, f.count_rows()) for f in ds.get_fragments()]
        [(0, 2), (1, 1)]
        """
        return [LanceFragment(self, f) for f in self._manifest.fragments]

    def count_rows(self, filter: Filter | None = None) -> int:
        """How many rows the version has, or how many match ``filter`` (as for
        :meth:`to_table`). Without a filter only the fragments' counts are read.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> ds.count_rows(), ds.count_rows("id > 1")
        (3, 2)
        """
        if filter is None:
            schema = self.semantic_schema
            return sum(
                FragmentReader(self._store, schema, f, [], pa.schema([])).live_rows()
                for f in self._manifest.fragments
            )
        return sum(b.num_rows for b in self.to_batches(columns=[], filter=filter))

    def to_batches(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        *,
        fragments: Sequence[LanceFragment] | None = None,
        **scanner_options: Any,
    ) -> Iterator[pa.RecordBatch]:
        """Stream the rows as record batches of at most ``batch_size`` rows.

        The arguments are those of :meth:`to_table`; ``fragments`` restricts the read to
        some fragments of this version (:meth:`get_fragments`); other :meth:`scanner`
        options (``with_row_id``, ...) pass through to a scanner, as in pylance. Rows are
        read as the iterator is consumed.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3, 4, 5]}), "t.lance")
        >>> [b.num_rows for b in ds.to_batches(batch_size=2)]
        [2, 2, 1]
        >>> [b["id"].to_pylist() for b in ds.to_batches(filter="id > 3")]
        [[4, 5]]
        """
        if scanner_options:
            return self.scanner(
                columns,
                filter,
                limit,
                offset,
                batch_size=batch_size,
                output_encodings=output_encodings,
                fragments=fragments,
                **scanner_options,
            ).to_batches()
        limit, offset, batch_size = _check_window(limit, offset, batch_size)
        plan = self._plan(columns, filter, output_encodings)
        frags = self._manifest.fragments if fragments is None else [f._fragment for f in fragments]
        return run_scan(
            self._store,
            self.semantic_schema,
            frags,
            plan,
            limit=limit,
            offset=offset,
            batch_size=batch_size,
        )

    def to_table(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        **scanner_options: Any,
    ) -> pa.Table:
        """Read the rows into one ``pyarrow.Table``.

        Parameters
        ----------
        columns : list of str or dict of str to str, optional
            The columns to return, in this order (default: every column). Either field
            paths, a nested field giving a flat column named by its path (``"st.x"``), or a
            mapping of output names to SQL expressions over the table's columns
            (``{"id": "id", "twice": "id * 2"}``), as in pylance. ``[]`` returns the
            rows without columns.
        filter : str or pyarrow.compute.Expression, optional
            Keep the rows for which it is true (null counts as false). A string is one SQL
            expression in Lance's dialect, DataFusion's, which evaluates it:

            * comparisons ``=``, ``<>`` (``!=``), ``<``, ``<=``, ``>``, ``>=``, combined
              with ``AND``, ``OR``, ``NOT`` and brackets;
            * ``id IN (1, 3)``, ``id NOT IN (...)``, ``id BETWEEN 2 AND 3``,
              ``name LIKE 'b%'`` (``ILIKE``: any case), ``name IS NULL``,
              ``name IS NOT NULL``, and DataFusion's functions (``lower(name) = 'ant'``);
            * struct fields by their dotted path: ``st.x > 2``;
            * literals keep their type, as in pylance: a literal that a column's type
              cannot hold unchanged is refused, not cast (``id > '3'`` or ``id > 2.5`` on
              an integer column is an ``InvalidExpressionError``); dates and times are
              typed literals: ``day = date '2020-01-31'``,
              ``ts > timestamp '2020-01-01 13:00:00'``.

            Anything but exactly one expression (``1=0 UNION SELECT 3``, ``; DELETE``) is
            refused. A ``pyarrow.compute.Expression`` (``pc.field("id") > 2``,
            ``pc.field("st", "x") > 2``) is evaluated by Arrow. Either way the filter's
            columns are read first and the others only for the rows it keeps.
        limit, offset : int, optional
            Skip the first ``offset`` rows that pass the filter, then return at most
            ``limit`` rows (in table order).
        output_encodings : dict of str to str, optional
            The Arrow layout to return, by field path (``"name"``, nested ``"st.y"``, list
            items ``"l.item"``, map parts ``"m.key"`` / ``"m.value"``). For this read it
            takes precedence over the field's stored entry (recorded when the column was
            created from another layout, or by :meth:`set_output_encoding`), which takes
            precedence over the semantic type's default. The names:

            - string: ``utf8`` (default), ``large_utf8``, ``utf8_view``,
              ``dictionary:<key>:<value>``;
            - binary: ``binary`` (default), ``large_binary``, ``binary_view``,
              ``dictionary:<key>:<value>``;
            - list: ``list`` (default), ``large_list``;
            - decimal: ``decimal128`` (default up to precision 38), ``decimal256``;
            - json: ``arrow.json`` (default), ``lance.json`` (the JSONB bytes).

            ``<key>`` is ``int8`` ... ``int64`` or ``uint8`` ... ``uint64``, ``<value>`` a
            plain layout of the family (``utf8`` / ``large_utf8``, ``binary`` /
            ``large_binary``). Other types have one layout and take none, and so do
            legacy tables (without semantic types).
        batch_size : int, optional
            Rows per batch read (default 262,144); the result is the same table.
        **scanner_options
            Other :meth:`scanner` options (``with_row_id=True``, ...) pass through to a
            scanner, as in pylance.

        Returns
        -------
        pyarrow.Table

        Raises
        ------
        InvalidExpressionError
            The filter or a projection is not one valid expression, the filter is not
            boolean, or it compares a column with a literal of another type.
        ColumnNotFoundError
            A column or field path the table does not have.
        InvalidOutputEncodingError
            An output encoding invalid for its field, for a field that does not exist, or
            on a legacy table.
        OutputEncodingOverflowError
            A value the requested layout cannot hold (2 GiB of text as ``utf8``).
        TypeError, ValueError
            An argument of the wrong type, a negative ``limit`` or ``offset``,
            ``batch_size=0``.

        Examples
        --------
        >>> import datetime, pyarrow as pa, pyarrow.compute as pc, lance_semantic as ls
        >>> data = pa.table({
        ...     "id": [1, 2, 3, 4],
        ...     "name": ["ant", "bee", None, "cat"],
        ...     "day": [datetime.date(2020, 1, d) for d in (1, 15, 31, 31)],
        ...     "st": [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}],
        ... })
        >>> ds = ls.write_dataset(data, "t.lance", data_storage_version="2.3")
        >>> ds.to_table(columns=["id", "st.x"], filter="id > 2").to_pydict()
        {'id': [3, 4], 'st.x': [3, 4]}
        >>> ds.to_table(columns={"id": "id", "twice": "id * 2"}, limit=2).to_pydict()
        {'id': [1, 2], 'twice': [2, 4]}
        >>> def ids(f):
        ...     return ds.to_table(columns=["id"], filter=f)["id"].to_pylist()
        >>> ids("id >= 2 AND name <> 'cat'"), ids("id = 1 OR NOT (id < 4)")
        ([2], [1, 4])
        >>> ids("id IN (1, 3)"), ids("id BETWEEN 2 AND 3"), ids("name LIKE 'b%'")
        ([1, 3], [2, 3], [2])
        >>> ids("name IS NULL"), ids("st.x > 2"), ids("day = date '2020-01-31'")
        ([3], [3, 4], [3, 4])
        >>> ids(pc.field("id") > 2), ids(pc.field("st", "x") < 2)
        ([3, 4], [1])
        >>> ids("id > '3'")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidExpressionError: invalid SQL expression "id > '3'": \
the literal '3' (Utf8) cannot be compared with column 'id' of type int64 without changing \
its value; pylance refuses it too: use a literal of the column's type
        >>> ds.to_table(columns=["id"], offset=1, limit=2)["id"].to_pylist()
        [2, 3]
        >>> ds.to_table(batch_size=1).equals(ds.to_table())  # smaller reads, the same table
        True

        Output encodings: the type's default, the field's entry, the request's override.

        >>> data = pa.table({"s": pa.array(["a"], pa.large_string()), "t": ["b"]})
        >>> ds = ls.write_dataset(data, "enc.lance", data_storage_version="2.3")
        >>> ds.semantic_schema.field("s").output_encoding  # recorded from the input
        'large_utf8'
        >>> ds.to_table().schema.types
        [DataType(large_string), DataType(string)]
        >>> ds.to_table(output_encodings={"s": "utf8_view", "t": "dictionary:int8:utf8"}).schema
        s: string_view
        t: dictionary<values=string, indices=int8, ordered=0>
        >>> ds.to_table(output_encodings={"t": "large_list"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidOutputEncodingError: field 't': invalid output encoding \
'large_list': large_list is an output encoding of list, not of string (valid: utf8, ...)
        """
        if scanner_options:
            return self.scanner(
                columns,
                filter,
                limit,
                offset,
                batch_size=batch_size,
                output_encodings=output_encodings,
                **scanner_options,
            ).to_table()
        limit, offset, batch_size = _check_window(limit, offset, batch_size)
        plan = self._plan(columns, filter, output_encodings)
        batches = run_scan(
            self._store,
            self.semantic_schema,
            self._manifest.fragments,
            plan,
            limit=limit,
            offset=offset,
            batch_size=batch_size or TABLE_BATCH,
        )
        schema = plan.output_schema
        return pa.Table.from_batches(list(batches), schema=schema)

    def take(
        self,
        indices: Sequence[int] | np.ndarray | pa.Array,
        columns: Columns | None = None,
        output_encodings: Mapping[str, str] | None = None,
    ) -> pa.Table:
        """Rows at ``indices`` (offsets among the live rows, in the order given), with
        ``columns`` and ``output_encodings`` as for :meth:`to_table`; a nested path keeps
        its enclosing struct (``st.y`` gives ``st: struct<y>``), as pylance's ``take``.

        Raises
        ------
        ReadError
            An index beyond the live rows.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.take([2, 0]).to_pydict()
        {'id': [3, 1], 's': ['c', 'a']}
        >>> ds.take([1], columns=["s"]).to_pydict()
        {'s': ['b']}
        """
        idx = args.check_row_indices("indices", indices)
        if isinstance(columns, list | tuple):  # pylance's take keeps one of each
            columns = list(dict.fromkeys(columns))
        plan = self._plan(columns, None, output_encodings)
        readers = [
            FragmentReader(self._store, self.semantic_schema, f, plan.top_fields, plan.read_schema)
            for f in self._manifest.fragments
        ]
        live = np.array([r.live_rows() for r in readers], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(live)])
        total = int(starts[-1])
        if len(idx) and (idx.min() < 0 or idx.max() >= total):
            bad = int(idx[(idx < 0) | (idx >= total)][0])
            raise ReadError(f"take index {bad} is out of range for {total} rows")
        return take_rows(readers, starts[:-1].tolist(), idx, plan)

    def take_blobs(
        self,
        blob_column: str,
        ids: Sequence[int] | np.ndarray | pa.Array | None = None,
        addresses: Sequence[int] | np.ndarray | pa.Array | None = None,
        indices: Sequence[int] | np.ndarray | pa.Array | None = None,
    ) -> list[BlobFile | None]:
        """Seekable, read-only file objects over the bytes of ``blob_column`` at ``indices``
        (offsets among the live rows), row ``ids`` or row ``addresses`` (the same thing
        without stable row ids), in the order given; None for null values (like pylance).

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world", None]}, schema=pa.schema([blob]))
        >>> ds = ls.write_dataset(data, "clips.lance")
        >>> first, missing = ds.take_blobs("clip", indices=[0, 1])
        >>> first.size(), first.read(5), missing
        (11, b'hello', None)
        >>> with ds.take_blobs("clip", ids=[0])[0] as f:
        ...     _ = f.seek(6)
        ...     f.read()
        b'world'
        """
        args.check_str("blob_column", blob_column)
        for name, value in (("ids", ids), ("addresses", addresses), ("indices", indices)):
            if value is not None:
                args.check_row_indices(name, value)
        return take_blobs(
            self._store,
            self._manifest,
            blob_column,
            indices=indices,
            addresses=addresses if addresses is not None else ids,
        )

    def _plan(
        self,
        columns: Columns | None,
        filter: Filter | None,
        output_encodings: Mapping[str, str] | None,
    ) -> ScanPlan:
        args.check_columns(columns)
        args.check_filter("filter", filter)
        args.check_str_mapping("output_encodings", output_encodings, values="output encoding (str)")
        return plan_scan(
            self.semantic_schema,
            columns,
            filter,
            flagged=self.semantic_types,
            output_encodings=output_encodings,
        )

    # ---- metadata-only changes ---------------------------------------------------------------
    def set_output_encoding(self, field_path: str, encoding: str | None) -> Dataset:
        """Record (or with ``None`` clear) the layout reads of ``field_path`` return.

        A metadata-only commit: no data file is rewritten.

        Raises
        ------
        InvalidOutputEncodingError
            ``encoding`` is invalid for the field's semantic type or parameters (for example
            ``decimal128`` for precision 40), the field does not exist, or the table is a
            legacy table (output encodings apply to tables with semantic types only).

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"s": ["a"]}), "t.lance", data_storage_version="2.3")
        >>> ds.set_output_encoding("s", "large_utf8").schema.field("s").type
        DataType(large_string)
        >>> ds.set_output_encoding("s", None).schema.field("s").type, ds.version
        (DataType(string), 3)
        >>> ds.set_output_encoding("s", "decimal128")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidOutputEncodingError: field 's': invalid output encoding \
'decimal128': decimal128 is an output encoding of decimal, not of string (valid: ...)
        """
        self._advance(maintenance.set_output_encoding(self._snapshot(), field_path, encoding))
        return self

    def upgrade_semantic_types(self) -> Dataset:
        """Upgrade this legacy table to semantic types (same as
        :func:`lance_semantic.upgrade`): one metadata-only commit; no-op on a flagged table.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"s": pa.array(["a"], pa.large_string())}), "t.lance")
        >>> ds.semantic_schema.field("s").logical_type
        'large_string'
        >>> ds.upgrade_semantic_types().semantic_types, ds.version
        (True, 2)
        >>> ds.semantic_schema.field("s").logical_type, ds.schema.field("s").type
        ('string', DataType(large_string))
        """
        return maintenance.upgrade_dataset(self)

    # ---- writes ---------------------------------------------------------------------------
    def delete(self, predicate: Filter) -> DeleteResult:
        """Delete the rows matching ``predicate`` (a filter as for :meth:`to_table`):
        deletion files are written, no data file is rewritten.

        Returns
        -------
        DeleteResult
            ``num_deleted_rows`` (also readable as ``result["num_deleted_rows"]``).

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> ds.delete("id >= 2")
        DeleteResult(num_deleted_rows=2)
        >>> ds.to_table().to_pydict(), ds.version
        ({'id': [1]}, 2)
        """
        args.check_filter("predicate", predicate, optional=False)
        return self._apply(lambda snap: mutations.delete(snap, predicate), retry=True)

    def update(self, updates: Mapping[str, str], where: Filter | None = None) -> UpdateResult:
        """Set columns to SQL expressions on the rows matching ``where`` (every row when
        None); the rows are rewritten into new fragments.

        Parameters
        ----------
        updates
            Column name -> SQL expression over the row's columns (``{"n": "n + 1"}``).
        where
            A filter as for :meth:`to_table`.

        Returns
        -------
        UpdateResult
            ``num_rows_updated``.

        Raises
        ------
        InvalidExpressionError
            An expression that does not parse, or a value its column cannot hold.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.update({"s": "upper(s)", "id": "id * 10"}, where="id > 1")
        UpdateResult(num_rows_updated=2)
        >>> ds.to_table().to_pydict()
        {'id': [1, 20, 30], 's': ['a', 'B', 'C']}
        """
        args.check_str_mapping("updates", updates, values="SQL expression (str)", optional=False)
        args.check_filter("where", where)
        return self._apply(lambda snap: mutations.update(snap, updates, where), retry=True)

    def merge_insert(self, on: str | Sequence[str]) -> MergeInsertBuilder:
        """A builder for an upsert keyed on the column(s) ``on`` (see
        :class:`~lance_semantic.dataset.mutations.MergeInsertBuilder`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2], "s": ["a", "b"]}), "t.lance")
        >>> source = pa.table({"id": [2, 3], "s": ["B", "c"]})
        >>> (ds.merge_insert("id").when_matched_update_all()
        ...    .when_not_matched_insert_all().execute(source))
        MergeInsertResult(num_inserted_rows=1, num_updated_rows=1, num_deleted_rows=0)
        >>> ds.to_table().sort_by("id").to_pydict()
        {'id': [1, 2, 3], 's': ['a', 'B', 'c']}
        """
        return MergeInsertBuilder(self, args.check_on(on, self.semantic_schema.names))

    def add_columns(self, transforms: Any, read_columns: Sequence[str] | None = None) -> Dataset:
        """Add columns, committing one new version.

        Parameters
        ----------
        transforms
            A mapping of new column names to SQL expressions over the existing columns, a
            ``pyarrow.Field`` / ``Schema`` / list of fields (all null, no data written), or
            a function from a ``RecordBatch`` of ``read_columns`` to a batch of new columns.
        read_columns
            The columns a function reads (default: all).

        Examples
        --------
        >>> import pyarrow as pa, pyarrow.compute as pc, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> ds.add_columns({"twice": "id * 2"}).to_table().to_pydict()
        {'id': [1, 2], 'twice': [2, 4]}
        >>> ds.add_columns(pa.field("note", pa.string())).to_table(columns=["note"]).to_pydict()
        {'note': [None, None]}
        >>> def plus(batch):
        ...     return pa.record_batch([pc.add(batch["id"], 100)], names=["big"])
        >>> ds.add_columns(plus, read_columns=["id"]).to_table(columns=["big"]).to_pydict()
        {'big': [101, 102]}
        """
        if isinstance(transforms, Mapping):
            args.check_str_mapping("transforms", transforms, values="SQL expression (str)")
        if read_columns is not None:
            args.check_column_names("read_columns", read_columns)
        self._advance(evolution.add_columns(self._snapshot(), transforms, read_columns))
        return self

    def drop_columns(self, columns: Sequence[str]) -> Dataset:
        """Remove columns (a metadata-only commit; indices on them go too).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1], "a": [2], "b": [3]}), "t.lance")
        >>> ds.drop_columns(["a", "b"]).schema.names
        ['id']
        """
        args.check_column_names("columns", columns)
        self._advance(evolution.drop_columns(self._snapshot(), columns))
        return self

    def alter_columns(self, *alterations: Mapping[str, Any]) -> Dataset:
        """Rename, change nullability or change the type of columns: each alteration is a
        mapping with ``"path"`` and any of ``"name"``, ``"nullable"``, ``"data_type"``.

        Raises
        ------
        SchemaEvolutionError
            A duplicate name, a cast that would lose values or that pylance refuses, nulls
            in a column made non-nullable, a type change of an indexed column.
        ColumnNotFoundError
            A path the table does not have.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2], "n": [3, 4]}), "t.lance")
        >>> ds.alter_columns({"path": "n", "name": "m", "data_type": pa.int32()}).schema
        id: int64
        m: int32
        >>> ds.alter_columns({"path": "id", "nullable": False}).schema.field("id")
        pyarrow.Field<id: int64 not null>
        """
        self._advance(evolution.alter_columns(self._snapshot(), alterations))
        return self

    @property
    def optimize(self) -> DatasetOptimizer:
        """Maintenance that rewrites data files without changing rows (``compact_files``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.optimize.compact_files().fragments_removed, len(ds.get_fragments())
        (2, 1)
        """
        return DatasetOptimizer(self)

    def insert(
        self, data: Any, *, mode: Literal["append", "overwrite"] = "append", **kwargs: Any
    ) -> Dataset:
        """Append (or overwrite with) ``data`` and advance this handle to the new version;
        ``kwargs`` as for :func:`lance_semantic.write_dataset`.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.insert(pa.table({"id": [2, 3]})).to_table().to_pydict()
        {'id': [1, 2, 3]}
        >>> ds.insert(pa.table({"id": [9]}), mode="overwrite").to_table().to_pydict()
        {'id': [9]}
        >>> ds.version
        3
        """
        new = write_dataset(
            data, self._store, mode=mode, _uri=self._uri, _base=self._manifest, **kwargs
        )
        self._manifest = new._manifest
        return self

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

    # ---- everyday pylance verbs: tags, cleanup, head / sample, indices, stats ---------------
    @property
    def tags(self) -> Tags:
        """The table's tags (``create``, ``update``, ``delete``, ``list``, ``get_version``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.tags.create("v1")
        >>> ds.tags.get_version("v1"), ls.dataset("t.lance", version="v1").version
        (1, 1)
        """
        return Tags(self)

    def cleanup_old_versions(
        self,
        older_than: timedelta | None = None,
        retain_versions: int | None = None,
        *,
        delete_unverified: bool = False,
        error_if_tagged_old_versions: bool = True,
    ) -> CleanupStats:
        """Remove old versions and the files only they use, with pylance 14's rules (see
        ``dataset/cleanup.py``).

        Parameters
        ----------
        older_than
            Remove versions committed before ``now - older_than`` (default: 14 days, when
            ``retain_versions`` is not given either).
        retain_versions
            Keep at least this many of the newest versions.
        delete_unverified
            Also remove unreferenced files younger than 7 days (an unfinished write's).
        error_if_tagged_old_versions
            Raise ``TaggedVersionsCleanupError`` when a tagged version matches the policy
            (else tagged versions are kept quietly).

        Returns
        -------
        CleanupStats

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}), mode="overwrite")
        >>> stats = ds.cleanup_old_versions(retain_versions=1)
        >>> stats.old_versions, stats.data_files_removed, [v["version"] for v in ds.versions()]
        (1, 1, [2])
        """
        return cleanup_old_versions(
            self._snapshot(),
            older_than,
            retain_versions,
            delete_unverified=delete_unverified,
            error_if_tagged_old_versions=error_if_tagged_old_versions,
        )

    def sample(
        self, num_rows: int, columns: Columns | None = None, randomize_order: bool = True
    ) -> pa.Table:
        """``num_rows`` distinct random rows, drawn as pylance draws them (Python's
        ``random.sample``, so ``random.seed`` makes it repeatable); in row order when not
        ``randomize_order``.

        >>> import random, pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3, 4]}), "t.lance")
        >>> random.seed(1)
        >>> ds.sample(2, randomize_order=False).num_rows
        2
        >>> ds.sample(5)
        Traceback (most recent call last):
        ...
        ValueError: num_rows (5) is larger than the table's 4 rows
        """
        n = args.check_int("num_rows", num_rows)
        ordered = not args.check_bool("randomize_order", randomize_order)
        total = self.count_rows()
        if n > total:
            raise ValueError(f"num_rows ({n}) is larger than the table's {total} rows")
        indices = random.sample(range(total), n)
        return self.take(sorted(indices) if ordered else indices, columns)

    def get_fragment(self, fragment_id: int) -> LanceFragment | None:
        """The fragment with id ``fragment_id``, or None if this version has none.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> ds.get_fragment(0), ds.get_fragment(7)
        (LanceFragment(id=0, physical_rows=2), None)
        """
        wanted = args.check_int("fragment_id", fragment_id)
        found = [f for f in self._manifest.fragments if f.id == wanted]
        return LanceFragment(self, found[0]) if found else None

    def checkout_latest(self) -> Dataset:
        """Move this handle to the latest version, in place (as pylance).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> old = ls.dataset("t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> old.version, old.checkout_latest().version, old.count_rows()
        (1, 2, 2)
        """
        self._manifest = load_manifest(self._store)
        return self

    def get_version(self) -> Version:
        """This version as :meth:`versions` lists it.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> v = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance").get_version()
        >>> v["version"], v["metadata"]["total_rows"], sorted(v)
        (1, '2', ['metadata', 'timestamp', 'version'])
        """
        return version_entry(self._manifest)

    def version_refs(self) -> list[dict[str, int]]:
        """``{"version": n}`` for every version, oldest first (no manifest is read).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.insert(pa.table({"id": [2]})).version_refs()
        [{'version': 1}, {'version': 2}]
        """
        return [{"version": v} for v in sorted(list_versions(self._store))]

    def list_indices(self) -> list[IndexInformation]:
        """The indices of this version (built by pylance), one entry per segment:
        ``name``, ``type``, ``uuid``, ``fields``, ``version``, ``fragment_ids``,
        ``base_id``. lance-semantic builds none itself.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").list_indices()
        []
        """
        return list_indices(self._manifest)

    @property
    def has_index(self) -> bool:
        """Whether this version has any index (see :meth:`list_indices`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").has_index
        False
        """
        return bool(self._manifest.index_section) and bool(list_indices(self._manifest))

    @property
    def stats(self) -> LanceStats:
        """``stats.dataset_stats()``: deleted rows, fragments, small files.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> _ = ds.delete("id = 1")
        >>> ds.stats.dataset_stats()
        {'num_deleted_rows': 1, 'num_fragments': 1, 'num_small_files': 1}
        """
        return LanceStats(self)

    # ---- scanners, engines and the rest of pyarrow's Dataset ----------------------------------
    def scanner(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        batch_size: int | None = None,
        with_row_id: bool | None = False,
        with_row_address: bool | None = False,
        output_encodings: Mapping[str, str] | None = None,
        fragments: Sequence[LanceFragment] | None = None,
        **options: Any,
    ) -> Scanner:
        """A :class:`~lance_semantic.dataset.scanner.Scanner` of this version: ``to_table()``,
        ``to_batches()``, ``to_reader()`` (streaming), ``count_rows()``, ``projected_schema``.

        ``with_row_id`` adds ``_rowid`` (uint64, ``fragment id << 32 | row offset``),
        ``with_row_address`` ``_rowaddr``. pylance's tuning options (``batch_readahead``,
        ``scan_in_order``, ...) are accepted and ignored; those of features not here
        (``nearest``, ``full_text_query``, ...) raise ``NotSupportedYetError`` unless left
        at their default; other names are a ``TypeError``. ``columns``, ``filter``,
        ``limit``, ``offset``, ``batch_size`` and ``output_encodings`` are those of
        :meth:`to_table`; ``fragments`` restricts the scan to some fragments.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> sc = ds.scanner(columns=["s"], filter="id > 1", with_row_id=True)
        >>> sc.projected_schema
        s: string
        _rowid: uint64
        >>> sc.to_table().to_pydict(), sc.count_rows()
        ({'s': ['b', 'c'], '_rowid': [1, 2]}, 2)
        >>> ds.scanner(nearest={"column": "v", "q": [0.0], "k": 1})
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
vector search (nearest=)
        """
        return make_scanner(
            self,
            columns,
            filter,
            limit,
            offset,
            batch_size=batch_size,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            output_encodings=output_encodings,
            fragments=fragments,
            **options,
        )

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.scanner().__arrow_c_stream__(requested_schema)

    def head(self, num_rows: int, **kwargs: Any) -> pa.Table:
        """The first ``num_rows`` rows (``kwargs`` as for :meth:`scanner`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> ds.head(2).to_pydict(), ds.head(1, filter="id > 1").to_pydict()
        ({'id': [1, 2]}, {'id': [2]})
        """
        return self.scanner(**kwargs).head(num_rows)

    @property
    def partition_expression(self) -> pc.Expression:
        """Always true: a Lance table is not partitioned.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").partition_expression
        <pyarrow.compute.Expression true>
        """
        return pc.scalar(True)

    def sort_by(self, sorting: str | list[tuple[str, str]], **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``sort_by``: the rows sorted, as a ``pyarrow.dataset.InMemoryDataset``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [2, 3, 1]}), "t.lance")
        >>> ds.sort_by([("id", "descending")]).to_table().to_pydict()
        {'id': [3, 2, 1]}
        """
        return arrow_dataset.sort_by(self, sorting, **kwargs)

    def join(self, right_dataset: Any, keys: Any, *a: Any, **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``join`` over the rows read, as a ``pyarrow.dataset.InMemoryDataset``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2], "s": ["a", "b"]}), "t.lance")
        >>> right = pa.table({"id": [2], "x": [20]})
        >>> ds.join(right, "id", join_type="inner").to_table().to_pydict()
        {'id': [2], 's': ['b'], 'x': [20]}
        """
        return arrow_dataset.join(self, right_dataset, keys, *a, **kwargs)

    def join_asof(self, right_dataset: Any, *a: Any, **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``join_asof`` over the rows read, as an ``InMemoryDataset``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"t": [1, 5], "k": [0, 0]}), "t.lance")
        >>> right = pa.table({"t": [0, 4], "k": [0, 0], "v": ["p", "q"]})
        >>> ds.join_asof(right, on="t", by="k", tolerance=-2).to_table().to_pydict()
        {'t': [1, 5], 'k': [0, 0], 'v': ['p', 'q']}
        """
        return arrow_dataset.join_asof(self, right_dataset, *a, **kwargs)

    def filter(self, expression: Any) -> pds.Dataset:
        """Not supported: pass ``filter=`` to :meth:`scanner`, :meth:`to_table` or
        :meth:`to_batches` instead.

        >>> import pyarrow as pa, pyarrow.compute as pc, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> ds.filter(pc.field("id") > 1)
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Dataset.filter (a pyarrow.dataset.Dataset method); pass filter= to scanner(), to_table() or \
to_batches()
        >>> ds.to_table(filter=pc.field("id") > 1).to_pydict()
        {'id': [2]}
        """
        raise arrow_dataset.not_supported(
            "filter", "pass filter= to scanner(), to_table() or to_batches()"
        )

    def replace_schema(self, schema: Any) -> pds.Dataset:
        """Not supported: change columns with :meth:`alter_columns` or their read layout
        with :meth:`set_output_encoding`.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ds.replace_schema(pa.schema([("id", pa.int32())]))
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Dataset.replace_schema (a pyarrow.dataset.Dataset method); use alter_columns() or \
set_output_encoding()
        """
        raise arrow_dataset.not_supported(
            "replace_schema", "use alter_columns() or set_output_encoding()"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        options = self._store.storage_options
        return (_reopen, (self._uri, self.version, dict(options) if options else None))

    def __copy__(self) -> Dataset:
        return Dataset(self._store, self._uri, self._manifest)


def _reopen(uri: str, version: int, storage_options: Mapping[str, str] | None) -> Dataset:
    """What unpickling a ``Dataset`` calls: the same version of the same table."""
    return dataset(uri, version=version, storage_options=storage_options)


def _check_window(
    limit: object, offset: object, batch_size: object
) -> tuple[int | None, int | None, int | None]:
    return (
        args.check_optional_int("limit", limit),
        args.check_optional_int("offset", offset),
        args.check_optional_int("batch_size", batch_size, minimum=1),
    )
