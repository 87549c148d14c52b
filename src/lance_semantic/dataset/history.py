"""The versions, tags and housekeeping verbs of ``Dataset`` (layer L5): ``versions``,
``checkout_version``, ``checkout_latest``, ``restore``, ``tags``, ``cleanup_old_versions``,
``list_indices``, ``describe_indices``, ``index_statistics`` and ``stats``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Self

from ..commit import list_versions, load_manifest
from .core import arguments as args
from .handle import Handle
from .indices import (
    IndexDescription,
    IndexInformation,
    describe_indices,
    index_statistics_of,
    list_indices,
)
from .indices import index_statistics as _index_statistics
from .maintenance import restore_version
from .versions import (
    CleanupStats,
    LanceStats,
    Reference,
    Tags,
    Version,
    all_versions,
    cleanup_old_versions,
    resolve_reference,
    version_entry,
)

__all__ = ["History"]


class _Stats(LanceStats):
    """``Dataset.stats``, with ``index_stats`` read from the index files."""

    def index_stats(self, index_name: str) -> dict[str, Any]:
        """pylance 14's ``stats.index_stats``: the same dictionary as ``index_statistics``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").stats.index_stats("id_idx")
        Traceback (most recent call last):
        ...
        KeyError: 'Index "id_idx" not found'
        """
        snap = self._ds._snapshot()
        return index_statistics_of(snap.store, snap.manifest, index_name)


class History(Handle):
    """The versions, tags and housekeeping verbs of a ``Dataset``."""

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

    def checkout_version(self, version: Reference) -> Self:
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
        return self._open(self._store, self._uri, resolve_reference(self._store, reference))

    def restore(self) -> Self:
        """Commit this (older) version as the newest one: its schema, fragments and
        indices become a new version; the versions between stay.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> restored = ds.checkout_version(1).restore()
        >>> restored.version, restored.count_rows()
        (3, 1)
        """
        self._advance(restore_version(self._snapshot()))
        return self

    def checkout_latest(self) -> Self:
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

    def list_indices(self) -> list[IndexInformation]:
        """The indices of this version (built by pylance), one entry per segment:
        ``name``, ``type``, ``uuid``, ``fields``, ``version``, ``fragment_ids``,
        ``base_id`` (pylance's indices and ours alike).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").list_indices()
        []
        """
        return list_indices(self._manifest)

    def describe_indices(self) -> list[IndexDescription]:
        """One :class:`IndexDescription` per index of this version (pylance 14's
        ``describe_indices``): ``name``, ``type_url``, ``index_type``, ``num_rows_indexed``
        (live rows of the fragments its segments cover), ``fields``, ``field_names``,
        ``segments`` (uuid, ``dataset_version_at_last_update``, ``fragment_ids``,
        ``index_version``, ``created_at``, ``size_bytes``, ``base_id``), ``details`` (a
        vector index's ``metric_type``, ``compression`` and ``runtime_hints``) and
        ``total_size_bytes``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").describe_indices()
        []
        """
        return describe_indices(self._manifest)

    def index_statistics(self, index_name: str) -> dict[str, Any]:
        """pylance 14's statistics of index ``index_name`` (deprecated there too: a
        ``DeprecationWarning``): ``index_type``, ``name``, ``num_indices`` /
        ``num_segments``, ``indices`` / ``segments`` (per segment: for IVF_FLAT / IVF_PQ /
        IVF_SQ the partitions' sizes, centroids, loss and sub-index; for BTREE ``min`` /
        ``max`` / ``num_pages``; for BITMAP / LABEL_LIST ``num_bitmaps``),
        ``num_indexed_fragments``, ``num_indexed_rows``, ``num_unindexed_fragments``,
        ``num_unindexed_rows``, ``num_indexed_rows_per_delta``, ``updated_at_timestamp_ms``.

        Raises
        ------
        KeyError
            No index of that name (pylance's error).
        NotSupportedYetError
            An index whose files are not read here (INVERTED, HNSW, RQ, ...).

        Examples
        --------
        >>> import warnings, numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance")
        >>> _ = ds.create_index("vec", "IVF_FLAT", num_partitions=2)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     stats = ds.index_statistics("vec_idx")
        >>> stats["index_type"], stats["num_indexed_rows"], len(stats["indices"][0]["partitions"])
        ('IVF_FLAT', 600, 2)
        """
        return _index_statistics(self._store, self._manifest, index_name)

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
        """``stats.dataset_stats()``: deleted rows, fragments, small files;
        ``stats.index_stats(name)``: :meth:`index_statistics` without its deprecation.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> _ = ds.delete("id = 1")
        >>> ds.stats.dataset_stats()
        {'num_deleted_rows': 1, 'num_fragments': 1, 'num_small_files': 1}
        """
        return _Stats(self)
