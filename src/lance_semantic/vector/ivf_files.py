"""Open pylance's IVF vector indices from their manifest entry and files (layer L3).

An IVF_FLAT / IVF_PQ / IVF_SQ index of pylance 14 is two ordinary Lance files under
``_indices/<uuid>/`` (docs/format/index-formats.md, "Files"):

- ``index.idx``: no rows; schema metadata ``lance:index`` = ``{"type", "distance_type"}`` and
  ``lance:flat`` (a FLAT sub-index per partition); global buffer 1 is an ``IVF`` message
  holding the centroids ``[P, d]``.
- ``auxiliary.idx``: the rows grouped by partition, ``_rowid`` (the row address) plus the
  stored vector (``flat``: the raw vector, normalized for cosine), its PQ code
  (``__pq_code``, each partition's codes transposed: all codes of sub-vector 0, then 1, ...)
  or its SQ code (``__sq_code``); global buffer 1 is an ``IVF`` message with each partition's
  ``offsets`` / ``lengths`` in rows, buffer 2 (PQ) the codebook tensor laid out
  ``[m][256][d/m]``; ``storage_metadata`` holds the PQ / SQ parameters as JSON.

:func:`open_ivf_index` reads the small parts (centroids, partition table, codebook, bounds)
at once and the partitions on demand through a bounded :class:`PartitionCache`: a
``read_range`` of one partition's rows, or one ``take_rows`` of the rows of the partitions a
search probes first that are not in the cache (:meth:`IvfIndex.partitions`). An index whose
type, version or layout this module does not know opens as ``None``: it is listed, not used
(the caller searches flat, as pylance does for a type it does not know).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from lance.file import LanceFileReader

from ..errors import CorruptTableError
from ..manifest import IndexEntry
from ..manifest._wire import message_fields
from ..storage import ObjectStore, first_line, is_read_error, open_reader
from .ivf_proto import decode_ivf, decode_tensor
from .metrics import Metric

__all__ = [
    "INDEX_DIR",
    "IVF_TYPES",
    "IvfIndex",
    "IvfKind",
    "Partition",
    "PartitionCache",
    "default_partition_cache",
    "open_ivf_index",
]

#: where an index's files live in the table: ``_indices/<uuid>/<file>``
INDEX_DIR: Final = "_indices"
#: ``index_details`` type of every vector index
_VECTOR_DETAILS: Final = "/lance.index.pb.VectorIndexDetails"
#: the ``index_version`` of the IVF indices read here (IVF_RQ has 2)
_KNOWN_VERSION: Final = 1
#: ``VectorIndexDetails`` field 1: the metric enum (absent = l2)
_DETAIL_METRICS: Final[dict[int, Metric]] = {0: "l2", 1: "cosine", 2: "dot"}

IvfKind = Literal["IVF_FLAT", "IVF_PQ", "IVF_SQ"]
IVF_TYPES: Final[tuple[IvfKind, ...]] = ("IVF_FLAT", "IVF_PQ", "IVF_SQ")
#: partitions a search reads at once are read together when smaller than this on average
_TAKE_BELOW: Final = 32 << 10
#: the auxiliary file's payload column of each kind
_PAYLOAD: Final[dict[IvfKind, str]] = {
    "IVF_FLAT": "flat",
    "IVF_PQ": "__pq_code",
    "IVF_SQ": "__sq_code",
}
_ROW_ID: Final = "_rowid"
#: Tensor data types of the centroids and codebooks read here (float16, float32, float64);
#: they are searched in float32
_FLOAT_TENSORS: Final = (1, 2, 3)


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition's rows: their row addresses and stored vectors. ``payload`` is
    ``[n, d]`` float32 (FLAT; float16 / float64 vectors converted), ``[m, n]`` uint8 PQ codes
    (sub-vector major, as stored) or ``[n, d]`` uint8 SQ codes."""

    row_addresses: npt.NDArray[np.uint64]
    payload: npt.NDArray[Any]

    @property
    def nbytes(self) -> int:
        return int(self.row_addresses.nbytes + self.payload.nbytes)


@dataclass
class PartitionCache:
    """A bounded LRU cache of partitions, by (index uuid, partition), holding at most
    ``capacity_bytes`` of them; ``reads`` counts partitions read from files, ``hits`` those
    served from the cache. Thread-safe."""

    capacity_bytes: int = 256 << 20
    reads: int = 0
    hits: int = 0
    _entries: OrderedDict[Hashable, Partition] = field(default_factory=OrderedDict, repr=False)
    _size: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, key: Hashable) -> Partition | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def put(self, key: Hashable, part: Partition) -> None:
        with self._lock:
            self.reads += 1
            if key in self._entries or part.nbytes > self.capacity_bytes:
                return
            self._entries[key] = part
            self._size += part.nbytes
            while self._size > self.capacity_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._size -= dropped.nbytes

    @property
    def size_bytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0


_DEFAULT_CACHE = PartitionCache()

#: threads reading the large partitions of one search at once
READ_THREADS: Final = 4
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _read_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="lance-semantic-ivf")
        return _POOL


def default_partition_cache() -> PartitionCache:
    """The process-wide partition cache indices open with when given none."""
    return _DEFAULT_CACHE


@dataclass(eq=False)
class IvfIndex:
    """An open IVF index: its manifest entry, kind, metric, centroids and partition table,
    plus the PQ codebook ``[m, 256, d/m]`` or the SQ bounds. Partitions are read on demand
    by :meth:`partition`."""

    entry: IndexEntry
    kind: IvfKind
    metric: Metric
    centroids: npt.NDArray[np.float32]
    offsets: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    codebook: npt.NDArray[np.float32] | None
    sq_bounds: tuple[float, float] | None
    cache: PartitionCache
    _store: ObjectStore = field(repr=False)
    _aux: str = field(repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: idle readers of the auxiliary file (a pylance reader is never used by two threads
    #: at once: each read borrows one, opened when none is idle)
    _readers: list[LanceFileReader] = field(default_factory=list, repr=False)

    @property
    def uuid(self) -> str:
        return self.entry.uuid

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def num_partitions(self) -> int:
        return int(self.centroids.shape[0])

    @property
    def dimension(self) -> int:
        return int(self.centroids.shape[1])

    @property
    def num_sub_vectors(self) -> int:
        return 0 if self.codebook is None else int(self.codebook.shape[0])

    @property
    def fragment_ids(self) -> frozenset[int]:
        """The fragments the index covers (its ``fragment_bitmap``)."""
        return frozenset(self.entry.fragment_ids)

    def partition(self, pid: int) -> Partition:
        """Partition ``pid``'s rows, from the cache or read (one ``read_range``)."""
        key = (self.uuid, pid)
        found = self.cache.get(key)
        if found is not None:
            return found
        part = self._read_partition(pid)
        self.cache.put(key, part)
        return part

    def partitions(self, pids: Sequence[int]) -> list[Partition]:
        """Partitions ``pids`` (in that order), from the cache or read. Small partitions
        missing from the cache (PQ codes, under :data:`_TAKE_BELOW` bytes each on average)
        are read together, one ``take_rows`` of their rows, and copied apart (a read of the
        file API costs about as much as reading a few hundred rows: one read of nine PQ
        partitions takes about half the time of nine reads); larger ones (FLAT vectors) one
        ``read_range`` each, kept as read (copying megabytes of freshly read rows apart
        costs more than the reads saved: first touches of new memory are slow)."""
        found: dict[int, Partition] = {}
        missing: list[int] = []
        for pid in pids:
            part = self.cache.get((self.uuid, pid))
            if part is None:
                missing.append(pid)
            else:
                found[pid] = part
        unique = sorted(set(missing), key=lambda pid: int(self.offsets[pid]))
        rows = sum(int(self.lengths[pid]) for pid in unique)
        if len(unique) > 1 and rows * self._row_bytes < _TAKE_BELOW * len(unique):
            found.update(self._read_partitions(unique))
        else:
            if len(unique) > 1:
                found.update(
                    zip(unique, _read_pool().map(self._read_partition, unique), strict=True)
                )
            else:
                found.update((pid, self._read_partition(pid)) for pid in unique)
        for pid in unique:
            self.cache.put((self.uuid, pid), found[pid])
        return [found[pid] for pid in pids]

    @property
    def _row_bytes(self) -> int:
        """Bytes of one row's payload."""
        if self.kind == "IVF_PQ":
            return self.num_sub_vectors
        return self.dimension * (4 if self.kind == "IVF_FLAT" else 1)

    def _read(self, read: Callable[[LanceFileReader], pa.Table]) -> pa.Table:
        """The rows ``read`` reads from the auxiliary file, through a borrowed reader."""
        column = _PAYLOAD[self.kind]
        try:
            with self._lock:
                reader = self._readers.pop() if self._readers else None
            if reader is None:
                reader = open_reader(self._store, self._aux, [_ROW_ID, column], what="index file")
            got = read(reader)
            with self._lock:
                self._readers.append(reader)
            return got
        except BaseException as e:
            if not is_read_error(e):
                raise
            path = self._store.uri(self._aux)
            raise CorruptTableError(path, f"cannot read the index file: {first_line(e)}") from e

    def _read_partition(self, pid: int) -> Partition:
        start, length = int(self.offsets[pid]), int(self.lengths[pid])
        table = self._read(
            lambda r: r.read_range(start, length, batch_size=max(length, 1)).to_table()
        )
        if table.num_rows != length:
            path = self._store.uri(self._aux)
            raise CorruptTableError(path, f"partition {pid} has {table.num_rows} of {length} rows")
        addresses, flat = self._columns(table)
        return self._partition(addresses, flat, length)

    def _read_partitions(self, pids: Sequence[int]) -> dict[int, Partition]:
        """Partitions ``pids`` (in file order) read by one ``take_rows``."""
        starts = [int(self.offsets[pid]) for pid in pids]
        lengths = [int(self.lengths[pid]) for pid in pids]
        rows = np.concatenate(
            [np.arange(s, s + n, dtype=np.int64) for s, n in zip(starts, lengths, strict=True)]
        ).tolist()
        if not rows:  # empty partitions only
            return {pid: self._partition(np.empty(0, np.uint64), None, 0) for pid in pids}
        table = self._read(lambda r: r.take_rows(rows, batch_size=max(len(rows), 1)).to_table())
        if table.num_rows != len(rows):
            path = self._store.uri(self._aux)
            raise CorruptTableError(
                path, f"partitions {list(pids)}: {table.num_rows} of {len(rows)} rows"
            )
        addresses, flat = self._columns(table)
        per_row = self.num_sub_vectors if self.kind == "IVF_PQ" else self.dimension
        out: dict[int, Partition] = {}
        at = 0
        for pid, length in zip(pids, lengths, strict=True):  # copied apart: none pins the rest
            values = None if flat is None else flat[at * per_row : (at + length) * per_row].copy()
            out[pid] = self._partition(addresses[at : at + length].copy(), values, length)
            at += length
        return out

    def _columns(self, table: pa.Table) -> tuple[npt.NDArray[np.uint64], npt.NDArray[Any] | None]:
        """The row addresses and the flattened payload values of rows read."""
        addresses = table.column(_ROW_ID).to_numpy().astype(np.uint64, copy=False)
        if not table.num_rows:
            return addresses, None
        chunks = table.column(_PAYLOAD[self.kind]).chunks
        values = chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)
        flat = values.flatten().to_numpy(zero_copy_only=False)
        if self.kind == "IVF_FLAT":
            flat = flat.astype(np.float32, copy=False)  # float16 / float64 columns too
        return addresses, flat

    def _partition(
        self, addresses: npt.NDArray[np.uint64], flat: npt.NDArray[Any] | None, length: int
    ) -> Partition:
        width = self.num_sub_vectors if self.kind == "IVF_PQ" else self.dimension
        if flat is None or not length:
            dtype = np.float32 if self.kind == "IVF_FLAT" else np.uint8
            shape = (width, 0) if self.kind == "IVF_PQ" else (0, width)
            return Partition(addresses, np.empty(shape, dtype=dtype))
        if self.kind == "IVF_PQ":
            # codes of one partition are stored transposed, [m][n]: kept so (one contiguous
            # run of codes per sub-vector for the distance table lookups)
            payload = flat.reshape(width, length)
        else:
            payload = flat.reshape(length, width)
        return Partition(addresses, np.ascontiguousarray(payload))


# ---- opening ----------------------------------------------------------------------------------


def _details_metric(details: bytes) -> Metric | None:
    metric: Metric = "l2"
    for number, wire, value in message_fields(details):
        if number == 1 and wire == 0 and isinstance(value, int):
            if value not in _DETAIL_METRICS:
                return None
            metric = _DETAIL_METRICS[value]
    return metric


def _open_reader(store: ObjectStore, rel: str) -> LanceFileReader:
    return open_reader(store, rel, what="index file")


def _metadata(reader: LanceFileReader) -> Mapping[bytes, bytes]:
    return reader.metadata().schema.metadata or {}


def _json(meta: Mapping[bytes, bytes], key: str) -> Any:
    raw = meta.get(key.encode())
    return None if raw is None else json.loads(raw)


def _storage_metadata(meta: Mapping[bytes, bytes]) -> dict[str, Any] | None:
    listed = _json(meta, "storage_metadata")
    if not isinstance(listed, list) or len(listed) != 1 or not isinstance(listed[0], str):
        return None
    parsed = json.loads(listed[0])
    return parsed if isinstance(parsed, dict) else None


def open_ivf_index(
    store: ObjectStore, entry: IndexEntry, *, cache: PartitionCache | None = None
) -> IvfIndex | None:
    """The IVF index of manifest entry ``entry`` in the table at ``store``, or ``None`` when
    it is not an IVF_FLAT / IVF_PQ / IVF_SQ index of a version and layout known here (another
    details type, ``index_version`` other than 1, an IVF_HNSW_* / IVF_RQ index, 4-bit PQ, an
    index in another base, centroids not of a float type). A known index whose files are missing or
    unreadable raises :class:`~lance_semantic.errors.CorruptTableError` naming the file.

    Reads the index file's metadata and centroids and the auxiliary file's partition table
    (and PQ codebook); partitions are read when searched."""
    if entry.type_url != _VECTOR_DETAILS or entry.index_version != _KNOWN_VERSION:
        return None
    if entry.base_id is not None or entry.index_type not in IVF_TYPES:
        return None
    details_metric = _details_metric(entry.details)
    if details_metric is None:
        return None
    base = f"{INDEX_DIR}/{entry.uuid}"
    index_rel, aux_rel = f"{base}/index.idx", f"{base}/auxiliary.idx"
    index_file = _open_reader(store, index_rel)
    try:
        opened = _opened(store, entry, index_file, index_rel, aux_rel, details_metric, cache)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise CorruptTableError(store.uri(base), f"unexpected index layout: {e}") from e
    return opened


def _opened(
    store: ObjectStore,
    entry: IndexEntry,
    index_file: LanceFileReader,
    index_rel: str,
    aux_rel: str,
    details_metric: Metric,
    cache: PartitionCache | None,
) -> IvfIndex | None:
    meta = _metadata(index_file)
    described = _json(meta, "lance:index")
    if not isinstance(described, dict) or described.get("type") not in IVF_TYPES:
        return None
    if "lance:flat" not in {k.decode() for k in meta}:
        return None  # another sub-index (HNSW)
    kind: IvfKind = described["type"]
    metric = str(described.get("distance_type", details_metric)).lower()
    if metric not in ("l2", "cosine", "dot"):
        return None
    ivf = decode_ivf(bytes(index_file.read_global_buffer(1)))
    if ivf.centroids_tensor is None or ivf.centroids_tensor.data_type not in _FLOAT_TENSORS:
        return None  # float16 / float32 / float64 centroids are known here
    centroids = np.asarray(ivf.centroids_tensor.to_numpy(), dtype=np.float32)
    if centroids.ndim != 2:
        raise ValueError(f"centroids of shape {centroids.shape}")
    aux = _open_reader(store, aux_rel)
    aux_meta = _metadata(aux)
    table = decode_ivf(bytes(aux.read_global_buffer(1)))
    offsets = np.asarray(table.offsets, dtype=np.int64)
    lengths = np.asarray(table.lengths, dtype=np.int64)
    if len(offsets) != len(centroids) or len(lengths) != len(centroids):
        raise ValueError(f"{len(centroids)} centroids, {len(lengths)} partitions")
    if int((offsets + lengths).max(initial=0)) > int(aux.num_rows()):
        raise ValueError("partitions past the end of the auxiliary file")
    storage = _storage_metadata(aux_meta)
    if storage is None:
        raise ValueError("no storage_metadata")
    dim = int(centroids.shape[1])
    codebook: npt.NDArray[np.float32] | None = None
    bounds: tuple[float, float] | None = None
    if kind == "IVF_PQ":
        m, nbits = int(storage["num_sub_vectors"]), int(storage["nbits"])
        if nbits != 8 or not storage.get("transposed", False) or dim % m:
            return None  # 4-bit codes / untransposed layouts are not read here
        tensor = decode_tensor(bytes(aux.read_global_buffer(int(storage["codebook_position"]))))
        if tensor.data_type not in _FLOAT_TENSORS:
            return None
        book = np.asarray(tensor.to_numpy(), dtype=np.float32).reshape(m, 256, dim // m)
        codebook = np.ascontiguousarray(book)
    elif kind == "IVF_SQ":
        if int(storage["num_bits"]) != 8:
            return None
        bounds = (float(storage["bounds"]["start"]), float(storage["bounds"]["end"]))
    return IvfIndex(
        entry=entry,
        kind=kind,
        metric=metric,  # type: ignore[arg-type]  # checked above
        centroids=centroids,
        offsets=offsets,
        lengths=lengths,
        codebook=codebook,
        sq_bounds=bounds,
        cache=cache if cache is not None else _DEFAULT_CACHE,
        _store=store,
        _aux=aux_rel,
        # the reader that read the partition table serves the first partition reads: each
        # index file is opened once per handle (on S3 one HEAD and one footer read each)
        _readers=[aux],
    )
