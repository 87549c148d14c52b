"""The user-facing table handle, with Lance's verbs (layer L5).

A :class:`Dataset` is one version of a table. Reads never change it; mutating operations
commit a new version and advance the handle to it, as pylance does.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds

from ..commit.committer import commit, list_versions, load_manifest
from ..errors import InvalidOutputEncodingError, ReadError
from ..manifest import flags
from ..manifest.model import Manifest, Restore, UpdateConfig, UpdateMap
from ..read.output import output_schema
from ..read.scan import FragmentReader
from ..schema.field import TableSchema
from ..schema.semantic import OUTPUT_ENCODING_KEY, semantic_type_of
from ..storage.blobs import BlobFile
from ..storage.object_store import ObjectStore, open_store
from ..types.layouts import validate_output_encoding
from . import arguments as args
from . import arrow_dataset, evolution, mutations
from .blobs import take_blobs
from .cleanup import CleanupStats, cleanup_old_versions
from .compaction import DatasetOptimizer
from .fragment import LanceFragment
from .indices import IndexInformation, list_indices
from .lance_operation import AnyOperation
from .mutations import DeleteResult, MergeInsertBuilder, UpdateResult
from .scan import Columns, ScanPlan, plan_scan, run_scan, take_rows
from .scanner import TABLE_BATCH, Scanner, make_scanner
from .tags import Reference, Tags, resolve_reference
from .versions import LanceStats, Version, all_versions, version_entry

__all__ = ["Dataset", "dataset", "FeatureFlags"]

Filter: TypeAlias = str | pc.Expression  # a SQL string or an Arrow compute expression


@dataclass(frozen=True, slots=True)
class FeatureFlags:
    reader: int
    writer: int

    @property
    def names(self) -> list[str]:
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
    """
    uri = args.check_uri("uri", uri)
    reference = args.check_reference(version)
    store = open_store(uri, args.check_storage_options(storage_options))
    return Dataset._open(store, uri, resolve_reference(store, reference))


class Dataset(pds.Dataset):
    """One version of a Lance table.

    A ``pyarrow.dataset.Dataset``, so that DuckDB and Polars push projections and filters
    into :meth:`scanner` / :meth:`to_batches` (see ``dataset.arrow_dataset``)."""

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
        """
        from .two_phase import commit_operation

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
        return self._uri

    @property
    def version(self) -> int:
        return self._manifest.version

    @property
    def data_storage_version(self) -> str:
        return self._manifest.data_storage_version

    @property
    def feature_flags(self) -> FeatureFlags:
        return FeatureFlags(
            self._manifest.reader_feature_flags, self._manifest.writer_feature_flags
        )

    @property
    def semantic_types(self) -> bool:
        return bool(self._manifest.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES)

    @property
    def semantic_schema(self) -> TableSchema:
        return self._manifest.schema

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema reads return (output encodings applied on flagged tables)."""
        return output_schema(self._manifest.schema, flagged=self.semantic_types)

    @property
    def manifest(self) -> Manifest:
        return self._manifest

    def __repr__(self) -> str:
        return f"Dataset(uri={self._uri!r}, version={self.version}, rows={self.count_rows()})"

    # ---- versions -------------------------------------------------------------------------
    def versions(self) -> list[Version]:
        """Every version of the table, oldest first, as pylance reports them: ``version``,
        ``timestamp`` (naive local datetime) and ``metadata`` (the manifest summary)."""
        return all_versions(self._store)

    @property
    def latest_version(self) -> int:
        return max(list_versions(self._store))

    def checkout_version(self, version: Reference) -> Dataset:
        """A new handle on ``version`` (a number, a tag name or a ``(branch, version)``
        tuple); this one is unchanged."""
        reference = args.check_reference(version)
        return Dataset._open(self._store, self._uri, resolve_reference(self._store, reference))

    def restore(self) -> Dataset:
        """Commit this (older) version as the newest one."""
        latest = load_manifest(self._store)
        self._manifest = commit(self._store, latest, Restore(version=self.version))
        return self

    # ---- reads ----------------------------------------------------------------------------
    def get_fragments(self) -> list[LanceFragment]:
        return [LanceFragment(self, f) for f in self._manifest.fragments]

    def count_rows(self, filter: Filter | None = None) -> int:
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
        """Stream the rows as record batches of at most ``batch_size`` rows; other
        :meth:`scanner` options (``with_row_id``, ...) pass through to a scanner, as in
        pylance."""
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
        """Read the rows into one table; other :meth:`scanner` options (``with_row_id``,
        ...) pass through to a scanner, as in pylance.

        ``columns``: field paths (``"st.y"`` is a flat column), or a mapping of output names
        to SQL expressions over the table's columns (``{"y": "x * 2"}``), as in pylance."""
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
        """Rows at ``indices`` (offsets among the live rows, in the order given)."""
        idx = args.check_row_indices("indices", indices)
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
        without stable row ids), in the order given; None for null values (like pylance)."""
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
        """
        args.check_str("field_path", field_path)
        if encoding is not None:
            args.check_str("encoding", encoding, empty=True)
        shown = str(encoding)
        if not self.semantic_types:
            raise InvalidOutputEncodingError(
                field_path,
                shown,
                "legacy table: output encodings need semantic types (upgrade the table first)",
            )
        try:
            field = self.semantic_schema.field(field_path)
        except KeyError:
            raise InvalidOutputEncodingError(field_path, shown, "no such field") from None
        if encoding is not None:
            validate_output_encoding(semantic_type_of(field), encoding, path=field_path)
        op = UpdateConfig(
            field_metadata_updates={field.id: UpdateMap({OUTPUT_ENCODING_KEY: encoding})}
        )
        self._manifest = commit(self._store, self._manifest, op)
        return self

    def upgrade_semantic_types(self) -> Dataset:
        """Upgrade this legacy table to semantic types (same as :func:`lance_semantic.upgrade`)."""
        from .maintenance import upgrade_dataset

        return upgrade_dataset(self)

    # ---- writes ---------------------------------------------------------------------------
    def delete(self, predicate: Filter) -> DeleteResult:
        """Delete the rows matching ``predicate`` (deletion files; no data file rewritten)."""
        args.check_filter("predicate", predicate, optional=False)
        return mutations.delete(self, predicate)

    def update(self, updates: Mapping[str, str], where: Filter | None = None) -> UpdateResult:
        """Set columns to SQL expressions on the rows matching ``where``."""
        args.check_str_mapping("updates", updates, values="SQL expression (str)", optional=False)
        args.check_filter("where", where)
        return mutations.update(self, updates, where)

    def merge_insert(self, on: str | Sequence[str]) -> MergeInsertBuilder:
        """A builder for an upsert keyed on ``on`` (see :class:`MergeInsertBuilder`)."""
        return MergeInsertBuilder(self, args.check_on(on, self.semantic_schema.names))

    def add_columns(self, transforms: Any, read_columns: Sequence[str] | None = None) -> Dataset:
        """Add columns from SQL expressions, Arrow fields (all null) or a batch function."""
        if isinstance(transforms, Mapping):
            args.check_str_mapping("transforms", transforms, values="SQL expression (str)")
        if read_columns is not None:
            args.check_column_names("read_columns", read_columns)
        return evolution.add_columns(self, transforms, read_columns)

    def drop_columns(self, columns: Sequence[str]) -> Dataset:
        args.check_column_names("columns", columns)
        return evolution.drop_columns(self, columns)

    def alter_columns(self, *alterations: Mapping[str, Any]) -> Dataset:
        """Rename, change nullability or change the type of columns."""
        return evolution.alter_columns(self, alterations)

    @property
    def optimize(self) -> DatasetOptimizer:
        return DatasetOptimizer(self)

    def insert(
        self, data: Any, *, mode: Literal["append", "overwrite"] = "append", **kwargs: Any
    ) -> Dataset:
        """Append (or overwrite with) ``data`` and advance this handle to the new version."""
        from .writing import write_dataset

        new = write_dataset(
            data, self._store, mode=mode, _uri=self._uri, _base=self._manifest, **kwargs
        )
        self._manifest = new._manifest
        return self

    def _advance(self, manifest: Manifest) -> None:
        self._manifest = manifest

    # ---- everyday pylance verbs: tags, cleanup, head / sample, indices, stats ---------------
    @property
    def tags(self) -> Tags:
        """The table's tags (``create``, ``update``, ``delete``, ``list``, ``get_version``)."""
        return Tags(self)

    def cleanup_old_versions(
        self,
        older_than: timedelta | None = None,
        retain_versions: int | None = None,
        *,
        delete_unverified: bool = False,
        error_if_tagged_old_versions: bool = True,
    ) -> CleanupStats:
        """Remove old versions and the files only they use (see ``dataset/cleanup.py``)."""
        return cleanup_old_versions(
            self,
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
        ``randomize_order``."""
        n = args.check_int("num_rows", num_rows)
        ordered = not args.check_bool("randomize_order", randomize_order)
        total = self.count_rows()
        if n > total:
            raise ValueError(f"num_rows ({n}) is larger than the table's {total} rows")
        indices = random.sample(range(total), n)
        return self.take(sorted(indices) if ordered else indices, columns)

    def get_fragment(self, fragment_id: int) -> LanceFragment | None:
        """The fragment with id ``fragment_id``, or None if this version has none."""
        wanted = args.check_int("fragment_id", fragment_id)
        found = [f for f in self._manifest.fragments if f.id == wanted]
        return LanceFragment(self, found[0]) if found else None

    def checkout_latest(self) -> Dataset:
        """Move this handle to the latest version, in place (as pylance)."""
        self._manifest = load_manifest(self._store)
        return self

    def get_version(self) -> Version:
        """This version as :meth:`versions` lists it."""
        return version_entry(self._manifest)

    def version_refs(self) -> list[dict[str, int]]:
        """``{"version": n}`` for every version, oldest first (no manifest is read)."""
        return [{"version": v} for v in sorted(list_versions(self._store))]

    def list_indices(self) -> list[IndexInformation]:
        """The indices of this version (built by pylance), one entry per segment."""
        return list_indices(self._manifest)

    @property
    def has_index(self) -> bool:
        return bool(self._manifest.index_section) and bool(list_indices(self._manifest))

    @property
    def stats(self) -> LanceStats:
        """``stats.dataset_stats()``: deleted rows, fragments, small files."""
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
        at their default; other names are a ``TypeError``."""
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
        """The first ``num_rows`` rows (``kwargs`` as for :meth:`scanner`)."""
        return self.scanner(**kwargs).head(num_rows)

    @property
    def partition_expression(self) -> pc.Expression:
        """Always true: a Lance table is not partitioned."""
        return pc.scalar(True)

    def sort_by(self, sorting: str | list[tuple[str, str]], **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``sort_by``: the rows sorted, as a ``pyarrow.dataset.InMemoryDataset``."""
        return arrow_dataset.sort_by(self, sorting, **kwargs)

    def join(self, right_dataset: Any, keys: Any, *a: Any, **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``join`` over the rows read, as a ``pyarrow.dataset.InMemoryDataset``."""
        return arrow_dataset.join(self, right_dataset, keys, *a, **kwargs)

    def join_asof(self, right_dataset: Any, *a: Any, **kwargs: Any) -> pds.Dataset:
        """pyarrow's ``join_asof`` over the rows read, as an ``InMemoryDataset``."""
        return arrow_dataset.join_asof(self, right_dataset, *a, **kwargs)

    def filter(self, expression: Any) -> pds.Dataset:
        raise arrow_dataset.not_supported(
            "filter", "pass filter= to scanner(), to_table() or to_batches()"
        )

    def replace_schema(self, schema: Any) -> pds.Dataset:
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
