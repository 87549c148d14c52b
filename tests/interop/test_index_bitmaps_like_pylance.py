"""Index fragment bitmaps and index files through our operations, as pylance 14 keeps them
(measured on twins: pylance's operation on one, ours on the other):

- delete (part of a fragment or all of it), update (rows moved to a new fragment) and
  merge_insert leave every index entry as it was: the bitmap still names fragments that are
  gone or rewritten (pylance filters them when it searches) and new fragments are not in it
  (searched flat);
- cleanup_old_versions after a compaction removes the old index's files and keeps the
  remapped one's; a tag on an old version keeps that version's index files; upgrading the
  table to semantic types keeps its index, and ``nearest`` through it still answers.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.manifest import index_entries

pytestmark = pytest.mark.interop

DIM = 8


def _rows(start: int, n: int, x: int = 0) -> pa.Table:
    rng = np.random.default_rng(start)
    vectors = pa.array(rng.random(n * DIM, dtype=np.float32))
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "x": pa.array([x] * n, pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(vectors, DIM),
        }
    )


def _entries(uri: str) -> list[tuple[str, tuple[int, ...]]]:
    manifest = ls.dataset(uri)._snapshot().manifest
    return sorted((e.name, e.fragment_ids) for e in index_entries(manifest.index_section))


def _uuids(uri: str) -> list[str]:
    manifest = ls.dataset(uri)._snapshot().manifest
    return sorted(e.uuid for e in index_entries(manifest.index_section))


def _nearest(ds: Any, q: np.ndarray) -> list[int]:
    near = {"column": "vec", "q": q, "k": 5, "nprobes": 2}
    return list(ds.to_table(columns=["id"], nearest=near)["id"].to_pylist())


@pytest.fixture
def twins(tmp_path: Path) -> tuple[str, str]:
    """3 fragments of 100 rows, an IVF_FLAT index on vec and a BTREE on x."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    for i in range(3):
        lance.write_dataset(_rows(i * 100, 100), theirs, mode="append" if i else "create")
    lance.dataset(theirs).create_index("vec", "IVF_FLAT", num_partitions=2)
    lance.dataset(theirs).create_scalar_index("x", "BTREE")
    shutil.copytree(theirs, ours)
    return theirs, ours


def _merge(ds: Any) -> Any:
    source = _rows(290, 20, x=5)
    builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    return builder.execute(source)


OPERATIONS: dict[str, Callable[[Any], Any]] = {
    "delete a whole fragment": lambda ds: ds.delete("id < 100"),
    "delete some rows": lambda ds: ds.delete("id < 50"),
    "update a column not indexed": lambda ds: ds.update({"x": "x + 1"}, where="id < 150"),
    "update the key": lambda ds: ds.update({"id": "id + 1000"}, where="id < 150"),
    "merge_insert": _merge,
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_the_bitmaps_follow_pylances_rules(twins: tuple[str, str], name: str) -> None:
    theirs, ours = twins
    OPERATIONS[name](lance.dataset(theirs))
    OPERATIONS[name](ls.dataset(ours))
    assert _entries(ours) == _entries(theirs) == [("vec_idx", (0, 1, 2)), ("x_idx", (0, 1, 2))]
    fragments = [f.fragment_id for f in lance.dataset(theirs).get_fragments()]
    assert [f.fragment_id for f in lance.dataset(ours).get_fragments()] == fragments
    for q in np.random.default_rng(5).random((3, DIM), dtype=np.float32):
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(lance.dataset(ours), q) == _nearest(ls.dataset(ours), q) == expected


def _vector_twins(tmp_path: Path) -> tuple[str, str]:
    theirs, ours = str(tmp_path / "vt"), str(tmp_path / "vo")
    for i in range(3):
        lance.write_dataset(_rows(i * 100, 100), theirs, mode="append" if i else "create")
    lance.dataset(theirs).create_index("vec", "IVF_FLAT", num_partitions=2)
    lance.dataset(theirs).delete("id < 20")
    shutil.copytree(theirs, ours)
    return theirs, ours


def test_cleanup_after_a_compaction_keeps_the_remapped_index(tmp_path: Path) -> None:
    theirs, ours = _vector_twins(tmp_path)
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    assert len(os.listdir(Path(ours, "_indices"))) == 2
    now = dt.timedelta(0)
    t = lance.dataset(theirs).cleanup_old_versions(older_than=now)
    o = ls.dataset(ours).cleanup_old_versions(older_than=now)
    assert (o.old_versions, o.index_files_removed) == (t.old_versions, t.index_files_removed)
    assert o.index_files_removed == 2
    for uri in (theirs, ours):
        assert os.listdir(Path(uri, "_indices")) == _uuids(uri)
    q = np.full(DIM, 0.5, np.float32)
    assert _nearest(lance.dataset(ours), q) == _nearest(lance.dataset(theirs), q)
    assert _nearest(ls.dataset(ours), q) == _nearest(lance.dataset(theirs), q)


def test_a_tagged_version_keeps_its_index_through_compaction_and_cleanup(
    tmp_path: Path,
) -> None:
    _, ours = _vector_twins(tmp_path)
    ds = ls.dataset(ours)
    ds.tags.create("before", ds.version)
    (old,) = _uuids(ours)
    ds.optimize.compact_files()
    now = dt.timedelta(0)
    ls.dataset(ours).cleanup_old_versions(older_than=now, error_if_tagged_old_versions=False)
    (new,) = _uuids(ours)
    assert sorted(os.listdir(Path(ours, "_indices"))) == sorted([old, new])
    q = np.full(DIM, 0.25, np.float32)
    tagged = lance.dataset(ours, version="before")
    assert _nearest(ls.dataset(ours, version="before"), q) == _nearest(tagged, q)
    assert _nearest(ls.dataset(ours), q) == _nearest(tagged, q)


def test_upgrade_keeps_the_index_and_compaction_remaps_it_after(tmp_path: Path) -> None:
    theirs, ours = _vector_twins(tmp_path)
    before = _entries(ours)
    ls.dataset(ours).upgrade_semantic_types()
    assert _entries(ours) == before
    lance.write_dataset(_rows(1000, 50), theirs, mode="append")
    ls.dataset(ours).insert(_rows(1000, 50))
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    assert _entries(ours) == _entries(theirs)
    for q in np.random.default_rng(9).random((3, DIM), dtype=np.float32):
        assert _nearest(ls.dataset(ours), q) == _nearest(lance.dataset(theirs), q)


def test_an_update_of_a_column_inside_a_fragment_uncovers_it_for_that_columns_indices(
    tmp_path: Path,
) -> None:
    """A two-phase ``Update`` whose ``fields_modified`` rewrote an indexed column inside a
    fragment (pylance's ``LanceFragment.update_columns``): pylance's commit drops that
    fragment from the bitmaps of the indices over the column (their entries there are
    stale) and keeps the others; ours does the same, so a filter through the index finds
    the new value (it would find nothing through the stale entry)."""
    table = pa.table({"id": pa.array(range(100)), "x": pa.array(range(100), pa.int64())})
    table = table.append_column("y", pa.array(range(100), pa.int64()))
    base = str(tmp_path / "base.lance")
    lance.write_dataset(table, base, max_rows_per_file=50)
    ds = lance.dataset(base)
    ds.create_scalar_index("x", "BTREE")
    ds.create_scalar_index("y", "BTREE")
    ds = lance.dataset(base)
    new_x = pa.table({"id": pa.array([3]), "x": pa.array([1000], pa.int64())})
    meta, fields = ds.get_fragment(0).update_columns(new_x, left_on="id")
    got = {}
    for who, op, commit in (
        ("pylance", lance.LanceOperation.Update, lance.LanceDataset.commit),
        ("ours", ls.LanceOperation.Update, ls.Dataset.commit),
    ):
        uri = str(tmp_path / f"{who}.lance")
        shutil.copytree(base, uri)
        commit(uri, op(updated_fragments=[meta], fields_modified=fields), read_version=ds.version)
        got[who] = _entries(uri)
        assert lance.dataset(uri).to_table(filter="x = 1000")["id"].to_pylist() == [3], who
        assert ls.dataset(uri).to_table(filter="x = 1000")["id"].to_pylist() == [3], who
        assert ls.dataset(uri).count_rows("x = 3") == 0, who
    assert got["ours"] == got["pylance"] == [("x_idx", (1,)), ("y_idx", (0, 1))]
