"""Tags and ``cleanup_old_versions`` against stock pylance 14.0.2 as the oracle.

Tags: each library sees, moves and deletes the other's tags; the tag files have pylance's
bytes (timestamps aside); errors match pylance's exception families.

Cleanup: twin tables (one built, then copied with its file times) are cleaned, one by
pylance and one by lance-semantic, with the same arguments. The files left, the emptied
index directories and every counter of the returned statistics must be equal, tagged
versions stay, and every version left is read alike by both libraries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

import lance_semantic as ls

pytestmark = pytest.mark.interop

_STATS = (
    "bytes_removed",
    "old_versions",
    "data_files_removed",
    "transaction_files_removed",
    "index_files_removed",
    "deletion_files_removed",
)


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "x": pa.array([float(i) for i in ids])})


def _files(root: str) -> dict[str, int]:
    out = {}
    for here, _, names in os.walk(root):
        for name in names:
            path = os.path.join(here, name)
            out[os.path.relpath(path, root)] = os.path.getsize(path)
    return out


def _dirs(root: str) -> set[str]:
    return {os.path.relpath(here, root) for here, _, _ in os.walk(root)}


# ---- tags ---------------------------------------------------------------------------------


@pytest.fixture
def table(tmp_path: Path) -> str:
    """Three versions written by pylance."""
    uri = str(tmp_path / "t")
    ds = lance.write_dataset(_rows(0, 3), uri)
    ds.insert(_rows(3, 2))
    ds.delete("id = 0")
    return uri


_STAMP = re.compile(rb'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"')


def test_tag_files_have_pylances_bytes(table: str) -> None:
    lance.dataset(table).tags.create("theirs", 2)
    ls.dataset(table).tags.create("ours", 2)
    theirs = (Path(table) / "_refs/tags/theirs.json").read_bytes()
    ours = (Path(table) / "_refs/tags/ours.json").read_bytes()
    assert _STAMP.sub(b'"T"', ours) == _STAMP.sub(b'"T"', theirs)
    doc = json.loads(ours)
    assert list(doc) == [
        "branch",
        "version",
        "createdAt",
        "updatedAt",
        "manifestSize",
        "metadata",
    ]
    assert doc["createdAt"] == doc["updatedAt"]
    assert doc["manifestSize"] == json.loads(theirs)["manifestSize"]
    ours_ds, theirs_ds = ls.dataset(table), lance.dataset(table)
    assert ours_ds.tags.list() == theirs_ds.tags.list()
    for entry in ours_ds.tags.list().values():
        assert entry["created_at"] is not None and entry["created_at"].tzinfo is not None


def test_pylance_sees_our_tags(table: str) -> None:
    ours = ls.dataset(table)
    ours.tags.create("v1", 1)
    ours.tags.create("latest")  # no reference: the latest version
    ours.tags.create("same-as-v1", "v1")
    ours.tags.create("tuple", (None, 2))
    theirs = lance.dataset(table)
    assert {n: t["version"] for n, t in theirs.tags.list().items()} == {
        "v1": 1,
        "latest": 3,
        "same-as-v1": 1,
        "tuple": 2,
    }
    assert theirs.tags.get_version("v1") == 1
    assert lance.dataset(table, version="v1").to_table() == ls.dataset(table, version=1).to_table()
    assert theirs.checkout_version("tuple").version == 2
    ours.tags.update("v1", 2)
    assert lance.dataset(table).tags.get_version("v1") == 2
    ours.tags.replace_metadata("v1", {"owner": "me"})
    assert lance.dataset(table).tags.list()["v1"]["metadata"] == {"owner": "me"}
    ours.tags.delete("v1")
    assert "v1" not in lance.dataset(table).tags.list()
    # pylance can move and delete the tags we wrote
    theirs.tags.update("latest", 1)
    theirs.tags.delete("tuple")
    assert {n: t["version"] for n, t in ours.tags.list().items()} == {
        "latest": 1,
        "same-as-v1": 1,
    }


def test_we_see_pylances_tags(table: str) -> None:
    theirs = lance.dataset(table)
    theirs.tags.create("first", 1)
    theirs.tags.create("second", 2)
    theirs.tags.replace_metadata("second", {"k": "v"})
    ours = ls.dataset(table)
    assert ours.tags.list() == lance.dataset(table).tags.list()
    assert ours.tags.get_version("second") == 2
    assert ls.dataset(table, version="first").version == 1
    assert ours.checkout_version("second").to_table() == theirs.checkout_version(2).to_table()
    assert ours.version == 3, "checkout_version returns a new handle"
    ours.tags.update("first", 3)
    after = lance.dataset(table).tags.list()
    assert after["first"]["version"] == 3
    assert after["first"]["updated_at"] > after["first"]["created_at"]
    ours.tags.update("second", 1)
    assert lance.dataset(table).tags.list()["second"]["metadata"] == {"k": "v"}, "update keeps it"
    ours.tags.delete("first")
    assert sorted(lance.dataset(table).tags.list()) == ["second"]


def test_list_ordered_matches_pylance(table: str) -> None:
    theirs = lance.dataset(table)
    for name, version in [("b", 1), ("a", 1), ("c", 3), ("d", 2)]:
        theirs.tags.create(name, version)
    ours = ls.dataset(table)
    for order in (None, "asc", "desc"):
        assert [n for n, _ in ours.tags.list_ordered(order)] == [  # type: ignore[arg-type]
            n for n, _ in theirs.tags.list_ordered(order)
        ]


def test_tags_written_by_older_lance_are_read(table: str) -> None:
    tags = Path(table) / "_refs" / "tags"
    tags.mkdir(parents=True)
    manifest = sorted((Path(table) / "_versions").glob("*.manifest"))[-1]  # version 3
    (tags / "old.json").write_text(
        json.dumps({"branch": None, "version": 3, "manifestSize": manifest.stat().st_size})
    )
    ours, theirs = ls.dataset(table), lance.dataset(table)
    assert ours.tags.list() == theirs.tags.list()
    assert ours.tags.list()["old"]["created_at"] is None
    assert ls.dataset(table, version="old").version == 3


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m, ds, uri: ds.tags.get_version("nope"), id="get-missing"),
        pytest.param(lambda m, ds, uri: ds.tags.delete("nope"), id="delete-missing"),
        pytest.param(lambda m, ds, uri: ds.tags.update("nope", 1), id="update-missing"),
        pytest.param(lambda m, ds, uri: m.dataset(uri, version="nope"), id="open-missing"),
        pytest.param(lambda m, ds, uri: ds.tags.create("one", 1), id="create-duplicate"),
        pytest.param(lambda m, ds, uri: ds.tags.create("x", 7), id="create-missing-version"),
        pytest.param(lambda m, ds, uri: ds.tags.update("one", 7), id="update-missing-version"),
    ],
)
def test_errors_are_pylances_families(table: str, call: Callable[..., Any]) -> None:
    lance.dataset(table).tags.create("one", 1)
    with pytest.raises(ValueError) as theirs:
        call(lance, lance.dataset(table), table)
    with pytest.raises((ls.TagError, ls.VersionNotFoundError)) as ours:
        call(ls, ls.dataset(table), table)
    assert isinstance(ours.value, ValueError), f"pylance: {theirs.value!r}"
    assert lance.dataset(table).tags.get_version("one") == 1
    assert ls.dataset(table).tags.list() == lance.dataset(table).tags.list()


def test_error_classes_and_attributes(table: str) -> None:
    ds = ls.dataset(table)
    ds.tags.create("one", 1)
    with pytest.raises(ls.TagExistsError) as exists:
        ds.tags.create("one", 2)
    assert exists.value.tag == "one"
    with pytest.raises(ls.TagNotFoundError) as missing:
        ds.checkout_version("nope")
    assert missing.value.tag == "nope"
    assert isinstance(missing.value, OSError)  # pylance's checkout_version raises OSError
    with pytest.raises(OSError):
        lance.dataset(table).checkout_version("nope")
    with pytest.raises(ls.VersionNotFoundError) as version:
        ds.tags.create("x", 9)
    assert version.value.version == 9
    assert isinstance(version.value, ls.DatasetNotFoundError)
    assert not (Path(table) / "_refs/tags/x.json").exists()


def test_a_tag_of_a_missing_table_is_dataset_not_found(tmp_path: Path) -> None:
    with pytest.raises(ls.DatasetNotFoundError) as info:
        ls.dataset(str(tmp_path / "none"), version="v1")
    assert not isinstance(info.value, ls.TagError)


def test_of_two_writers_creating_one_tag_one_wins(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag file is created with put-if-absent: a writer that passed the existence check
    before the other wrote still loses, and the winner's file stays."""
    from lance_semantic.commit import refs

    ls.dataset(table).tags.create("race", 1)
    first = (Path(table) / "_refs/tags/race.json").read_bytes()
    monkeypatch.setattr(refs, "tag_exists", lambda store, name: False)
    with pytest.raises(ls.TagExistsError):
        ls.dataset(table).tags.create("race", 2)
    assert (Path(table) / "_refs/tags/race.json").read_bytes() == first
    assert lance.dataset(table).tags.get_version("race") == 1


_NAMES = ["v1.2.3-rc4", "A_b", "123", "main", "é", "", ".x", "x.", "a..b", "x.lock", "a/b", "a b"]


def test_tag_names_are_accepted_as_by_pylance(table: str) -> None:
    theirs, ours = lance.dataset(table), ls.dataset(table)
    for name in _NAMES:
        try:
            theirs.tags.create(name, 1)
            pylance_ok = True
            theirs.tags.delete(name)
        except OSError:
            pylance_ok = False
        try:
            ours.tags.create(name, 1)
            ours_ok = True
        except ls.InvalidTagNameError:
            ours_ok = False
        assert ours_ok == pylance_ok, name
        if ours_ok:
            assert lance.dataset(table, version=name).version == 1
            ours.tags.delete(name)


def test_a_non_ascii_tag_is_a_percent_encoded_file_name(table: str) -> None:
    """Lance names the file of tag ``é`` ``%C3%A9.json`` (object-store path encoding).
    pylance 14 opens such tags but cannot list them (it encodes the listed name again:
    "Not found: .../%25C3%25A9.json"); lance-semantic lists them under their names."""
    ls.dataset(table).tags.create("é", 2)
    assert os.listdir(Path(table) / "_refs/tags") == ["%C3%A9.json"]
    assert lance.dataset(table, version="é").version == 2
    assert lance.dataset(table).tags.get_version("é") == 2
    lance.dataset(table).tags.create("ñ1", 1)
    assert {n: t["version"] for n, t in ls.dataset(table).tags.list().items()} == {
        "é": 2,
        "ñ1": 1,
    }
    with pytest.raises(ValueError, match="%25C3%25"):
        lance.dataset(table).tags.list()
    lance.dataset(table).tags.delete("é")
    ls.dataset(table).tags.delete("ñ1")
    assert os.listdir(Path(table) / "_refs/tags") == []


# ---- cleanup ------------------------------------------------------------------------------


def _rich_pylance_table(uri: str) -> None:
    """Eight versions by pylance: appends, deletion files replaced, an update, a scalar
    index rewritten by a compaction (two commits)."""
    ds = lance.write_dataset(_rows(0, 100), uri, max_rows_per_file=50)
    ds.insert(_rows(100, 20))
    ds.delete("id < 5")
    ds.update({"x": "x + 1"}, where="id > 110")
    ds.create_scalar_index("id", "BTREE")
    ds.delete("id = 7")
    ds.optimize.compact_files(target_rows_per_fragment=1000)


def _rich_table_of_ours(uri: str) -> None:
    """Versions by lance-semantic: appends, deletes, update, merge_insert, compaction,
    overwrite, more appends."""
    ds = ls.write_dataset(_rows(0, 60), uri, max_rows_per_file=30)
    ds.insert(_rows(60, 10))
    ds.delete("id % 7 = 0")
    ds.update({"x": "x * 2"}, where="id > 50")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        _rows(65, 10)
    )
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds.insert(_rows(200, 5), mode="overwrite")
    ds.insert(_rows(300, 5))


def _blob_table(uri: str) -> None:
    """Blob v2 values inline, packed and dedicated (sidecars under data/<stem>/), then an
    overwrite that leaves the sidecars unreferenced."""
    values = [b"a" * 100, b"b" * 100_000, b"c" * 5_000_000, None]
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("clip")])
    data = pa.table({"id": [1, 2, 3, 4], "clip": blob_array(values)}, schema=schema)
    lance.write_dataset(data, uri)
    lance.write_dataset(data.slice(0, 1), uri, mode="overwrite")
    lance.write_dataset(data.slice(1, 2), uri, mode="append")


def _strays(root: str, *, age_days: float = 0.0, tag: str = "") -> list[str]:
    """Files no manifest references (abandoned writes), ``age_days`` old."""
    names = [
        f"data/stray{tag}.lance",
        f"data/stray{tag}/10000000000000000000000000000000.blob",
        f"_deletions/9-9-99{tag}.arrow",
        f"_deletions/9-9-98{tag}.bin",
        f"_transactions/9-stray{tag}.txn",
        f"_indices/00000000-0000-4000-8000-00000000000{len(tag)}/part{tag}.lance",
        f"_versions/.tmp-stray{tag}",
        f"data/other{tag}.bin",
        f"misc{tag}.lance",
    ]
    when = time.time() - age_days * 86_400
    for name in names:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).write_bytes(b"x" * 10)
        os.utime(path, (when, when))
    return names


def _twins(tmp_path: Path, build: Callable[[str], None]) -> tuple[str, str]:
    src = str(tmp_path / "src")
    build(src)
    theirs, ours = str(tmp_path / "pylance"), str(tmp_path / "ours")
    shutil.copytree(src, theirs)  # copy2: modification times are kept
    shutil.copytree(src, ours)
    return theirs, ours


def _clean_both(
    theirs: str,
    ours: str,
    *,
    version: int | None = None,
    since: float | None = None,
    **kwargs: Any,
) -> tuple[Any, ls.CleanupStats]:
    """Clean both twins alike; ``since`` (epoch seconds) becomes ``older_than`` at the
    moment of each call, so both cut at the same commit time."""
    before = _files(ours)
    if since is not None:
        kwargs["older_than"] = timedelta(seconds=time.time() - since)
    a = lance.dataset(theirs, version=version).cleanup_old_versions(**kwargs)
    if since is not None:
        kwargs["older_than"] = timedelta(seconds=time.time() - since)
    b = ls.dataset(ours, version=version).cleanup_old_versions(**kwargs)
    assert {k: getattr(b, k) for k in _STATS} == {k: getattr(a, k) for k in _STATS}
    assert b.failed_deletes == a.failed_deletes == 0
    assert set(_files(ours)) == set(_files(theirs))
    assert _dirs(ours) == _dirs(theirs)
    removed = set(before) - set(_files(ours))
    assert b.bytes_removed == sum(before[p] for p in removed)
    return a, b


def _every_version_reads_alike(ours: str, theirs: str) -> list[int]:
    listed = [v["version"] for v in ls.dataset(ours).versions()]
    assert listed == [v["version"] for v in lance.dataset(theirs).versions()]
    for v in listed:
        expected = lance.dataset(theirs, version=v).to_table()
        assert lance.dataset(ours, version=v).to_table() == expected
        assert ls.dataset(ours, version=v).to_table() == expected
    return listed


_SCENARIOS: dict[str, tuple[Callable[[str], None], dict[str, Any]]] = {
    "pylance-all-old": (_rich_pylance_table, {"older_than": timedelta(0)}),
    "pylance-default-two-weeks": (_rich_pylance_table, {}),
    "pylance-retain-3": (_rich_pylance_table, {"retain_versions": 3}),
    "pylance-unverified": (
        _rich_pylance_table,
        {"older_than": timedelta(0), "delete_unverified": True},
    ),
    "ours-all-old": (_rich_table_of_ours, {"older_than": timedelta(0)}),
    "ours-retain-2": (_rich_table_of_ours, {"retain_versions": 2}),
    "blob-sidecars": (_blob_table, {"older_than": timedelta(0)}),
}


@pytest.mark.parametrize("scenario", list(_SCENARIOS))
def test_cleanup_leaves_what_pylance_leaves(tmp_path: Path, scenario: str) -> None:
    build, kwargs = _SCENARIOS[scenario]
    theirs, ours = _twins(tmp_path, build)
    versions_before = len(lance.dataset(theirs).versions())
    _, stats = _clean_both(theirs, ours, **kwargs)
    left = _every_version_reads_alike(ours, theirs)
    assert stats.old_versions == versions_before - len(left)
    assert left[-1] == ls.dataset(ours).version, "the latest version always stays"


def test_cleanup_from_an_old_handle_keeps_it_and_everything_after(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, _rich_pylance_table)
    _clean_both(theirs, ours, version=4, older_than=timedelta(0))
    assert _every_version_reads_alike(ours, theirs) == [4, 5, 6, 7, 8]


def test_tagged_versions_stay(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, _rich_pylance_table)
    lance.dataset(theirs).tags.create("keep", 3)
    ls.dataset(ours).tags.create("keep", 3)
    _clean_both(theirs, ours, older_than=timedelta(0), error_if_tagged_old_versions=False)
    assert _every_version_reads_alike(ours, theirs) == [3, 8]
    assert (
        ls.dataset(ours, version="keep").to_table() == lance.dataset(theirs, version=3).to_table()
    )


def test_a_tagged_old_version_is_an_error_by_default_and_nothing_goes(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, _rich_pylance_table)
    ls.dataset(ours).tags.create("keep", 3)
    lance.dataset(theirs).tags.create("keep", 3)
    before = _files(ours)
    with pytest.raises(OSError, match="keep"):
        lance.dataset(theirs).cleanup_old_versions(older_than=timedelta(0))
    with pytest.raises(ls.TaggedVersionsCleanupError) as info:
        ls.dataset(ours).cleanup_old_versions(older_than=timedelta(0))
    assert info.value.tags == {"keep": 3}
    assert isinstance(info.value, OSError)
    assert _files(ours) == before
    assert set(_files(theirs)) == set(before)
    # a tag on the latest version is no error
    ls.dataset(ours).tags.delete("keep")
    ls.dataset(ours).tags.create("newest", 8)
    assert ls.dataset(ours).cleanup_old_versions(older_than=timedelta(0)).old_versions == 7


@pytest.mark.parametrize("delete_unverified", [False, True])
@pytest.mark.parametrize("age_days", [0.0, 8.0])
def test_unreferenced_files_follow_the_seven_day_rule(
    tmp_path: Path, age_days: float, delete_unverified: bool
) -> None:
    theirs, ours = _twins(tmp_path, _rich_pylance_table)
    names = _strays(theirs, age_days=age_days)
    assert _strays(ours, age_days=age_days) == names
    _clean_both(theirs, ours, older_than=timedelta(0), delete_unverified=delete_unverified)
    left = set(_files(ours))
    gone = {n for n in names if n not in left}
    if not delete_unverified and age_days < 7:
        assert gone == set(), "young unreferenced files may belong to a commit in progress"
    elif age_days >= 7:  # old strays: all of the kinds cleanup owns go
        assert gone == set(names) - {"data/other.bin", "misc.lance"}
    else:  # young, delete_unverified: data and index files go; the newer-than-the-kept-version
        assert gone == {  # files of _deletions, _transactions and _versions are not looked at
            "data/stray.lance",
            "data/stray/10000000000000000000000000000000.blob",
            "_indices/00000000-0000-4000-8000-000000000000/part.lance",
        }
    _every_version_reads_alike(ours, theirs)


def _four_versions(uri: str) -> None:
    ds = lance.write_dataset(_rows(0, 5), uri)
    for i in range(3):
        time.sleep(0.3)
        ds.insert(_rows(10 + i, 1))


def _dated_strays(root: str, when: dict[str, float]) -> None:
    for label, stamp in when.items():
        for name in _strays(root, tag=label):
            os.utime(os.path.join(root, name), (stamp, stamp))


def test_newer_files_are_looked_at_only_up_to_the_oldest_kept_commit(tmp_path: Path) -> None:
    """Strays dated before, between and after the two kept versions (retain_versions=2),
    with delete_unverified: in _deletions, _transactions and _versions only the ones older
    than the oldest kept commit go; in data and _indices all go."""
    theirs, ours = _twins(tmp_path, _four_versions)
    stamps = {v["version"]: v["timestamp"].timestamp() for v in lance.dataset(theirs).versions()}
    when = {
        "before": stamps[3] - 0.15,
        "between": (stamps[3] + stamps[4]) / 2,
        "after": stamps[4] + 0.15,
    }
    _dated_strays(theirs, when)
    _dated_strays(ours, when)
    _clean_both(theirs, ours, retain_versions=2, delete_unverified=True)
    left = set(_files(ours))
    assert "_transactions/9-straybefore.txn" not in left
    assert {"_transactions/9-straybetween.txn", "_transactions/9-strayafter.txn"} <= left
    assert not any(n.startswith("data/stray") or n.startswith("_indices/") for n in left)


def test_with_a_tagged_old_version_kept_every_file_is_looked_at(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, _four_versions)
    stamps = {v["version"]: v["timestamp"].timestamp() for v in lance.dataset(theirs).versions()}
    when = {"between": (stamps[3] + stamps[4]) / 2, "after": stamps[4] + 0.15}
    _dated_strays(theirs, when)
    _dated_strays(ours, when)
    lance.dataset(theirs).tags.create("first", 1)
    ls.dataset(ours).tags.create("first", 1)
    _clean_both(
        theirs,
        ours,
        older_than=timedelta(0),
        delete_unverified=True,
        error_if_tagged_old_versions=False,
    )
    left = set(_files(ours))
    assert not any("stray" in n for n in left)
    assert _every_version_reads_alike(ours, theirs) == [1, 4]


def test_older_than_keeps_the_younger_versions(tmp_path: Path) -> None:
    def build(uri: str) -> None:
        ds = lance.write_dataset(_rows(0, 5), uri)
        ds.insert(_rows(5, 1))
        time.sleep(1.0)
        ds.insert(_rows(6, 1))
        ds.delete("id = 0")

    theirs, ours = _twins(tmp_path, build)
    stamps = {v["version"]: v["timestamp"].timestamp() for v in lance.dataset(theirs).versions()}
    _clean_both(theirs, ours, since=(stamps[2] + stamps[3]) / 2)
    assert _every_version_reads_alike(ours, theirs) == [3, 4]


def test_pylance_and_we_keep_working_on_the_cleaned_table(tmp_path: Path) -> None:
    theirs, ours = _twins(tmp_path, _rich_table_of_ours)
    _clean_both(theirs, ours, older_than=timedelta(0))
    lance.dataset(ours).insert(_rows(400, 2))
    ds = ls.dataset(ours)
    ds.insert(_rows(500, 2))
    assert ds.count_rows() == lance.dataset(ours).count_rows() == 14
    assert ds.cleanup_old_versions(older_than=timedelta(0)).old_versions == 2


def test_cleanup_stats_are_a_frozen_value(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_rows(0, 3), uri)
    stats = ds.cleanup_old_versions()
    assert stats == ls.CleanupStats()
    with pytest.raises(AttributeError):
        stats.old_versions = 3  # type: ignore[misc]
