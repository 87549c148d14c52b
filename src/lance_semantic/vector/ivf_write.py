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
from typing import Literal

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


def _tensor(values: F32) -> TensorMessage:
    return TensorMessage.from_numpy(np.ascontiguousarray(values, dtype=np.float32))


def _ivf(
    offsets: npt.ArrayLike,
    lengths: npt.ArrayLike,
    centroids: F32 | None = None,
    loss: float | None = None,
) -> bytes:
    return encode_ivf(
        IvfMessage(
            offsets=tuple(int(v) for v in np.asarray(offsets).tolist()),
            lengths=tuple(int(v) for v in np.asarray(lengths).tolist()),
            centroids_tensor=None if centroids is None else _tensor(centroids),
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


@dataclass
class IvfBuilder:
    """One IVF index being built over vectors of dimension ``dim`` (float32)."""

    params: IvfParams
    dim: int
    seed: int | None = None
    centroids: F32 | None = None
    loss: float = 0.0
    pq_codebook: F32 | None = None
    sq_bounds: tuple[float, float] | None = None
    _addresses: list[npt.NDArray[np.uint64]] = field(default_factory=list)
    _labels: list[npt.NDArray[np.int32]] = field(default_factory=list)
    _codes: list[npt.NDArray[np.generic]] = field(default_factory=list)

    def _prepared(self, vectors: npt.ArrayLike) -> F32:
        x = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        return ivf_train.normalize(x) if self.params.metric == "cosine" else x

    def train(
        self,
        sample: npt.ArrayLike,
        *,
        ivf_centroids: npt.ArrayLike | None = None,
        pq_codebook: npt.ArrayLike | None = None,
    ) -> None:
        """Train on ``sample`` (rows in random order; float ``[n, d]``): the centroids
        (k-means of its first ``num_partitions * sample_rate`` rows, unless given), the PQ
        codebook (over the residuals, unless given) or the SQ bounds."""
        p = self.params
        x = self._prepared(sample)
        kmeans_metric: Metric = "dot" if p.metric == "dot" else "l2"
        if ivf_centroids is not None:
            self.centroids = np.ascontiguousarray(ivf_centroids, dtype=np.float32)
            _, dists = ivf_train.assign_partitions(x, self.centroids, kmeans_metric)
            self.loss = float(dists.sum(dtype=np.float64))
        else:
            head = x[: p.num_partitions * p.sample_rate]
            model = ivf_train.train_kmeans(
                head, p.num_partitions, metric=kmeans_metric, max_iters=p.max_iters, seed=self.seed
            )
            self.centroids, self.loss = model.centroids, model.loss
        if p.index_type == "IVF_PQ":
            m = p.num_sub_vectors or 1
            if pq_codebook is not None:
                book = np.asarray(pq_codebook, dtype=np.float32)
                self.pq_codebook = np.ascontiguousarray(
                    book.reshape(m, 1 << p.num_bits, self.dim // m)
                )
            else:
                self.pq_codebook = ivf_train.train_pq(
                    self._residuals(x),
                    m,
                    num_bits=p.num_bits,
                    max_iters=p.max_iters,
                    seed=None if self.seed is None else self.seed + 1,
                )
        elif p.index_type == "IVF_SQ":
            self.sq_bounds = ivf_train.sq_bounds(x)

    def _residuals(self, x: F32, labels: npt.NDArray[np.int32] | None = None) -> F32:
        if self.params.metric == "dot":
            return x
        assert self.centroids is not None
        if labels is None:
            labels, _ = ivf_train.assign_partitions(x, self.centroids)
        return x - self.centroids[labels]

    def add(self, addresses: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Assign a batch of rows (their row addresses and vectors, no nulls) to partitions
        and keep their codes."""
        assert self.centroids is not None, "train first"
        x = self._prepared(vectors)
        metric: Metric = "dot" if self.params.metric == "dot" else "l2"
        labels, _ = ivf_train.assign_partitions(x, self.centroids, metric)
        code: npt.NDArray[np.generic]
        if self.params.index_type == "IVF_PQ":
            assert self.pq_codebook is not None
            code = ivf_train.pq_encode(self._residuals(x, labels), self.pq_codebook)
        elif self.params.index_type == "IVF_SQ":
            assert self.sq_bounds is not None
            code = ivf_train.sq_encode(x, *self.sq_bounds)
        else:
            code = np.array(x, dtype=np.float32, copy=True)
        self._addresses.append(np.asarray(addresses, dtype=np.uint64))
        self._labels.append(labels)
        self._codes.append(code)

    @property
    def num_rows(self) -> int:
        return sum(len(a) for a in self._addresses)

    def _grouped(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.generic], np.ndarray]:
        width = self.params.num_sub_vectors if self.params.index_type == "IVF_PQ" else self.dim
        dtype = np.float32 if self.params.index_type == "IVF_FLAT" else np.uint8
        if not self._addresses:
            empty = np.zeros(self.params.num_partitions, np.int64)  # every partition empty
            return np.empty(0, np.uint64), np.empty((0, width or 0), dtype), empty
        addresses = np.concatenate(self._addresses)
        labels = np.concatenate(self._labels)
        codes = np.concatenate(self._codes)
        order = np.lexsort((addresses, labels))
        counts = np.bincount(labels, minlength=self.params.num_partitions)
        return addresses[order], codes[order], counts

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
            code = pa.field("flat", pa.list_(pa.float32(), self.dim), nullable=False)
        return pa.schema([pa.field("_rowid", pa.uint64()), code])

    def write(self, store: ObjectStore, folder: str) -> list[IndexFileWritten]:
        """Write ``auxiliary.idx`` and ``index.idx`` into ``folder`` (``_indices/<uuid>``)
        of ``store``; the files written with their sizes."""
        assert self.centroids is not None, "train first"
        p = self.params
        addresses, codes, counts = self._grouped()
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        if p.index_type == "IVF_PQ":  # transposed per partition: sub-vector 0's codes first
            codes = np.concatenate(
                [
                    codes[o : o + c].T.reshape(c, codes.shape[1])
                    for o, c in zip(offsets.tolist(), counts.tolist(), strict=True)
                ]
                or [codes]
            )
        schema = self._aux_schema()
        aux = DataFileWriter(store, "auxiliary.idx", schema, INDEX_FILE_VERSION, folder=folder)
        aux.add_schema_metadata("distance_type", p.metric)
        aux.add_schema_metadata("lance:ivf", str(aux.add_global_buffer(_ivf(offsets, counts))))
        if p.index_type == "IVF_PQ":
            assert self.pq_codebook is not None
            book = self.pq_codebook
            # [256, d] as pylance lays it out: [m][256][d/m] in memory
            tensor = _tensor(np.asarray(book).reshape(book.shape[1], self.dim))
            position = aux.add_global_buffer(encode_tensor(tensor))
            assert position == 2
        aux.add_schema_metadata("storage_metadata", self._storage_metadata())
        code_type = schema.field(1).type
        flat = pa.array(np.ascontiguousarray(codes).reshape(-1), code_type.value_type)
        column = pa.FixedSizeListArray.from_arrays(flat, type=code_type)
        for start in range(0, len(addresses), _ROWS_PER_BATCH):
            stop = start + _ROWS_PER_BATCH
            batch = pa.record_batch(
                [pa.array(addresses[start:stop], pa.uint64()), column[start:stop]], schema=schema
            )
            aux.write(batch)
        aux_file = aux.close()
        marker = pa.schema([pa.field("__flat_marker", pa.uint64(), nullable=False)])
        index = DataFileWriter(store, "index.idx", marker, INDEX_FILE_VERSION, folder=folder)
        index.add_schema_metadata(
            "lance:index",
            json.dumps({"type": p.index_type, "distance_type": p.metric}, separators=(",", ":")),
        )
        zeros = np.zeros(p.num_partitions, np.int64)
        position = index.add_global_buffer(_ivf(zeros, zeros, self.centroids, self.loss))
        index.add_schema_metadata("lance:ivf", str(position))
        index.add_schema_metadata(
            "lance:flat", json.dumps([""] * p.num_partitions, separators=(",", ":"))
        )
        index_file = index.close()
        return [
            IndexFileWritten("auxiliary.idx", aux_file.size_bytes),
            IndexFileWritten("index.idx", index_file.size_bytes),
        ]
