"""Column order is free, also between the batches of one write.

One write may bring batches (an iterable of batches, a list of tables, ...) whose columns,
struct members, list items' struct members and map values' struct members come in other
orders; each would append on its own, so the write takes them all, as one write: one
version, one data file, in the order of the first batch (a new table) or the table's.
Generated for every input form that can carry differing schemas, every kind of
permutation, every write path (create, overwrite, append, insert, write_fragments + commit,
merge_insert's source), legacy and flagged.

pylance 14 refuses such a write ("Target schema's field names are not matching"; without a
schema it needs one). Its rule for a *separate* reordered append is by name, top level and
struct members: the legacy tables are held to the same table pylance builds from the same
rows in one order (schema, field ids, values) and pylance reads ours.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

VERSIONS = [pytest.param("2.2", id="legacy"), pytest.param("2.3", id="flagged")]

_S = [("x", pa.int32()), ("y", pa.string())]
_ITEM = [("p", pa.string()), ("q", pa.int8())]
_VALUE = [("u", pa.int8()), ("v", pa.string())]
_COLUMNS = [
    ("a", pa.int64()),
    ("s", pa.struct(_S)),
    ("l", pa.list_(pa.struct(_ITEM))),
    ("m", pa.map_(pa.string(), pa.struct(_VALUE))),
]
SCHEMA = pa.schema(_COLUMNS)


def _schema(columns: bool, struct: bool, item: bool, value: bool) -> pa.Schema:
    """SCHEMA with the chosen parts in reverse order."""

    def rev(items: list[Any]) -> list[Any]:
        return items[::-1]

    types = {
        "a": pa.int64(),
        "s": pa.struct(rev(_S) if struct else _S),
        "l": pa.list_(pa.struct(rev(_ITEM) if item else _ITEM)),
        "m": pa.map_(pa.string(), pa.struct(rev(_VALUE) if value else _VALUE)),
    }
    names = [n for n, _ in _COLUMNS]
    return pa.schema([(n, types[n]) for n in (rev(names) if columns else names)])


KINDS = {
    "columns": _schema(True, False, False, False),
    "struct": _schema(False, True, False, False),
    "list_struct": _schema(False, False, True, False),
    "map_struct": _schema(False, False, False, True),
    "all": _schema(True, True, True, True),
}


def _rows(start: int, n: int) -> list[dict[str, Any]]:
    return [
        {
            "a": i,
            "s": None if i % 5 == 4 else {"x": i, "y": f"y{i}" if i % 3 else None},
            "l": [{"p": f"p{i}", "q": i % 7}, {"p": None, "q": None}] if i % 4 else None,
            "m": [("k", {"u": i % 9, "v": f"v{i}"})] if i % 2 else [],
        }
        for i in range(start, start + n)
    ]


def _batch(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def _input_batches(kind: str, start: int) -> tuple[list[pa.RecordBatch], list[dict[str, Any]]]:
    """Three batches: the table's order, the permutation, the table's order again (a
    permutation in the middle and one that is not the last schema seen)."""
    parts = [_rows(start, 3), _rows(start + 3, 4), _rows(start + 7, 2)]
    batches = [
        _batch(parts[0], SCHEMA),
        _batch(parts[1], KINDS[kind]),
        _batch(parts[2], SCHEMA),
    ]
    return batches, [r for p in parts for r in p]


def _first_permuted(kind: str, start: int) -> tuple[list[pa.RecordBatch], list[dict[str, Any]]]:
    """The permuted batch first: a new table takes its order."""
    parts = [_rows(start, 2), _rows(start + 2, 3)]
    return [_batch(parts[0], KINDS[kind]), _batch(parts[1], SCHEMA)], parts[0] + parts[1]


Form = Callable[[list[pa.RecordBatch]], Iterable[Any]]
FORMS: dict[str, Form] = {
    "list_of_batches": lambda bs: list(bs),
    "tuple_of_batches": lambda bs: tuple(bs),
    "generator_of_batches": lambda bs: (b for b in bs),
    "list_of_tables": lambda bs: [pa.Table.from_batches([b]) for b in bs],
    "generator_of_tables": lambda bs: (pa.Table.from_batches([b]) for b in bs),
}


def _field_ids(fields: Any, prefix: str = "") -> list[tuple[int, str]]:
    out = []
    for f in fields:
        path = prefix + f.name()
        out.append((f.id(), path))
        out += _field_ids(f.children(), path + ".")
    return out


def _same_as_pylance(ours: str, theirs: str) -> None:
    """pylance reads our table as it reads its own twin: schema, field ids, rows."""
    mine, twin = lance.dataset(ours), lance.dataset(theirs)
    assert mine.schema == twin.schema
    assert _field_ids(mine.lance_schema.fields()) == _field_ids(twin.lance_schema.fields())
    assert mine.to_table().sort_by("a").to_pylist() == twin.to_table().sort_by("a").to_pylist()


def _expected(rows: list[dict[str, Any]], schema: pa.Schema) -> list[dict[str, Any]]:
    """``rows`` as a read in ``schema``'s order returns them (maps as lists of pairs)."""
    return pa.Table.from_pylist(rows, schema=schema).sort_by("a").to_pylist()


def _one_data_file(ds: ls.Dataset, fragments_before: int) -> None:
    """The write added one fragment with one data file: the batches went in together."""
    new = ds.get_fragments()[fragments_before:]
    assert len(new) == 1
    assert len(new[0].metadata.files) == 1


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("form", list(FORMS))
def test_one_create_takes_batches_in_any_column_order(
    tmp_path: Path, version: str, kind: str, form: str
) -> None:
    for name, make in (("middle", _input_batches), ("first", _first_permuted)):
        batches, rows = make(kind, 0)
        uri = str(tmp_path / f"{name}.lance")
        ds = ls.write_dataset(FORMS[form](batches), uri, data_storage_version=version)
        order = batches[0].schema
        assert ds.version == 1
        assert ds.schema == order
        assert ds.to_table().sort_by("a").to_pylist() == _expected(rows, order)
        _one_data_file(ds, 0)
        if version == "2.2":
            twin = str(tmp_path / f"{name}-pylance.lance")
            lance.write_dataset(pa.Table.from_pylist(rows, schema=order), twin)
            _same_as_pylance(uri, twin)


def _base(uri: str, version: str) -> ls.Dataset:
    return ls.write_dataset(
        pa.Table.from_pylist(_rows(100, 3), schema=SCHEMA), uri, data_storage_version=version
    )


def _overwrite(uri: str, data: Iterable[Any], version: str) -> None:
    ls.write_dataset(data, uri, mode="overwrite", data_storage_version=version)


def _append(uri: str, data: Iterable[Any], version: str) -> None:
    ls.write_dataset(data, uri, mode="append")


def _insert(uri: str, data: Iterable[Any], version: str) -> None:
    ls.dataset(uri).insert(data)


def _two_phase(uri: str, data: Iterable[Any], version: str) -> None:
    read_version = ls.dataset(uri).version
    fragments = ls.fragment.write_fragments(data, uri)
    ls.Dataset.commit(uri, ls.LanceOperation.Append(fragments), read_version=read_version)


def _merge_insert(uri: str, data: Iterable[Any], version: str) -> None:
    builder = ls.dataset(uri).merge_insert("a")
    builder.when_matched_update_all().when_not_matched_insert_all().execute(data)


WRITES = {
    "overwrite": _overwrite,
    "append": _append,
    "insert": _insert,
    "write_fragments": _two_phase,
    "merge_insert": _merge_insert,
}


def _pylance_twin(uri: str, write: str, rows: list[dict[str, Any]]) -> None:
    """The same rows through pylance, in the table's order (its rule for one batch)."""
    base = pa.Table.from_pylist(_rows(100, 3), schema=SCHEMA)
    data = pa.Table.from_pylist(rows, schema=SCHEMA)
    if write == "overwrite":
        lance.write_dataset(base, uri)
        lance.write_dataset(data, uri, mode="overwrite")
        return
    ds = lance.write_dataset(base, uri)
    if write == "merge_insert":
        ds.merge_insert("a").when_matched_update_all().when_not_matched_insert_all().execute(data)
    else:
        lance.write_dataset(data, uri, mode="append")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("write", list(WRITES))
def test_one_write_into_a_table_takes_batches_in_any_column_order(
    tmp_path: Path, version: str, kind: str, form: str, write: str
) -> None:
    uri = str(tmp_path / "t.lance")
    before = _base(uri, version)
    batches, rows = _input_batches(kind, 0 if write != "merge_insert" else 101)
    WRITES[write](uri, FORMS[form](batches), version)
    ds = ls.dataset(uri)
    assert ds.version == before.version + 1
    assert ds.schema == SCHEMA  # the table's order, whatever the batches'
    if write == "overwrite":
        expected = rows
    elif write == "merge_insert":  # 101 and 102 updated, the rest inserted
        keep = [r for r in _rows(100, 3) if r["a"] not in {r["a"] for r in rows}]
        expected = keep + rows
    else:
        expected = _rows(100, 3) + rows
    assert ds.to_table().sort_by("a").to_pylist() == _expected(expected, SCHEMA)
    if write != "merge_insert":
        _one_data_file(ds, 0 if write == "overwrite" else len(before.get_fragments()))
    if version == "2.2":
        twin = str(tmp_path / "pylance.lance")
        _pylance_twin(twin, write, rows)
        _same_as_pylance(uri, twin)


@pytest.mark.parametrize("kind", ["columns", "struct", "all"])
def test_a_reordered_append_is_taken_by_name_as_pylance_takes_it(tmp_path: Path, kind: str) -> None:
    """Legacy: one append whose columns or struct members come in another order is taken by
    name by pylance 14, and by us into the same table."""
    rows = _rows(0, 4)
    theirs, ours = str(tmp_path / "pylance.lance"), str(tmp_path / "ours.lance")
    base = pa.Table.from_pylist(_rows(100, 2), schema=SCHEMA)
    appended = pa.Table.from_pylist(rows, schema=KINDS[kind])
    lance.write_dataset(base, theirs)
    lance.write_dataset(appended, theirs, mode="append")
    ls.write_dataset(base, ours)
    ls.write_dataset(appended, ours, mode="append")
    _same_as_pylance(ours, theirs)
    assert ls.dataset(ours).schema == lance.dataset(theirs).schema


def test_other_columns_in_a_later_batch_are_still_refused(tmp_path: Path) -> None:
    """Only the order is free: a later batch with a column less or more, or a struct with
    other members, is a SchemaMismatchError and nothing is committed."""
    first = _batch(_rows(0, 2), SCHEMA)
    wrong_struct = pa.schema(
        [("a", pa.int64()), ("s", pa.struct([("x", pa.int32()), ("z", pa.string())]))]
    )
    laters = [
        first.drop_columns(["m"]),
        first.append_column("extra", pa.array([1.0, 2.0])),
        pa.RecordBatch.from_pylist([{"a": 9, "s": {"x": 1, "z": "q"}}], schema=wrong_struct),
    ]
    for i, later in enumerate(laters):
        for version in ("2.2", "2.3"):
            uri = str(tmp_path / f"t{i}-{version}")
            with pytest.raises(ls.SchemaMismatchError):
                ls.write_dataset([first, later], uri, data_storage_version=version)
            with pytest.raises(ls.DatasetNotFoundError):
                ls.dataset(uri)


def test_an_iterable_of_other_objects_is_a_type_error(tmp_path: Path) -> None:
    for data in ([_batch(_rows(0, 1), SCHEMA), 3], iter([object()])):
        with pytest.raises(TypeError):
            ls.write_dataset(data, str(tmp_path / "t.lance"))
