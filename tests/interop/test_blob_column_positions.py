"""Columns stored after a blob column read like every other column, on every path.

pylance 14's file reader lists a blob v2 column of a data file as an empty struct followed
by its descriptor's members (``kind``, ``position``, ``size``, ``blob_id``, ``blob_uri``) as
though they were top-level columns, while the file stores the descriptor as one column (one
entry of ``DataFile.fields`` / ``column_indices``). Counting those members as columns gave
the columns after a blob the wrong field ids (``ls.check`` reported a layout problem that is
not there), and that reader cannot project any column after a blob v2 column at all ("the
projection specified the column index 6 but there are only 3 columns in the file"): every
read of such a table failed where pylance reads it.

The class: blob columns first, in the middle, last and two of them, with structs, lists and
maps before and after; blob v2 (2.2, from ``lance-encoding:blob`` bytes and from the
``lance.blob.v2`` extension) and blob v1 (2.0, 2.1); tables written by pylance and by us
(legacy, and flagged); read as written and after add_columns, update, merge_insert,
compact_files and drop_columns, each done by us and by pylance on a twin, compared (values,
Arrow types, blob bytes) and checked by ``ls.check``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

import lance_semantic as ls

_S = pa.struct([("p", pa.int64()), ("q", pa.struct([("r", pa.string())]))])
_T = pa.struct([("u", pa.list_(pa.int32())), ("v", pa.string())])
_M = pa.map_(pa.string(), pa.int64())


def _blob_bytes(name: str, j: int) -> bytes | None:
    if j % 4 == 3:
        return None
    return (name.encode() + b"%d" % j) * (1 + j % 3)


def _value(kind: str, name: str, j: int, version: str) -> Any:
    """Row ``j``'s value of a column of ``kind`` (structs never null on 2.0, which cannot
    store struct validity)."""
    if kind == "id":
        return j
    if kind == "int":
        return None if j % 5 == 4 else j * 7
    if kind == "s":
        if j % 5 == 2 and version != "2.0":
            return None
        return {"p": j, "q": {"r": None if j % 2 else f"r{j}"}}
    if kind == "t":
        return {"u": [j, None][: j % 3], "v": f"v{j}"}
    if kind == "m":
        return None if j % 4 == 1 else [("k", j), ("z", None)][: j % 3]
    return _blob_bytes(name, j)


#: (name, kind) of each column, in table order
LAYOUTS: dict[str, list[tuple[str, str]]] = {
    "blob_first": [("clip", "blob"), ("id", "id"), ("s", "s")],
    "blob_middle": [("id", "id"), ("clip", "blob"), ("d", "int")],
    "blob_last": [("id", "id"), ("s", "s"), ("clip", "blob")],
    "two_blobs": [("a", "blob"), ("id", "id"), ("clip", "blob"), ("d", "int")],
    "nested_around": [("s", "s"), ("clip", "blob"), ("id", "id"), ("t", "t"), ("m", "m")],
}

#: (data storage version, how blobs are given): blob v2 from bytes marked as blobs or from
#: the lance.blob.v2 extension, blob v1 on the versions before 2.2
STORAGE = [("2.2", "bytes"), ("2.2", "extension"), ("2.1", "bytes"), ("2.0", "bytes")]


def _arrow(name: str, kind: str, blobs: str) -> pa.Field:
    if kind == "blob":
        if blobs == "extension":
            return blob_field(name)
        return pa.field(name, pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    types = {"id": pa.int64(), "int": pa.int64(), "s": _S, "t": _T, "m": _M}
    return pa.field(name, types[kind])


def _columns(layout: str, version: str) -> list[tuple[str, str]]:
    cols = LAYOUTS[layout]
    if version in ("2.0", "2.1"):  # (maps need 2.2)
        cols = [c for c in cols if c[1] != "m"]
    return cols


def _rows(layout: str, version: str, blobs: str, ids: list[int]) -> pa.Table:
    cols = _columns(layout, version)
    schema = pa.schema([_arrow(n, k, blobs) for n, k in cols])
    arrays = []
    for (n, k), f in zip(cols, schema, strict=True):
        values = [_value(k, n, j, version) for j in ids]
        blob_v2 = k == "blob" and blobs == "extension"
        arrays.append(blob_array(values) if blob_v2 else pa.array(values, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _write(uri: str, writer: str, layout: str, version: str, blobs: str) -> None:
    """Two fragments of six rows each, by ``writer``."""
    for f in range(2):
        data = _rows(layout, version, blobs, list(range(f * 6, f * 6 + 6)))
        mode = "append" if f else "create"
        if writer == "pylance":
            lance.write_dataset(data, uri, mode=mode, data_storage_version=version)
        elif f:
            ls.dataset(uri).insert(data)
        else:
            flagged = writer == "ours_flagged"
            ls.write_dataset(data, uri, data_storage_version=version, semantic_types=flagged)


def _after_blob(layout: str, version: str) -> str:
    """The name of the last column stored after the first blob column (or the last one)."""
    cols = _columns(layout, version)
    return [n for n, k in cols if k != "blob"][-1]


Op = Callable[[Any, str, str, str], None]


def _merge(ds: Any, layout: str, version: str, blobs: str) -> None:
    source = _rows(layout, version, blobs, [2, 5, 40])
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)


def _compact(ds: Any, layout: str, version: str, blobs: str) -> None:
    ds.delete("id = 3")
    ds.optimize.compact_files()


def _add_then_update(ds: Any, layout: str, version: str, blobs: str) -> None:
    ds.add_columns({"e": "id * 2"})
    ds.update({"e": "e + 1"}, where="id = 2")


def _add_then_compact(ds: Any, layout: str, version: str, blobs: str) -> None:
    ds.add_columns({"e": "id * 2"})
    _compact(ds, layout, version, blobs)


OPS: dict[str, Op] = {
    "read": lambda ds, *_: None,
    "add_columns": lambda ds, *_: ds.add_columns({"e": "id * 2"}),
    "add_columns_then_update": _add_then_update,
    "update": lambda ds, *_: ds.update({"id": "id + 100"}, where="id % 3 = 1"),
    "merge_insert": _merge,
    "compact_files": _compact,
    "add_columns_then_compact": _add_then_compact,
    "drop_first_blob": lambda ds, layout, version, _: ds.drop_columns(
        [next(n for n, k in _columns(layout, version) if k == "blob")]
    ),
    "drop_column_after_blob": lambda ds, layout, version, _: ds.drop_columns(
        [_after_blob(layout, version)]
    ),
}

WRITERS = ["pylance", "ours", "ours_flagged"]


def _plain_columns(schema: pa.Schema) -> list[str]:
    blob = (b"lance-encoding:blob", b"ARROW:extension:name")
    return [
        f.name
        for f in schema
        if not any(k in (f.metadata or {}) for k in blob)
        and not isinstance(f.type, pa.BaseExtensionType)
    ]


def _blob_columns(schema: pa.Schema) -> list[str]:
    plain = set(_plain_columns(schema))
    return [n for n in schema.names if n not in plain]


def _by_id(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


def _blob_values(ds: Any, column: str) -> dict[int, bytes | None]:
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    files = ds.take_blobs(column, indices=list(range(len(ids))))
    return {i: None if f is None else f.readall() for i, f in zip(ids, files, strict=True)}


#: (writer, data storage version, how blobs are given); a flagged table from the extension
#: is the same as from bytes
TABLES = [(w, v, b) for w in WRITERS for v, b in STORAGE if (w, b) != ("ours_flagged", "extension")]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize(("writer", "version", "blobs"), TABLES, ids=["-".join(t) for t in TABLES])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_columns_after_a_blob_column_read_like_pylance(
    tmp_path: Path, layout: str, version: str, blobs: str, writer: str, op: str
) -> None:
    uri, twin = str(tmp_path / "t"), str(tmp_path / "twin")
    _write(uri, writer, layout, version, blobs)
    _write(twin, "pylance" if writer == "pylance" else "ours", layout, version, blobs)
    OPS[op](ls.dataset(uri), layout, version, blobs)
    OPS[op](lance.dataset(twin), layout, version, blobs)
    theirs = lance.dataset(twin)
    ours = ls.dataset(uri)
    plain = _plain_columns(theirs.schema)
    want = _by_id(theirs.to_table(columns=plain))
    got = _by_id(ours.to_table(columns=plain))
    assert ls.check(uri).problems == ()
    if writer == "ours_flagged":  # the contract's layouts; the values are pylance's
        assert got.to_pylist() == want.to_pylist()
    else:
        assert got.equals(want), (got.schema, want.schema)
        assert _by_id(lance.dataset(uri).to_table(columns=plain)).equals(want)
    for column in _blob_columns(theirs.schema):
        assert _blob_values(ours, column) == _blob_values(theirs, column)
    # every read path over the columns after the blob
    whole = ours.to_table()
    assert _by_id(whole.select(plain)).to_pylist() == want.to_pylist()
    assert sum(b.num_rows for b in ours.to_batches(batch_size=2)) == want.num_rows
    assert _by_id(ours.to_table(columns=plain, filter="id >= 2")).to_pylist() == [
        r for r in want.to_pylist() if r["id"] >= 2
    ]
    last = ours.count_rows() - 1
    taken = ours.take([last, 0], columns=plain).to_pylist()
    assert taken == [whole.select(plain).slice(i, 1).to_pylist()[0] for i in (last, 0)]
    rows = [r for f in ours.get_fragments() for r in f.to_table(columns=plain).to_pylist()]
    assert rows == whole.select(plain).to_pylist()
    fragment = ours.get_fragments()[-1]
    assert fragment.take([0], columns=plain).to_pylist() == rows[-fragment.count_rows() :][:1]


def _json_in_struct() -> pa.Array:
    text = pa.array(['{"a": 1}', None, "[1, 2]", '"x"', "null", "{}"], pa.json_(pa.string()))
    return pa.StructArray.from_arrays([text], ["j"], mask=pa.array([False, True] + [False] * 4))


#: columns of every kind of layout, stored after a blob v2 column (6 rows); not
#: fixed_size_list<struct>, which pylance 14 cannot read beside another column on 2.2 at all
#: ("cannot read columns of differing lengths together", blob or not)
AFTER = {
    "utf8": lambda: pa.array(["a", None, "", "d", "e", "f"]),
    "large_utf8": lambda: pa.array(["a", None, "", "d", "e", "f"], pa.large_string()),
    "binary": lambda: pa.array([b"a", None, b"", b"d", b"e", b"f"]),
    "dictionary": lambda: pa.array(["a", "b", None, "a", "b", "c"]).dictionary_encode(),
    "decimal": lambda: pa.array([1, 2, None, 4, 5, 6], pa.decimal128(10, 2)),
    "timestamp": lambda: pa.array([1, 2, None, 4, 5, 6], pa.timestamp("us", "UTC")),
    "date": lambda: pa.array([1, None, 3, 4, 5, 6], pa.date32()),
    "bool": lambda: pa.array([True, None, False, True, False, True]),
    "float16": lambda: pa.array([1.0, 2.0, None, 4.0, 5.0, 6.0], pa.float16()),
    "fixed_size_binary": lambda: pa.array([b"ab", b"cd", None, b"ef", b"gh", b"ij"], pa.binary(2)),
    "fixed_size_list": lambda: pa.array([[1.0, 2.0]] * 5 + [None], pa.list_(pa.float32(), 2)),
    "list_struct": lambda: pa.array(
        [[{"p": 1, "q": "x"}], None, [], [{"p": None, "q": None}], [], [{"p": 6, "q": "y"}]]
    ),
    "large_list": lambda: pa.array([[1], None, [], [2, 3], [4], []], pa.large_list(pa.int32())),
    "map": lambda: pa.array([[("k", 1)], None, [], [("a", 2), ("b", None)], [], [("c", 3)]], _M),
    "json": lambda: pa.array(['{"a": 1}', None, "[1, 2]", '"x"', "null", "{}"], pa.json_()),
    "json_in_struct": _json_in_struct,
    "bfloat16": lambda: __import__("lance.arrow").arrow.bfloat16_array(
        [1.0, None, 2.0, 3.0, 4.0, 5.0]
    ),
    "uuid": lambda: pa.array([bytes(range(16))] * 5 + [None], pa.uuid()),
}


@pytest.mark.parametrize("writer", ["pylance", "ours"])
@pytest.mark.parametrize("kind", list(AFTER))
def test_every_layout_after_a_blob_v2_column_reads_like_pylance(
    tmp_path: Path, kind: str, writer: str
) -> None:
    column = AFTER[kind]()
    blob = blob_array([b"x", None, b"yy", b"", b"z" * 100, b"w"])
    data = pa.table(
        {"id": pa.array(range(6), pa.int64()), "clip": blob, "late": column},
        schema=pa.schema([pa.field("id", pa.int64()), blob_field("clip"), ("late", column.type)]),
    )
    uri = str(tmp_path / "t")
    if writer == "pylance":
        lance.write_dataset(data, uri, data_storage_version="2.2")
    else:
        ls.write_dataset(data, uri, data_storage_version="2.2", semantic_types=False)
    ls.dataset(uri).delete("id = 4")
    ours, theirs = ls.dataset(uri), lance.dataset(uri)
    assert ls.check(uri).problems == ()
    for read in (
        lambda ds: ds.to_table(columns=["id", "late"]),
        lambda ds: ds.to_table(columns=["late"], filter="id > 0"),
        lambda ds: ds.take([4, 0, 2], columns=["late", "id"]),
        lambda ds: ds.get_fragments()[0].to_table(columns=["late"]),
    ):
        got, want = read(ours), read(theirs)
        assert got.equals(want), (got.schema, want.schema)


def _nested_blob_rows(ids: list[int]) -> pa.Table:
    clip = blob_array([_blob_bytes("c", j) for j in ids])
    s = pa.StructArray.from_arrays(
        [pa.array(ids, pa.int64()), clip], fields=[pa.field("x", pa.int64()), blob_field("c")]
    )
    return pa.table({"id": pa.array(ids, pa.int64()), "s": s, "d": pa.array([j * 3 for j in ids])})


NESTED_OPS: dict[str, Callable[[Any], Any]] = {
    "read": lambda ds: None,
    "add_columns": lambda ds: ds.add_columns({"e": "d * 2"}),
    "delete": lambda ds: ds.delete("id = 2"),
    "drop_column_after_blob": lambda ds: ds.drop_columns(["d"]),
}


@pytest.mark.parametrize("op", list(NESTED_OPS))
def test_columns_around_a_struct_holding_a_blob_v2_read_like_pylance(
    tmp_path: Path, op: str
) -> None:
    """pylance lists the descriptor members of a blob v2 struct member after the top-level
    column holding it (a table pylance writes; we do not write such tables yet)."""
    uri, twin = str(tmp_path / "t"), str(tmp_path / "twin")
    for path in (uri, twin):
        lance.write_dataset(_nested_blob_rows([0, 1, 2]), path, data_storage_version="2.2")
        lance.write_dataset(_nested_blob_rows([3, 4, 5]), path, mode="append")
    NESTED_OPS[op](ls.dataset(uri))
    NESTED_OPS[op](lance.dataset(twin))
    ours, theirs = ls.dataset(uri), lance.dataset(twin)
    assert ls.check(uri).problems == ()
    for read in (
        lambda ds: ds.to_table(),
        lambda ds: ds.to_table(columns=[c for c in ds.schema.names if c != "s"]),
        lambda ds: ds.to_table(filter="id > 0"),
        lambda ds: ds.take([4, 0]),
        lambda ds: ds.get_fragments()[1].to_table(),
    ):
        got, want = read(ours), read(theirs)
        assert got.equals(want), (got.schema, want.schema)
    assert lance.dataset(uri).to_table().equals(theirs.to_table())
