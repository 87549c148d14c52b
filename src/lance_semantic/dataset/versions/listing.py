"""Version listings and cheap table statistics shaped like pylance 14's (layer L5).

``versions()`` entries are ``{"version": int, "timestamp": datetime, "metadata": dict}``
where ``timestamp`` is a *naive local* datetime computed from the manifest's commit time
exactly as pylance computes it, and ``metadata`` is the manifest summary pylance reports
(every value a decimal string, keys sorted): ``total_data_file_rows``, ``total_data_files``,
``total_deletion_file_rows``, ``total_deletion_files``, ``total_files_size``,
``total_fragments``, ``total_rows``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, TypedDict

import pyarrow as pa

from ...commit import list_versions
from ...errors import NotSupportedYetError
from ...manifest import Manifest, decode_manifest_file
from ...read import FragmentReader
from ...storage import ObjectStore, paths
from ...write import MAX_ROWS_PER_GROUP
from ..core import TableHandle
from ..core import arguments as args

__all__ = [
    "Version",
    "version_entry",
    "all_versions",
    "every_manifest",
    "DatasetStats",
    "LanceStats",
]


class Version(TypedDict):
    """One entry of ``Dataset.versions()`` (pylance's ``lance.dataset.Version``).

    >>> import datetime, pyarrow as pa, lance_semantic as ls
    >>> entry = ls.write_dataset(pa.table({"id": [1]}), "t.lance").versions()[0]
    >>> entry["version"], isinstance(entry["timestamp"], datetime.datetime)
    (1, True)
    >>> entry["metadata"]["total_rows"], entry["metadata"]["total_fragments"]
    ('1', '1')
    """

    version: int
    timestamp: datetime
    metadata: dict[str, str]


def _timestamp(ns: int) -> datetime:
    """pylance 14's conversion of a commit time in nanoseconds: local naive time, with the
    microseconds taken from the float remainder (so they can differ from the exact value
    by a microsecond, as in pylance)."""
    return datetime.fromtimestamp(ns // 1e9) + timedelta(microseconds=(ns % 1e9) // 1e3)


def summary(manifest: Manifest) -> dict[str, str]:
    """Lance's manifest summary (``Manifest::summary``): counts over the fragments; a
    fragment whose deletion count is unknown (0 with a deletion file) adds no rows."""
    data_files = files_size = deletion_files = deleted = rows = 0
    for fragment in manifest.fragments:
        data_files += len(fragment.files)
        files_size += sum(f.file_size_bytes for f in fragment.files)
        d = fragment.deletion_file
        if d is None:
            rows += fragment.physical_rows
        else:
            deletion_files += 1
            deleted += d.num_deleted_rows
            if d.num_deleted_rows:
                rows += fragment.physical_rows - d.num_deleted_rows
    return {
        "total_data_file_rows": str(rows + deleted),
        "total_data_files": str(data_files),
        "total_deletion_file_rows": str(deleted),
        "total_deletion_files": str(deletion_files),
        "total_files_size": str(files_size),
        "total_fragments": str(len(manifest.fragments)),
        "total_rows": str(rows),
    }


def version_entry(manifest: Manifest) -> Version:
    return {
        "version": manifest.version,
        "timestamp": _timestamp(manifest.timestamp_ns or 0),
        "metadata": summary(manifest),
    }


def every_manifest(store: ObjectStore) -> Iterator[tuple[str, Manifest]]:
    """(path, manifest) of every version, oldest first, from one listing of
    ``_versions``; a manifest removed meanwhile (a concurrent cleanup) is skipped."""
    for _, name in sorted(list_versions(store).items()):
        path = f"{paths.VERSIONS_DIR}/{name}"
        try:
            data = store.get(path)
        except FileNotFoundError:
            continue
        yield path, decode_manifest_file(data, store.uri(path))


def all_versions(store: ObjectStore) -> list[Version]:
    """Every version of the table, oldest first."""
    return [version_entry(m) for _, m in every_manifest(store)]


class DatasetStats(TypedDict):
    """``Dataset.stats.dataset_stats()`` (pylance's ``lance.dataset.DatasetStats``).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance").stats.dataset_stats()
    {'num_deleted_rows': 0, 'num_fragments': 1, 'num_small_files': 1}
    """

    num_deleted_rows: int
    num_fragments: int
    num_small_files: int


class LanceStats:
    """``Dataset.stats``: the statistics pylance's ``LanceStats`` has that come from the
    manifest alone (``dataset_stats``); the others need index or data file internals.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> stats = ls.write_dataset(pa.table({"id": [1]}), "t.lance").stats
    >>> stats.dataset_stats()["num_fragments"]
    1
    """

    def __init__(self, ds: TableHandle) -> None:
        self._ds = ds

    def dataset_stats(self, max_rows_per_group: int = MAX_ROWS_PER_GROUP) -> DatasetStats:
        """Deleted rows, fragments, and fragments with fewer than ``max_rows_per_group``
        physical rows ("small files"), as pylance counts them.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> _ = ds.delete("id = 1")
        >>> ds.stats.dataset_stats(), ds.stats.dataset_stats(max_rows_per_group=2)
        ({'num_deleted_rows': 1, 'num_fragments': 2, 'num_small_files': 2}, \
{'num_deleted_rows': 1, 'num_fragments': 2, 'num_small_files': 1})
        """
        limit = args.check_int("max_rows_per_group", max_rows_per_group)
        snap = self._ds._snapshot()
        manifest = snap.manifest
        deleted = 0
        for fragment in manifest.fragments:
            if fragment.deletion_file is not None:
                reader = FragmentReader(snap.store, manifest.schema, fragment, [], pa.schema([]))
                deleted += fragment.physical_rows - reader.live_rows()
        return {
            "num_deleted_rows": deleted,
            "num_fragments": len(manifest.fragments),
            "num_small_files": sum(1 for f in manifest.fragments if f.physical_rows < limit),
        }

    def index_stats(self, index_name: str) -> dict[str, Any]:
        """Not here: index statistics come from the index files (``Dataset.stats`` reads
        them, dataset/indices/describe.py).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> LanceStats(ls.write_dataset(pa.table({"id": [1]}), "t.lance")).index_stats("id_idx")
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
stats.index_stats (it reads the index files)
        """
        raise NotSupportedYetError("stats.index_stats (it reads the index files)")

    def data_stats(self) -> Any:
        """Not supported yet: per-field bytes on disk need the data files' page layout.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ls.write_dataset(pa.table({"id": [1]}), "t.lance").stats.data_stats()
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
stats.data_stats (it reads every data file's metadata)
        """
        raise NotSupportedYetError("stats.data_stats (it reads every data file's metadata)")
