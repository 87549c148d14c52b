"""Compaction of an indexed table remaps its indices, as pylance 14's ``compact_files``
does (default options): twins compacted one by pylance, one by us, hold the same manifest
entries (but the new uuid), byte-equal remapped ``auxiliary.idx`` rows and buffers, and
answer ``nearest`` alike, ours and pylance's, through the remapped index.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.dataset import compaction
from lance_semantic.errors import NotSupportedYetError
from lance_semantic.manifest import decode_rewritten_index, decode_transaction, index_entries
from lance_semantic.storage import LocalObjectStore
from lance_semantic.storage import UncommittedFiles as LocalFiles
from lance_semantic.storage.paths import TRANSACTIONS_DIR

pytestmark = pytest.mark.interop

DIM = 16
PER_FRAGMENT = 500
PARTITIONS = 4


def _rows(start: int, n: int = PER_FRAGMENT) -> pa.Table:
    rng = np.random.default_rng(start)
    vectors = pa.array(rng.random(n * DIM, dtype=np.float32))
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(vectors, DIM),
        }
    )


def _options(kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {"num_partitions": PARTITIONS}
    if kind == "IVF_PQ":
        out["num_sub_vectors"] = 4
    return out


def _twins(tmp_path: Path, kind: str, *, built_by_us: bool = False) -> tuple[str, str]:
    """4 fragments indexed, then one appended (not indexed); rows deleted, fragment 0
    wholly: pylance keeps it in the bitmap and its rows in the index."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    for i in range(4):
        lance.write_dataset(_rows(i * PER_FRAGMENT), theirs, mode="append" if i else "create")
    if built_by_us:
        ls.dataset(theirs).create_index("vec", kind, **_options(kind))
    else:
        lance.dataset(theirs).create_index("vec", kind, **_options(kind))
    lance.write_dataset(_rows(4 * PER_FRAGMENT), theirs, mode="append")
    lance.dataset(theirs).delete(f"id % 7 = 0 or id < {PER_FRAGMENT}")
    shutil.copytree(theirs, ours)
    return theirs, ours


def _queries() -> np.ndarray:
    return np.random.default_rng(99).random((4, DIM), dtype=np.float32)


def _nearest(ds: Any, q: np.ndarray, **extra: Any) -> list[int]:
    near = {"column": "vec", "q": q, "k": 10, "nprobes": PARTITIONS, **extra}
    return list(ds.to_table(columns=["id"], nearest=near)["id"].to_pylist())


def _aux(uri: str, uuid: str) -> tuple[pa.Table, list[bytes], dict[bytes, bytes]]:
    return _file(uri, uuid, "auxiliary.idx")


def _file(uri: str, uuid: str, name: str) -> tuple[pa.Table, list[bytes], dict[bytes, bytes]]:
    reader = LanceFileReader(f"{uri}/_indices/{uuid}/{name}")
    meta = reader.metadata()
    buffers = [bytes(reader.read_global_buffer(i)) for i in range(1, len(meta.global_buffers))]
    return reader.read_all().to_table(), buffers, dict(meta.schema.metadata or {})


def _rewrite_of(uri: str) -> Any:
    """The one Rewrite among the table's transactions."""
    store = LocalObjectStore(uri)
    found = []
    for name in store.list(TRANSACTIONS_DIR):
        txn = decode_transaction(store.get(f"{TRANSACTIONS_DIR}/{name}"))
        if type(txn.operation).__name__ == "Rewrite":
            found.append(txn.operation)
    (rewrite,) = found
    return rewrite


def _entries(uri: str) -> list[Any]:
    ds = ls.dataset(uri)
    return index_entries(ds._snapshot().manifest.index_section)


@pytest.mark.parametrize("kind", ["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
def test_compaction_remaps_an_ivf_index_as_pylance(tmp_path: Path, kind: str) -> None:
    theirs, ours = _twins(tmp_path, kind)
    before = _entries(ours)[0]
    assert before.fragment_ids == (0, 1, 2, 3)
    pylance_metrics = lance.dataset(theirs).optimize.compact_files()
    our_metrics = ls.dataset(ours).optimize.compact_files()
    assert our_metrics.fragments_removed == pylance_metrics.fragments_removed == 4
    assert our_metrics.fragments_added == pylance_metrics.fragments_added == 2
    (t,), (o,) = _entries(theirs), _entries(ours)
    # a new uuid; the bitmap loses the rewritten fragments and gains the new one (the
    # wholly deleted fragment 0 stays, as in pylance's); the rest is kept
    assert o.uuid not in (before.uuid, t.uuid)
    assert t.fragment_ids == o.fragment_ids == (0, 5)
    same = ("name", "fields", "dataset_version", "type_url", "details", "index_version")
    for attr in (*same, "created_at_ms"):
        assert getattr(o, attr) == getattr(t, attr) == getattr(before, attr), attr
    assert [f.path for f in o.files] == [f.path for f in t.files]
    # the Rewrite names the swap
    (rewritten,) = _rewrite_of(ours).rewritten_indices
    r = decode_rewritten_index(rewritten)
    assert (r.old_uuid, r.new_uuid, r.type_url, r.index_version) == (
        before.uuid,
        o.uuid,
        before.type_url,
        1,
    )
    # the same rows, codes and buffers (pylance keeps the partitions' row order); the old
    # index's files stay for the old versions
    rows_t, buffers_t, meta_t = _aux(theirs, t.uuid)
    rows_o, buffers_o, meta_o = _aux(ours, o.uuid)
    assert rows_o.equals(rows_t)
    assert buffers_o == buffers_t
    if kind != "IVF_SQ":  # pylance re-prints the SQ bounds (the last digit may change)
        assert meta_o == meta_t
    # index.idx: the same centroids and metadata (pylance writes its metadata keys in hash
    # order, so the bytes may differ)
    assert _file(ours, o.uuid, "index.idx") == _file(theirs, t.uuid, "index.idx")
    assert os.path.isdir(Path(ours, "_indices", before.uuid))
    # pylance and we answer alike through the remapped index
    for q in _queries():
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(lance.dataset(ours), q) == expected
        assert _nearest(ls.dataset(ours), q) == expected
    assert ls.dataset(ours).count_rows() == lance.dataset(theirs).count_rows()


def test_our_index_is_remapped_too_and_pylance_appends_over_it(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, "IVF_PQ", built_by_us=True)
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    (t,), (o,) = _entries(theirs), _entries(ours)
    assert t.fragment_ids == o.fragment_ids
    assert _aux(ours, o.uuid)[0].equals(_aux(theirs, t.uuid)[0])
    for uri in (theirs, ours):
        lance.dataset(uri).optimize.optimize_indices()
    for q in _queries():
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(lance.dataset(ours), q) == expected
        assert _nearest(ls.dataset(ours), q) == expected


def test_fragments_indexed_differently_are_not_merged(tmp_path: Path) -> None:
    """pylance's planner: the indexed fragments form one group, the appended one another;
    an index of fragments no group rewrites is left alone (same uuid)."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    lance.write_dataset(_rows(0, 1000), theirs)
    lance.dataset(theirs).create_index("vec", "IVF_FLAT", num_partitions=2)
    for i in range(3):
        lance.write_dataset(_rows(1000 + i * 100, 100), theirs, mode="append")
    shutil.copytree(theirs, ours)
    before = _entries(ours)[0]
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    for uri in (theirs, ours):
        assert [f.fragment_id for f in lance.dataset(uri).get_fragments()] == [0, 4]
        (entry,) = _entries(uri)
        assert (entry.uuid, entry.fragment_ids) == (before.uuid, (0,))
    # both indices cover fragment 0 (rewritten alone for its deletion): both remapped
    for uri in (theirs, ours):
        lance.dataset(uri).delete("id = 3")
    ls.dataset(ours).create_index("vec", "IVF_SQ", num_partitions=2, name="sq")
    lance.dataset(theirs).create_index("vec", "IVF_SQ", num_partitions=2, name="sq")
    lance.dataset(theirs).optimize.compact_files(materialize_deletions_threshold=0.0001)
    ls.dataset(ours).optimize.compact_files(materialize_deletions_threshold=0.0001)
    got = {uri: sorted((e.name, e.fragment_ids) for e in _entries(uri)) for uri in (theirs, ours)}
    assert got[ours] == got[theirs] == [("sq", (4, 5)), ("vec_idx", (5,))]
    for q in _queries():
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(ls.dataset(ours), q) == _nearest(lance.dataset(ours), q) == expected


@pytest.mark.parametrize("kind", ["ZONEMAP", "IVF_HNSW_SQ"])
def test_an_index_we_cannot_remap_is_refused(tmp_path: Path, kind: str) -> None:
    """pylance remaps ZONEMAP and HNSW indices too; we do not yet: refused before anything
    is written, naming the index and its type (BTREE / BITMAP / LABEL_LIST are remapped:
    tests/interop/test_scalar_index_writes.py)."""
    uri = str(tmp_path / "t")
    for i in range(3):
        lance.write_dataset(_rows(i * 100, 100), uri, mode="append" if i else "create")
    if kind.startswith("IVF"):
        lance.dataset(uri).create_index("vec", kind, num_partitions=2)
        name = "vec_idx"
    else:
        lance.dataset(uri).create_scalar_index("id", kind)
        name = "id_idx"
    files = set(os.listdir(Path(uri, "data")))
    version = lance.dataset(uri).version
    with pytest.raises(NotSupportedYetError, match=f"{name}.*remapping"):
        ls.dataset(uri).optimize.compact_files()
    assert set(os.listdir(Path(uri, "data"))) == files
    assert lance.dataset(uri).version == version


def _compacted_elsewhere(tmp_path: Path) -> tuple[str, str, Any, Any, Any]:
    """A table and its twin compacted by pylance; the twin's new fragment and remapped
    index folder copied into the table (uncommitted there)."""
    uri, twin = str(tmp_path / "t"), str(tmp_path / "twin")
    for i in range(4):
        lance.write_dataset(_rows(i * PER_FRAGMENT), uri, mode="append" if i else "create")
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
    lance.dataset(uri).delete("id % 7 = 0")
    shutil.copytree(uri, twin)
    lance.dataset(twin).optimize.compact_files()
    compacted = lance.dataset(twin)
    (new_fragment,) = [f.metadata for f in compacted.get_fragments()]
    for df in new_fragment.files:
        shutil.copy(Path(twin, "data", df.path), Path(uri, "data", df.path))
    ((old,), (new,)) = _entries(uri), _entries(twin)
    shutil.copytree(Path(twin, "_indices", new.uuid), Path(uri, "_indices", new.uuid))
    return uri, twin, old, new, new_fragment


@pytest.mark.parametrize("api", ["pylance", "ours"])
def test_a_two_phase_rewrite_with_rewritten_indices_commits_as_pylance(
    tmp_path: Path, api: str
) -> None:
    """pylance's ``Compaction.commit`` remaps inside pylance (its RewriteResult carries no
    index); a ``LanceOperation.Rewrite`` with ``rewritten_indices`` (pylance's or ours)
    swaps the entry, records the folder's files with their sizes and moves the bitmap."""
    uri, twin, old, new, fragment = _compacted_elsewhere(tmp_path)
    owner: Any = lance.LanceOperation if api == "pylance" else ls.LanceOperation
    rewritten = owner.RewrittenIndex(old.uuid, new.uuid, new.type_url, new.details, 1)
    old_fragments = [f.metadata for f in lance.dataset(uri).get_fragments()]
    group = ls.LanceOperation.RewriteGroup(old_fragments, [fragment])
    version = lance.dataset(uri).version
    ls.Dataset.commit(uri, ls.LanceOperation.Rewrite([group], [rewritten]), read_version=version)
    (got,) = _entries(uri)
    assert (got.uuid, got.fragment_ids, got.files) == (new.uuid, (4,), new.files)
    assert (got.name, got.created_at_ms, got.dataset_version) == (
        old.name,
        old.created_at_ms,
        old.dataset_version,
    )
    for q in _queries():
        expected = _nearest(lance.dataset(twin), q)
        assert _nearest(lance.dataset(uri), q) == _nearest(ls.dataset(uri), q) == expected


def test_bad_rewritten_indices_are_refused_naming_the_argument(tmp_path: Path) -> None:
    uri, _, old, new, fragment = _compacted_elsewhere(tmp_path)
    old_fragments = [f.metadata for f in lance.dataset(uri).get_fragments()]
    group = ls.LanceOperation.RewriteGroup(old_fragments, [fragment])
    version = lance.dataset(uri).version
    other = "00000000-0000-0000-0000-000000000009"
    cases: list[tuple[object, type[Exception], str]] = [
        ("not an index", TypeError, "rewritten_indices"),
        (ls.LanceOperation.RewrittenIndex("x", new.uuid, "", b"", 1), ValueError, "uuid"),
        (ls.LanceOperation.RewrittenIndex(other, new.uuid, "", b"", 1), ValueError, other),
        (ls.LanceOperation.RewrittenIndex(old.uuid, other, "", b"", 1), ValueError, "no index"),
    ]
    for item, error, match in cases:
        op = ls.LanceOperation.Rewrite([group], [item])
        with pytest.raises(error, match=match):
            ls.Dataset.commit(uri, op, read_version=version)
    assert lance.dataset(uri).version == version
    # a group of fragments the index covers and one it does not
    lance.write_dataset(_rows(9000, 10), uri, mode="append")
    ds = lance.dataset(uri)
    mixed = ls.LanceOperation.RewriteGroup([f.metadata for f in ds.get_fragments()], [fragment])
    item = ls.LanceOperation.RewrittenIndex(old.uuid, new.uuid, new.type_url, new.details, 1)
    op = ls.LanceOperation.Rewrite([mixed], [item])
    with pytest.raises(ValueError, match="rewritten_indices: a rewrite group mixes"):
        ls.Dataset.commit(uri, op, read_version=ds.version)
    assert lance.dataset(uri).version == ds.version


def test_a_flagged_table_is_compacted_with_its_index(tmp_path: Path) -> None:
    """pylance refuses a flagged table; our compaction remaps its index and our nearest
    through it equals an exact search."""
    uri = str(tmp_path / "f.lance")
    ds = ls.write_dataset(_rows(0, 1200), uri, semantic_types=True, max_rows_per_file=300)
    ds.create_index("vec", "IVF_PQ", num_partitions=PARTITIONS, num_sub_vectors=4)
    ds.insert(_rows(1200, 100))
    ds.delete("id % 5 = 0")
    before = _entries(uri)[0]
    metrics = ls.dataset(uri).optimize.compact_files()
    assert (metrics.fragments_removed, metrics.fragments_added) == (5, 2)
    (after,) = _entries(uri)
    assert after.uuid != before.uuid
    assert after.fragment_ids == (5,)  # the appended fragment went into its own group
    table = ls.dataset(uri).to_table(columns=["id", "vec"])
    vectors = table.column("vec").combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    for q in _queries():
        exact = np.argsort(((vectors - q) ** 2).sum(axis=1), kind="stable")[:10]
        want = table.column("id").to_numpy()[exact].tolist()
        assert _nearest(ls.dataset(uri), q, refine_factor=50) == want


def test_index_segments_of_one_name_are_remapped_each(tmp_path: Path) -> None:
    """An index and its delta segment (pylance's optimize_indices after an append) cover
    different fragments: each group is covered by one segment and remapped in it."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    for i in range(2):
        lance.write_dataset(_rows(i * 300, 300), theirs, mode="append" if i else "create")
    lance.dataset(theirs).create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
    for i in range(2):
        lance.write_dataset(_rows(600 + i * 300, 300), theirs, mode="append")
    lance.dataset(theirs).optimize.optimize_indices(num_indices_to_merge=0)
    lance.dataset(theirs).delete("id % 3 = 0")
    shutil.copytree(theirs, ours)
    assert sorted(e.fragment_ids for e in _entries(ours)) == [(0, 1), (2, 3)]
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    got = {uri: sorted(e.fragment_ids for e in _entries(uri)) for uri in (theirs, ours)}
    assert got[ours] == got[theirs] == [(4,), (5,)]
    for q in _queries():
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(lance.dataset(ours), q) == _nearest(ls.dataset(ours), q) == expected


def _stale_setup(uri: str) -> Any:
    """3 small indexed fragments, a big one; a handle read before the concurrent commit."""
    for i in range(3):
        lance.write_dataset(_rows(i * 100, 100), uri, mode="append" if i else "create")
    lance.write_dataset(_rows(5000, 2000), uri, mode="append")
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2)
    return ls.dataset(uri)


def _exact(uri: str, q: np.ndarray) -> list[int]:
    near = {"column": "vec", "q": q, "k": 10, "use_index": False}
    return list(lance.dataset(uri).to_table(columns=["id"], nearest=near)["id"].to_pylist())


def test_a_concurrent_append_is_rebased_over(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    stale = _stale_setup(uri)
    lance.write_dataset(_rows(900, 10), uri, mode="append")
    assert stale.optimize.compact_files(target_rows_per_fragment=1000).fragments_removed == 3
    (entry,) = _entries(uri)
    assert entry.fragment_ids == (3, 5)  # the appended fragment 4 is not indexed
    for q in _queries():
        near = {"nprobes": 2}
        assert _nearest(ls.dataset(uri), q, **near) == _exact(uri, q)
        assert _nearest(lance.dataset(uri), q, **near) == _exact(uri, q)


@pytest.mark.parametrize("concurrent", ["delete", "create_index"])
def test_a_conflicting_commit_leaves_no_index_behind(tmp_path: Path, concurrent: str) -> None:
    """A delete of a compacted fragment or a new index committed meanwhile conflicts with
    the Rewrite (as in Lance); the remapped index's files and folder are removed."""
    uri = str(tmp_path / "t")
    stale = _stale_setup(uri)
    if concurrent == "delete":
        lance.dataset(uri).delete("id = 1")
    else:
        lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2, replace=True)
    folders = set(os.listdir(Path(uri, "_indices")))
    with pytest.raises(ls.CommitConflictError):
        stale.optimize.compact_files(target_rows_per_fragment=1000)
    assert set(os.listdir(Path(uri, "_indices"))) == folders
    assert len(lance.dataset(uri).get_fragments()) == 4


def test_two_compactions_remapping_one_index_conflict(tmp_path: Path) -> None:
    """Lance's rule: a Rewrite that remapped an index conflicts (retryably) with another
    that remapped the same index, even over other fragments; a new compaction then works."""
    uri = str(tmp_path / "t")
    for start, n in ((0, 100), (100, 100), (200, 2000), (2200, 100), (2300, 100)):
        lance.write_dataset(_rows(start, n), uri, mode="append" if start else "create")
    lance.dataset(uri).create_index("vec", "IVF_FLAT", num_partitions=2)
    stale = ls.dataset(uri)
    snap = stale._snapshot()
    options = compaction.CompactionOptions.resolve({}, target_rows_per_fragment=1000)
    tasks = compaction.plan_compaction(snap.store, snap.manifest, options)
    assert [[f.id for f in t.fragments] for t in tasks] == [[0, 1], [3, 4]]
    lance.dataset(uri).optimize.compact_files(
        target_rows_per_fragment=1000, excluded_fragment_ids=[3, 4]
    )
    with LocalFiles(snap.store) as files:
        new = compaction.rewrite_task(
            snap.store, snap.manifest, tasks[1], options, files.data_names.append
        )
        with pytest.raises(ls.CommitConflictError) as info:
            compaction.commit_rewrite(snap.store, snap.manifest, [(tasks[1].fragments, new)], files)
    assert info.value.retryable
    ls.dataset(uri).optimize.compact_files(target_rows_per_fragment=1000)
    assert [f.fragment_id for f in lance.dataset(uri).get_fragments()] == [2, 7]
    for q in _queries():
        assert _nearest(ls.dataset(uri), q, nprobes=2) == _exact(uri, q)
        assert _nearest(lance.dataset(uri), q, nprobes=2) == _exact(uri, q)


@pytest.mark.parametrize(
    ("dtype", "metric", "kind"),
    [
        ("float16", "l2", "IVF_FLAT"),
        ("float64", "cosine", "IVF_FLAT"),
        ("float32", "cosine", "IVF_PQ"),
        ("float32", "dot", "IVF_SQ"),
    ],
)
def test_other_metrics_and_vector_types_are_remapped_alike(
    tmp_path: Path, dtype: str, metric: str, kind: str
) -> None:
    """pylance's indices over float16 / float64 vectors, cosine and dot: the remapped rows
    (in the index's own vector type) equal pylance's."""

    def rows(start: int) -> pa.Table:
        values = np.random.default_rng(start).random(300 * DIM).astype(dtype)
        return pa.table(
            {
                "id": pa.array(range(start, start + 300), pa.int64()),
                "vec": pa.FixedSizeListArray.from_arrays(pa.array(values), DIM),
            }
        )

    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    for i in range(4):
        lance.write_dataset(rows(i * 300), theirs, mode="append" if i else "create")
    lance.dataset(theirs).create_index("vec", kind, metric=metric, **_options(kind))
    lance.dataset(theirs).delete("id % 4 = 0")
    shutil.copytree(theirs, ours)
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    (t,), (o,) = _entries(theirs), _entries(ours)
    assert _aux(ours, o.uuid)[0].equals(_aux(theirs, t.uuid)[0])
    for q in _queries().astype(dtype):
        expected = _nearest(lance.dataset(theirs), q)
        assert _nearest(lance.dataset(ours), q) == _nearest(ls.dataset(ours), q) == expected
