"""The user-facing table handle, with Lance's verbs (layer L5).

A :class:`Dataset` is one version of a table. Reads never change it; mutating operations
commit a new version and advance the handle to it, as pylance does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds

from ..manifest import Manifest
from ..storage import ObjectStore, open_store
from ..write import MAX_BYTES_PER_FILE, MAX_ROWS_PER_FILE
from . import arrow_dataset
from .changes import Changes
from .core import arguments as args
from .handle import FeatureFlags
from .history import History
from .maintenance import upgrade_dataset
from .reads import Reads
from .versions import Reference, resolve_reference
from .writes import AnyOperation, commit_operation, write_request, write_snapshot

__all__ = ["Dataset", "dataset", "write_dataset", "upgrade", "FeatureFlags"]


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
    max_rows_per_file: int = MAX_ROWS_PER_FILE,
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
    request = write_request(
        schema,
        mode,
        max_rows_per_file,
        max_bytes_per_file,
        data_storage_version,
        semantic_types,
        allow_external_blob_outside_bases,
    )
    snapshot = write_snapshot(
        data,
        uri,
        request,
        storage_options=storage_options,
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
    return upgrade_dataset(dataset(uri, storage_options=storage_options))


class Dataset(Reads, Changes, History, pds.Dataset):
    """One version of a Lance table.

    Made by :func:`lance_semantic.dataset` (open) and :func:`lance_semantic.write_dataset`
    (create). Reads never change the handle; the verbs that commit (``insert``, ``delete``,
    ``update``, ``merge_insert``, schema changes, ...) advance it to the version they
    commit, as pylance's do. A ``pyarrow.dataset.Dataset``, so that DuckDB and Polars push
    projections and filters into :meth:`scanner` / :meth:`to_batches` (the rest of the
    ``pyarrow.dataset.Dataset`` face answers as pyarrow's, or says what it does not do).

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
        See :func:`lance_semantic.fragment.write_fragments` and
        :class:`lance_semantic.LanceOperation`.

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

    def __repr__(self) -> str:
        return f"Dataset(uri={self._uri!r}, version={self.version}, rows={self.count_rows()})"

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

    # ---- the rest of pyarrow's Dataset (scans: dataset/reads.py) ---------------------------
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


def _reopen(uri: str, version: int, storage_options: Mapping[str, str] | None) -> Dataset:
    """What unpickling a ``Dataset`` calls: the same version of the same table."""
    return dataset(uri, version=version, storage_options=storage_options)
