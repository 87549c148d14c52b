"""``ds.optimize.optimize_indices``: bring IVF indices over the rows added since they were
built, as pylance 14 does (layer L5).

For each index (all, or ``index_names``) whose segments leave fragments unindexed, one new
segment is written with the newest segment's model (its centroids, PQ codebook or SQ bounds;
nothing is retrained) over:

- ``num_indices_to_merge=0`` (our default, see below): the unindexed fragments only, a
  *delta* segment beside the existing ones (``dataset_version`` = the version read);
- ``num_indices_to_merge=N``: the unindexed fragments plus those of the newest N segments,
  which the new segment replaces (``dataset_version`` = the oldest merged segment's).

All new segments are committed in one ``CreateIndex`` transaction (the replaced segments in
``removed_indices``), as pylance commits them; nothing is committed when every index is up
to date. Measured on pylance 14.0.2 (docs/guides/vector-search.md): with
``num_indices_to_merge`` unset pylance writes a delta while the partitions are large
(IVF_FLAT above ~1,024 rows a partition, IVF_PQ / IVF_SQ above ~2,048) and otherwise merges
every segment and *joins* partitions (fewer partitions, new centroids); here unset means 0.
``retrain=True`` builds each chosen index again over every row, with pylance's partition
count (``rows // 4096`` for IVF_FLAT, ``rows // 8192`` for IVF_PQ / IVF_SQ), replacing all
its segments. A BTREE / BITMAP / LABEL_LIST index with unindexed fragments is built again
over every fragment, one segment under a new uuid replacing all of its segments (pylance 14
merges the new rows into it: the same result, measured).
"""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...commit import commit
from ...errors import NotSupportedYetError
from ...manifest import (
    CreateIndex,
    Fragment,
    IndexEntry,
    IndexFile,
    Manifest,
    encode_index_entry,
    index_entries,
)
from ...read import ScanRequest, plan_scan, run_scan
from ...storage import UncommittedFiles
from ...vector import INDEX_DIR, IvfBuilder, IvfIndex, IvfParams, open_ivf_index
from ..core import Snapshot
from .create import ENGINE_ONLY_OPTIONS, create_index
from .create_scalar import build_scalar_index, scalar_kind
from .describe import _vector_details
from .drop import raw_entries

__all__ = ["optimize_indices", "OPTIMIZE_OPTIONS"]

#: the options of pylance 14's ``optimize_indices`` (it ignores any other keyword)
OPTIMIZE_OPTIONS = ("num_indices_to_merge", "index_names", "retrain")
_BATCH = 8192
F32 = npt.NDArray[np.float32]


def _options(kwargs: Mapping[str, Any]) -> tuple[int, list[str] | None, bool]:
    unknown = sorted(set(kwargs) - set(OPTIMIZE_OPTIONS))
    if unknown:
        raise TypeError(
            f"optimize_indices: unknown option {', '.join(map(repr, unknown))} (pylance 14 "
            f"ignores it silently; the options are {', '.join(OPTIMIZE_OPTIONS)})"
        )
    merge = kwargs.get("num_indices_to_merge")
    if merge is None:
        merge = 0
    elif isinstance(merge, bool) or not isinstance(merge, (int, np.integer)):
        raise TypeError(
            f"num_indices_to_merge: '{type(merge).__name__}' object cannot be interpreted as "
            "an integer"
        )
    elif merge < 0:
        raise OverflowError("num_indices_to_merge: can't convert negative int to unsigned")
    names = kwargs.get("index_names")
    if names is not None:
        if isinstance(names, (str, bytes)) or not isinstance(names, (list, tuple)):
            raise ValueError(
                f"index_names must be a list of str, got {type(names).__name__} "
                '(pylance: "TypeError: Can\'t extract `str` to `Vec`")'
            )
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"index_names must hold str, got {type(n).__name__}")
        names = list(names)
    retrain = kwargs.get("retrain", False)
    if not isinstance(retrain, (bool, np.bool_)):
        raise TypeError(f"retrain: '{type(retrain).__name__}' object is not an instance of 'bool'")
    return int(merge), names, bool(retrain)


def _vectors(
    snap: Snapshot, column: str, fragments: Sequence[Fragment]
) -> Iterator[tuple[npt.NDArray[np.uint64], F32]]:
    """(row addresses, vectors) of the rows of ``fragments`` that have a vector (no null,
    no NaN), batch by batch."""
    request = ScanRequest(columns=[column], with_row_address=True, batch_size=_BATCH)
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    for batch in run_scan(snap.store, snap.semantic_schema, fragments, plan, request):
        arr = batch.column(column)
        if isinstance(arr, pa.ChunkedArray):  # pragma: no cover - batches hold arrays
            arr = arr.combine_chunks()
        d = arr.type.list_size
        values = arr.values.slice(arr.offset * d, len(arr) * d)
        x = values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        x = x.reshape(len(arr), d)
        keep = arr.is_valid().to_numpy(zero_copy_only=False) & ~np.isnan(x).any(axis=1)
        yield batch.column("_rowaddr").to_numpy()[keep], x[keep]


def _column(manifest: Manifest, entry: IndexEntry) -> str:
    """The path of the vector column an index covers."""
    return {f.id: f.path for f in manifest.schema}[entry.fields[0]]


def _segment(
    snap: Snapshot,
    files: UncommittedFiles,
    model: IvfIndex,
    newest: IndexEntry,
    fragments: Sequence[Fragment],
    fresh: set[int],
    dataset_version: int,
) -> IndexEntry:
    """Write one segment over ``fragments`` with ``model``'s centroids and codes; its loss
    is that of the rows of the ``fresh`` (unindexed) fragments."""
    column = _column(snap.manifest, newest)
    field_type = snap.schema.field(column).type
    if not pa.types.is_fixed_size_list(field_type) or field_type.value_type != pa.float32():
        raise NotSupportedYetError(
            f"optimize_indices: index {newest.name!r} over vectors of {field_type} (float32 only)"
        )
    params = IvfParams(
        model.kind,
        model.metric,
        model.num_partitions,
        model.num_sub_vectors or None,
        8,
    )
    builder = IvfBuilder(params, model.dimension)
    builder.centroids = model.centroids
    builder.pq_codebook = model.codebook
    builder.sq_bounds = model.sq_bounds
    loss = 0.0
    fresh_ids = np.array(sorted(fresh), dtype=np.uint64)
    for addresses, x in _vectors(snap, column, fragments):
        if not len(x):
            continue
        # the loss over the rows not indexed before, as pylance's (train with the given
        # centroids and codebook only assigns); the SQ bounds stay the model's
        new_rows = x[np.isin(addresses >> np.uint64(32), fresh_ids)]
        if len(new_rows):
            builder.train(new_rows, ivf_centroids=model.centroids, pq_codebook=model.codebook)
            loss += builder.loss
            builder.sq_bounds = model.sq_bounds
        builder.add(addresses, x)
    builder.loss = loss
    uuid = str(uuidlib.uuid4())
    folder = f"{INDEX_DIR}/{uuid}"
    files.add(f"{folder}/auxiliary.idx")
    files.add(f"{folder}/index.idx")
    written = builder.write(snap.store, folder)
    return IndexEntry(
        uuid=uuid,
        name=newest.name,
        fields=newest.fields,
        dataset_version=dataset_version,
        fragment_ids=tuple(sorted(f.id for f in fragments)),
        type_url=newest.type_url,
        details=newest.details,
        index_version=newest.index_version,
        created_at_ms=int(time.time() * 1000),
        base_id=None,
        files=tuple(IndexFile(f.path, f.size_bytes) for f in written),
    )


def _plan(
    manifest: Manifest, names: list[str] | None, merge: int
) -> list[tuple[list[IndexEntry], list[IndexEntry], list[Fragment], set[int]]]:
    """Per index to update: its segments, the segments merged, the fragments to encode and
    which of them no segment covered."""
    groups: dict[str, list[IndexEntry]] = {}
    for e in index_entries(manifest.index_section):
        groups.setdefault(e.name, []).append(e)
    out: list[tuple[list[IndexEntry], list[IndexEntry], list[Fragment], set[int]]] = []
    for name, segments in sorted(groups.items()):
        if names is not None and name not in names:
            continue
        covered = set().union(*(set(s.fragment_ids) for s in segments))
        unindexed = [f for f in manifest.fragments if f.id not in covered]
        merged = segments[-merge:] if merge else []
        if not unindexed and len(merged) < 2:
            continue  # up to date
        if scalar_kind(segments[0]) is not None:
            out.append((segments, segments, list(manifest.fragments), set()))
            continue
        if not segments[0].type_url.endswith("VectorIndexDetails"):
            raise NotSupportedYetError(
                f"optimize_indices: index {name!r} of type {segments[0].index_type} (scalar "
                "indices are not updated here; name the vector indices in index_names)"
            )
        again = set().union(*(set(s.fragment_ids) for s in merged)) if merged else set()
        chosen = [f for f in manifest.fragments if f.id in again or f.id not in covered]
        out.append((segments, merged, chosen, {f.id for f in unindexed}))
    return out


def optimize_indices(snap: Snapshot, kwargs: Mapping[str, Any]) -> tuple[Manifest, None]:
    """Write and commit the new segments; the new manifest (the snapshot's when every
    index is up to date)."""
    merge, names, retrain = _options(kwargs)
    if retrain:
        return _retrain(snap, names)
    plans = _plan(snap.manifest, names, merge)
    if not plans:
        return snap.manifest, None
    models: list[IvfIndex | None] = []
    for segments, *_ in plans:
        if scalar_kind(segments[-1]) is not None:
            models.append(None)
            continue
        model = open_ivf_index(snap.store, segments[-1])
        if model is None:
            raise NotSupportedYetError(
                f"optimize_indices: index {segments[-1].name!r} of type "
                f"{segments[-1].index_type} (IVF_FLAT, IVF_PQ, IVF_SQ are updated here)"
            )
        models.append(model)
    new: list[IndexEntry] = []
    removed: set[str] = set()
    folders = []
    try:
        with UncommittedFiles(snap.store) as files:
            for (segments, merged, chosen, fresh), model in zip(plans, models, strict=True):
                if model is None:  # a scalar index: built again over every fragment
                    entry = _scalar_again(snap, files, segments[-1])
                    folders.append(f"{INDEX_DIR}/{entry.uuid}")
                    new.append(entry)
                    removed |= {s.uuid for s in segments}
                    continue
                version = min(s.dataset_version for s in merged) if merged else snap.version
                entry = _segment(snap, files, model, segments[-1], chosen, fresh, version)
                folders.append(f"{INDEX_DIR}/{entry.uuid}")
                new.append(entry)
                removed |= {s.uuid for s in merged}
            op = CreateIndex(
                new_indices=tuple(encode_index_entry(e) for e in new),
                removed_indices=tuple(raw_entries(snap.manifest, removed)),
            )
            manifest = commit(snap.store, snap.manifest, op, files=files)
    except BaseException:
        for folder in folders:
            snap.store.remove_empty_dir(folder)
        raise
    return manifest, None


def _scalar_again(snap: Snapshot, files: UncommittedFiles, last: IndexEntry) -> IndexEntry:
    """A BTREE / BITMAP / LABEL_LIST index built again over every fragment (what pylance
    14's optimize gives: one segment over all fragments, under a new uuid)."""
    kind = scalar_kind(last)
    assert kind is not None
    path = _column(snap.manifest, last)
    entry = build_scalar_index(snap, files, kind, path, last.name, str(uuidlib.uuid4()))
    return entry


# ---- retrain ----------------------------------------------------------------------------------

#: rows a partition of a retrained index is given (pylance 14's default target sizes)
_RETRAIN_TARGET = {"IVF_FLAT": 4096, "IVF_PQ": 8192, "IVF_SQ": 8192}


def _hints(details: bytes) -> dict[str, str]:
    return dict(_vector_details(details).get("runtime_hints", {}))


def _retrain(snap: Snapshot, names: list[str] | None) -> tuple[Manifest, None]:
    """``retrain=True``: every chosen vector index built again over all the table's rows
    (new centroids, ``rows // target`` partitions: 4,096 rows a partition for IVF_FLAT,
    8,192 for IVF_PQ / IVF_SQ, as pylance 14 chooses), replacing all its segments; one
    ``CreateIndex`` commit."""
    groups: dict[str, list[IndexEntry]] = {}
    for e in index_entries(snap.manifest.index_section):
        if names is None or e.name in names:
            groups.setdefault(e.name, []).append(e)
    if not groups:
        return snap.manifest, None
    built: list[IndexEntry] = []
    removed: set[str] = set()
    all_ids = [f.id for f in snap.manifest.fragments]
    try:
        for name, segments in sorted(groups.items()):
            model = open_ivf_index(snap.store, segments[-1])
            if model is None:
                raise NotSupportedYetError(
                    f"optimize_indices: retrain of index {name!r} of type "
                    f"{segments[-1].index_type} (IVF_FLAT, IVF_PQ, IVF_SQ are retrained here)"
                )
            hints = _hints(segments[-1].details)
            rows = snap.manifest.num_rows
            options: dict[str, Any] = {k: None for k in ENGINE_ONLY_OPTIONS}
            options.update(
                train=True, fragment_ids=all_ids, skip_transpose=False, progress_callback=None
            )
            _, entry = create_index(
                snap,
                _column(snap.manifest, segments[-1]),
                model.kind,
                name,
                model.metric,
                True,
                max(1, rows // _RETRAIN_TARGET[model.kind]),
                None,
                None,
                model.num_sub_vectors or None,
                options=options,
                kwargs={
                    "max_iters": int(hints.get("lance.ivf.max_iters", 50)),
                    "sample_rate": int(hints.get("lance.ivf.sample_rate", 256)),
                },
                uncommitted=True,
            )
            assert entry is not None
            built.append(entry)
            removed |= {s.uuid for s in segments}
        op = CreateIndex(
            new_indices=tuple(encode_index_entry(e) for e in built),
            removed_indices=tuple(raw_entries(snap.manifest, removed)),
        )
        manifest = commit(snap.store, snap.manifest, op)
    except BaseException:
        for entry in built:  # the segments built for a commit that did not happen
            folder = f"{INDEX_DIR}/{entry.uuid}"
            for f in entry.files:
                snap.store.delete(f"{folder}/{f.path}")
            snap.store.remove_empty_dir(folder)
        raise
    return manifest, None
