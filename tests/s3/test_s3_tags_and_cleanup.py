"""Tags and ``cleanup_old_versions`` on S3 (a real SeaweedFS server): each library sees the
other's tags; our cleanup of a table removes what pylance's cleanup removes from its twin
(the same operations through pylance on a second table)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import lance
import pyarrow as pa
import pytest
from tests.s3.seaweed import SeaweedServer

import lance_semantic as ls
from lance_semantic.storage.object_store import open_store

#: bytes_removed is compared with what left our table: the twins are built apart, and their
#: manifests differ by a byte here and there (random ids of varying varint length)
_STATS = (
    "old_versions",
    "data_files_removed",
    "transaction_files_removed",
    "index_files_removed",
    "deletion_files_removed",
)


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "x": pa.array([float(i) for i in ids])})


def _build(uri: str, options: dict[str, str]) -> Any:
    ds = lance.write_dataset(_rows(0, 40), uri, max_rows_per_file=20, storage_options=options)
    ds.insert(_rows(40, 5))
    ds.delete("id < 3")
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id = 10")
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    return ds


def _kinds(uri: str, options: dict[str, str]) -> dict[str, int]:
    """How many files each top directory of the table holds."""
    counts: dict[str, int] = {}
    for f in open_store(uri, options).walk(""):
        top = f.path.split("/", 1)[0]
        counts[top] = counts.get(top, 0) + 1
    return counts


def test_tags_both_ways(s3_server: SeaweedServer) -> None:
    o = s3_server.storage_options
    uri = s3_server.uri()
    lance.write_dataset(_rows(0, 3), uri, storage_options=o).insert(_rows(3, 2))
    ours = ls.dataset(uri, storage_options=o)
    ours.tags.create("first", 1)
    ours.tags.create("é", 2)
    theirs = lance.dataset(uri, storage_options=o)
    assert theirs.tags.get_version("first") == 1
    assert lance.dataset(uri, version="é", storage_options=o).version == 2
    theirs.tags.create("second", 2)
    theirs.tags.update("first", 2)
    assert {n: t["version"] for n, t in ours.tags.list().items()} == {
        "first": 2,
        "second": 2,
        "é": 2,
    }
    assert ls.dataset(uri, version="second", storage_options=o).version == 2
    ours.tags.delete("second")
    with pytest.raises(ls.TagNotFoundError):
        ours.tags.get_version("second")
    with pytest.raises(ValueError):
        lance.dataset(uri, storage_options=o).tags.get_version("second")
    assert "%C3%A9.json" in open_store(uri, o).list("_refs/tags")


@pytest.mark.parametrize("delete_unverified", [False, True])
def test_cleanup_removes_what_pylance_removes(
    s3_server: SeaweedServer, delete_unverified: bool
) -> None:
    o = s3_server.storage_options
    theirs_uri, ours_uri = s3_server.uri(), s3_server.uri()
    _build(theirs_uri, o)
    _build(ours_uri, o)
    for uri in (theirs_uri, ours_uri):  # an abandoned data file, written just now
        open_store(uri, o).put("data/stray.lance", b"x" * 10)
        lance.dataset(uri, storage_options=o).tags.create("keep", 3)
    kwargs = {
        "older_than": timedelta(0),
        "delete_unverified": delete_unverified,
        "error_if_tagged_old_versions": False,
    }
    before = {f.path: f.size for f in open_store(ours_uri, o).walk("")}
    a = lance.dataset(theirs_uri, storage_options=o).cleanup_old_versions(**kwargs)
    b = ls.dataset(ours_uri, storage_options=o).cleanup_old_versions(**kwargs)
    assert {k: getattr(b, k) for k in _STATS} == {k: getattr(a, k) for k in _STATS}
    after = {f.path for f in open_store(ours_uri, o).walk("")}
    assert b.bytes_removed == sum(size for path, size in before.items() if path not in after)
    assert abs(b.bytes_removed - a.bytes_removed) <= 16
    assert _kinds(ours_uri, o) == _kinds(theirs_uri, o)
    assert open_store(ours_uri, o).exists("data/stray.lance") is not delete_unverified
    versions = [v["version"] for v in ls.dataset(ours_uri, storage_options=o).versions()]
    assert versions == [3, 7]
    for v in versions:
        expected = lance.dataset(theirs_uri, version=v, storage_options=o).to_table()
        assert ls.dataset(ours_uri, version=v, storage_options=o).to_table() == expected
        assert lance.dataset(ours_uri, version=v, storage_options=o).to_table() == expected
