"""Every accepted json input works wherever a json value enters a flagged table (spec
"Value-transforming types", "Nested json ... through create, append, update, merge-insert,
and take").

Matrix: the input's layout (``arrow.json`` over utf8 / large_utf8 / utf8_view, pre-encoded
JSONB: large_binary + ``lance.json``) x the column's recorded output encoding (none,
``arrow.json``, ``lance.json``) x the operation (insert, merge_insert update-all /
insert-all / both, update with SQL text, a fragment write, add_columns) x the nesting (json,
struct<json>, list<struct<json>>, map<string, json>). The input is read by its own type:
the documents read back are the ones given. Invalid JSON raises ``InvalidJsonError`` with
the field path and the caller's row, and nothing is committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.codecs.json import encode_json
from lance_semantic.errors import InvalidJsonError

LAYOUTS = ["utf8", "large_utf8", "utf8_view", "jsonb"]
ENCODINGS = ["none", "arrow.json", "lance.json"]
#: nesting -> (column, path of its json field)
NESTINGS = {
    "json": ("j", "j"),
    "struct": ("s", "s.doc"),
    "list_struct": ("l", "l.item.doc"),
    "map": ("m", "m.entries.value"),
}
JSONB = {b"ARROW:extension:name": b"lance.json"}
BAD = '{"a": nope}'
TEXT = {"utf8": pa.string(), "large_utf8": pa.large_string(), "utf8_view": pa.string_view()}


def leaf(docs: list[str | None], layout: str) -> tuple[pa.DataType, dict[bytes, bytes], pa.Array]:
    """(type, field metadata, values) of json documents in ``layout``."""
    if layout == "jsonb":  # (BAD: its text bytes, which are no JSONB)
        good = encode_json(pa.array([None if d == BAD else d for d in docs]), path="x")
        values = [
            d.encode() if d == BAD else v for d, v in zip(docs, good.to_pylist(), strict=True)
        ]
        return pa.large_binary(), JSONB, pa.array(values, pa.large_binary())
    storage = TEXT[layout]
    t = pa.json_(storage)
    return t, {}, pa.ExtensionArray.from_storage(t, pa.array(docs, storage))


def column(nesting: str, docs: list[str | None], layout: str) -> tuple[pa.Field, pa.Array]:
    """One row per document, the document at the nesting's json field."""
    name = NESTINGS[nesting][0]
    t, md, values = leaf(docs, layout)
    n = len(docs)
    if nesting == "json":
        return pa.field(name, t, metadata=md or None), values
    doc = pa.field("doc", t, metadata=md or None)
    if nesting == "struct":
        ns = pa.array(range(n), pa.int64())
        st = pa.struct([doc, pa.field("n", pa.int64())])
        return pa.field(name, st), pa.StructArray.from_arrays([values, ns], fields=list(st))
    if nesting == "list_struct":
        st = pa.struct([doc])
        items = pa.StructArray.from_arrays([values], fields=list(st))
        lt = pa.list_(pa.field("item", st))
        offsets = pa.array(range(n + 1), pa.int32())
        return pa.field(name, lt), pa.ListArray.from_arrays(offsets, items, type=lt)
    mt = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", t, metadata=md))
    keys = pa.array([f"k{i}" for i in range(n)], pa.string())
    offsets = pa.array(range(n + 1), pa.int32())
    return pa.field(name, mt), pa.MapArray.from_arrays(offsets, keys, values, type=mt)


def rows(ids: list[int], nesting: str, docs: list[str | None], layout: str) -> pa.Table:
    f, values = column(nesting, docs, layout)
    return pa.Table.from_arrays(
        [pa.array(ids, pa.int64()), values], schema=pa.schema([pa.field("id", pa.int64()), f])
    )


def docs_of(ds: ls.Dataset, nesting: str) -> list[tuple[int, Any]]:
    """(id, document) of every row, sorted, the document parsed (read as arrow.json)."""
    return _docs(ds.to_table(output_encodings={NESTINGS[nesting][1]: "arrow.json"}), nesting)


def _docs(t: pa.Table, nesting: str) -> list[tuple[int, Any]]:
    name = NESTINGS[nesting][0]
    out = []
    for r in t.to_pylist():
        v = r[name]
        if nesting == "struct":
            v = v["doc"]
        elif nesting == "list_struct":
            v = v[0]["doc"]
        elif nesting == "map":
            v = v[0][1]
        out.append((r["id"], None if v is None else json.loads(v)))
    return sorted(out, key=lambda p: (p[0], json.dumps(p[1])))


BASE = {1: '{"t": 1}', 2: '{"t": 2}', 3: "[3]"}
SOURCE = {2: '{"a": [1, 2.5, "x"]}', 4: '{"b": {"c": null}}', 5: "true"}


def make(tmp_path: Path, nesting: str, encoding: str) -> ls.Dataset:
    ids = list(BASE)
    ds = ls.write_dataset(
        rows(ids, nesting, [BASE[i] for i in ids], "utf8"),
        str(tmp_path / "t"),
        data_storage_version="2.2",
        semantic_types=True,
        max_rows_per_file=2,
    )
    if encoding != "none":
        ds.set_output_encoding(NESTINGS[nesting][1], encoding)
    return ls.dataset(ds.uri)


def source(nesting: str, layout: str, docs: dict[int, str] = SOURCE) -> pa.Table:
    return rows(list(docs), nesting, list(docs.values()), layout)


def parsed(docs: dict[int, str]) -> dict[int, Any]:
    return {i: json.loads(d) for i, d in docs.items()}


OPERATIONS = ["insert", "merge_update", "merge_insert", "merge_both", "fragments"]


def run(ds: ls.Dataset, op: str, data: pa.Table) -> None:
    if op == "insert":
        ds.insert(data)
    elif op == "merge_update":
        ds.merge_insert("id").when_matched_update_all().execute(data)
    elif op == "merge_insert":
        ds.merge_insert("id").when_not_matched_insert_all().execute(data)
    elif op == "merge_both":
        ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
    else:
        fragments = ls.fragment.write_fragments(data, ds.uri)
        ls.Dataset.commit(ds.uri, ls.LanceOperation.Append(fragments), read_version=ds.version)


def expected(op: str) -> list[tuple[int, Any]]:
    base, new = parsed(BASE), parsed(SOURCE)
    if op == "merge_update":
        out = {i: new.get(i, v) for i, v in base.items()}
    elif op == "merge_insert":
        out = {**new, **base}
    elif op == "merge_both":
        out = {**base, **new}
    else:  # insert, fragments: the new rows besides the table's (id 2 twice)
        pairs = [*base.items(), *new.items()]
        return sorted(pairs, key=lambda p: (p[0], json.dumps(p[1])))
    return sorted(out.items())


@pytest.mark.parametrize("op", OPERATIONS)
@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_json_input_enters_every_write(
    tmp_path: Path, layout: str, encoding: str, nesting: str, op: str
) -> None:
    ds = make(tmp_path, nesting, encoding)
    schema = ds.schema
    run(ds, op, source(nesting, layout))
    ds = ls.dataset(ds.uri)
    assert ds.schema.equals(schema, check_metadata=True)  # the recorded encoding stays
    assert docs_of(ds, nesting) == expected(op)
    assert ds.count_rows() == len(expected(op))


UPDATES = {  # nesting -> SQL giving the nesting's value with the document '{"u": [1, {}]}'
    "json": "'{\"u\": [1, {}]}'",
    "struct": "named_struct('doc', '{\"u\": [1, {}]}', 'n', CAST(7 AS BIGINT))",
    "list_struct": "make_array(named_struct('doc', '{\"u\": [1, {}]}'))",
    "map": "map(make_array('k'), make_array('{\"u\": [1, {}]}'))",
}


@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_update_with_sql_text_into_every_encoding(
    tmp_path: Path, encoding: str, nesting: str
) -> None:
    ds = make(tmp_path, nesting, encoding)
    schema = ds.schema
    name = NESTINGS[nesting][0]
    assert ds.update({name: UPDATES[nesting]}, where="id >= 2").num_rows_updated == 2
    ds = ls.dataset(ds.uri)
    assert ds.schema.equals(schema, check_metadata=True)
    want = [(1, {"t": 1}), (2, {"u": [1, {}]}), (3, {"u": [1, {}]})]
    assert docs_of(ds, nesting) == want
    # the column's own values, whatever layout SQL sees them in, go back unchanged
    ds.update({name: name}, where="id = 1")
    assert docs_of(ls.dataset(ds.uri), nesting) == want


@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_add_columns_takes_every_json_input(tmp_path: Path, layout: str, nesting: str) -> None:
    """A new column of json values in any accepted layout (the base table's rows, in table
    order) reads back as the documents given."""
    ds = make(tmp_path, "json", "none")
    field, values = column(nesting, list(SOURCE.values()), layout)
    ds.add_columns(pa.Table.from_arrays([values], schema=pa.schema([field.with_name("x")])))
    ds = ls.dataset(ds.uri)
    path = "x" + NESTINGS[nesting][1][1:]
    got = ds.to_table(columns=["id", "x"], output_encodings={path: "arrow.json"})
    assert _docs(got.rename_columns(["id", NESTINGS[nesting][0]]), nesting) == sorted(
        zip(sorted(BASE), parsed(SOURCE).values(), strict=True)
    )


# ---- invalid JSON ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["insert", "merge_update", "merge_insert", "merge_both"])
@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_invalid_json_names_the_field_and_the_source_row(
    tmp_path: Path, layout: str, encoding: str, nesting: str, op: str
) -> None:
    ds = make(tmp_path, nesting, encoding)
    # source row 0 (id 2) is matched, row 1 (id 4) is new: the bad one is written
    bad_row = 0 if op == "merge_update" else 1
    docs = dict(SOURCE)
    docs[list(docs)[bad_row]] = BAD
    with pytest.raises(InvalidJsonError) as e:
        run(ds, op, source(nesting, layout, docs))
    assert (e.value.field_path, e.value.row) == (NESTINGS[nesting][1], bad_row)
    assert ls.dataset(ds.uri).version == ds.version


@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_invalid_json_from_sql_names_the_table_row(
    tmp_path: Path, encoding: str, nesting: str
) -> None:
    ds = make(tmp_path, nesting, encoding)
    name = NESTINGS[nesting][0]
    sql = UPDATES[nesting].replace('{\\"u\\": [1, {}]}', BAD).replace('{"u": [1, {}]}', BAD)
    with pytest.raises(InvalidJsonError) as e:
        ds.update({name: sql}, where="id = 3")
    assert (e.value.field_path, e.value.row) == (NESTINGS[nesting][1], 2)
    assert ls.dataset(ds.uri).version == ds.version
