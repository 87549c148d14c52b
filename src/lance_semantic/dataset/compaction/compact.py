"""Compaction: ``ds.optimize.compact_files`` (layer L5; docs/format/lance-format-facts.md §3
"compact_files", Trap 8).

Planning follows pylance 14.0.2 (``DefaultCompactionPlanner``), fragment by fragment in
manifest order:

* a fragment whose deleted fraction (``num_deleted / physical_rows``, in float32) is greater
  than ``materialize_deletions_threshold`` is rewritten even alone (when
  ``materialize_deletions``; a threshold of 1.0 or more turns that off);
* else a fragment with fewer than ``target_rows_per_fragment`` *physical* rows is a candidate
  that is merged only together with adjacent candidates;
* other fragments end a run of candidates. A run that is one merge-only fragment is left
  alone; every other run is split into tasks of at least ``target_rows_per_fragment`` *live*
  rows (the rest joins the last task).

Each task's live rows (deleted rows are gone) are written, in order, into
``n = max(1, rows // target_rows_per_fragment)`` new fragments of as even a size as
possible (the first ``rows % n`` get one row more), like pylance 14. Then two commits, as
pylance makes them: ``ReserveFragments{n_total}`` and ``Rewrite{groups}`` whose new fragments
carry the reserved ids; both transactions read the version that was planned.

Rows keep their order within a task. pylance 14 sorts a manifest's fragments by id after
every commit, so a merged fragment (new, higher id) moves behind the fragments it did not
replace; where the new fragments land is decided by the commit layer's ``Rewrite``.

On a flagged table the merged data files take per column the one physical layout that holds
every source layout (:mod:`lance_semantic.dataset.compaction.layout`); a column no merged
fragment holds stays absent (it reads as nulls). On a legacy table every data file has the
table's one Arrow type and the new files are written in it, with every column of the schema
(missing ones as nulls), as pylance does; a narrow-key dictionary column whose merged file
pylance's encoder cannot read back fails the compaction instead of corrupting the table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from ...codecs.convert import Converter, convert_batch, identity
from ...commit import commit
from ...errors import NotSupportedYetError, WriteError
from ...manifest import Fragment, Manifest, ReserveFragments, Rewrite, RewriteGroup, flags
from ...read import BlobAwareReader, Retag, deleted_rows, merge_parts, plan_data_file, retag_array
from ...schema import TableSchema, is_blob, is_blob_v2, physical_field, value_field
from ...storage import DataFileReader, ObjectStore, UncommittedFiles, unprojectable_columns
from ...types.blob_layouts import V2_LOGICAL_TYPE
from ...write import check_invariant, write_fragments
from ..core import Progress, Snapshot, TableHandle, batches_with_progress
from ..core import arguments as args
from .indices import indices_to_remap, remap_indices, remove_empty_folders
from .layout import MergedColumn, converter, merge_column
from .plan import CompactionOptions, CompactionTask, output_row_counts, plan_compaction

__all__ = [
    "DatasetOptimizer",
    "CompactionMetrics",
    "CompactionOptions",
    "CompactionTask",
    "plan_compaction",
    "output_row_counts",
    "rewrite_task",
    "commit_rewrite",
    "compaction_metrics",
    "check_compactable",
]

#: rows per read batch when the caller does not say (pylance's scanner default)
DEFAULT_BATCH_SIZE = 8192


@dataclass(frozen=True, slots=True)
class CompactionMetrics:
    """What a compaction did (pylance's ``CompactionMetrics``).

    ``files_removed`` counts data and deletion files of the replaced fragments,
    ``files_added`` the data files of the new ones.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> _ = ds.insert(pa.table({"id": [3]}))
    >>> ds.optimize.compact_files()
    CompactionMetrics(fragments_removed=2, fragments_added=1, files_removed=2, files_added=1)
    """

    fragments_removed: int = 0
    fragments_added: int = 0
    files_removed: int = 0
    files_added: int = 0


# ---- reading the sources in their physical layouts -----------------------------------------


class _Source:
    """One fragment of a task: its data files, the file field holding each top-level table
    field, and its live rows as batches of physical arrays keyed by field id."""

    def __init__(self, store: ObjectStore, table: TableSchema, fragment: Fragment) -> None:
        self.fragment = fragment
        # per data file: reader, {field id: file column}, {field id: retag to table names}
        self.files: list[
            tuple[DataFileReader | BlobAwareReader, dict[int, str], dict[int, Retag]]
        ] = []
        self.fields: dict[int, pa.Field] = {}
        parts: dict[int, list[pa.DataType]] = {}
        for df in fragment.files:
            if df.file_major_version < 2:
                raise NotSupportedYetError("compacting legacy (0.1) data files")
            reader: DataFileReader | BlobAwareReader = DataFileReader(store, df.path)
            plan = plan_data_file(table, df, reader.schema)
            if not plan.columns:
                continue
            # blob v2 columns are read as the values their descriptors stand for (bytes or
            # URIs) and stored afresh, with new sidecars, as pylance's compaction does
            blobs = {
                name: table.field_by_id(fid)
                for fid, name in plan.columns.items()
                if is_blob_v2(table.field_by_id(fid))
            }
            late = unprojectable_columns(reader.schema)  # (after a blob v2 column)
            if blobs or any(name in late for name in plan.columns.values()):
                assert isinstance(reader, DataFileReader)
                reader = BlobAwareReader(store, reader, df, blobs, frozenset(blobs))
            for fid, name in plan.columns.items():
                retag = plan.retag.get(fid)
                if name in blobs:
                    parts.setdefault(fid, []).append(V2_LOGICAL_TYPE)
                    self.fields.setdefault(fid, value_field(blobs[name]))
                    continue
                file_field = reader.schema.field(name)
                parts.setdefault(fid, []).append(retag.type if retag else file_field.type)
                self.fields.setdefault(fid, file_field)
            self.files.append((reader, dict(plan.columns), dict(plan.retag)))
        for fid, types in parts.items():  # nested members read by id, split parts merged
            merged = (
                merge_parts([pa.array([], t) for t in types]).type if len(types) > 1 else types[0]
            )
            self.fields[fid] = self.fields[fid].with_type(merged)
        deleted = deleted_rows(store, fragment)
        self.deleted = deleted if deleted is not None and len(deleted) else None
        self.live_rows = fragment.physical_rows - (0 if self.deleted is None else len(self.deleted))

    def _ranges(self, batch_size: int) -> Iterator[tuple[int, int, dict[int, pa.Array]]]:
        n = self.fragment.physical_rows
        for start in range(0, n, batch_size):
            count = min(batch_size, n - start)
            parts: dict[int, list[pa.Array]] = {}
            for reader, columns, retags in self.files:
                got = list(reader.read(list(dict.fromkeys(columns.values())), start, count, count))
                b = got[0] if len(got) == 1 else pa.Table.from_batches(got).combine_chunks()
                for fid, name in columns.items():
                    col = b.column(name)
                    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
                    retag = retags.get(fid)
                    parts.setdefault(fid, []).append(retag_array(col, retag) if retag else col)
            arrays = {fid: p[0] if len(p) == 1 else merge_parts(p) for fid, p in parts.items()}
            yield start, count, arrays

    def batches(self, batch_size: int) -> Iterator[tuple[int, dict[int, pa.Array]]]:
        """(rows, arrays) of the live rows, in physical order."""
        for start, count, arrays in self._ranges(batch_size):
            keep = None
            if self.deleted is not None:
                lo, hi = np.searchsorted(self.deleted, [start, start + count])
                if hi > lo:
                    keep = np.ones(count, dtype=bool)
                    keep[self.deleted[lo:hi] - start] = False
            if keep is None:
                yield count, arrays
            elif keep.any():
                mask = pa.array(keep)
                yield int(keep.sum()), {fid: a.filter(mask) for fid, a in arrays.items()}


def _physical(arr: pa.Array) -> pa.Array:
    return arr.storage if isinstance(arr, pa.ExtensionArray) else arr


@dataclass(frozen=True, slots=True)
class _Layout:
    """The new data files' columns for one task."""

    columns: tuple[MergedColumn, ...]
    schema: pa.Schema
    flagged: bool


def _layout(table: TableSchema, sources: Sequence[_Source], flagged: bool) -> _Layout:
    if not flagged:  # legacy: the table's one Arrow type per field, every column
        physical = pa.schema(
            [value_field(f) if is_blob(f) else physical_field(f) for f in table.fields],
            metadata=dict(table.metadata) or None,
        )
        columns = tuple(MergedColumn(f, physical.field(i)) for i, f in enumerate(table.fields))
        return _Layout(columns, physical, False)
    merged = []
    for f in table.fields:
        if is_blob(f):  # values, stored afresh (the Blob specification's layouts)
            merged.append(MergedColumn(f, value_field(f)))
            continue
        column = merge_column(f, [s.fields[f.id] for s in sources if f.id in s.fields])
        if column is not None:
            merged.append(column)
    schema = pa.schema([c.arrow for c in merged], metadata=dict(table.metadata) or None)
    return _Layout(tuple(merged), schema, True)


def _task_batches(
    sources: Sequence[_Source], layout: _Layout, batch_size: int
) -> Iterator[pa.RecordBatch]:
    """The live rows of every source, in order, in the layout's exact physical schema."""
    cache: dict[int, tuple[pa.DataType, Converter]] = {}  # column -> last source type
    schema = layout.schema
    for source in sources:
        for rows, arrays in source.batches(batch_size):
            columns: list[pa.Array] = []
            converters: list[Converter] = []
            for i, column in enumerate(layout.columns):
                target = schema.field(i).type
                arr = arrays.get(column.field.id)
                if arr is None:
                    columns.append(pa.nulls(rows, target))
                    converters.append(identity)
                    continue
                arr = _physical(arr) if layout.flagged else arr
                known = cache.get(i)
                if known is not None and known[0] == arr.type:
                    conv = known[1]
                else:
                    conv = converter(arr.type, target, column.field.path)
                    cache[i] = (arr.type, conv)
                columns.append(arr)
                converters.append(conv)
            raw = pa.RecordBatch.from_arrays(columns, names=[f"c{i}" for i in range(len(columns))])
            for batch in convert_batch(raw, converters, schema):
                if layout.flagged:
                    check_invariant(batch.columns, schema, [c.field for c in layout.columns])
                yield batch


class _Rows:
    """Takes exactly ``n`` rows at a time from a stream of batches."""

    def __init__(self, batches: Iterator[pa.RecordBatch]) -> None:
        self._batches = batches
        self._pending: pa.RecordBatch | None = None

    def take(self, n: int) -> Iterator[pa.RecordBatch]:
        while n > 0:
            batch = self._pending if self._pending is not None else next(self._batches, None)
            self._pending = None
            if batch is None:
                raise AssertionError("compaction read fewer rows than planned")
            if batch.num_rows > n:
                self._pending = batch.slice(n)
                batch = batch.slice(0, n)
            n -= batch.num_rows
            if batch.num_rows:
                yield batch


def _rewrite(
    store: ObjectStore,
    manifest: Manifest,
    flagged: bool,
    task: CompactionTask,
    options: CompactionOptions,
    on_file: Callable[[str], None],
    progress: Progress,
) -> tuple[Fragment, ...]:
    """Write the live rows of ``task`` as new (id-less) fragments (counted on ``progress``)."""
    table = manifest.schema
    sources = [_Source(store, table, f) for f in task.fragments]
    layout = _layout(table, sources, flagged)
    rows = sum(s.live_rows for s in sources)
    batches = _task_batches(sources, layout, options.batch_size or DEFAULT_BATCH_SIZE)
    stream = _Rows(batches_with_progress(batches, progress))
    fields = [c.field for c in layout.columns]
    out: list[Fragment] = []
    for n in output_row_counts(rows, options.target_rows_per_fragment):
        written = write_fragments(
            store,
            stream.take(n),
            fields,
            flagged=flagged,
            version=manifest.data_storage_version,
            max_rows_per_file=n,
            on_file=on_file,
            allow_external_blobs=True,  # the table's own values, admitted when first written
        )
        if len(written) != 1 or written[0].physical_rows != n:
            # the writer starts a new file when merged dictionaries outgrow an 8/16-bit key
            # (pylance 14 would write an unreadable file); a legacy table must keep its key
            names = [f.name for f in layout.schema if _narrow_dictionary(f.type)]
            if names:
                raise WriteError(
                    f"compaction cannot merge the dictionary column(s) {', '.join(names)} of "
                    "this legacy table: the merged dictionaries outgrow the table's dictionary "
                    "key; use a smaller target_rows_per_fragment or upgrade the table"
                )
            raise AssertionError(f"compaction wrote {written} for {n} rows")
        out.extend(written)
    return tuple(out)


def _narrow_dictionary(dt: pa.DataType) -> bool:
    if pa.types.is_dictionary(dt):
        return bool(dt.index_type.bit_width < 32)
    if isinstance(dt, pa.ExtensionType):
        return _narrow_dictionary(dt.storage_type)
    return any(_narrow_dictionary(dt.field(i).type) for i in range(dt.num_fields))


# ---- checks and the commit ------------------------------------------------------------------


def check_compactable(manifest: Manifest) -> None:
    """Refuse what compaction does not support (``NotSupportedYetError``)."""
    if manifest.reader_feature_flags & flags.FLAG_STABLE_ROW_IDS:
        raise NotSupportedYetError("compact_files on tables with stable row ids")
    if manifest.data_storage_version in ("0.1", "legacy"):
        raise NotSupportedYetError("compacting legacy (0.1) data files")


def _metrics(groups: Sequence[RewriteGroup]) -> CompactionMetrics:
    old = [f for g in groups for f in g.old_fragments]
    new = [f for g in groups for f in g.new_fragments]
    return CompactionMetrics(
        fragments_removed=len(old),
        fragments_added=len(new),
        files_removed=sum(len(f.files) + (f.deletion_file is not None) for f in old),
        files_added=sum(len(f.files) + (f.deletion_file is not None) for f in new),
    )


def rewrite_task(
    store: ObjectStore,
    manifest: Manifest,
    task: CompactionTask,
    options: CompactionOptions,
    on_file: Callable[[str], None],
) -> tuple[Fragment, ...]:
    """The new (id-less) fragments holding the live rows of ``task``, planned on
    ``manifest``; each data file name goes to ``on_file`` as soon as it exists. Nothing is
    committed (see :func:`commit_rewrite`)."""
    flagged = bool(manifest.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES)
    return _rewrite(
        store, manifest, flagged, task, options, on_file, Progress(False, total=None, desc="")
    )


def commit_rewrite(
    store: ObjectStore,
    base: Manifest,
    pairs: Sequence[tuple[Sequence[Fragment], Sequence[Fragment]]],
    files: UncommittedFiles | None = None,
    *,
    index_folders: list[str] | None = None,
) -> tuple[Manifest, tuple[RewriteGroup, ...]]:
    """Publish ``(old fragments, new id-less fragments)`` pairs read at ``base``, as pylance
    does: ``ReserveFragments`` for the new fragments' ids, then one ``Rewrite`` whose new
    fragments carry them and which remaps the indices covering the old fragments
    (:mod:`.indices`; an index type that cannot be remapped is refused before anything is
    committed). Returns the new manifest and the groups committed. ``files`` owns the new
    fragments' (and remapped indices') files: only the ``Rewrite`` names them (the
    reservation commits on its own, so a failed ``Rewrite`` still removes them); the
    remapped indices' folders are appended to ``index_folders`` (for the caller to remove
    once a failure emptied them)."""
    remapped = indices_to_remap(store, base, [f for old, _ in pairs for f in old])
    if files is None and remapped:
        folders: list[str] = []
        try:
            with UncommittedFiles(store) as own:
                return commit_rewrite(store, base, pairs, own, index_folders=folders)
        except BaseException:
            remove_empty_folders(store, folders)
            raise
    total = sum(len(new) for _, new in pairs)
    reserved = commit(store, base, ReserveFragments(num_fragments=total))
    assert reserved.max_fragment_id is not None
    next_id = reserved.max_fragment_id + 1 - total
    groups = []
    for old, new in pairs:
        ids = range(next_id, next_id + len(new))
        next_id += len(new)
        numbered = tuple(replace(f, id=i) for f, i in zip(new, ids, strict=True))
        groups.append(RewriteGroup(old_fragments=tuple(old), new_fragments=numbered))
    rewritten = (
        remap_indices(store, remapped, groups, files, index_folders) if files is not None else ()
    )
    op = Rewrite(groups=tuple(groups), rewritten_indices=rewritten)
    manifest = commit(store, base, op, files=files)
    return manifest, tuple(groups)


def compaction_metrics(groups: Sequence[RewriteGroup]) -> CompactionMetrics:
    """What committing ``groups`` did (pylance's ``CompactionMetrics``)."""
    return _metrics(groups)


def compact_files(
    snap: Snapshot, options: CompactionOptions, *, progress: bool = False
) -> tuple[Manifest, CompactionMetrics]:
    """Plan, rewrite and commit (see the module doc); the new manifest (``snap``'s own when
    there is nothing to compact) and what was done. ``progress``: a bar of the rows
    rewritten on stderr."""
    store, base = snap.store, snap.manifest
    check_compactable(base)
    flags.check_writable(base, snap.uri)
    tasks = plan_compaction(store, base, options)
    if not tasks:
        return base, CompactionMetrics()
    indices_to_remap(store, base, [f for t in tasks for f in t.fragments])  # refused early
    workers = min(options.num_threads or os.cpu_count() or 1, len(tasks))

    bar = Progress(progress, total=sum(t.num_rows for t in tasks), desc="compacting")
    folders: list[str] = []
    try:
        with UncommittedFiles(store) as files:
            written = files.data_names

            def run(task: CompactionTask) -> tuple[Fragment, ...]:
                return _rewrite(
                    store, base, snap.semantic_types, task, options, written.append, bar
                )

            if workers > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    results = list(pool.map(run, tasks))
            else:
                results = [run(t) for t in tasks]
            pairs = [(t.fragments, new) for t, new in zip(tasks, results, strict=True)]
            manifest, groups = commit_rewrite(store, base, pairs, files, index_folders=folders)
    except BaseException:
        remove_empty_folders(store, folders)  # emptied by UncommittedFiles
        raise
    finally:
        bar.close()
    return manifest, _metrics(groups)


#: pylance 14 options lance-semantic does not implement, with the values that mean "off"
_PYLANCE_ONLY: dict[str, tuple[object, ...]] = {
    "max_bytes_per_file": (None,),
    "defer_index_remap": (None, False),
    "compaction_mode": (None, "reencode"),
    "binary_copy_read_batch_bytes": (None,),
    "max_source_fragments": (None,),
    "max_source_rows": (None,),
    "max_source_bytes": (None,),
    "excluded_fragment_ids": (None, [], ()),
    "data_storage_version": (None,),
}


def _check_pylance_options(options: Mapping[str, object]) -> None:
    for name, value in options.items():
        if name not in _PYLANCE_ONLY:
            raise TypeError(f"compact_files() got an unexpected keyword argument {name!r}")
        if value not in _PYLANCE_ONLY[name]:
            raise NotSupportedYetError(f"compact_files({name}={value!r})")


class DatasetOptimizer:
    """``ds.optimize``: maintenance that rewrites data files without changing rows.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> type(ds.optimize).__name__
    'DatasetOptimizer'
    """

    def __init__(self, ds: TableHandle) -> None:
        self._ds = ds

    def compact_files(
        self,
        *,
        target_rows_per_fragment: int | None = None,
        max_rows_per_group: int | None = None,
        materialize_deletions: bool | None = None,
        materialize_deletions_threshold: float | None = None,
        num_threads: int | None = None,
        batch_size: int | None = None,
        progress: bool = False,
        **pylance_options: object,
    ) -> CompactionMetrics:
        """Merge small adjacent fragments and materialize deletions, like pylance 14.

        Parameters
        ----------
        target_rows_per_fragment
            Fragments with fewer physical rows are merged with small neighbours; new
            fragments hold about this many rows. Default ``1024 * 1024``.
        max_rows_per_group
            Accepted for pylance compatibility; only legacy (0.1) files have row groups.
            Default 1024.
        materialize_deletions, materialize_deletions_threshold
            Rewrite a fragment whose deleted fraction exceeds the threshold (default
            ``True`` and ``0.1``; a threshold of 1.0 or more never materializes).
        num_threads
            How many tasks are rewritten in parallel (default: the number of CPUs).
        batch_size
            Rows per read batch (default 8192).
        progress
            Show a progress bar of the rows rewritten on stderr (``tqdm``; not in pylance).

        Defaults not given here come from the table config ``lance.compaction.<name>``.
        No version is committed when there is nothing to compact. pylance's other options
        (``max_bytes_per_file``, ``compaction_mode``, ``defer_index_remap``, …) are refused
        unless they are ``None`` or their default.

        Returns
        -------
        CompactionMetrics

        Raises
        ------
        NotSupportedYetError
            Tables with stable row ids or legacy (0.1) files; fragments covered by an
            index other than IVF_FLAT / IVF_PQ / IVF_SQ (those are remapped, as pylance
            remaps them).
        CommitConflictError
            A concurrent writer changed one of the rewritten fragments.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=1)
        >>> _ = ds.delete("id = 2")
        >>> ds.optimize.compact_files().fragments_removed, len(ds.get_fragments())
        (2, 1)
        >>> ds.version  # ReserveFragments, then Rewrite: two commits, as pylance makes
        4
        >>> ds.to_table().to_pydict()
        {'id': [1, 3]}
        >>> ds.optimize.compact_files().fragments_removed, ds.version  # nothing to do
        (0, 4)
        """
        _check_pylance_options(pylance_options)
        args.check_bool("progress", progress)
        options = CompactionOptions.resolve(
            self._ds._snapshot().manifest.config,
            target_rows_per_fragment=target_rows_per_fragment,
            max_rows_per_group=max_rows_per_group,
            materialize_deletions=materialize_deletions,
            materialize_deletions_threshold=materialize_deletions_threshold,
            num_threads=num_threads,
            batch_size=batch_size,
        )
        return self._ds._apply(lambda snap: compact_files(snap, options, progress=progress))
