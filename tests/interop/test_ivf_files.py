"""The IVF index files lance-semantic writes (vector/ivf_write.py) against pylance 14's own:
given pylance's centroids and PQ codebook, our ``index.idx`` / ``auxiliary.idx`` hold the same
schema, schema metadata, global buffers and rows (docs/format/index-formats.md "Files")."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.manifest import index_entries
from lance_semantic.manifest._wire import message_fields, packed_varints
from lance_semantic.storage import LocalObjectStore
from lance_semantic.vector.ivf_write import IvfBuilder, IvfParams, vector_index_details

N, D, P = 3000, 16, 8


def _fields(data: bytes) -> dict[int, int | bytes]:
    return {n: v for n, _, v in message_fields(data)}


def _tensor(data: bytes) -> np.ndarray:
    t = _fields(data)
    shape = packed_varints(t[2]) if isinstance(t[2], bytes) else [t[2]]
    assert t[1] == 2  # FLOAT32
    return np.frombuffer(t[3], "<f4").reshape(shape)  # type: ignore[arg-type]


def _ivf(data: bytes) -> dict[int, int | bytes]:
    return _fields(data)


def _files(folder: Path) -> dict[str, LanceFileReader]:
    return {p.name: LanceFileReader(str(p)) for p in folder.iterdir()}


CASES = [
    ("IVF_PQ", "l2", {"num_sub_vectors": 4}),
    ("IVF_FLAT", "cosine", {}),
    ("IVF_SQ", "dot", {}),
]


@pytest.mark.parametrize(("index_type", "metric", "extra"), CASES)
def test_our_files_match_pylances_for_its_centroids(
    tmp_path: Path, index_type: str, metric: str, extra: dict[str, int]
) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, D)).astype(np.float32)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), D)
    ds = lance.write_dataset(pa.table({"vec": vec}), str(tmp_path / "t.lance"))
    ds = ds.create_index("vec", index_type, metric=metric, num_partitions=P, **extra)
    (theirs_dir,) = (tmp_path / "t.lance" / "_indices").iterdir()
    theirs = _files(theirs_dir)
    ivf_theirs = _ivf(theirs["index.idx"].read_global_buffer(1))
    centroids = _tensor(ivf_theirs[4])  # type: ignore[arg-type]
    codebook = None
    if index_type == "IVF_PQ":
        codebook = _tensor(theirs["auxiliary.idx"].read_global_buffer(2)).reshape(4, 256, D // 4)

    params = IvfParams(index_type, metric, P, extra.get("num_sub_vectors"))  # type: ignore[arg-type]
    builder = IvfBuilder(params, D, seed=0)
    builder.train(x, ivf_centroids=centroids, pq_codebook=codebook)
    rows = ds.to_table(columns=["vec"], with_row_address=True)
    builder.add(rows["_rowaddr"].to_numpy(), np.stack(rows["vec"].to_numpy(zero_copy_only=False)))
    store = LocalObjectStore(str(tmp_path / "ours"))
    written = builder.write(store, "idx")
    ours = _files(tmp_path / "ours" / "idx")
    assert sorted(f.path for f in written) == sorted(theirs) == ["auxiliary.idx", "index.idx"]
    for f in written:
        assert f.size_bytes == (tmp_path / "ours" / "idx" / f.path).stat().st_size

    for name in theirs:
        a, b = ours[name].metadata(), theirs[name].metadata()
        assert (a.major_version, a.minor_version) == (b.major_version, b.minor_version)
        assert a.schema.remove_metadata() == b.schema.remove_metadata(), name
        assert set(a.schema.metadata) == set(b.schema.metadata), name
        assert len(a.global_buffers) == len(b.global_buffers), name
    # index.idx: the same settings, centroids and (zero) offsets; the loss is ours
    meta = ours["index.idx"].metadata().schema.metadata
    assert meta == theirs["index.idx"].metadata().schema.metadata
    ivf_ours = _ivf(ours["index.idx"].read_global_buffer(1))
    assert (ivf_ours[2], ivf_ours[3], ivf_ours[4]) == (ivf_theirs[2], ivf_theirs[3], ivf_theirs[4])
    # auxiliary.idx: the same partitions, rows and codes
    a_meta = ours["auxiliary.idx"].metadata().schema.metadata
    b_meta = theirs["auxiliary.idx"].metadata().schema.metadata
    assert a_meta == b_meta
    for buffer in range(1, 3 if codebook is not None else 2):
        mine = ours["auxiliary.idx"].read_global_buffer(buffer)
        assert mine == theirs["auxiliary.idx"].read_global_buffer(buffer), buffer
    got = ours["auxiliary.idx"].read_all().to_table()
    want = theirs["auxiliary.idx"].read_all().to_table()
    assert got.schema == want.schema
    assert got["_rowid"].equals(want["_rowid"])
    code = got.schema.names[1]
    g = np.stack(got[code].to_numpy(zero_copy_only=False))
    w = np.stack(want[code].to_numpy(zero_copy_only=False))
    if index_type == "IVF_FLAT":
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    else:
        assert (g == w).mean() > 0.999
    assert json.loads(meta[b"lance:flat"]) == [""] * P


def test_vector_index_details_match_pylances(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(1000 * 8, np.float32)), 8)
    for index_type, metric, extra in CASES:
        ds = lance.write_dataset(pa.table({"vec": vec}), str(tmp_path / index_type))
        ds.create_index("vec", index_type, metric=metric, num_partitions=2, **extra)
        (entry,) = index_entries(ls.dataset(str(tmp_path / index_type))._manifest.index_section)
        params = IvfParams(index_type, metric, 2, extra.get("num_sub_vectors"))  # type: ignore[arg-type]
        ours = vector_index_details(params)
        assert _sorted(ours) == _sorted(entry.details), index_type


def _sorted(details: bytes) -> list[tuple[int, object]]:
    """The fields of a VectorIndexDetails, the build parameters as a sorted key / value list
    (pylance writes them in hash-map order)."""
    out: list[tuple[int, object]] = []
    for n, _, v in message_fields(details):
        if n == 9 and isinstance(v, bytes):
            kv = _fields(v)
            out.append((9, (kv[1], kv[2])))
        else:
            out.append((n, v))
    return sorted(out, key=repr)
