"""The everyday pylance verbs against stock pylance 14.0.2: ``head``,
``sample``, ``get_fragment``, ``checkout_latest``, ``list_indices`` / ``has_index``,
``stats.dataset_stats``, ``versions`` / ``get_version`` / ``version_refs``.

Each runs on one table through both libraries and must return what pylance returns
(values and types), on tables pylance wrote and on tables we wrote.
"""

from __future__ import annotations

import random
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"s{i}" for i in ids]),
            "st": pa.array([{"x": i} for i in ids], pa.struct([("x", pa.int64())])),
        }
    )


@pytest.fixture(params=["pylance", "ours"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Five fragments over four versions with deletions, written by either library."""
    uri = str(tmp_path / "t")
    if request.param == "pylance":
        ds: Any = lance.write_dataset(_rows(0, 30), uri, max_rows_per_file=10)
        ds.insert(_rows(30, 5))
        ds.insert(_rows(35, 2000))
        ds.delete("id % 4 = 1")
    else:
        ds = ls.write_dataset(_rows(0, 30), uri, max_rows_per_file=10)
        ds.insert(_rows(30, 5))
        ds.insert(_rows(35, 2000))
        ds.delete("id % 4 = 1")
    return uri


def _list_indices(ds: Any) -> list[dict[str, Any]]:
    with warnings.catch_warnings():  # pylance 14: "list_indices is deprecated"
        warnings.simplefilter("ignore", DeprecationWarning)
        return list(ds.list_indices())


# ---- head / sample / get_fragment ---------------------------------------------------------


def test_head(table: str) -> None:
    ours, theirs = ls.dataset(table), lance.dataset(table)
    for n in (0, 1, 7, 50, 10_000):
        assert ours.head(n) == theirs.head(n)
    assert ours.head(3, columns=["s", "st.x"]) == theirs.head(3, columns=["s", "st.x"])
    assert ours.head(4, filter="id > 100") == theirs.head(4, filter="id > 100")


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_sample_draws_what_pylance_draws_for_one_seed(table: str, seed: int) -> None:
    """pylance samples with ``random.sample`` over the live rows, then ``take``; so does
    lance-semantic, and ``random.seed`` makes both repeatable and identical."""
    ours, theirs = ls.dataset(table), lance.dataset(table)
    for n, order in [(5, True), (40, True), (40, False), (0, True)]:
        random.seed(seed)
        expected = theirs.sample(n, randomize_order=order)
        random.seed(seed)
        got = ours.sample(n, randomize_order=order)
        assert got == expected
        assert got.num_rows == n
        assert len(set(got["id"].to_pylist())) == n, "distinct rows"
    random.seed(seed)
    expected = theirs.sample(6, columns=["id"])
    random.seed(seed)
    assert ours.sample(6, columns=["id"]) == expected


def test_sample_of_every_row_and_in_row_order(table: str) -> None:
    ours = ls.dataset(table)
    total = ours.count_rows()
    everything = ours.sample(total, randomize_order=False)
    assert everything == ours.to_table()
    ids = np.asarray(ours.sample(total)["id"])
    assert sorted(ids.tolist()) == ours.to_table()["id"].to_pylist()


def test_get_fragment(table: str) -> None:
    ours, theirs = ls.dataset(table), lance.dataset(table)
    ids = [f.fragment_id for f in theirs.get_fragments()]
    assert [f.fragment_id for f in ours.get_fragments()] == ids
    for fid in ids:
        mine = ours.get_fragment(fid)
        assert mine is not None and mine.fragment_id == fid
        assert mine.to_table() == theirs.get_fragment(fid).to_table()
        assert mine.count_rows() == theirs.get_fragment(fid).count_rows()
    assert ours.get_fragment(max(ids) + 1) is None
    assert theirs.get_fragment(max(ids) + 1) is None


# ---- checkout_latest ------------------------------------------------------------------------


def test_checkout_latest_moves_the_handle_in_place(table: str) -> None:
    ours, theirs = ls.dataset(table, version=1), lance.dataset(table, version=1)
    other = ours.checkout_version(2)
    assert theirs.checkout_latest() is None  # pylance: in place, returns nothing
    assert ours.checkout_latest() is ours  # here: in place, returns the handle
    assert ours.version == theirs.version == 4
    assert other.version == 2, "other handles stay where they are"
    lance.dataset(table).insert(_rows(9000, 1))  # a newer version by someone else
    assert ours.version == 4
    ours.checkout_latest()
    assert ours.version == 5 and ours.to_table() == lance.dataset(table).to_table()


# ---- indices --------------------------------------------------------------------------------


@pytest.fixture
def indexed(tmp_path: Path) -> str:
    """A pylance table with scalar indices of most kinds, a nested-field index, a vector
    index and an index with two segments (a delta from optimize_indices)."""
    uri = str(tmp_path / "indexed")
    n = 600
    rng = np.random.default_rng(0)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * 8, dtype=np.float32)), 8)
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "cat": pa.array([str(i % 5) for i in range(n)]),
            "txt": pa.array([f"hello world {i}" for i in range(n)]),
            "labels": pa.array([["a", "b"][: i % 3] for i in range(n)]),
            "st": pa.array([{"x": i} for i in range(n)], pa.struct([("x", pa.int64())])),
            "vec": vec,
        }
    )
    ds = lance.write_dataset(data, uri, max_rows_per_file=200)
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("cat", "BITMAP")
    ds.create_scalar_index("labels", "LABEL_LIST")
    ds.create_scalar_index("txt", "INVERTED")
    ds.create_scalar_index("txt", "NGRAM", name="txt_ngram")
    ds.create_scalar_index("id", "ZONEMAP", name="id_zones")
    ds.create_scalar_index("st.x", "BTREE")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2)
    ds.insert(data.slice(0, 10))
    ds.optimize.optimize_indices(num_indices_to_merge=0, index_names=["id_idx"])
    return uri


def test_list_indices_is_pylances(indexed: str) -> None:
    theirs = _list_indices(lance.dataset(indexed))
    ours = ls.dataset(indexed).list_indices()
    assert ours == theirs
    assert [type(e["fragment_ids"]) for e in ours] == [type(e["fragment_ids"]) for e in theirs]
    assert {e["type"] for e in ours} >= {"BTree", "Bitmap", "LabelList", "Inverted", "IVF_PQ"}
    assert [e["name"] for e in ours].count("id_idx") == 2, "a delta segment is its own entry"
    assert ls.dataset(indexed).has_index and lance.dataset(indexed).has_index


@pytest.mark.parametrize(
    "kind", ["IVF_FLAT", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT", "IVF_RQ"]
)
def test_vector_index_types_are_named_as_by_pylance(tmp_path: Path, kind: str) -> None:
    uri = str(tmp_path / "v")
    rng = np.random.default_rng(1)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(300 * 16, dtype=np.float32)), 16)
    ds = lance.write_dataset(pa.table({"v": vec}), uri)
    extra = {"num_sub_vectors": 4} if kind.endswith("PQ") else {}
    ds.create_index("v", kind, num_partitions=2, **extra)
    assert ls.dataset(uri).list_indices() == _list_indices(lance.dataset(uri))
    assert ls.dataset(uri).list_indices()[0]["type"] == kind


def test_indices_of_older_versions_and_none(indexed: str, table: str) -> None:
    for v in (1, 3, 9):
        assert ls.dataset(indexed, version=v).list_indices() == _list_indices(
            lance.dataset(indexed, version=v)
        )
    assert ls.dataset(table).list_indices() == [] == _list_indices(lance.dataset(table))
    assert not ls.dataset(table).has_index


# ---- stats ----------------------------------------------------------------------------------


def test_dataset_stats(table: str, indexed: str) -> None:
    for uri in (table, indexed):
        ours, theirs = ls.dataset(uri), lance.dataset(uri)
        for rows_per_group in (1024, 1, 10, 100_000):
            assert ours.stats.dataset_stats(rows_per_group) == theirs.stats.dataset_stats(
                rows_per_group
            )
        assert ours.stats.dataset_stats() == theirs.stats.dataset_stats()


def test_dataset_stats_count_deletions_without_a_stored_count(tmp_path: Path) -> None:
    """A deletion file whose row count is not recorded (0) is read to count its rows."""
    import dataclasses

    from lance_semantic.commit.committer import load_manifest
    from lance_semantic.manifest.codec import encode_manifest_file
    from lance_semantic.storage import paths
    from lance_semantic.storage.object_store import open_store

    uri = str(tmp_path / "t")
    lance.write_dataset(_rows(0, 20), uri).delete("id < 3")
    store = open_store(uri)
    m = load_manifest(store)
    frag = m.fragments[0]
    assert frag.deletion_file is not None
    blank = dataclasses.replace(frag.deletion_file, num_deleted_rows=0)
    m2 = dataclasses.replace(m, fragments=(dataclasses.replace(frag, deletion_file=blank),))
    name = paths.manifest_name(m.version)
    store.put(f"{paths.VERSIONS_DIR}/{name}", encode_manifest_file(m2))
    assert ls.dataset(uri).stats.dataset_stats()["num_deleted_rows"] == 3
    assert lance.dataset(uri).stats.dataset_stats()["num_deleted_rows"] == 3


def test_other_stats_say_they_are_not_supported(table: str) -> None:
    # index_stats reads the index files (tests/interop/test_index_verbs.py); no index here
    with pytest.raises(KeyError, match="id_idx"):
        ls.dataset(table).stats.index_stats("id_idx")
    with pytest.raises(ls.NotSupportedYetError, match="data_stats"):
        ls.dataset(table).stats.data_stats()


# ---- versions -------------------------------------------------------------------------------


def test_versions_are_pylances(table: str, indexed: str) -> None:
    for uri in (table, indexed):
        ours, theirs = ls.dataset(uri).versions(), lance.dataset(uri).versions()
        assert ours == theirs
        for entry in ours:
            assert list(entry) == ["version", "timestamp", "metadata"]
            assert isinstance(entry["version"], int)
            assert isinstance(entry["timestamp"], datetime)
            assert entry["timestamp"].tzinfo is None  # naive local time, as pylance
            assert all(isinstance(v, str) for v in entry["metadata"].values())
            assert list(entry["metadata"]) == sorted(entry["metadata"])


def test_get_version_and_version_refs(table: str) -> None:
    for v in (1, 2, 4):
        ours, theirs = ls.dataset(table, version=v), lance.dataset(table, version=v)
        assert ours.get_version() == theirs.get_version()
        assert ours.version_refs() == theirs.version_refs()
    assert ls.dataset(table).get_version()["metadata"]["total_rows"] == str(
        lance.dataset(table).count_rows()
    )


def test_versions_after_a_mix_of_our_operations(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_rows(0, 50), uri, max_rows_per_file=20)
    ds.delete("id < 10")
    ds.update({"s": "'u'"}, where="id = 20")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        _rows(45, 10)
    )
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds.checkout_version(2).restore()
    assert ls.dataset(uri).versions() == lance.dataset(uri).versions()
