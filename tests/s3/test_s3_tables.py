"""Tables on S3 (a real SeaweedFS server, tests/s3/seaweed.py): every operation, pylance
interop both ways, racing commits, rejected writes."""

from __future__ import annotations

import threading

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main
from lance_semantic.errors import SchemaMismatchError
from lance_semantic.storage.object_store import open_store
from lance_semantic.storage.paths import VERSIONS_DIR


def _table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"n{i}" for i in ids], pa.string()),
            "tags": pa.array([[f"t{i}"] * (i % 3) for i in ids], pa.list_(pa.string())),
        }
    )


def _ids(ds: ls.Dataset) -> list[int]:
    return sorted(ds.to_table(columns=["id"]).column("id").to_pylist())


def _manifests(uri: str, options: dict[str, str]) -> list[str]:
    store = open_store(uri, options)
    return [n for n in store.list(VERSIONS_DIR) if n.endswith(".manifest")]


def test_the_store_primitives(s3_uri: str, s3_options: dict[str, str]) -> None:
    store = open_store(s3_uri, s3_options)
    assert not store.is_local and store.uri("a/b") == f"{s3_uri}/a/b"
    assert store.list("") == [] and not store.exists("x/y")
    store.put("x/y", b"one")
    assert store.get("x/y") == b"one" and store.size("x/y") == 3 and store.exists("x/y")
    assert store.put_if_absent("x/z", b"first")
    assert not store.put_if_absent("x/z", b"second")  # 412: the first stays
    assert store.get("x/z") == b"first"
    assert store.list("x") == ["y", "z"] and store.list("") == ["x"]
    store.delete("x/y")
    store.delete("x/y")  # missing: no error, as locally
    assert store.list("x") == ["z"]
    with pytest.raises(FileNotFoundError):
        store.get("x/y")


@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_every_operation(s3_uri: str, s3_options: dict[str, str], flagged: bool) -> None:
    o = s3_options
    ds = ls.write_dataset(_table(0, 10), s3_uri, semantic_types=flagged, storage_options=o)
    assert ds.version == 1 and ds.semantic_types is flagged
    ds = ls.write_dataset(_table(10, 5), s3_uri, mode="append", storage_options=o)
    assert ds.version == 2 and _ids(ds) == list(range(15))
    assert ds.take([0, 14], columns=["id", "name"]).to_pylist() == [
        {"id": 0, "name": "n0"},
        {"id": 14, "name": "n14"},
    ]
    assert ds.delete("id < 3").num_deleted_rows == 3
    assert ds.update({"name": "'renamed'"}, where="id = 5").num_rows_updated == 1
    ds = ls.dataset(s3_uri, storage_options=o)
    assert _ids(ds) == list(range(3, 15))
    assert ds.to_table(filter="id = 5").column("name").to_pylist() == ["renamed"]
    assert ds.count_rows("id >= 10") == 5
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        _table(14, 2)
    )
    assert _ids(ls.dataset(s3_uri, storage_options=o)) == list(range(3, 16))
    ds.optimize.compact_files()
    assert _ids(ls.dataset(s3_uri, storage_options=o)) == list(range(3, 16))
    ds = ls.write_dataset(_table(100, 2), s3_uri, mode="overwrite", storage_options=o)
    assert _ids(ds) == [100, 101]
    old = ds.checkout_version(2)
    assert _ids(old) == list(range(15))
    assert [v["version"] for v in ds.versions()] == list(range(1, ds.version + 1))
    if not flagged:
        ds = ls.upgrade(s3_uri, storage_options=o)
        assert ds.semantic_types
    report = ls.check(s3_uri, storage_options=o)
    assert report.ok, report.problems


def test_pylance_reads_and_appends_to_ours(s3_uri: str, s3_options: dict[str, str]) -> None:
    ls.write_dataset(_table(0, 6), s3_uri, storage_options=s3_options)
    ls.dataset(s3_uri, storage_options=s3_options).delete("id = 2")
    theirs = lance.dataset(s3_uri, storage_options=s3_options)
    assert sorted(theirs.to_table(columns=["id"]).column("id").to_pylist()) == [0, 1, 3, 4, 5]
    lance.write_dataset(_table(6, 2), s3_uri, mode="append", storage_options=s3_options)
    ours = ls.dataset(s3_uri, storage_options=s3_options)
    assert ours.version == 3 and _ids(ours) == [0, 1, 3, 4, 5, 6, 7]
    ls.write_dataset(_table(8, 1), s3_uri, mode="append", storage_options=s3_options)
    again = lance.dataset(s3_uri, storage_options=s3_options)
    assert again.version == 4 and again.count_rows() == 8


def test_we_read_what_pylance_wrote(s3_uri: str, s3_options: dict[str, str]) -> None:
    theirs = lance.write_dataset(_table(0, 8), s3_uri, storage_options=s3_options)
    theirs.delete("id = 1")
    lance.write_dataset(_table(8, 2), s3_uri, mode="append", storage_options=s3_options)
    ours = ls.dataset(s3_uri, storage_options=s3_options)
    assert ours.version == 3 and _ids(ours) == [0, *range(2, 10)]
    expected = lance.dataset(s3_uri, storage_options=s3_options).to_table()
    assert ours.to_table().sort_by("id").equals(expected.sort_by("id"))


def test_two_commits_to_one_version_one_wins_the_other_rebases(
    s3_uri: str, s3_options: dict[str, str]
) -> None:
    o = s3_options
    ls.write_dataset(_table(0, 2), s3_uri, storage_options=o)
    first, second = ls.dataset(s3_uri, storage_options=o), ls.dataset(s3_uri, storage_options=o)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def append(handle: ls.Dataset, start: int) -> None:
        try:
            barrier.wait()
            handle.insert(_table(start, 3))
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=append, args=(h, s)) for h, s in ((first, 10), (second, 20))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    ds = ls.dataset(s3_uri, storage_options=o)
    assert ds.version == 3  # one commit took version 2, the other was rebased onto it
    assert _ids(ds) == [0, 1, 10, 11, 12, 20, 21, 22]
    assert len(_manifests(s3_uri, o)) == 3
    ops = [v.get("operation") for v in lance.dataset(s3_uri, storage_options=o).versions()]
    assert len(ops) == 3


def test_a_stale_handle_rebases_on_the_published_version(
    s3_uri: str, s3_options: dict[str, str]
) -> None:
    o = s3_options
    ls.write_dataset(_table(0, 2), s3_uri, storage_options=o)
    stale = ls.dataset(s3_uri, storage_options=o)
    lance.write_dataset(_table(2, 2), s3_uri, mode="append", storage_options=o)  # takes v2
    stale.delete("id = 0")  # read at v1: its put of v2 gets 412, it rebases to v3
    ds = ls.dataset(s3_uri, storage_options=o)
    assert ds.version == 3 and _ids(ds) == [1, 2, 3]


def test_a_rejected_write_leaves_no_new_manifest(s3_uri: str, s3_options: dict[str, str]) -> None:
    o = s3_options
    ls.write_dataset(_table(0, 3), s3_uri, storage_options=o)
    before = _manifests(s3_uri, o)
    wrong = pa.table({"id": pa.array(["not an int"], pa.string())})
    with pytest.raises(SchemaMismatchError):
        ls.write_dataset(wrong, s3_uri, mode="append", storage_options=o)
    with pytest.raises(ls.DatasetExistsError):
        ls.write_dataset(_table(0, 1), s3_uri, mode="create", storage_options=o)
    assert _manifests(s3_uri, o) == before
    ds = ls.dataset(s3_uri, storage_options=o)
    assert ds.version == 1 and _ids(ds) == [0, 1, 2]


def test_the_cli_takes_storage_options(
    s3_uri: str, s3_options: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ls.write_dataset(_table(0, 3), s3_uri, storage_options=s3_options)
    flags = [f"--storage-option={k}={v}" for k, v in s3_options.items()]
    assert main(["inspect", s3_uri, *flags]) == 0
    assert "version" in capsys.readouterr().out
    assert main(["upgrade", s3_uri, "--yes", *flags]) == 0
    assert main(["set-output-encoding", s3_uri, "name", "large_utf8", *flags]) == 0
    assert main(["check", s3_uri, *flags]) == 0
    ds = ls.dataset(s3_uri, storage_options=s3_options)
    assert ds.semantic_types and ds.schema.field("name").type == pa.large_utf8()
