"""pylance's everyday write surface, side by side with pylance:
``write_dataset`` arguments and inputs, ``merge_insert`` matched-row modes, results read
as dicts, and the error classes users catch."""

from __future__ import annotations

import os
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.dataset as pds
import pytest

import lance_semantic as ls

ROWS = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}, {"id": 4, "v": "d"}]


def _both(tmp: Path, name: str, data) -> tuple[ls.Dataset, lance.LanceDataset]:
    ours = ls.write_dataset(data, str(tmp / f"{name}-ours"))
    theirs = lance.write_dataset(data, str(tmp / f"{name}-pylance"))
    return ours, theirs


def _same(ours: ls.Dataset, theirs: lance.LanceDataset) -> None:
    a, b = ours.to_table(), theirs.to_table()
    assert a.schema == b.schema and a.to_pylist() == b.to_pylist()


@pytest.mark.parametrize(
    "kind",
    ["list of dicts", "dict of lists", "pyarrow dataset", "pylance dataset"],
)
def test_write_dataset_inputs_like_pylance(tmp_path: Path, kind: str) -> None:
    table = pa.Table.from_pylist(ROWS)
    src = str(tmp_path / "src")
    lance.write_dataset(table, src, max_rows_per_file=2)
    data = {
        "list of dicts": ROWS,
        "dict of lists": {"id": [r["id"] for r in ROWS], "v": [r["v"] for r in ROWS]},
        "pyarrow dataset": pds.dataset(table),
        "pylance dataset": lance.dataset(src),
    }[kind]
    ours = ls.write_dataset(data, str(tmp_path / "ours"))
    theirs = lance.write_dataset(data, str(tmp_path / "theirs"))
    _same(ours, theirs)
    assert ours.to_table().to_pylist() == ROWS


def test_schema_and_mode_are_positional_as_in_pylance(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("v", pa.large_string())])
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(ROWS, uri, schema)
    assert ds.schema == schema
    ds = ls.write_dataset(ROWS[:1], uri, schema, "append")
    assert ds.version == 2 and ds.count_rows() == 5
    ds = ls.write_dataset(ROWS[:2], uri, schema, "overwrite")
    assert ds.count_rows() == 2


def test_pathlib_and_home_relative_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    ds = ls.write_dataset(ROWS, "~/home.lance")
    assert os.path.isdir(tmp_path / "home.lance") and not os.path.exists("~")
    assert ls.dataset("~/home.lance").count_rows() == 4 == ds.count_rows()
    assert ls.dataset(tmp_path / "home.lance").count_rows() == 4
    ls.write_dataset(ROWS, tmp_path / "path.lance")
    assert lance.dataset(str(tmp_path / "path.lance")).count_rows() == 4


def test_max_bytes_per_file_starts_new_files(tmp_path: Path) -> None:
    """A soft limit, as pylance's: checked between batches (ours counts the Arrow bytes
    written to the file, pylance the encoded bytes flushed), so both split 800 KB of
    input given as 100-row batches at 100 KB, and neither splits one small batch."""
    table = pa.table({"id": pa.array(range(100_000), pa.int64())})

    def batches() -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(100))

    limit = 100_000
    ours = ls.write_dataset(batches(), str(tmp_path / "ours"), max_bytes_per_file=limit)
    theirs = lance.write_dataset(batches(), str(tmp_path / "theirs"), max_bytes_per_file=limit)
    assert len(theirs.get_fragments()) > 1
    sizes = [f.count_rows() for f in ours.get_fragments()]
    assert len(sizes) > 1 and max(sizes) * 8 <= limit + 800  # at most one batch over
    assert ours.to_table().equals(table)
    small = ls.write_dataset(table.slice(0, 1000), str(tmp_path / "one"), max_bytes_per_file=10)
    assert len(small.get_fragments()) == 1  # one batch: never cut inside it
    with pytest.raises(ValueError, match="max_bytes_per_file must be at least 1"):
        ls.write_dataset(table, str(tmp_path / "bad"), max_bytes_per_file=0)


def _merge(ds, how: str, src: pa.Table):
    b = ds.merge_insert("id")
    b = {"delete": b.when_matched_delete, "fail": b.when_matched_fail}[how]()
    return b.when_not_matched_insert_all().execute(src)


@pytest.mark.parametrize(
    "src",
    [
        [{"id": 2, "v": "B"}, {"id": 9, "v": "Z"}],
        [{"id": 9, "v": "Z"}],
        [{"id": 1, "v": "A"}, {"id": 4, "v": "D"}],
    ],
    ids=["some match", "none match", "all match"],
)
@pytest.mark.parametrize("how", ["delete", "fail"])
def test_when_matched_delete_and_fail_like_pylance(tmp_path: Path, how: str, src) -> None:
    ours, theirs = _both(tmp_path, "m", pa.Table.from_pylist(ROWS))
    source = pa.Table.from_pylist(src)
    try:
        want = _merge(theirs, how, source)
    except OSError as e:
        assert "found matching row" in str(e)
        with pytest.raises(ls.MatchedRowError) as raised:
            _merge(ours, how, source)
        assert isinstance(raised.value, OSError) and raised.value.keys == {"id": src[0]["id"]}
        assert ls.dataset(ours.uri).version == 1  # nothing committed
        return
    got = _merge(ours, how, source)
    assert dict(got) == want
    assert sorted(ls.dataset(ours.uri).to_table().to_pylist(), key=lambda r: r["id"]) == sorted(
        lance.dataset(theirs.uri).to_table().to_pylist(), key=lambda r: r["id"]
    )


def test_the_last_matched_clause_wins_as_in_pylance(tmp_path: Path) -> None:
    ours, theirs = _both(tmp_path, "last", pa.Table.from_pylist(ROWS))
    src = pa.table({"id": [1, 2], "v": ["x", "y"]})
    for ds in (ours, theirs):
        ds.merge_insert("id").when_matched_update_all().when_matched_delete().execute(src)
    _same(ls.dataset(ours.uri), lance.dataset(theirs.uri))
    for ds in (ls.dataset(ours.uri), lance.dataset(theirs.uri)):
        ds.merge_insert("id").when_matched_delete().when_matched_update_all().execute(
            pa.table({"id": [3], "v": ["q"]})
        )
    _same(ls.dataset(ours.uri), lance.dataset(theirs.uri))


def test_fail_on_a_later_fragment_leaves_no_files(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(pa.Table.from_pylist(ROWS), uri, max_rows_per_file=1)
    before = sorted(os.listdir(os.path.join(uri, "data")))
    src = pa.table({"id": [100, 101, 4], "v": ["n", "m", "dup"]})
    with pytest.raises(ls.MatchedRowError, match="id = 4"):
        ds.merge_insert("id").when_matched_fail().when_not_matched_insert_all().execute(src)
    assert sorted(os.listdir(os.path.join(uri, "data"))) == before
    assert ls.dataset(uri).version == 1


def test_results_read_as_dicts_like_pylance(tmp_path: Path) -> None:
    ours, theirs = _both(tmp_path, "r", pa.Table.from_pylist(ROWS))
    assert dict(ours.delete("id = 1")) == theirs.delete("id = 1")
    assert ours.update({"v": "'z'"}, where="id > 2")["num_rows_updated"] == 2
    assert theirs.update({"v": "'z'"}, where="id > 2")["num_rows_updated"] == 2
    src = pa.table({"id": [2, 7], "v": ["B", "G"]})
    a = ours.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    b = theirs.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    got, want = a.execute(src), b.execute(src)
    assert dict(got) == want and got.num_inserted_rows == want["num_inserted_rows"]
    assert list(got.keys()) == list(want.keys())
    with pytest.raises(KeyError):
        got["rows"]


def test_errors_users_catch_are_pylance_classes_too(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    with pytest.raises(ValueError):
        lance.dataset(missing)
    with pytest.raises(ValueError) as raised:
        ls.dataset(missing)
    assert isinstance(raised.value, ls.DatasetNotFoundError)
    ours, theirs = _both(tmp_path, "e", pa.Table.from_pylist(ROWS))
    with pytest.raises(ValueError):
        theirs.to_table(columns=["nope"])
    for call in (lambda: ours.to_table(columns=["nope"]), lambda: ours.take([0], columns=["nope"])):
        with pytest.raises(ls.ColumnNotFoundError, match="column 'nope' does not exist") as e:
            call()
        assert isinstance(e.value, ValueError) and e.value.field_path == "nope"


def test_duplicate_columns_as_pylance(tmp_path: Path) -> None:
    """A scan refuses a column named twice (a ValueError, as pylance); a take keeps one."""
    ours, theirs = _both(tmp_path, "dup", pa.Table.from_pylist(ROWS))
    with pytest.raises(ValueError):
        theirs.to_table(columns=["id", "id"])
    with pytest.raises(ValueError, match="duplicate column name 'id'"):
        ours.to_table(columns=["id", "id"])
    got = ours.take([0], columns=["id", "id"])
    assert got.equals(theirs.take([0], columns=["id", "id"]))
