"""IVF_FLAT, IVF_PQ and IVF_SQ index files as pylance 14 writes them (layer L3;
docs/format/index-formats.md "Files").

An index is the folder ``_indices/<uuid>/`` with two Lance 2.2 files:

``index.idx``      0 rows of ``__flat_marker: uint64`` (the FLAT sub-index); schema metadata
                   ``lance:index`` = ``{"type": ..., "distance_type": ...}``, ``lance:ivf`` =
                   ``"1"``, ``lance:flat`` = one ``""`` per partition; global buffer 1 = the
                   ``IVF`` protobuf with the centroids (a ``Tensor`` ``[P, d]`` float32), the
                   k-means loss and zero offsets / lengths
``auxiliary.idx``  the rows grouped by partition (ascending row address inside one):
                   ``_rowid`` (the row address) and ``flat`` (the vectors), ``__pq_code`` (the
                   PQ codes of the residuals, **transposed** per partition) or ``__sq_code``;
                   schema metadata ``distance_type``, ``lance:ivf`` = ``"1"`` and
                   ``storage_metadata``; global buffer 1 = ``IVF`` with the partitions'
                   offsets and lengths, PQ: buffer 2 = the codebook ``Tensor`` ``[2**nbits, d]``
                   laid out ``[m][2**nbits][d/m]``

Cosine indexes the unit vectors (pylance stores them normalised). The ``IVF`` / ``Tensor``
messages are encoded here (``index.proto``: IVF 2 offsets, 3 lengths, 4 centroids_tensor,
5 loss; Tensor 1 data_type (FLOAT32 = 2), 2 shape, 3 data).

:class:`IvfBuilder` holds what a build needs: :meth:`~IvfBuilder.train` on a sample of rows,
:meth:`~IvfBuilder.add` every row batch by batch (the codes are kept in memory: 4·d bytes a
row for IVF_FLAT, m for IVF_PQ, d for IVF_SQ), :meth:`~IvfBuilder.write` the files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..manifest._wire import tag_bytes, tag_varint
from ..storage import DataFileWriter, ObjectStore
from . import ivf_train
from .ivf_proto import IvfMessage, TensorMessage, encode_ivf, encode_tensor
from .metrics import Metric

__all__ = [
    "IvfIndexType",
    "IVF_INDEX_TYPES",
    "IvfParams",
    "IvfBuilder",
    "IndexFileWritten",
    "vector_index_details",
    "INDEX_FILE_VERSION",
]

IvfIndexType = Literal["IVF_FLAT", "IVF_PQ", "IVF_SQ"]
IVF_INDEX_TYPES: tuple[IvfIndexType, ...] = ("IVF_FLAT", "IVF_PQ", "IVF_SQ")
#: the Lance file version of pylance 14's index files
INDEX_FILE_VERSION = "2.2"
_METRIC_ENUM = {"l2": 0, "cosine": 1, "dot": 2, "hamming": 3}
_ROWS_PER_BATCH = 65536
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class IvfParams:
    """What an IVF index is built with (pylance's names and defaults)."""

    index_type: IvfIndexType
    metric: Metric
    num_partitions: int
    num_sub_vectors: int | None = None
    num_bits: int = 8
    max_iters: int = ivf_train.DEFAULT_MAX_ITERS
    sample_rate: int = ivf_train.DEFAULT_SAMPLE_RATE

    def sample_size(self) -> int:
        """Rows to sample for training: ``num_partitions * sample_rate`` for the centroids,
        ``2**num_bits * sample_rate`` for the PQ codebook or the SQ bounds."""
        rows = self.num_partitions * self.sample_rate
        if self.index_type != "IVF_FLAT":
            rows = max(rows, (1 << self.num_bits) * self.sample_rate)
        return rows


@dataclass(frozen=True, slots=True)
class IndexFileWritten:
    path: str  # relative to the index folder
    size_bytes: int


def _tensor(values: npt.ArrayLike, dtype: npt.DTypeLike = np.float32) -> TensorMessage:
    return TensorMessage.from_numpy(np.ascontiguousarray(values, dtype=dtype))


def _batch_bounds(counts: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """Runs of whole partitions ``[start, stop)`` of about :data:`_ROWS_PER_BATCH` rows
    (a larger partition is a run of its own; empty partitions join a run)."""
    bounds: list[tuple[int, int]] = []
    start, rows = 0, 0
    for p, c in enumerate(counts.tolist()):
        rows += c
        if rows >= _ROWS_PER_BATCH:
            bounds.append((start, p + 1))
            start, rows = p + 1, 0
    if rows or not bounds:
        bounds.append((start, len(counts)))
    return [(a, b) for a, b in bounds if b > a and counts[a:b].sum() > 0]


def _ivf(
    offsets: npt.ArrayLike,
    lengths: npt.ArrayLike,
    centroids: TensorMessage | None = None,
    loss: float | None = None,
) -> bytes:
    return encode_ivf(
        IvfMessage(
            offsets=tuple(int(v) for v in np.asarray(offsets).tolist()),
            lengths=tuple(int(v) for v in np.asarray(lengths).tolist()),
            centroids_tensor=centroids,
            loss=loss,
        )
    )


def _build_parameters(params: IvfParams) -> dict[str, str]:
    """The build parameters pylance 14 records (its shuffle defaults included)."""
    out = {
        "lance.ivf.max_iters": str(params.max_iters),
        "lance.ivf.sample_rate": str(params.sample_rate),
        "lance.ivf.shuffle_partition_batches": "10240",
        "lance.ivf.shuffle_partition_concurrency": "2",
        "lance.skip_transpose": "false",
    }
    if params.index_type == "IVF_PQ":
        out["lance.pq.max_iters"] = str(params.max_iters)
        out["lance.pq.sample_rate"] = str(params.sample_rate)
        out["lance.pq.kmeans_redos"] = "1"
    elif params.index_type == "IVF_SQ":
        out["lance.sq.sample_rate"] = str(params.sample_rate)
    return out


def vector_index_details(params: IvfParams) -> bytes:
    """The ``/lance.index.pb.VectorIndexDetails`` message of an index built with
    ``params``: 1 metric (absent for l2), 4 pq ``{1 num_bits, 2 num_sub_vectors}`` /
    5 sq ``{1 num_bits}`` / 8 flat ``{}``, 9 build parameters ``{1 key, 2 value}``.

    >>> vector_index_details(IvfParams("IVF_FLAT", "l2", 4))[:2].hex()
    '4200'
    """
    out = b""
    if _METRIC_ENUM[params.metric]:
        out += tag_varint(1, _METRIC_ENUM[params.metric])
    if params.index_type == "IVF_PQ":
        pq = tag_varint(1, params.num_bits) + tag_varint(2, params.num_sub_vectors or 0)
        out += tag_bytes(4, pq)
    elif params.index_type == "IVF_SQ":
        out += tag_bytes(5, tag_varint(1, params.num_bits))
    else:
        out += tag_bytes(8, b"")
    for key, value in sorted(_build_parameters(params).items()):
        out += tag_bytes(9, tag_bytes(1, key.encode()) + tag_bytes(2, value.encode()))
    return out


#: the value types of the vector columns an index is built over (pylance 14 keeps the
#: column's type for the centroids, the PQ codebook and the IVF_FLAT vectors)
VECTOR_DTYPES: tuple[np.dtype[np.floating[Any]], ...] = (
    np.dtype(np.float16),
    np.dtype(np.float32),
    np.dtype(np.float64),
)


@dataclass
class IvfBuilder:
    """One IVF index being built over vectors of dimension ``dim`` whose values are
    ``dtype`` (float16, float32 or float64: training and encoding run in float32, the
    centroids, the codebook and IVF_FLAT's vectors are stored in ``dtype``, as pylance 14).

    The rows' addresses, partitions and codes go into arrays that grow as rows come
    (:meth:`reserve` sizes them once when the row count is known), and :meth:`write` writes
    them partition by partition in batches, so a build holds the codes about once."""

    params: IvfParams
    dim: int
    seed: int | None = None
    centroids: F32 | None = None
    loss: float = 0.0
    pq_codebook: F32 | None = None
    sq_bounds: tuple[float, float] | None = None
    dtype: np.dtype[np.floating[Any]] = field(default_factory=lambda: np.dtype(np.float32))
    _rows: int = 0
    _addresses: npt.NDArray[np.uint64] = field(default_factory=lambda: np.empty(0, np.uint64))
    _labels: npt.NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    _codes: npt.NDArray[np.generic] | None = None

    def __post_init__(self) -> None:
        self.dtype = np.dtype(self.dtype)
        if self.dtype not in VECTOR_DTYPES:
            raise TypeError(f"dtype: vectors of {self.dtype} (float16, float32 or float64)")

    def _prepared(self, vectors: npt.ArrayLike) -> F32:
        x = np.asarray(vectors).reshape(-1, self.dim)
        if self.params.metric == "cosine":
            return ivf_train.normalize(x)
        return np.asarray(x, dtype=np.float32)

    def _stored(self, values: npt.ArrayLike) -> F32:
        """``values`` as the index stores them (rounded to ``dtype``), back in float32."""
        arr = np.asarray(values)
        return np.ascontiguousarray(arr.astype(self.dtype).astype(np.float32))

    def train(
        self,
        sample: npt.ArrayLike,
        *,
        ivf_centroids: npt.ArrayLike | None = None,
        pq_codebook: npt.ArrayLike | None = None,
    ) -> None:
        """Train on ``sample`` (rows in random order; float ``[n, d]``): the centroids
        (k-means of its first ``num_partitions * sample_rate`` rows, unless given), the PQ
        codebook (over the residuals of its first ``2**num_bits * sample_rate`` rows, unless
        given) or the SQ bounds (of those rows, as the column holds them)."""
        p = self.params
        x = self._prepared(sample)
        kmeans_metric: Metric = "dot" if p.metric == "dot" else "l2"
        if ivf_centroids is not None:
            self.centroids = self._stored(ivf_centroids)
            _, dists = ivf_train.assign_partitions(x, self.centroids, kmeans_metric)
            self.loss = float(dists.sum(dtype=np.float64))
        else:
            head = x[: p.num_partitions * p.sample_rate]
            model = ivf_train.train_kmeans(
                head, p.num_partitions, metric=kmeans_metric, max_iters=p.max_iters, seed=self.seed
            )
            self.centroids, self.loss = self._stored(model.centroids), model.loss
        # the codebook and the SQ bounds train on the first 2**num_bits * sample_rate rows
        # (pylance's sample for them; the k-means sample may be larger, e.g. 262,144 rows
        # for 1,024 partitions, four times the work for no better codebook)
        quantizer_rows = (1 << p.num_bits) * p.sample_rate
        if p.index_type == "IVF_PQ":
            m = p.num_sub_vectors or 1
            if pq_codebook is not None:
                book = np.asarray(pq_codebook, dtype=np.float32)
                book = book.reshape(m, 1 << p.num_bits, self.dim // m)
            else:
                book = ivf_train.train_pq(
                    self._residuals(x[:quantizer_rows]),
                    m,
                    num_bits=p.num_bits,
                    max_iters=p.max_iters,
                    seed=None if self.seed is None else self.seed + 1,
                )
            self.pq_codebook = self._stored(book)
        elif p.index_type == "IVF_SQ":
            raw = np.asarray(sample) if p.metric != "cosine" else x.astype(self.dtype)
            self.sq_bounds = ivf_train.sq_bounds(raw[:quantizer_rows])

    def _residuals(self, x: F32, labels: npt.NDArray[np.int32] | None = None) -> F32:
        if self.params.metric == "dot":
            return x
        assert self.centroids is not None
        if labels is None:
            labels, _ = ivf_train.assign_partitions(x, self.centroids)
        return x - self.centroids[labels]

    def _code_shape(self) -> tuple[int, np.dtype[Any]]:
        p = self.params
        if p.index_type == "IVF_PQ":
            return p.num_sub_vectors or 0, np.dtype(np.uint8)
        if p.index_type == "IVF_SQ":
            return self.dim, np.dtype(np.uint8)
        return self.dim, self.dtype

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` rows in all (the build knows the count after its first read)."""
        if self._codes is not None and len(self._codes) >= rows:
            return
        width, dtype = self._code_shape()
        codes = np.empty((rows, width), dtype)
        addresses = np.empty(rows, np.uint64)
        labels = np.empty(rows, np.int32)
        n = self._rows
        if self._codes is not None:
            codes[:n] = self._codes[:n]
            addresses[:n] = self._addresses[:n]
            labels[:n] = self._labels[:n]
        self._codes, self._addresses, self._labels = codes, addresses, labels

    def add(self, addresses: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Assign a batch of rows (their row addresses and vectors, no nulls) to partitions
        and keep their codes."""
        assert self.centroids is not None, "train first"
        x = self._prepared(vectors)
        rows = len(x)
        metric: Metric = "dot" if self.params.metric == "dot" else "l2"
        labels, _ = ivf_train.assign_partitions(x, self.centroids, metric)
        code: npt.NDArray[np.generic]
        if self.params.index_type == "IVF_PQ":
            assert self.pq_codebook is not None
            code = ivf_train.pq_encode(self._residuals(x, labels), self.pq_codebook)
        elif self.params.index_type == "IVF_SQ":
            assert self.sq_bounds is not None
            code = ivf_train.sq_encode(x, *self.sq_bounds)
        elif self.params.metric == "cosine":
            code = x  # the unit vectors, stored in the column's type below
        else:
            code = np.asarray(vectors).reshape(-1, self.dim)
        n = self._rows
        if self._codes is None or n + rows > len(self._codes):
            self.reserve(max(n + rows, (n * 3) // 2, 1024))
        assert self._codes is not None
        self._codes[n : n + rows] = code
        self._addresses[n : n + rows] = np.asarray(addresses, dtype=np.uint64)
        self._labels[n : n + rows] = labels
        self._rows = n + rows

    @property
    def num_rows(self) -> int:
        return self._rows

    def _order(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        """The rows in file order (by partition, ascending address inside one) and the
        partitions' row counts."""
        n = self._rows
        order = np.lexsort((self._addresses[:n], self._labels[:n]))
        counts = np.bincount(self._labels[:n], minlength=self.params.num_partitions)
        return order, counts.astype(np.int64)

    def _storage_metadata(self) -> str:
        p = self.params
        meta: Mapping[str, object]
        if p.index_type == "IVF_PQ":
            meta = {
                "codebook_position": 2,
                "nbits": p.num_bits,
                "num_sub_vectors": p.num_sub_vectors,
                "dimension": self.dim,
                "codebook_tensor": [],
                "transposed": True,
            }
        elif p.index_type == "IVF_SQ":
            assert self.sq_bounds is not None
            start, end = self.sq_bounds
            meta = {"dim": self.dim, "num_bits": 8, "bounds": {"start": start, "end": end}}
        else:
            meta = {"dim": self.dim}
        return json.dumps([json.dumps(meta, separators=(",", ":"))], separators=(",", ":"))

    def _aux_schema(self) -> pa.Schema:
        p = self.params
        if p.index_type == "IVF_PQ":
            code = pa.field("__pq_code", pa.list_(pa.uint8(), p.num_sub_vectors or 0))
        elif p.index_type == "IVF_SQ":
            code = pa.field("__sq_code", pa.list_(pa.uint8(), self.dim))
        else:
            value = pa.from_numpy_dtype(self.dtype)
            code = pa.field("flat", pa.list_(value, self.dim), nullable=False)
        return pa.schema([pa.field("_rowid", pa.uint64()), code])

    def _batch(
        self,
        schema: pa.Schema,
        order: npt.NDArray[np.intp],
        offsets: npt.NDArray[np.int64],
        counts: npt.NDArray[np.int64],
        start: int,
        stop: int,
    ) -> pa.RecordBatch:
        """The rows of partitions ``start`` to ``stop`` (exclusive) as the file holds them;
        IVF_PQ's codes transposed per partition (sub-vector 0's codes first)."""
        assert self._codes is not None
        lo = int(offsets[start])
        hi = int(offsets[stop - 1] + counts[stop - 1])
        rows = order[lo:hi]
        codes = self._codes[rows]
        if self.params.index_type == "IVF_PQ":
            parts = []
            for o, c in zip(offsets[start:stop].tolist(), counts[start:stop].tolist(), strict=True):
                parts.append(codes[o - lo : o - lo + c].T.reshape(-1))
            values = np.concatenate(parts) if parts else codes.reshape(-1)
        else:
            values = np.ascontiguousarray(codes).reshape(-1)
        code_type = schema.field(1).type
        column = pa.FixedSizeListArray.from_arrays(
            pa.array(values, code_type.value_type), type=code_type
        )
        return pa.record_batch(
            [pa.array(self._addresses[rows], pa.uint64()), column], schema=schema
        )

    def write(self, store: ObjectStore, folder: str) -> list[IndexFileWritten]:
        """Write ``auxiliary.idx`` and ``index.idx`` into ``folder`` (``_indices/<uuid>``)
        of ``store``; the files written with their sizes."""
        assert self.centroids is not None, "train first"
        p = self.params
        order, counts = self._order()
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        schema = self._aux_schema()
        aux = DataFileWriter(store, "auxiliary.idx", schema, INDEX_FILE_VERSION, folder=folder)
        aux.add_schema_metadata("distance_type", p.metric)
        aux.add_schema_metadata("lance:ivf", str(aux.add_global_buffer(_ivf(offsets, counts))))
        if p.index_type == "IVF_PQ":
            assert self.pq_codebook is not None
            book = self.pq_codebook
            # [256, d] as pylance lays it out: [m][256][d/m] in memory
            tensor = _tensor(book.reshape(book.shape[1], self.dim), self.dtype)
            position = aux.add_global_buffer(encode_tensor(tensor))
            assert position == 2
        aux.add_schema_metadata("storage_metadata", self._storage_metadata())
        for start, stop in _batch_bounds(counts):
            aux.write(self._batch(schema, order, offsets, counts, start, stop))
        aux_file = aux.close()
        marker = pa.schema([pa.field("__flat_marker", pa.uint64(), nullable=False)])
        index = DataFileWriter(store, "index.idx", marker, INDEX_FILE_VERSION, folder=folder)
        index.add_schema_metadata(
            "lance:index",
            json.dumps({"type": p.index_type, "distance_type": p.metric}, separators=(",", ":")),
        )
        zeros = np.zeros(p.num_partitions, np.int64)
        centroids = _tensor(self.centroids, self.dtype)
        position = index.add_global_buffer(_ivf(zeros, zeros, centroids, self.loss))
        index.add_schema_metadata("lance:ivf", str(position))
        index.add_schema_metadata(
            "lance:flat", json.dumps([""] * p.num_partitions, separators=(",", ":"))
        )
        index_file = index.close()
        return [
            IndexFileWritten("auxiliary.idx", aux_file.size_bytes),
            IndexFileWritten("index.idx", index_file.size_bytes),
        ]
