"""Issue 13: mutations on tables of many small fragments read them in groups and evaluate the
predicate once per group (``dataset/mutation_scan.py``). The rows changed must be exactly
pylance's, for predicates hitting no row, one row, rows of several fragments and fragments
with deletion files, and on flagged tables whose fragments hold different layouts."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls


def _twins(
    tmp_path: Path, fragments: int = 60, rows: int = 10
) -> tuple[ls.Dataset, lance.LanceDataset]:
    ours = ls.write_dataset(_rows(0, rows), str(tmp_path / "ours"))
    theirs = lance.write_dataset(_rows(0, rows), str(tmp_path / "theirs"))
    for k in range(1, fragments):
        ours.insert(_rows(k * rows, rows))
        theirs = lance.write_dataset(_rows(k * rows, rows), theirs, mode="append")
    ours.delete("id % 17 = 3")  # deletion files in many fragments first
    theirs.delete("id % 17 = 3")
    return ours, lance.dataset(theirs.uri)


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "s": [f"v{i}" for i in ids], "g": [i % 5 for i in ids]})


def _sorted(t: pa.Table) -> list[dict]:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


PREDICATES = ["id = -1", "id = 305", "g = 2 AND id < 200", "id % 17 = 4", "s >= 'v5'", "id >= 0"]


@pytest.mark.parametrize("predicate", PREDICATES)
def test_many_small_fragments_delete_matches_pylance(tmp_path: Path, predicate: str) -> None:
    ours, theirs = _twins(tmp_path)
    got = ours.delete(predicate)
    theirs.delete(predicate)
    assert _sorted(ls.dataset(ours.uri).to_table()) == _sorted(lance.dataset(theirs.uri).to_table())
    assert got is not None


@pytest.mark.parametrize("predicate", PREDICATES)
def test_many_small_fragments_update_matches_pylance(tmp_path: Path, predicate: str) -> None:
    ours, theirs = _twins(tmp_path)
    ours.update({"s": "concat(s, '!')", "g": "g + 10"}, where=predicate)
    theirs.update({"s": "concat(s, '!')", "g": "g + 10"}, where=predicate)
    assert _sorted(ls.dataset(ours.uri).to_table()) == _sorted(lance.dataset(theirs.uri).to_table())


def test_many_small_fragments_flagged_mixed_layouts(tmp_path: Path) -> None:
    """Fragments in utf8, large_utf8 and dictionary layouts are filtered as one group; the
    result equals the same operations on a one-fragment table."""
    uri = str(tmp_path / "flagged")
    ds = ls.write_dataset(_rows(0, 10), uri, data_storage_version="2.3")
    for k in range(1, 30):
        t = _rows(k * 10, 10)
        s = t.column("s")
        layout = [s, s.cast(pa.large_string()), s.combine_chunks().dictionary_encode()][k % 3]
        ds.insert(t.set_column(1, "s", layout))
    one = ls.write_dataset(_rows(0, 300), str(tmp_path / "one"), data_storage_version="2.3")
    for target in (ds, one):
        target.delete("s LIKE 'v1%'")
        target.update({"g": "g * 100"}, where="id % 7 = 0")
    assert _sorted(ls.dataset(uri).to_table()) == _sorted(ls.dataset(one.uri).to_table())
    assert len(ls.dataset(uri).get_fragments()) > 15
