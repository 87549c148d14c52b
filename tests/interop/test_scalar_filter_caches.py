"""What filters through scalar indices keep from one query to the next stays true
(issue 31 item 5): the decoded index entries (per index section), the opened indices and
their pages, the parsed filters (per text and schema) and the readers.

Twin tables (one through pylance, one through us, the same operations): after a new
index, a replaced index, an append (a new version with a fragment no index covers), a
delete and a restore, our rows and counts through the indices equal pylance's and our
unindexed scan's, on the handle that made the change and on a handle opened fresh, and the
index named in the choice is the one of the version read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import InvalidExpressionError
from lance_semantic.scalar import indices

pytestmark = pytest.mark.interop

ROWS, PER_FILE = 8_000, 2_000


def _rows(lo: int, hi: int) -> pa.Table:
    rng = np.random.default_rng(lo)
    n = hi - lo
    return pa.table(
        {
            "id": pa.array(np.arange(lo, hi), pa.int64()),
            "k": pa.array(rng.permutation(n) + lo, pa.int64()),
            "cat": pa.array([f"c{v}" for v in rng.integers(0, 20, n)]),
        }
    )


@pytest.fixture()
def twins(tmp_path: Path) -> tuple[str, str]:
    theirs = str(tmp_path / "theirs.lance")
    lance.write_dataset(_rows(0, ROWS), theirs, max_rows_per_file=PER_FILE)
    lance.dataset(theirs).create_scalar_index("k", "BTREE")
    ours = str(tmp_path / "ours.lance")
    shutil.copytree(theirs, ours)
    return theirs, ours


def _same(theirs: str, ours: ls.Dataset, f: str) -> None:
    """Our rows and count for ``f`` (through the indices and without) equal pylance's."""
    want = lance.dataset(theirs).to_table(filter=f).sort_by("id")
    for ds in (ours, ls.dataset(ours.uri)):
        got = ds.to_table(filter=f)
        assert got.sort_by("id").equals(want), f
        assert got.equals(ds.scanner(filter=f, use_scalar_index=False).to_table()), f
        assert ds.count_rows(f) == want.num_rows, f


def _used(ds: ls.Dataset, f: str) -> tuple[str, ...]:
    choice = ds.scanner(filter=f)._scalar_choice()
    return () if choice is None else choice.indices


def test_a_new_index_is_used_at_once(twins: tuple[str, str]) -> None:
    theirs, ours_uri = twins
    ours = ls.dataset(ours_uri)
    f = "cat = 'c3' AND k < 100"
    _same(theirs, ours, f)
    assert _used(ours, f) == ("k_idx",)  # (cat has no index yet)
    for uri in (theirs, ours_uri):  # the same new index on both twins
        lance.dataset(uri).create_scalar_index("cat", "BITMAP")
    ours.checkout_latest()
    assert set(_used(ours, f)) == {"k_idx", "cat_idx"}
    assert set(_used(ls.dataset(ours_uri), f)) == {"k_idx", "cat_idx"}
    _same(theirs, ours, f)
    _same(theirs, ours, "cat IN ('c1', 'c19')")


def test_an_append_is_read_beside_the_index(twins: tuple[str, str]) -> None:
    """A new version with a fragment no index covers: that fragment is scanned, and the
    index still answers the others (its entries are those of the new section)."""
    theirs, ours_uri = twins
    ours = ls.dataset(ours_uri)
    f = "k = 17 OR k IN (5, 9000, 9001)"
    _same(theirs, ours, f)
    more = _rows(ROWS, ROWS + PER_FILE)
    more = more.set_column(1, "k", pa.array(np.r_[[17, 5], np.arange(9_000, 9_000 + 1_998)]))
    lance.write_dataset(more, theirs, mode="append")
    ours.insert(more)
    assert ours.count_rows(f) == 6
    _same(theirs, ours, f)
    assert _used(ours, f) == ("k_idx",)


def test_deleted_rows_never_come_back(twins: tuple[str, str]) -> None:
    """Deletes after queries (readers, pages and entries kept): the deleted rows are
    gone from rows and counts, through a complete selection too (not filtered again)."""
    theirs, ours_uri = twins
    ours = ls.dataset(ours_uri)
    fs = ["k = 11", "k IN (11, 12, 13)", "k BETWEEN 10 AND 30", "k >= 7990"]
    for f in fs:
        _same(theirs, ours, f)
    lance.dataset(theirs).delete("k IN (11, 12, 20) OR k > 7995")
    ours.delete("k IN (11, 12, 20) OR k > 7995")
    for f in fs:
        _same(theirs, ours, f)
    assert ours.count_rows("k = 11") == 0
    assert ours.to_table(filter="k IN (11, 12, 13)")["k"].to_pylist() == [13]
    older = ls.dataset(ours_uri, version=ours.version - 1)
    assert older.count_rows("k = 11") == 1  # an older version keeps its rows
    # a restore of the version before the delete: the rows are back, on both twins
    lance.dataset(theirs, version=lance.dataset(theirs).version - 1).restore()
    older.restore()
    ours.checkout_latest()
    for f in fs:
        _same(theirs, ours, f)
    assert ours.count_rows("k = 11") == 1


def test_a_replaced_index_covers_the_new_fragments(twins: tuple[str, str]) -> None:
    theirs, ours_uri = twins
    more = _rows(ROWS, ROWS + PER_FILE)
    lance.write_dataset(more, theirs, mode="append")
    ours = ls.dataset(ours_uri)
    ours.insert(more)
    f = f"k = {ROWS + 3}"
    before = ours.scanner(filter=f)._scalar_choice()
    assert before is not None and len(before.selection.rows) == ROWS // PER_FILE
    for uri in (theirs, ours_uri):
        lance.dataset(uri).create_scalar_index("k", "BTREE", replace=True)
    ours.checkout_latest()
    after = ours.scanner(filter=f)._scalar_choice()
    assert after is not None and len(after.selection.rows) == ROWS // PER_FILE + 1
    _same(theirs, ours, f)


def test_entries_are_decoded_once_per_section(twins: tuple[str, str]) -> None:
    _, ours_uri = twins
    ours = ls.dataset(ours_uri)
    indices._ENTRIES.clear()
    ours.to_table(filter="k = 3")
    ls.dataset(ours_uri).to_table(filter="k = 4")  # (another handle, the same section)
    assert len(indices._ENTRIES) == 1
    lance.dataset(ours_uri).create_scalar_index("cat", "BITMAP")
    ours.checkout_latest()
    ours.to_table(filter="k = 3")
    assert len(indices._ENTRIES) == 2


def test_a_parsed_filter_is_kept_per_schema(tmp_path: Path) -> None:
    """The same text over another schema is read again: ``k = 5`` on an integer column is
    a simple filter, on a string column the error pylance gives."""
    ints = ls.write_dataset(pa.table({"k": pa.array([5, 6], pa.int64())}), str(tmp_path / "a"))
    texts = ls.write_dataset(pa.table({"k": ["5", "6"]}), str(tmp_path / "b"))
    assert ints.count_rows("k = 5") == 1
    with pytest.raises(InvalidExpressionError):
        texts.count_rows("k = 5")
    assert texts.count_rows("k = '5'") == 1
    assert ints.count_rows("k = 5") == 1


def test_a_kept_plan_follows_the_table_schema(tmp_path: Path) -> None:
    """Plans of filtered reads are kept per table schema: another filter over the same
    columns reuses one, and a schema change (rename, drop, new column) plans again."""
    ds = ls.write_dataset(
        pa.table({"k": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}),
        str(tmp_path / "t.lance"),
    )
    assert ds.to_table(filter="k = 1")["v"].to_pylist() == ["a"]
    assert ds.to_table(filter="k IN (2, 3)")["v"].to_pylist() == ["b", "c"]
    assert ds.count_rows("k > 1") == 2 and ds.count_rows("k > 2") == 1
    ds.alter_columns({"path": "v", "name": "w"})
    got = ds.to_table(filter="k = 3")
    assert got.column_names == ["k", "w"] and got["w"].to_pylist() == ["c"]
    ds.add_columns({"z": "k * 10"})
    assert ds.to_table(filter="k = 2").to_pylist() == [{"k": 2, "w": "b", "z": 20}]
    ds.drop_columns(["w"])
    assert ds.to_table(filter="k = 2").column_names == ["k", "z"]
    with pytest.raises(InvalidExpressionError, match="No field named w"):
        ds.to_table(filter="w = 'a'")
