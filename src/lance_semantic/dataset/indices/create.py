"""``Dataset.create_index`` for IVF_FLAT, IVF_PQ and IVF_SQ, in pylance 14's formats
(layer L5; docs/format/index-formats.md).

The build reads the vector column twice, batch by batch: once for a random training sample
(``num_partitions * sample_rate`` rows for the centroids, ``2**num_bits * sample_rate`` for
the PQ codebook or the SQ bounds; with a table that small, the sample is every row and the
second read is skipped), once to assign every row to its partition and encode it
(vector/ivf_write.py). The files go to ``_indices/<uuid>/`` and one ``CreateIndex``
transaction commits the index entry (``/lance.index.pb.VectorIndexDetails``, name
``<column>_idx``, the fragments read, the files with their sizes); on any error nothing is
committed and the files written are removed.

Vectors of float16, float32 or float64: as pylance 14, the index keeps the column's type
for the centroids, the PQ codebook and IVF_FLAT's vectors (training runs in float32).

As pylance 14: null vectors are not indexed (nor, with ``filter_nan``, vectors holding a
NaN); ``num_partitions`` above what the rows allow is lowered with a warning (IVF_PQ: one
partition per 256 rows; others: one per row); without ``num_partitions``, IVF_FLAT takes one
per 4096 rows and IVF_SQ one per 8192 (IVF_PQ requires it).
"""

from __future__ import annotations

import logging
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...commit import commit
from ...errors import ColumnNotFoundError, NotSupportedYetError
from ...manifest import (
    CreateIndex,
    Fragment,
    IndexEntry,
    IndexFile,
    Manifest,
    encode_index_entry,
    entry_uuid,
    index_entries,
)
from ...manifest._pb.lance_table_pb2 import IndexSection
from ...read import ScanRequest, plan_scan, run_scan
from ...storage import UncommittedFiles
from ...vector import (
    IVF_INDEX_TYPES,
    IvfBuilder,
    IvfIndexType,
    IvfParams,
    Metric,
    canonical_metric,
    vector_index_details,
)
from ..core import Snapshot

__all__ = ["create_index", "ENGINE_ONLY_OPTIONS"]

_log = logging.getLogger("lance_semantic")

VECTOR_DETAILS_TYPE_URL = "/lance.index.pb.VectorIndexDetails"
_SUPPORTED_BY_PYLANCE = (
    "IVF_FLAT",
    "IVF_PQ",
    "IVF_SQ",
    "IVF_HNSW_FLAT",
    "IVF_HNSW_PQ",
    "IVF_HNSW_SQ",
    "IVF_RQ",
)
#: options that only pylance's engine has (refused by name when set)
ENGINE_ONLY_OPTIONS = (
    "accelerator",
    "shuffle_partition_batches",
    "shuffle_partition_concurrency",
    "ivf_centroids_file",
    "precomputed_partition_dataset",
    "streaming_sample_rate",
    "streaming_coreset_rate",
    "streaming_refine_passes",
)
_KNOWN_KWARGS = {"num_bits", "max_iters", "sample_rate"}
_TARGET_PARTITION_SIZE = {"IVF_FLAT": 4096, "IVF_SQ": 8192}
_BATCH = 8192
F32 = npt.NDArray[np.float32]
#: vectors as the column holds them (float16, float32 or float64)
Vectors = npt.NDArray[np.floating[Any]]


def _index_type(index_type: object) -> IvfIndexType:
    if not isinstance(index_type, str):
        raise TypeError(f"index_type must be a str, got {type(index_type).__name__}")
    upper = index_type.upper()
    if upper in IVF_INDEX_TYPES:
        return cast(IvfIndexType, upper)
    if upper in _SUPPORTED_BY_PYLANCE:
        raise NotSupportedYetError(
            f"create_index: index_type {upper} (only IVF_FLAT, IVF_PQ, IVF_SQ)"
        )
    if upper in {"BTREE", "BITMAP", "LABEL_LIST", "INVERTED", "FTS", "NGRAM", "ZONEMAP"}:
        # pylance 14 refuses them here too, as a column that is not a vector column
        raise TypeError(
            f"create_index: {upper} is a scalar index type: build it with "
            "create_scalar_index (create_index builds vector indices)"
        )
    raise NotImplementedError(
        f"Only {list(_SUPPORTED_BY_PYLANCE)} index types supported. Got {index_type}"
    )


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)


def _refuse_engine_options(
    options: dict[str, Any], kwargs: dict[str, Any], *, uncommitted: bool = False
) -> None:
    named = [k for k in ENGINE_ONLY_OPTIONS if options.get(k) is not None]
    unknown = sorted(set(kwargs) - _KNOWN_KWARGS)
    if named or unknown:
        raise NotSupportedYetError(
            f"create_index: {', '.join(named + unknown)} (options of pylance's own engine)"
        )
    for k, v in (
        ("train", options["train"] is False),
        ("fragment_ids", options["fragment_ids"] is not None and not uncommitted),
        ("skip_transpose", options["skip_transpose"] is True),
        ("progress_callback", options["progress_callback"] is not None),
    ):
        if v:
            raise NotSupportedYetError(f"create_index: {k}={options[k]!r}")


def _vector_column(snap: Snapshot, column: object) -> tuple[str, int, int, np.dtype[Any]]:
    """The column's name, field id, dimension and value type (fixed-size lists of float16,
    float32 or float64)."""
    if isinstance(column, (list, tuple)):
        if len(column) != 1:
            raise NotSupportedYetError("create_index: a vector index over several columns")
        column = column[0]
    if not isinstance(column, str):
        raise TypeError(f"column must be a str, got {type(column).__name__}")
    schema = snap.schema
    if column not in schema.names:
        raise ColumnNotFoundError(column, tuple(schema.names))
    dtype = schema.field(column).type
    if not pa.types.is_fixed_size_list(dtype) or not (
        pa.types.is_floating(dtype.value_type) or pa.types.is_integer(dtype.value_type)
    ):
        raise TypeError(
            f"Vector column {column} must be FixedSizeListArray 1-dimensional "
            f"FixedShapeTensorArray, got {dtype}"
        )
    if dtype.value_type not in (pa.float16(), pa.float32(), pa.float64()):
        raise NotSupportedYetError(
            f"create_index: vectors of {dtype.value_type} (column {column}; float16, float32 "
            "or float64 only)"
        )
    field_id = next(f.id for f in snap.semantic_schema if f.path == column)
    return column, field_id, int(dtype.list_size), np.dtype(dtype.value_type.to_pandas_dtype())


def _batches(
    snap: Snapshot, column: str, fragments: Sequence[Fragment] | None = None
) -> Callable[[], Iterator[tuple[npt.NDArray[np.uint64], Vectors, npt.NDArray[np.bool_]]]]:
    """A fresh stream of (row addresses, vectors, valid) per batch of the column (of
    ``fragments``; default: every fragment)."""
    chosen = snap.manifest.fragments if fragments is None else fragments
    request = ScanRequest(columns=[column], with_row_address=True, batch_size=_BATCH)
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)

    def stream() -> Iterator[tuple[npt.NDArray[np.uint64], Vectors, npt.NDArray[np.bool_]]]:
        for batch in run_scan(snap.store, snap.semantic_schema, chosen, plan, request):
            arr = batch.column(column)
            if isinstance(arr, pa.ChunkedArray):  # pragma: no cover - batches hold arrays
                arr = arr.combine_chunks()
            d = arr.type.list_size
            values = arr.values.slice(arr.offset * d, len(arr) * d)
            x = values.to_numpy(zero_copy_only=False).reshape(len(arr), d)
            valid = arr.is_valid().to_numpy(zero_copy_only=False)
            addresses = batch.column("_rowaddr").to_numpy()
            yield addresses, x, valid

    return stream


def _usable(x: Vectors, valid: npt.NDArray[np.bool_], filter_nan: bool) -> npt.NDArray[np.bool_]:
    keep = valid.copy()
    if filter_nan:
        keep &= ~np.isnan(x).any(axis=1)
    return keep


def create_index(
    snap: Snapshot,
    column: str | list[str],
    index_type: str,
    name: str | None = None,
    metric: str = "L2",
    replace: bool = False,
    num_partitions: int | None = None,
    ivf_centroids: Any = None,
    pq_codebook: Any = None,
    num_sub_vectors: int | None = None,
    *,
    filter_nan: bool = True,
    index_uuid: str | None = None,
    target_partition_size: int | None = None,
    options: dict[str, Any],
    kwargs: dict[str, Any],
    uncommitted: bool = False,
) -> tuple[Manifest, IndexEntry | None]:
    """Build and commit the index; the new manifest. See ``Dataset.create_index``.

    With ``uncommitted`` (``create_index_uncommitted``): build a segment over the fragments
    ``options["fragment_ids"]`` and return it with the snapshot's manifest, uncommitted."""
    if uncommitted and options["fragment_ids"] is None:
        raise ValueError(
            "create_index_uncommitted requires fragment_ids for distributed index build"
        )
    kind = _index_type(index_type)
    _refuse_engine_options(options, kwargs, uncommitted=uncommitted)
    fragments = _chosen_fragments(snap, options["fragment_ids"])
    metric_name: Metric = canonical_metric(metric)
    if metric_name == "hamming":
        raise NotSupportedYetError("create_index: metric hamming")
    column_name, field_id, dim, value_dtype = _vector_column(snap, column)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    index_name = name or f"{column_name}_idx"
    num_bits = _positive("num_bits", kwargs.get("num_bits", 8))
    max_iters = _positive("max_iters", kwargs.get("max_iters", 50))
    sample_rate = _positive("sample_rate", kwargs.get("sample_rate", 256))
    if kind == "IVF_PQ":
        if num_partitions is None or num_sub_vectors is None:
            raise ValueError("num_partitions and num_sub_vectors are required for IVF_PQ")
        m = _positive("num_sub_vectors", num_sub_vectors)
        if dim % m:
            raise ValueError(f"dimension ({dim}) must be divisible by num_sub_vectors ({m})")
        if num_bits == 4:
            raise NotSupportedYetError("create_index: num_bits=4 (4-bit PQ codes)")
        if num_bits != 8:
            raise RuntimeError(f"ProductQuantization: num_bits {num_bits} not supported")
    elif kind == "IVF_SQ" and num_bits != 8:
        raise NotSupportedYetError(f"create_index: IVF_SQ with num_bits={num_bits}")
    if num_partitions is not None:
        num_partitions = _positive("num_partitions", num_partitions)
    if target_partition_size is not None:
        target_partition_size = _positive("target_partition_size", target_partition_size)
    if index_uuid is not None:
        index_uuid = str(uuidlib.UUID(str(index_uuid)))
    existing = [e for e in index_entries(snap.manifest.index_section) if e.name == index_name]
    if existing and not replace:
        raise RuntimeError(
            f"Index name '{index_name}' already exists, please specify a different name or "
            "use replace=True"
        )
    centroids = None if ivf_centroids is None else _matrix("ivf_centroids", ivf_centroids, dim)
    if centroids is not None:
        if num_partitions is not None and num_partitions != len(centroids):
            raise ValueError(
                f"ivf_centroids: {len(centroids)} centroids for num_partitions={num_partitions}"
            )
        num_partitions = len(centroids)
    codebook = None
    if pq_codebook is not None:
        if kind != "IVF_PQ":
            raise ValueError(f"pq_codebook: not used by {kind}")
        codebook = np.asarray(pq_codebook, dtype=np.float32)
        if codebook.size != (1 << num_bits) * dim:
            raise ValueError(
                f"pq_codebook: {codebook.size} values, expected {(1 << num_bits) * dim} "
                f"(num_sub_vectors x 2**num_bits x dimension / num_sub_vectors)"
            )

    stream = _batches(snap, column_name, fragments)
    total = sum(f.num_rows for f in fragments)
    rng = np.random.default_rng()
    requested = num_partitions or 1
    params = IvfParams(
        kind, metric_name, requested, num_sub_vectors, num_bits, max_iters, sample_rate
    )
    want = params.sample_size()
    chosen = np.sort(rng.choice(total, size=min(total, want), replace=False)) if total else None
    sample_x: list[Vectors] = []
    kept: list[tuple[npt.NDArray[np.uint64], Vectors]] = []
    whole = total <= want
    seen = 0
    usable_rows = 0
    for addresses, x, valid in stream():
        keep = _usable(x, valid, filter_nan)
        usable_rows += int(keep.sum())
        if whole:
            kept.append((addresses[keep], x[keep]))
            sample_x.append(x[keep])
        elif chosen is not None:
            lo, hi = np.searchsorted(chosen, [seen, seen + len(x)])
            picked = chosen[lo:hi] - seen
            picked = picked[keep[picked]]
            sample_x.append(x[picked])
        seen += len(x)
    sample = np.concatenate(sample_x) if sample_x else np.empty((0, dim), value_dtype)
    rows = usable_rows  # the vectors pass 1 saw (nulls and NaNs left out)
    num_partitions = _partitions(kind, num_partitions, rows, target_partition_size, column_name)
    if len(sample) < num_partitions:
        raise ValueError(
            f"create_index: {len(sample)} vectors to train {num_partitions} partitions on "
            f"(column {column_name})"
        )
    rng.shuffle(sample)
    params = IvfParams(
        kind, metric_name, num_partitions, num_sub_vectors, num_bits, max_iters, sample_rate
    )
    builder = IvfBuilder(params, dim, dtype=value_dtype)
    builder.train(sample, ivf_centroids=centroids, pq_codebook=codebook)
    del sample, sample_x
    builder.reserve(rows)
    if whole:
        for addresses, x in kept:
            builder.add(addresses, x)
    else:
        for addresses, x, valid in stream():
            keep = _usable(x, valid, filter_nan)
            builder.add(addresses[keep], x[keep])
    uuid = index_uuid or str(uuidlib.uuid4())
    folder = f"_indices/{uuid}"
    try:
        with UncommittedFiles(snap.store) as files:
            files.add(f"{folder}/auxiliary.idx")
            files.add(f"{folder}/index.idx")
            written = builder.write(snap.store, folder)
            entry = IndexEntry(
                uuid=uuid,
                name=index_name,
                fields=(field_id,),
                dataset_version=snap.version,
                fragment_ids=tuple(sorted(f.id for f in fragments)),
                type_url=VECTOR_DETAILS_TYPE_URL,
                details=vector_index_details(params),
                index_version=1,
                created_at_ms=int(time.time() * 1000),
                base_id=None,
                files=tuple(IndexFile(f.path, f.size_bytes) for f in written),
            )
            if uncommitted:
                return snap.manifest, entry
            op = CreateIndex(
                new_indices=(encode_index_entry(entry),),
                removed_indices=tuple(_raw_entries(snap, {e.uuid for e in existing})),
            )
            manifest = commit(snap.store, snap.manifest, op, files=files)
    except BaseException:
        snap.store.remove_empty_dir(folder)  # its files are gone (UncommittedFiles)
        raise
    return manifest, None


def _chosen_fragments(snap: Snapshot, fragment_ids: object) -> Sequence[Fragment]:
    """The fragments ``fragment_ids`` names (None: all), in table order; pylance's
    ValueError for an id the version does not have."""
    if fragment_ids is None:
        return snap.manifest.fragments
    if isinstance(fragment_ids, (str, bytes)) or not isinstance(fragment_ids, (list, tuple)):
        raise TypeError(f"fragment_ids must be a list of ints, got {type(fragment_ids).__name__}")
    wanted = []
    for i in fragment_ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"fragment_ids must hold ints, got {type(i).__name__}")
        wanted.append(int(i))
    known = {f.id for f in snap.manifest.fragments}
    for i in wanted:
        if i not in known:
            raise ValueError(
                f"Invalid user input: Unknown fragment id {i} in fragment filter; not part of "
                "the current dataset version"
            )
    return [f for f in snap.manifest.fragments if f.id in set(wanted)]


def _raw_entries(snap: Snapshot, uuids: set[str]) -> Sequence[bytes]:
    """The serialized entries of ``uuids`` in the snapshot's index section."""
    if not snap.manifest.index_section or not uuids:
        return []
    raw = IndexSection.FromString(snap.manifest.index_section).indices
    return [r for r in raw if entry_uuid(r) in uuids]


def _matrix(name: str, value: Any, dim: int) -> F32:
    if isinstance(value, (pa.FixedSizeListArray, pa.ChunkedArray)):
        value = np.stack(value.to_numpy(zero_copy_only=False))
    arr = np.asarray(value, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != dim or len(arr) == 0:
        raise ValueError(f"{name}: expected a [num_partitions, {dim}] array, got {arr.shape}")
    return np.ascontiguousarray(arr)


def _partitions(
    kind: IvfIndexType, requested: int | None, rows: int, target: int | None, column: str
) -> int:
    if requested is None:
        size = target or _TARGET_PARTITION_SIZE[kind]
        return max(1, rows // size)
    most = rows // 256 if kind == "IVF_PQ" else rows
    if requested > most:
        _log.warning(
            "lance-semantic: create_index: training %d of the %d requested IVF partitions; "
            "column '%s' holds %d vectors",
            max(1, most),
            requested,
            column,
            rows,
        )
        return max(1, most)
    return requested
