"""Small fragments are read by one pylance call each and then joined, assembled and
converted as one batch (``read.fragment_reader.read_together``).

The class: every run boundary a join can meet -- a data file layout that changes from one
fragment to the next (flagged tables: utf8, large_utf8, utf8_view and dictionary input in
every position), a fragment with two data files (after ``add_columns``), deletions (none,
some, every row), a join that would pass the 32-bit offset limit -- read through every
path that uses it: ``to_table``, ``to_batches`` with several batch sizes, offsets and
limits, filters (late materialisation), ``count_rows``. Flagged tables are compared with
the rows as written; the legacy table with pylance's read of the same table.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

convert = importlib.import_module("lance_semantic.codecs.convert")

LAYOUTS = {
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string_view(),
    "dictionary": pa.dictionary(pa.int32(), pa.string()),
}


def _rows(start: int, n: int, layout: str) -> pa.Table:
    i = np.arange(start, start + n)
    s = pa.array([None if k % 7 == 0 else f"s{k}" for k in i]).cast(LAYOUTS[layout])
    return pa.table({"i": i, "s": s, "f": i.astype(np.float64) / 3})


def _flagged(tmp: Path, seed: int) -> tuple[str, list[dict]]:
    """A flagged table of 12-30 fragments of 1-9 rows, each appended from a random layout,
    with random deletions; and its live rows (utf8 ``s``)."""
    rng = np.random.default_rng(seed)
    uri = str(tmp / f"t{seed}")
    at = 0
    for k in range(int(rng.integers(12, 30))):
        n = int(rng.integers(1, 10))
        layout = list(LAYOUTS)[int(rng.integers(len(LAYOUTS)))]
        mode = "create" if k == 0 else "append"
        ls.write_dataset(_rows(at, n, layout), uri, mode=mode, data_storage_version="2.3")
        at += n
    ds = ls.dataset(uri)
    gone = {int(x) for x in rng.choice(at, size=at // 4, replace=False)}
    # a whole fragment's rows too (fragment 1)
    first = ds.get_fragments()[1]
    lo = ds.get_fragments()[0].count_rows()
    gone |= set(range(lo, lo + first.count_rows()))
    ds.delete(f"i IN ({', '.join(map(str, sorted(gone)))})")
    live = [
        {"i": k, "s": None if k % 7 == 0 else f"s{k}", "f": k / 3}
        for k in range(at)
        if k not in gone
    ]
    return uri, live


@pytest.fixture(scope="module", params=[1, 2, 3])
def flagged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    return _flagged(tmp_path_factory.mktemp("together"), request.param)


def _plain(rows: list[dict], columns: list[str] | None = None) -> list[dict]:
    return [{c: r[c] for c in (columns or ["i", "s", "f"])} for r in rows]


@pytest.mark.parametrize("columns", [None, ["s"], ["i", "f"]])
def test_to_table_of_small_fragments_in_every_layout_order(flagged, columns) -> None:
    uri, live = flagged
    got = ls.dataset(uri).to_table(columns=columns, output_encodings={"s": "utf8"})
    assert got.to_pylist() == _plain(live, columns)


@pytest.mark.parametrize("batch_size", [1, 5, 64, 8192])
def test_to_batches_sizes_offsets_and_limits(flagged, batch_size: int) -> None:
    uri, live = flagged
    ds = ls.dataset(uri)
    batches = list(ds.to_batches(batch_size=batch_size, output_encodings={"s": "utf8"}))
    assert all(b.num_rows <= batch_size for b in batches)
    assert pa.Table.from_batches(batches).to_pylist() == _plain(live)
    for offset, limit in ((0, 3), (7, 11), (len(live) - 2, 5)):
        got = ds.to_table(offset=offset, limit=limit, output_encodings={"s": "utf8"})
        assert got.to_pylist() == _plain(live)[offset : offset + limit]


@pytest.mark.parametrize("flt", ["i % 3 = 1", "s IS NULL", "i = 17", "i >= 0", "i < 0"])
def test_filters_and_counts_over_joined_fragments(flagged, flt: str) -> None:
    uri, live = flagged
    ds = ls.dataset(uri)
    keep = {
        "i % 3 = 1": lambda r: r["i"] % 3 == 1,
        "s IS NULL": lambda r: r["s"] is None,
        "i = 17": lambda r: r["i"] == 17,
        "i >= 0": lambda r: True,
        "i < 0": lambda r: False,
    }[flt]
    want = [r for r in live if keep(r)]
    got = ds.to_table(filter=flt, output_encodings={"s": "utf8"})
    assert got.to_pylist() == _plain(want)
    assert ds.to_table(columns=["f"], filter=flt).to_pylist() == _plain(want, ["f"])
    assert ds.count_rows(flt) == len(want)


def test_joins_split_at_the_offset_limit(flagged, monkeypatch: pytest.MonkeyPatch) -> None:
    uri, live = flagged
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 40)  # a join of a few fragments passes it
    ds = ls.dataset(uri)
    assert ds.to_table(output_encodings={"s": "utf8"}).to_pylist() == _plain(live)
    assert ds.count_rows("i % 2 = 0") == sum(1 for r in live if r["i"] % 2 == 0)


def test_the_stored_layout_of_each_fragment_is_returned_without_an_encoding(flagged) -> None:
    """Without an output encoding a flagged read returns the type's default layout; the
    joined batches hold the same values as fragment-by-fragment reads."""
    uri, live = flagged
    ds = ls.dataset(uri)
    whole = ds.to_table()
    parts = [f.to_table() for f in ds.get_fragments()]
    assert whole.to_pylist() == pa.concat_tables(parts).to_pylist() == _plain(live)


def test_legacy_fragments_with_two_data_files_match_pylance(tmp_path: Path) -> None:
    """Fragments with one and with two data files (columns added to some) in one scan,
    some with deletions: the same rows, types and order as pylance's."""
    uri = str(tmp_path / "legacy")
    lance.write_dataset(_rows(0, 60, "utf8"), uri, max_rows_per_file=7)
    ds = lance.dataset(uri)
    ds.add_columns({"g": "i * 2"})  # every fragment now has two data files
    lance.write_dataset(
        _rows(60, 40, "utf8").append_column("g", pa.array(range(120, 200, 2))),
        uri,
        mode="append",
        max_rows_per_file=6,
    )
    lance.dataset(uri).delete("i % 5 = 1 OR (i >= 21 AND i < 28)")
    ours, theirs = ls.dataset(uri), lance.dataset(uri)
    assert ours.to_table().equals(theirs.to_table())
    for flt in ("i % 4 = 0", "g > 150", "s IS NULL"):
        assert ours.to_table(filter=flt).equals(theirs.to_table(filter=flt))
        assert ours.count_rows(flt) == theirs.count_rows(flt)
    for bs in (3, 50):
        got = pa.Table.from_batches(list(ours.to_batches(batch_size=bs)))
        assert got.equals(theirs.to_table())


@pytest.mark.parametrize("columns", [None, ["s"], ["f", "i"], ["i", "s", "f"]])
@pytest.mark.parametrize("deleted", ["", "i % 4 = 1", "i < 7", "i >= 0 AND i < 30"])
def test_fragments_read_as_they_are_output_come_one_batch_each_like_pylance(
    tmp_path: Path, columns: list[str] | None, deleted: str
) -> None:
    """A legacy table of small fragments whose data files already hold the output (names
    and layouts): each fragment's live rows are one batch, chunked exactly as pylance's
    ``to_table`` and ``to_batches``, with and without deletions (whole fragments deleted
    too), for every column order."""
    uri = str(tmp_path / "legacy")
    lance.write_dataset(_rows(0, 60, "utf8"), uri, max_rows_per_file=7)
    if deleted:
        lance.dataset(uri).delete(deleted)
    ours, theirs = ls.dataset(uri), lance.dataset(uri)
    got, want = ours.to_table(columns=columns), theirs.to_table(columns=columns)
    assert got.equals(want)
    assert got.schema.equals(want.schema, check_metadata=True)
    lengths = [len(c) for c in got.column(0).chunks]
    assert lengths == [len(c) for c in want.column(0).chunks]
    mine = list(ours.to_batches(columns=columns))
    assert [b.num_rows for b in mine] == [b.num_rows for b in theirs.to_batches(columns=columns)]
    assert all(b.schema.equals(got.schema, check_metadata=True) for b in mine)


@pytest.mark.parametrize(
    "encoding", [None, "utf8", "large_utf8", "utf8_view", "dictionary:int32:utf8"]
)
def test_every_batch_has_the_output_schema_whatever_each_file_holds(flagged, encoding) -> None:
    """Fragments stored in the output's layout pass through as they are read, the others
    are converted: every batch still carries exactly the output schema (field metadata,
    nullability, schema metadata) and the rows as written."""
    uri, live = flagged
    ds = ls.dataset(uri)
    enc = None if encoding is None else {"s": encoding}
    whole = ds.to_table(output_encodings=enc)
    for b in ds.to_batches(output_encodings=enc):
        assert b.schema.equals(whole.schema, check_metadata=True)
    plain = whole.cast(pa.schema([("i", pa.int64()), ("s", pa.string()), ("f", pa.float64())]))
    assert plain.to_pylist() == _plain(live)


def _twins(tmp: Path, seed: int) -> tuple[str, str]:
    """Two copies of one legacy table of 30-60 small fragments (1-9 rows), some with
    deletions, the later ones with a second data file (a column added)."""
    rng = np.random.default_rng(seed)
    uri = str(tmp / f"a{seed}")
    at = 0
    for k in range(int(rng.integers(30, 60))):
        n = int(rng.integers(1, 10))
        lance.write_dataset(_rows(at, n, "utf8"), uri, mode="create" if k == 0 else "append")
        at += n
    lance.dataset(uri).delete(f"i % {int(rng.integers(3, 7))} = 1")
    if seed % 2:
        lance.dataset(uri).add_columns({"g": "i * 2"})
    other = str(tmp / f"b{seed}")
    shutil.copytree(uri, other)
    return uri, other


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "where", ["i = 17", "i % 4 = 0", "s IS NULL", "i >= 5 AND i < 40", "i < 0", "i >= 0"]
)
def test_deletes_and_updates_over_many_small_fragments_match_pylance(
    tmp_path: Path, seed: int, where: str
) -> None:
    """The mutation scan reads small fragments in groups (``read_together``, with each
    row's offset): a delete and then an update on twin tables, one by pylance and one by
    us, leave the same rows and values (in the same order after the delete); both
    libraries read both results alike."""
    ours_uri, theirs_uri = _twins(tmp_path, seed)
    ours, theirs = ls.dataset(ours_uri), lance.dataset(theirs_uri)
    ours.delete(where)
    theirs.delete(where)
    assert ours.to_table().equals(theirs.to_table())
    update = "i % 3 = 2"
    ours.update({"f": "f + 100"}, where=update)
    theirs.update({"f": "f + 100"}, where=update)
    for reader in (ls.dataset, lance.dataset):
        a, b = reader(ours_uri).to_table(), reader(theirs_uri).to_table()
        assert a.sort_by("i").equals(b.sort_by("i"))
    assert ours.count_rows() == theirs.count_rows()
