"""The verbs of ``Dataset`` that commit (layer L5): ``delete``, ``update``,
``merge_insert``, ``add_columns`` / ``drop_columns`` / ``alter_columns``,
``set_output_encoding``, ``upgrade_semantic_types``, ``create_index`` and ``optimize``.

Each checks its arguments, runs its operation (``mutations``, ``evolution``,
``maintenance``, ``compaction``) on the handle's snapshot and moves the handle to the version
the operation committed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self

from ..errors import NotSupportedYetError
from ..read import Filter
from . import evolution, indices, mutations
from .compaction import DatasetOptimizer as CompactionOptimizer
from .core import Index, index_of_entry
from .core import arguments as args
from .handle import Handle
from .maintenance import set_output_encoding, upgrade_dataset
from .mutations import DeleteResult, MergeInsertBuilder, UpdateResult

__all__ = ["Changes", "DatasetOptimizer"]


class DatasetOptimizer(CompactionOptimizer):
    """``ds.optimize`` (pylance's ``DatasetOptimizer``): ``compact_files`` and
    ``optimize_indices``.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> type(ds.optimize).__name__, ds.optimize.optimize_indices()
    ('DatasetOptimizer', None)
    """

    def optimize_indices(self, **kwargs: Any) -> None:
        """Add the rows the table's IVF indices do not cover yet, as pylance 14 does: a new
        segment per index with the index's centroids and codes (no retraining), all
        committed in one ``CreateIndex`` transaction; no commit when every index is up to
        date.

        Parameters
        ----------
        num_indices_to_merge
            0 (default here): a delta segment over the unindexed fragments; N: one segment
            over those and the newest N segments' fragments, replacing them. pylance's
            default merges and joins small partitions instead of a delta (see
            docs/guides/vector-search.md).
        index_names
            The indices to optimize (default: all; a name the table has not is skipped).
        retrain
            ``True``: build each index again over every row (new centroids; pylance's
            partition count, ``rows // 4096`` for IVF_FLAT, ``rows // 8192`` for IVF_PQ /
            IVF_SQ), replacing all its segments.

        Raises
        ------
        NotSupportedYetError
            An HNSW / RQ / INVERTED / ... index with unindexed fragments (or retrained),
            vectors other than float32. (BTREE, BITMAP, LABEL_LIST and ZONEMAP indices are
            built again over every fragment, as pylance 14 merges them.)
        TypeError, ValueError, OverflowError
            A bad or unknown option (pylance ignores unknown ones); nothing is committed.

        Examples
        --------
        >>> import numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((900, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec[:600]}), "t.lance")
        >>> _ = ds.create_index("vec", "IVF_FLAT", num_partitions=2)
        >>> _ = ds.insert(pa.table({"vec": vec[600:]}))
        >>> ds.optimize.optimize_indices()
        >>> [sorted(i["fragment_ids"]) for i in ds.list_indices()]
        [[0], [1]]
        """
        self._ds._apply(lambda snap: indices.optimize_indices(snap, kwargs))


class Changes(Handle):
    """The verbs of a ``Dataset`` that commit a new version."""

    def set_output_encoding(self, field_path: str, encoding: str | None) -> Self:
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
        self._advance(set_output_encoding(self._snapshot(), field_path, encoding))
        return self

    def upgrade_semantic_types(self) -> Self:
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
        return upgrade_dataset(self)

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
        """A builder for an upsert keyed on the column(s) ``on`` (a ``MergeInsertBuilder``,
        with pylance's methods).

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

    def add_columns(self, transforms: Any, read_columns: Sequence[str] | None = None) -> Self:
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

    def drop_columns(self, columns: Sequence[str]) -> Self:
        """Remove columns (a metadata-only commit; indices on them go too).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1], "a": [2], "b": [3]}), "t.lance")
        >>> ds.drop_columns(["a", "b"]).schema.names
        ['id']
        """
        args.check_column_names("columns", columns)
        self._advance(evolution.drop_columns(self._snapshot(), columns))
        return self

    def alter_columns(self, *alterations: Mapping[str, Any]) -> Self:
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

    def create_index(
        self,
        column: str | list[str],
        index_type: str,
        name: str | None = None,
        metric: str = "L2",
        replace: bool = False,
        num_partitions: int | None = None,
        ivf_centroids: Any = None,
        pq_codebook: Any = None,
        num_sub_vectors: int | None = None,
        accelerator: Any = None,
        index_cache_size: int | None = None,
        shuffle_partition_batches: int | None = None,
        shuffle_partition_concurrency: int | None = None,
        ivf_centroids_file: str | None = None,
        precomputed_partition_dataset: str | None = None,
        storage_options: dict[str, str] | None = None,
        filter_nan: bool = True,
        train: bool = True,
        fragment_ids: list[int] | None = None,
        index_uuid: str | None = None,
        *,
        target_partition_size: int | None = None,
        streaming_sample_rate: int | None = None,
        streaming_coreset_rate: int | None = None,
        streaming_refine_passes: int | None = None,
        skip_transpose: bool = False,
        progress_callback: Any = None,
        **kwargs: Any,
    ) -> Self:
        """Build a vector index over ``column`` in pylance 14's format and commit it
        (pylance's ``LanceDataset.create_index``, same signature and defaults); pylance
        lists it, plans ``nearest`` through it and rewrites it like its own.

        ``index_type`` is ``IVF_FLAT``, ``IVF_PQ`` or ``IVF_SQ`` (any case); ``metric`` l2 /
        euclidean, cosine or dot. The name defaults to ``<column>_idx``; ``replace=True``
        replaces an index of that name. IVF_PQ needs ``num_partitions`` and
        ``num_sub_vectors`` (dividing the dimension); ``num_bits`` (8), ``max_iters`` (50)
        and ``sample_rate`` (256) are keyword options. ``ivf_centroids`` (``[P, d]``) and
        ``pq_codebook`` skip the training they replace. Null vectors are not indexed (nor
        ones with a NaN, with ``filter_nan``). ``index_cache_size`` and ``storage_options``
        are accepted and unused (the table's store is already open).

        Raises
        ------
        NotSupportedYetError
            Another vector index type (HNSW, RQ), non-float32 vectors, 4-bit PQ, or an
            option of pylance's own engine (``accelerator``, the shuffle options,
            ``ivf_centroids_file``, ``precomputed_partition_dataset``, the streaming
            options), ``train=False``, ``fragment_ids``, ``skip_transpose``,
            ``progress_callback``.
        NotImplementedError, ValueError, TypeError, ColumnNotFoundError, RuntimeError
            As pylance: a scalar index type (TypeError: use ``create_scalar_index``), an
            unknown index type or metric, ``num_sub_vectors`` that does not
            divide the dimension, a column that is missing or not a vector column, an
            existing index of that name without ``replace``. Nothing is committed.

        Examples
        --------
        >>> import numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((1000, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance")
        >>> ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2).version
        2
        >>> [(i["name"], i["type"]) for i in ds.list_indices()]
        [('vec_idx', 'IVF_PQ')]
        """
        options = {
            "accelerator": accelerator,
            "shuffle_partition_batches": shuffle_partition_batches,
            "shuffle_partition_concurrency": shuffle_partition_concurrency,
            "ivf_centroids_file": ivf_centroids_file,
            "precomputed_partition_dataset": precomputed_partition_dataset,
            "streaming_sample_rate": streaming_sample_rate,
            "streaming_coreset_rate": streaming_coreset_rate,
            "streaming_refine_passes": streaming_refine_passes,
            "train": train,
            "fragment_ids": fragment_ids,
            "skip_transpose": skip_transpose,
            "progress_callback": progress_callback,
        }
        self._apply(
            lambda snap: indices.create_index(
                snap,
                column,
                index_type,
                name,
                metric,
                replace,
                num_partitions,
                ivf_centroids,
                pq_codebook,
                num_sub_vectors,
                filter_nan=filter_nan,
                index_uuid=index_uuid,
                target_partition_size=target_partition_size,
                options=options,
                kwargs=kwargs,
            )
        )
        return self

    def create_scalar_index(
        self,
        column: str,
        index_type: str,
        name: str | None = None,
        *,
        replace: bool = True,
        train: bool = True,
        fragment_ids: list[int] | None = None,
        index_uuid: str | None = None,
        **params: Any,
    ) -> None:
        """Build a BTREE, BITMAP, LABEL_LIST, ZONEMAP or BLOOMFILTER index over ``column`` in
        pylance 14's format
        and commit it (pylance's ``LanceDataset.create_scalar_index``, same defaults; returns
        None as pylance's does): pylance lists it, plans its filters through it and rewrites
        it like its own, and this library's filters use it.

        The name defaults to ``<column>_idx``; ``replace=True`` (default) replaces an index
        of that name. ``train=False`` commits an empty index (no fragments). Deleted rows
        are not indexed. On a flagged table the index keys hold the semantic type's default
        layout, whatever layouts the data files hold.

        Raises
        ------
        NotSupportedYetError
            INVERTED / FTS, NGRAM, RTREE, MINHASHLSH; an index on a nested field or several
            columns; a ZONEMAP on a list or struct; ``progress_callback``.
        TypeError
            A column the type cannot hold (BTREE / BITMAP: not a number, boolean, string,
            binary, decimal, fixed-size binary or temporal; LABEL_LIST: not a list of
            those), naming the column; an unknown option.
        ColumnNotFoundError
            A missing column (also a KeyError, as pylance's).
        NotImplementedError, ValueError, RuntimeError
            As pylance: an unknown index type, a BLOOMFILTER on a type it does not hash
            (booleans, float16, decimals, ...), ``fragment_ids`` (use
            pylance's distributed build) or a bad ``index_uuid``, an existing index of that
            name with ``replace=False``. Nothing is committed.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [3, 1, 2], "tag": ["a", "b", "a"]}), "t.lance")
        >>> ds.create_scalar_index("id", "BTREE")
        >>> ds.create_scalar_index("tag", "BITMAP")
        >>> [(i["name"], i["type"]) for i in ds.list_indices()]
        [('id_idx', 'BTree'), ('tag_idx', 'Bitmap')]
        >>> ds.to_table(filter="tag = 'a'").column("id").to_pylist()
        [3, 2]
        """
        self._apply(
            lambda snap: indices.create_scalar_index(
                snap,
                column,
                index_type,
                name,
                replace=replace,
                train=train,
                fragment_ids=fragment_ids,
                index_uuid=index_uuid,
                params=params,
            )
        )

    def create_index_uncommitted(
        self,
        column: str | list[str],
        index_type: str,
        name: str | None = None,
        metric: str = "L2",
        replace: bool = False,
        num_partitions: int | None = None,
        ivf_centroids: Any = None,
        pq_codebook: Any = None,
        num_sub_vectors: int | None = None,
        accelerator: Any = None,
        index_cache_size: int | None = None,
        shuffle_partition_batches: int | None = None,
        shuffle_partition_concurrency: int | None = None,
        ivf_centroids_file: str | None = None,
        precomputed_partition_dataset: str | None = None,
        storage_options: dict[str, str] | None = None,
        filter_nan: bool = True,
        train: bool = True,
        fragment_ids: list[int] | None = None,
        index_uuid: str | None = None,
        *,
        target_partition_size: int | None = None,
        streaming_sample_rate: int | None = None,
        streaming_coreset_rate: int | None = None,
        streaming_refine_passes: int | None = None,
        skip_transpose: bool = False,
        rabitq_model: str | None = None,
        **kwargs: Any,
    ) -> Index:
        """Build an index segment over the fragments ``fragment_ids`` (required, as in
        pylance 14: its distributed build) in pylance's format and return it, uncommitted:
        an :class:`ls.Index` (pylance's ``lance.dataset.Index`` fields) for
        ``LanceOperation.CreateIndex(new_indices=[...], removed_indices=[...])`` through
        ``ls.Dataset.commit`` or pylance's ``LanceDataset.commit``. The table does not move.
        Arguments and errors are :meth:`create_index`'s; ``rabitq_model`` (IVF_RQ) is not
        supported yet.

        Examples
        --------
        >>> import numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance", max_rows_per_file=300)
        >>> index = ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=2,
        ...                                     fragment_ids=[1])
        >>> index.name, sorted(index.fragment_ids), ds.version
        ('vec_idx', [1], 1)
        """
        if rabitq_model is not None:
            raise NotSupportedYetError("create_index_uncommitted: rabitq_model (IVF_RQ)")
        options = {
            "accelerator": accelerator,
            "shuffle_partition_batches": shuffle_partition_batches,
            "shuffle_partition_concurrency": shuffle_partition_concurrency,
            "ivf_centroids_file": ivf_centroids_file,
            "precomputed_partition_dataset": precomputed_partition_dataset,
            "streaming_sample_rate": streaming_sample_rate,
            "streaming_coreset_rate": streaming_coreset_rate,
            "streaming_refine_passes": streaming_refine_passes,
            "train": train,
            "fragment_ids": fragment_ids,
            "skip_transpose": skip_transpose,
            "progress_callback": None,
        }
        _, entry = indices.create_index(
            self._snapshot(),
            column,
            index_type,
            name,
            metric,
            replace,
            num_partitions,
            ivf_centroids,
            pq_codebook,
            num_sub_vectors,
            filter_nan=filter_nan,
            index_uuid=index_uuid,
            target_partition_size=target_partition_size,
            options=options,
            kwargs=kwargs,
            uncommitted=True,
        )
        assert entry is not None
        return index_of_entry(entry)

    def drop_index(self, name: str) -> None:
        """Remove index ``name`` (every segment of it) in one commit and move to the new
        version (returns None, as pylance 14's). The commit is, as pylance's, a
        ``CreateIndex`` transaction whose ``removed_indices`` are the dropped entries. The
        index files stay for older versions until ``cleanup_old_versions``.

        Raises
        ------
        RuntimeError
            No index of that name (pylance's "Lance index not found: name=..."); nothing
            is committed.

        Examples
        --------
        >>> import numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance")
        >>> ds.create_index("vec", "IVF_FLAT", num_partitions=2).drop_index("vec_idx")
        >>> ds.list_indices(), ds.version
        ([], 3)
        """
        self._apply(lambda snap: indices.drop_index(snap, name))

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
