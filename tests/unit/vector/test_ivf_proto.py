"""The IVF and Tensor protobufs of pylance's index files: decoding the global buffers pylance 14
writes, and encoding them back byte for byte (index-formats.md, "Files")."""

from __future__ import annotations

import glob
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

from lance_semantic.errors import CorruptTableError
from lance_semantic.vector.ivf_proto import (
    IvfMessage,
    TensorMessage,
    decode_ivf,
    decode_tensor,
    encode_ivf,
    encode_tensor,
)

ROWS, DIM, PARTITIONS = 1200, 16, 3


@pytest.fixture(scope="module")
def index_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small pylance-built index of each IVF kind: kind -> its _indices/<uuid>/ directory."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    table = pa.table({"vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)})
    out = {}
    for kind, extra in [("IVF_FLAT", {}), ("IVF_PQ", {"num_sub_vectors": 4}), ("IVF_SQ", {})]:
        uri = tmp_path_factory.mktemp(kind.lower()) / "t.lance"
        ds = lance.write_dataset(table, uri, max_rows_per_file=500)
        ds.create_index("vec", kind, num_partitions=PARTITIONS, **extra)
        (found,) = glob.glob(str(uri / "_indices" / "*"))
        out[kind] = Path(found)
    return out


def _buffer(path: Path, index: int) -> bytes:
    return bytes(LanceFileReader(str(path)).read_global_buffer(index))


@pytest.mark.interop
@pytest.mark.parametrize("kind", ["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
def test_index_file_ivf_holds_the_centroids(index_dirs: dict[str, Path], kind: str) -> None:
    raw = _buffer(index_dirs[kind] / "index.idx", 1)
    ivf = decode_ivf(raw)
    assert ivf.centroids == ()
    assert ivf.offsets == (0,) * PARTITIONS and ivf.lengths == (0,) * PARTITIONS
    assert ivf.loss is not None and ivf.loss > 0
    assert ivf.centroids_tensor is not None
    centroids = ivf.centroids_tensor.to_numpy()
    assert centroids.dtype == np.float32 and centroids.shape == (PARTITIONS, DIM)
    assert np.isfinite(centroids).all()
    assert encode_ivf(ivf) == raw


@pytest.mark.interop
@pytest.mark.parametrize("kind", ["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
def test_auxiliary_file_ivf_holds_the_partitions(index_dirs: dict[str, Path], kind: str) -> None:
    path = index_dirs[kind] / "auxiliary.idx"
    raw = _buffer(path, 1)
    ivf = decode_ivf(raw)
    assert ivf.centroids_tensor is None and ivf.loss is None
    assert ivf.num_partitions == PARTITIONS
    assert sum(ivf.lengths) == ROWS == LanceFileReader(str(path)).num_rows()
    assert list(ivf.offsets) == np.concatenate([[0], np.cumsum(ivf.lengths)[:-1]]).tolist()
    assert encode_ivf(ivf) == raw


@pytest.mark.interop
def test_pq_codebook_tensor(index_dirs: dict[str, Path]) -> None:
    raw = _buffer(index_dirs["IVF_PQ"] / "auxiliary.idx", 2)
    tensor = decode_tensor(raw)
    assert tensor.data_type == 2 and tensor.shape == (256, DIM)
    assert tensor.to_numpy().dtype == np.float32
    assert encode_tensor(tensor) == raw


def test_round_trip_of_every_field() -> None:
    tensor = TensorMessage.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4))
    ivf = IvfMessage((1.5, -2.0), (0, 300, 1 << 40), (300, 7, 0), tensor, 0.0)
    again = decode_ivf(encode_ivf(ivf))
    assert again == ivf
    assert again.centroids_tensor is not None
    assert again.centroids_tensor.to_numpy().tolist() == tensor.to_numpy().tolist()
    assert decode_ivf(b"") == IvfMessage()
    assert encode_ivf(IvfMessage()) == b""


def test_loss_zero_is_kept_apart_from_no_loss() -> None:
    assert decode_ivf(encode_ivf(IvfMessage(loss=0.0))).loss == 0.0
    assert decode_ivf(encode_ivf(IvfMessage())).loss is None


def test_unpacked_repeated_fields_and_unknown_fields_are_read() -> None:
    # offsets 5 and 6 unpacked (key 0x10), an unknown field 9 (varint), lengths packed
    data = bytes([0x10, 5, 0x10, 6, 0x48, 1, 0x1A, 2, 1, 2])
    assert decode_ivf(data) == IvfMessage(offsets=(5, 6), lengths=(1, 2))
    assert decode_tensor(bytes([0x08, 4, 0x10, 3, 0x10, 1, 0x1A, 3, 1, 2, 3])).shape == (3, 1)


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "u1", "u2", "u4", "u8"])
def test_tensor_dtypes(dtype: str) -> None:
    array = np.arange(6).astype(dtype).reshape(2, 3)
    tensor = decode_tensor(encode_tensor(TensorMessage.from_numpy(array)))
    assert tensor.to_numpy().dtype == np.dtype(dtype)
    assert tensor.to_numpy().tolist() == array.tolist()


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="array"):
        TensorMessage.from_numpy(np.zeros(2, dtype=np.int8))
    with pytest.raises(CorruptTableError, match="IVF"):
        decode_ivf(bytes([0x10, 0x80]))
    with pytest.raises(CorruptTableError, match="needs 16 bytes"):
        TensorMessage(2, (2, 2), bytes(3)).to_numpy()
    with pytest.raises(CorruptTableError, match="not supported"):
        TensorMessage(0, (1,), bytes(2)).to_numpy()
