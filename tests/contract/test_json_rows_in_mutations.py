"""Spec failure row "json input is not valid JSON" for merge_insert and update: the
``InvalidJsonError`` names the field path and the row of the caller's input -- for
merge_insert the source row as given (counted across the batches of a reader), for update
the table row -- not a row of a batch assembled inside; a value in a struct or a list is
placed on its top-level row. Nothing is committed and no data file is left behind.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import InvalidJsonError

J = pa.json_(pa.string())
STRUCT = pa.struct([("doc", J), ("n", pa.int64())])
SCHEMA = pa.schema(
    [("id", pa.int64()), ("j", J), ("s", STRUCT), ("l", pa.list_(J)), ("p", pa.int64())]
)
#: source rows 0..8 in three batches of three; row 6 matches id 3, row 7 (id 23) is new
SOURCE_IDS = [0, 20, 1, 21, 2, 22, 3, 23, 24]
GOOD = '{"a": 1}'
BAD = '{"a": nope}'


def _table(ids: list[int], bad: tuple[str, int] | None = None) -> pa.Table:
    """Rows for ``ids``; with ``bad`` = (column path, row) one invalid document there."""

    def doc(column: str, row: int) -> str:
        return BAD if bad == (column, row) else GOOD

    n = len(ids)

    def docs(column: str, rows: range) -> pa.Array:
        return pa.ExtensionArray.from_storage(J, pa.array([doc(column, r) for r in rows]))

    s = pa.StructArray.from_arrays(
        [docs("s.doc", range(n)), pa.array(range(n), pa.int64())], fields=list(STRUCT)
    )
    items = pa.concat_arrays(  # row r: [GOOD, doc("l.item", r)]
        [docs("", range(n)), docs("l.item", range(n))]
    ).take(pa.array([k for r in range(n) for k in (r, n + r)]))
    lists = pa.ListArray.from_arrays(pa.array(range(0, 2 * n + 1, 2), pa.int32()), items)
    columns = [
        pa.array(ids, pa.int64()),
        docs("j", range(n)),
        s,
        lists,
        pa.array([i * 10 for i in ids], pa.int64()),
    ]
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def _reader(table: pa.Table) -> pa.RecordBatchReader:
    batches = [
        b for start in range(0, table.num_rows, 3) for b in table.slice(start, 3).to_batches()
    ]
    assert len(batches) == 3
    return pa.RecordBatchReader.from_batches(table.schema, batches)


def _make(tmp_path: Path, version: str) -> ls.Dataset:
    ds = ls.write_dataset(_table(list(range(5))), str(tmp_path / "t"), data_storage_version=version)
    ds.insert(_table(list(range(5, 10))))
    ds.delete("id = 1")
    return ds


def _files(ds: ls.Dataset) -> set[str]:
    # the temporary file of a data file left unfinished by the failure goes away when its
    # writer is collected (the exception's traceback holds it until then)
    gc.collect()
    return set(os.listdir(os.path.join(ds.uri, "data")))


def _error(run: Callable[[], object]) -> tuple[str, int, str, str]:
    """(field path, row, message, excerpt) of the InvalidJsonError ``run`` raises."""
    with pytest.raises(InvalidJsonError) as e:
        run()
    return e.value.field_path, e.value.row, str(e.value), e.value.excerpt


VERSIONS = ["2.2", "2.3"]  # legacy and flagged
COLUMNS = ["j", "s.doc", "l.item"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("column", COLUMNS)
@pytest.mark.parametrize("row", [6, 7], ids=["matched", "inserted"])
def test_failure_invalid_json_in_merge_insert_names_the_source_row(
    tmp_path: Path, version: str, column: str, row: int
) -> None:
    ds = _make(tmp_path, version)
    before, files = ds.version, _files(ds)
    source = _reader(_table(SOURCE_IDS, bad=(column, row)))
    b = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    path, at, message, excerpt = _error(lambda: b.execute(source))
    assert (path, at) == (column, row)
    assert f"row {row}" in message and excerpt  # (", element [1]" inside a list)
    assert ls.dataset(ds.uri).version == before and _files(ds) == files


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("column", COLUMNS)
def test_failure_invalid_json_in_a_partial_merge_source_names_the_source_row(
    tmp_path: Path, version: str, column: str
) -> None:
    """A source with some columns: matched rows are the target's with the source's columns
    put over them, optionally filtered by a condition."""
    ds = _make(tmp_path, version)
    top = column.split(".")[0]
    source = _table(SOURCE_IDS, bad=(column, 6)).select(["id", top])
    b = ds.merge_insert("id").when_matched_update_all()
    assert _error(lambda: b.execute(_reader(source)))[:2] == (column, 6)
    full = _table(SOURCE_IDS, bad=(column, 6)).set_column(4, "p", pa.array([1000] * 9, pa.int64()))
    b = ds.merge_insert("id").when_matched_update_all(condition="source.p > target.p")
    assert _error(lambda: b.execute(_reader(full)))[:2] == (column, 6)


@pytest.mark.parametrize("version", VERSIONS)
def test_invalid_json_in_a_source_row_that_is_not_written_is_not_an_error(
    tmp_path: Path, version: str
) -> None:
    """As pylance: only the rows written are converted (row 7 matches nothing and is not
    inserted)."""
    ds = _make(tmp_path, version)
    source = _reader(_table(SOURCE_IDS, bad=("j", 7)))
    res = ds.merge_insert("id").when_matched_update_all().execute(source)
    assert (res.num_inserted_rows, res.num_updated_rows) == (0, 3)  # ids 0, 2, 3 (1 deleted)


@pytest.mark.parametrize("version", VERSIONS)
def test_failure_invalid_json_in_update_names_the_table_row(tmp_path: Path, version: str) -> None:
    ds = _make(tmp_path, version)  # ids 0, 2, 3, ..., 9: id 7 is table row 6
    before, files = ds.version, _files(ds)
    path, row, message, _ = _error(lambda: ds.update({"j": "'{bad'"}, where="id >= 7"))
    assert (path, row) == ("j", 6) and "row 6:" in message
    assert ls.dataset(ds.uri).version == before and _files(ds) == files
    assert ds.take([6], columns=["id"]).column("id").to_pylist() == [7]
