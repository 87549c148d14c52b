"""Indices stay true: pylance builds the indices, we run the operation,
pylance answers the queries (through the index) as it would after its own operation.

- ``restore()`` commits the restored version's indices (and config, table metadata);
- ``drop_columns`` of an indexed column removes the indices on it, as pylance does;
- ``alter_columns`` changing the type of an indexed column is refused, as pylance refuses
  it; nothing is committed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import SchemaEvolutionError

pytestmark = pytest.mark.interop

N = 300
DIM = 8


def _rows() -> pa.Table:
    rng = np.random.default_rng(7)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(N * DIM, dtype=np.float32)), DIM)
    return pa.table(
        {
            "id": pa.array(range(N), pa.int64()),
            "x": pa.array(range(N), pa.int32()),
            "vec": vec,
        }
    )


def _indices(uri: str) -> list[tuple[str, list[str]]]:
    return sorted((i.name, list(i.field_names)) for i in lance.dataset(uri).describe_indices())


def _nearest(uri: str, row: int) -> int:
    q = _rows().column("vec")[row].values.to_numpy()
    got = lance.dataset(uri).to_table(nearest={"column": "vec", "q": q, "k": 1}, columns=["id"])
    return int(got.column("id")[0].as_py())


@pytest.fixture
def deleted_then_indexed(tmp_path: Path) -> tuple[str, str]:
    """v1: all rows; v2: rows id < 100 deleted; v3: BTREE on id; v4: IVF_PQ on vec.
    Two copies: one for pylance's restore, one for ours."""
    uri = str(tmp_path / "ours")
    lance.write_dataset(_rows(), uri)
    ds = lance.dataset(uri)
    ds.delete("id < 100")
    ds.create_scalar_index("id", "BTREE")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    assert lance.dataset(uri).count_rows("id < 100") == 0
    theirs = str(tmp_path / "theirs")
    shutil.copytree(uri, theirs)
    return uri, theirs


def test_restore_commits_the_restored_versions_indices(deleted_then_indexed: tuple[str, str]):
    ours, theirs = deleted_then_indexed
    lance.dataset(theirs, version=1).restore()
    ls.dataset(ours, version=1).restore()
    assert lance.dataset(ours).version == lance.dataset(theirs).version == 5
    assert _indices(ours) == _indices(theirs) == []
    for uri in (ours, theirs):
        assert lance.dataset(uri).count_rows("id < 100") == 100
        assert _nearest(uri, 5) == 5  # a restored row, not a neighbour the index knows


def test_restore_of_an_indexed_version_brings_its_indices_back(
    deleted_then_indexed: tuple[str, str],
):
    ours, theirs = deleted_then_indexed
    for uri in (ours, theirs):
        lance.dataset(uri).drop_index("id_idx")  # v5: only the vector index
    lance.dataset(theirs, version=3).restore()
    ls.dataset(ours, version=3).restore()
    assert _indices(ours) == _indices(theirs) == [("id_idx", ["id"])]
    for uri in (ours, theirs):
        assert lance.dataset(uri).count_rows("id < 150") == 50
        extra = _rows().slice(0, 1).set_column(0, "id", pa.array([1000], pa.int64()))
        ls.dataset(uri).insert(extra)
        assert lance.dataset(uri).count_rows("id >= 1000") == 1


def test_dropping_an_indexed_column_drops_its_indices(tmp_path: Path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lance.write_dataset(_rows(), ours)
    lance.dataset(ours).create_scalar_index("id", "BTREE")
    lance.dataset(ours).create_scalar_index("x", "BTREE")
    lance.dataset(ours).create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    shutil.copytree(ours, theirs)
    lance.dataset(theirs).drop_columns(["x", "vec"])
    ls.dataset(ours).drop_columns(["x", "vec"])
    assert _indices(ours) == _indices(theirs) == [("id_idx", ["id"])]
    for uri in (ours, theirs):
        assert lance.dataset(uri).count_rows("id < 10") == 10  # through the BTREE
        assert lance.dataset(uri).to_table(filter="id = 7").column("id").to_pylist() == [7]


def test_casting_an_indexed_column_is_refused_as_pylance_refuses_it(tmp_path: Path):
    uri = str(tmp_path / "t")
    lance.write_dataset(_rows(), uri)
    lance.dataset(uri).create_scalar_index("x", "BTREE")
    with pytest.raises(OSError, match="index"):
        lance.dataset(uri).alter_columns({"path": "x", "data_type": pa.int64()})
    ds = ls.dataset(uri)
    with pytest.raises(SchemaEvolutionError) as info:
        ds.alter_columns({"path": "x", "data_type": pa.int64()})
    assert info.value.field_path == "x"
    assert ds.version == lance.dataset(uri).version == 2
    # a column no index covers can still be cast, and the index keeps answering
    ds.alter_columns({"path": "id", "data_type": pa.int32()})
    assert _indices(uri) == [("x_idx", ["x"])]
    assert lance.dataset(uri).count_rows("x < 10") == 10
