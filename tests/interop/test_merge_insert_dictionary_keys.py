"""merge_insert keyed on a dictionary column of a legacy table (created from dictionary
input), against stock pylance 14 as the oracle: keys match by value, whatever dictionary
encodes them on either side (each fragment and each source batch has its own).

The same table is created, appended to and merged through ``lance.write_dataset(...)
.merge_insert(...)`` and through ``ls.write_dataset(..., data_storage_version=...)``; the
result counts and the tables (Arrow types, rows by id) must be equal, and pylance must read
our result the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import SchemaMismatchError

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2"]


def _dict(values: list[str | None], dictionary: list[str] | None = None) -> pa.Array:
    """``values`` dictionary-encoded (int32 keys), with ``dictionary`` as the dictionary
    (in that order) when given."""
    if dictionary is None:
        return pa.array(values, pa.string()).dictionary_encode()
    index = [None if v is None else dictionary.index(v) for v in values]
    return pa.DictionaryArray.from_arrays(pa.array(index, pa.int32()), pa.array(dictionary))


def _batch(ids: list[int], keys: list[str | None], dictionary: list[str] | None = None) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": _dict(keys, dictionary),
            "v": pa.array([float(i) for i in ids]),
        }
    )


#: three fragments, each with its own dictionary
FRAGMENTS = [
    _batch([0, 1, 2, 3], ["a", "b", None, "c"]),
    _batch([4, 5, 6], ["d", "e", "a2"], ["zz", "e", "a2", "d"]),
    _batch([7, 8, 9], ["f", None, "g"]),
]


def _source_two_batches() -> pa.Table:
    first = _batch([100, 101], ["b", "new1"]).to_batches()[0]
    second = _batch([102, 103], ["e", "new2"], ["new2", "x", "e"]).to_batches()[0]
    return pa.Table.from_batches([first, second])


SOURCES: dict[str, Callable[[], pa.Table]] = {
    "same_dictionary": lambda: _batch([100, 101, 102], ["b", "d", "new"]),
    "other_dictionary": lambda: _batch([100, 101], ["new", "c"], ["q", "c", "new", "b"]),
    "batches_with_own_dictionaries": _source_two_batches,
    "null_key": lambda: _batch([100, 101], [None, "f"]),
}


def _tables(tmp_path: Path, version: str) -> tuple[Any, ls.Dataset, str, str]:
    theirs, ours = str(tmp_path / "pylance"), str(tmp_path / "ours")
    lance.write_dataset(FRAGMENTS[0], theirs, data_storage_version=version)
    ls.write_dataset(FRAGMENTS[0], ours, data_storage_version=version)
    for t in FRAGMENTS[1:]:
        lance.write_dataset(t, theirs, mode="append")
        ls.write_dataset(t, ours, mode="append")
    mine = ls.dataset(ours)
    assert not mine.semantic_types
    assert pa.types.is_dictionary(mine.schema.field("k").type)
    assert mine.semantic_schema.field("k").logical_type.startswith("dict:")
    return lance.dataset(theirs), mine, theirs, ours


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    # sorted by id: pylance writes a merge's new rows in source order, lance-semantic the
    # updated rows (in target order) before the inserted ones
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def _same(theirs: str, ours: str) -> None:
    expected = lance.dataset(theirs).to_table()
    got = ls.dataset(ours).to_table()
    assert got.schema.equals(expected.schema)
    assert _rows(got) == _rows(expected)
    assert _rows(lance.dataset(ours).to_table()) == _rows(expected)
    assert ls.dataset(ours).count_rows() == lance.dataset(theirs).count_rows()


def _counts(result: Any) -> tuple[int, int, int]:
    if isinstance(result, dict):
        return result["num_inserted_rows"], result["num_updated_rows"], result["num_deleted_rows"]
    return result.num_inserted_rows, result.num_updated_rows, result.num_deleted_rows


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("source", list(SOURCES))
def test_merge_insert_keyed_on_a_legacy_dictionary_column_matches_by_value(
    tmp_path: Path, version: str, source: str
) -> None:
    pl, mine, theirs, ours = _tables(tmp_path, version)
    data = SOURCES[source]()
    expected = pl.merge_insert("k").when_matched_update_all().when_not_matched_insert_all()
    got = mine.merge_insert("k").when_matched_update_all().when_not_matched_insert_all()
    assert _counts(got.execute(data)) == _counts(expected.execute(data))
    _same(theirs, ours)


@pytest.mark.parametrize("version", VERSIONS)
def test_merge_insert_on_dictionary_and_another_key_with_deletes(
    tmp_path: Path, version: str
) -> None:
    pl, mine, theirs, ours = _tables(tmp_path, version)
    data = _batch([1, 5, 6, 50], ["b", "e", "zz", "n"], ["n", "zz", "e", "b"])
    expected = pl.merge_insert(["k", "id"]).when_matched_update_all()
    expected = expected.when_not_matched_insert_all().when_not_matched_by_source_delete("id > 7")
    got = mine.merge_insert(["k", "id"]).when_matched_update_all()
    got = got.when_not_matched_insert_all().when_not_matched_by_source_delete("id > 7")
    assert _counts(got.execute(data)) == _counts(expected.execute(data))
    _same(theirs, ours)
    # and keyed on the dictionary column alone, deleting unmatched rows by a condition on it
    pl, mine = lance.dataset(theirs), ls.dataset(ours)
    data = _batch([60], ["a"])
    res = pl.merge_insert("k").when_not_matched_by_source_delete("k = 'c'").execute(data)
    mine_res = mine.merge_insert("k").when_not_matched_by_source_delete("k = 'c'").execute(data)
    assert _counts(mine_res) == _counts(res)
    _same(theirs, ours)


def test_merge_insert_plain_source_on_a_legacy_dictionary_key_is_refused_as_pylance(
    tmp_path: Path,
) -> None:
    pl, mine, theirs, ours = _tables(tmp_path, "2.2")
    plain = pa.table({"id": pa.array([1], pa.int64()), "k": ["b"], "v": [0.0]})
    with pytest.raises(OSError):  # "Append with different schema"
        pl.merge_insert("k").when_matched_update_all().execute(plain)
    with pytest.raises(SchemaMismatchError) as e:
        mine.merge_insert("k").when_matched_update_all().execute(plain)
    assert e.value.field_path == "k"
    _same(theirs, ours)


def test_merge_insert_dictionary_source_on_a_legacy_plain_key_is_refused_as_pylance(
    tmp_path: Path,
) -> None:
    plain = pa.table({"id": pa.array([1, 2], pa.int64()), "k": ["a", "b"], "v": [1.0, 2.0]})
    theirs, ours = str(tmp_path / "pylance"), str(tmp_path / "ours")
    pl = lance.write_dataset(plain, theirs)
    mine = ls.write_dataset(plain, ours)
    source = _batch([2], ["b"])
    with pytest.raises(OSError):  # "Append with different schema"
        pl.merge_insert("k").when_matched_update_all().execute(source)
    with pytest.raises(SchemaMismatchError) as e:
        mine.merge_insert("k").when_matched_update_all().execute(source)
    assert e.value.field_path == "k"
    _same(theirs, ours)
