"""Spec "Compatibility" (merge compares semantic types only) and "Output Encoding" for
merge keys: on a flagged table, merge_insert keyed on a column read as a dictionary
(``dictionary:<key>:utf8``, recorded at creation or set) or as plain strings matches keys by
value, for a source in any layout of the key's semantic type -- plain, 64-bit, view, or a
dictionary of its own (one per source batch). Rewritten and inserted rows are not bound by
the width of the output dictionary's key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls

ROWS = 30  # ids 0..29, key "k<id>" (every 7th null), in three fragments


def _key(i: int) -> str | None:
    return None if i % 7 == 0 else f"k{i}"


def _keys(values: list[str | None], layout: str) -> pa.Array:
    if layout == "plain":
        return pa.array(values, pa.string())
    if layout == "large":
        return pa.array(values, pa.large_string())
    if layout == "view":
        return pa.array(values, pa.string_view())
    if layout == "dictionary":  # int8 keys and a dictionary of its own, in another order
        distinct = sorted({v for v in values if v is not None}, reverse=True)
        index = [None if v is None else distinct.index(v) for v in values]
        return pa.DictionaryArray.from_arrays(pa.array(index, pa.int8()), pa.array(distinct))
    assert layout == "dictionary16"
    return (
        pa.array(values, pa.string())
        .dictionary_encode()
        .cast(pa.dictionary(pa.int16(), pa.string()))
    )


def _rows(ids: list[int], layout: str, keys: Callable[[int], str | None] = _key) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": _keys([keys(i) for i in ids], layout),
            "v": pa.array([i * 10 for i in ids], pa.int64()),
        }
    )


def _make(tmp_path: Path, first: str, encoding: str | None) -> ls.Dataset:
    ds = ls.write_dataset(
        _rows(list(range(10)), first), str(tmp_path / "t"), data_storage_version="2.3"
    )
    if encoding is not None:
        ds.set_output_encoding("k", encoding)
    ds.insert(_rows(list(range(10, 20)), "view"))
    ds.insert(_rows(list(range(20, ROWS)), "dictionary"))
    ds.delete("id = 12")
    return ds


#: (layout the table is created in, output encoding set afterwards, expected read type)
TARGETS = {
    "dictionary_recorded_at_create": ("dictionary16", None, pa.dictionary(pa.int16(), pa.string())),
    "dictionary_set": ("plain", "dictionary:int8:utf8", pa.dictionary(pa.int8(), pa.string())),
    "plain": ("plain", None, pa.string()),
}


def _model() -> dict[int, dict[str, object]]:
    return {i: {"id": i, "k": _key(i), "v": i * 10} for i in range(ROWS) if i != 12}


def _check(ds: ls.Dataset, model: dict[int, dict[str, object]], key_type: pa.DataType) -> None:
    ds = ls.dataset(ds.uri)
    got = ds.to_table()
    assert ds.schema.field("k").type == key_type
    assert got.schema.field("k").type == key_type
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == [model[i] for i in sorted(model)]


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("layout", ["plain", "large", "view", "dictionary", "dictionary16"])
def test_compatibility_merge_insert_keys_match_by_value_in_any_layout(
    tmp_path: Path, target: str, layout: str
) -> None:
    first, encoding, key_type = TARGETS[target]
    ds = _make(tmp_path, first, encoding)
    model = _model()
    _check(ds, model, key_type)
    ids = [3, 15, 22, 40, 41]  # 40 and 41 are new; 12 was deleted, 15 and 22 in other files
    source = _rows(ids, layout).set_column(2, "v", pa.array([-1, -2, -3, -4, -5], pa.int64()))
    b = ds.merge_insert("k").when_matched_update_all().when_not_matched_insert_all()
    res = b.execute(source)
    assert (res.num_inserted_rows, res.num_updated_rows, res.num_deleted_rows) == (2, 3, 0)
    for r in source.to_pylist():
        model[r["id"]] = r
    _check(ds, model, key_type)
    # a source in two batches, each with its own dictionary, keyed on (k, id), deleting the
    # unmatched target rows that a condition on the key selects
    ds = ls.dataset(ds.uri)
    first_batch = _rows([5, 50], "dictionary").to_batches()[0]
    second_batch = _rows([16, 51], "dictionary").to_batches()[0]
    two = pa.Table.from_batches([first_batch, second_batch])
    assert two.column("k").chunk(0).dictionary != two.column("k").chunk(1).dictionary
    b = ds.merge_insert(["k", "id"]).when_matched_update_all().when_not_matched_insert_all()
    res = b.when_not_matched_by_source_delete("k = 'k1' OR k = 'k2'").execute(two)
    assert (res.num_inserted_rows, res.num_updated_rows, res.num_deleted_rows) == (2, 2, 2)
    for r in two.to_pylist():
        model[r["id"]] = r
    del model[1], model[2]
    _check(ds, model, key_type)


def test_output_encoding_narrow_dictionary_does_not_bound_merged_or_updated_values(
    tmp_path: Path,
) -> None:
    """A key column read as ``dictionary:int8:utf8`` takes 300 new distinct keys through
    merge_insert and update; reads emit smaller batches where one int8 dictionary cannot
    hold them (spec "Lossless conversion")."""
    ds = _make(tmp_path, "plain", "dictionary:int8:utf8")
    model = _model()
    ids = list(range(100, 400))
    source = _rows(ids, "view", keys=lambda i: f"new{i}")
    res = ds.merge_insert("k").when_not_matched_insert_all().execute(source)
    assert res.num_inserted_rows == 300
    for r in source.to_pylist():
        model[r["id"]] = r
    _check(ds, model, pa.dictionary(pa.int8(), pa.string()))
    assert (
        ds.update({"k": "concat(k, '+', CAST(id AS VARCHAR))"}, where="id >= 100").num_rows_updated
        == 300
    )
    for i in ids:
        model[i] = {**model[i], "k": f"new{i}+{i}"}
    _check(ds, model, pa.dictionary(pa.int8(), pa.string()))
    # matched by value against the rewritten keys
    again = _rows([150, 500], "dictionary", keys=lambda i: f"new{i}+{i}")
    res = (
        ds.merge_insert("k").when_matched_update_all().when_not_matched_insert_all().execute(again)
    )
    assert (res.num_inserted_rows, res.num_updated_rows) == (1, 1)
    for r in again.to_pylist():
        model[r["id"]] = r
    _check(ds, model, pa.dictionary(pa.int8(), pa.string()))
