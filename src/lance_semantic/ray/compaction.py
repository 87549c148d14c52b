"""``compact_files`` on Ray (layer L6; lance-ray ``compact_files``).

The driver plans the compaction exactly as ``ds.optimize.compact_files`` plans it (pylance
14's planner, ``dataset/compaction/plan.py``); each task is rewritten by a Ray task, which
reads the planned version and writes the new, id-less fragments (on a flagged table in the
one layout per column that holds every source layout); the driver publishes all of them in
one ``Rewrite`` commit (after a ``ReserveFragments`` for their ids, as pylance commits a
compaction), read at the planned version. A failed task removes what it wrote, and the
driver removes what the others wrote.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import ray

from ..commit import load_manifest
from ..dataset.compaction import (
    CompactionMetrics,
    CompactionOptions,
    CompactionTask,
    check_compactable,
    commit_rewrite,
    compaction_metrics,
    plan_compaction,
    rewrite_task,
)
from ..dataset.core import arguments as args
from ..manifest import Fragment, flags
from ..storage import UncommittedFiles, open_store
from ._errors import library_errors_raised

__all__ = ["compact_files"]

#: the compaction options ``compaction_options`` may name (pylance's ``CompactionOptions``)
_OPTIONS = (
    "target_rows_per_fragment",
    "max_rows_per_group",
    "materialize_deletions",
    "materialize_deletions_threshold",
    "batch_size",
)


def _rewrite(
    uri: str,
    storage_options: Mapping[str, str] | None,
    version: int,
    task: CompactionTask,
    options: CompactionOptions,
) -> tuple[tuple[Fragment, ...], list[str]]:
    """One task's new fragments and the data files written for them (runs on a worker)."""
    store = open_store(uri, storage_options)
    manifest = load_manifest(store, version)
    with UncommittedFiles(store) as files:  # removed here if the task fails
        new = rewrite_task(store, manifest, task, options, files.data_names.append)
        return new, list(files.data_names)


def compact_files(
    uri: str | os.PathLike[str],
    *,
    target_rows_per_fragment: int | None = None,
    materialize_deletions: bool | None = None,
    materialize_deletions_threshold: float | None = None,
    batch_size: int | None = None,
    compaction_options: Mapping[str, Any] | None = None,
    num_workers: int = 4,
    storage_options: Mapping[str, str] | None = None,
    ray_remote_args: Mapping[str, Any] | None = None,
) -> CompactionMetrics | None:
    """Compact the table at ``uri`` with Ray tasks (lance-ray's ``compact_files``).

    Parameters
    ----------
    target_rows_per_fragment, materialize_deletions, materialize_deletions_threshold,
    batch_size
        As ``ds.optimize.compact_files`` takes them (defaults from the table config
        ``lance.compaction.*``, then pylance's).
    compaction_options
        The same options as a mapping (lance-ray passes pylance's ``CompactionOptions``);
        keyword arguments win.
    num_workers
        At most this many rewrite tasks run at once.

    Returns
    -------
    CompactionMetrics or None
        None when there is nothing to compact (no version is committed), as lance-ray.

    Raises
    ------
    NotSupportedYetError
        Tables compaction does not support (stable row ids, indices, 0.1 files).
    CommitConflictError
        A concurrent writer changed a rewritten fragment.
    """
    uri = args.check_uri("uri", uri)
    num_workers = args.check_int("num_workers", num_workers, minimum=1)
    options_given: dict[str, Any] = {}
    if compaction_options is not None:
        if not isinstance(compaction_options, Mapping):
            raise TypeError("compaction_options must be a mapping of option names to values")
        unknown = sorted(set(compaction_options) - set(_OPTIONS))
        if unknown:
            raise TypeError(f"compact_files() got unsupported compaction options {unknown}")
        options_given.update(compaction_options)
    explicit = {
        "target_rows_per_fragment": target_rows_per_fragment,
        "materialize_deletions": materialize_deletions,
        "materialize_deletions_threshold": materialize_deletions_threshold,
        "batch_size": batch_size,
    }
    options_given.update({k: v for k, v in explicit.items() if v is not None})
    opts = args.check_storage_options(storage_options)
    store_options = dict(opts) if opts is not None else None
    store = open_store(uri, store_options)
    base = load_manifest(store)
    check_compactable(base)
    flags.check_writable(base, uri)
    options = CompactionOptions.resolve(base.config, **options_given)
    tasks = plan_compaction(store, base, options)
    if not tasks:
        return None
    remote = ray.remote(_rewrite)
    if ray_remote_args:
        remote = remote.options(**dict(ray_remote_args))
    results: dict[int, tuple[tuple[Fragment, ...], list[str]]] = {}
    pending: dict[Any, int] = {}
    queue = list(enumerate(tasks))
    try:
        # the driver owns every finished task's files until the Rewrite is published
        with UncommittedFiles(store) as files, library_errors_raised():
            while queue or pending:
                while queue and len(pending) < num_workers:
                    i, task = queue.pop(0)
                    ref = remote.remote(uri, store_options, base.version, task, options)
                    pending[ref] = i
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    results[pending.pop(ref)] = result = ray.get(ref)
                    files.data_names.extend(result[1])
            pairs = [(task.fragments, results[i][0]) for i, task in enumerate(tasks)]
            _, groups = commit_rewrite(store, base, pairs, files)
    except BaseException:
        for ref in pending:  # tasks still running when another failed
            ray.cancel(ref)
        raise
    return compaction_metrics(groups)
