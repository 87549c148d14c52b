"""Nested struct members are read by field id, against stock pylance 14.0.2 as the oracle.

pylance renames (``alter_columns``) or drops (``drop_columns``) a member of a struct, of a
struct nested in a struct, of the struct items of a list or of the struct values of a map;
the data files keep the members under their old names (and dropped members stay stored).
lance-semantic must read exactly what pylance reads: same schema, same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2", "2.3"]

Op = Callable[[Any], Any]

ITEM = pa.struct([("u", pa.int32()), ("v", pa.string())])
VALUE = pa.struct([("mm", pa.int32()), ("nn", pa.string())])


def _table(version: str, n: int = 10, start: int = 0) -> pa.Table:
    r = range(start, start + n)
    nulls = version != "2.0"  # 2.0 rejects nullable structs holding nulls
    s_type = pa.struct(
        [
            ("x", pa.int64()),
            ("y", pa.string()),
            ("z", pa.struct([("p", pa.int32()), ("q", pa.int32())])),
        ]
    )
    cols: dict[str, pa.Array] = {
        "a": pa.array([None if i == 7 else i for i in r], pa.int32()),
        "s": pa.array(
            [
                None
                if nulls and i % 5 == 4
                else {"x": i * 10, "y": None if i == 3 else f"y{i}", "z": {"p": i, "q": -i}}
                for i in r
            ],
            s_type,
        ),
        "l": pa.array(
            [
                None
                if i % 4 == 3
                else [{"u": None if j == 1 else i + j, "v": f"v{i}.{j}"} for j in range(i % 3)]
                for i in r
            ],
            pa.list_(ITEM),
        ),
    }
    if version not in ("2.0", "2.1"):  # maps need 2.2
        cols["m"] = pa.array(
            [
                None
                if i % 6 == 5
                else [(f"k{j}", {"mm": i * j, "nn": f"n{j}"}) for j in range(i % 3)]
                for i in r
            ],
            pa.map_(pa.string(), VALUE),
        )
    return pa.table(cols)


def _write(tmp_path: Path, version: str) -> str:
    """A pylance table: 3 fragments, deletion files in two of them."""
    uri = str(tmp_path / "t")
    lance.write_dataset(_table(version), uri, data_storage_version=version, max_rows_per_file=4)
    lance.dataset(uri).delete("a = 1 or a = 9")
    return uri


def _same(uri: str) -> None:
    theirs = lance.dataset(uri)
    ours = ls.dataset(uri)
    expected = theirs.to_table()
    got = ours.to_table()
    assert got.schema.equals(expected.schema, check_metadata=True), (got.schema, expected.schema)
    assert got.to_pylist() == expected.to_pylist()
    names = expected.schema.names
    for columns in (names[1:2], names[:0:-1]):  # one struct; all but "a", reversed
        got = ours.to_table(columns=columns)
        assert got.to_pylist() == theirs.to_table(columns=columns).to_pylist()
    rows = [0, 3, 5, 2]
    assert ours.take(rows).to_pylist() == theirs.take(rows).to_pylist()
    small = pa.Table.from_batches(list(ours.to_batches(batch_size=3)))
    assert small.to_pylist() == expected.to_pylist()


def _alter(*alterations: dict[str, Any]) -> Op:
    def op(ds: Any) -> None:
        for alteration in alterations:  # one commit each, like a user renaming in steps
            lance.dataset(ds.uri).alter_columns(alteration)

    return op


def _drop(*columns: str) -> Op:
    def op(ds: Any) -> None:
        lance.dataset(ds.uri).drop_columns(list(columns))

    return op


def _run(tmp_path: Path, version: str, op: Op) -> str:
    uri = _write(tmp_path, version)
    before = lance.dataset(uri).to_table()
    op(lance.dataset(uri))
    assert lance.dataset(uri).to_table().num_rows == before.num_rows
    _same(uri)
    return uri


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "op",
    [
        _alter({"path": "s.x", "name": "x2"}),
        _alter({"path": "s.z.p", "name": "p2"}),
        _alter({"path": "s.z", "name": "zz"}),
        _alter({"path": "s.z", "name": "zz"}, {"path": "s.zz.q", "name": "q2"}),
        _alter({"path": "s", "name": "t"}, {"path": "t.y", "name": "why"}),
        # renamed onto a member's old name: members must not be matched by name
        _alter({"path": "s.x", "name": "tmp"}, {"path": "s.y", "name": "x"}),
        _alter(
            {"path": "s.x", "name": "tmp"},
            {"path": "s.y", "name": "x"},
            {"path": "s.tmp", "name": "y"},
        ),
    ],
    ids=["member", "deep", "nested-struct", "nested-struct-and-member", "parent", "onto", "swap"],
)
def test_renamed_struct_member(tmp_path: Path, version: str, op: Op) -> None:
    _run(tmp_path, version, op)


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_member_of_list_items(tmp_path: Path, version: str) -> None:
    _run(tmp_path, version, _alter({"path": "l.item.u", "name": "u2"}))


@pytest.mark.parametrize("version", ["2.2", "2.3"])
def test_renamed_member_of_map_values(tmp_path: Path, version: str) -> None:
    _run(tmp_path, version, _alter({"path": "m.entries.value.mm", "name": "mm2"}))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "columns",
    [["s.x"], ["s.z.p"], ["s.z"], ["s.x", "s.z.q"], ["l.item.u"]],
    ids=["member", "deep", "nested-struct", "two", "list-item-member"],
)
def test_dropped_struct_member(tmp_path: Path, version: str, columns: list[str]) -> None:
    _run(tmp_path, version, _drop(*columns))


@pytest.mark.parametrize("version", VERSIONS)
def test_dropped_then_name_reused(tmp_path: Path, version: str) -> None:
    """The stored ``s.x`` is no longer in the schema; ``s.y`` now carries the name ``x``."""

    def op(ds: Any) -> None:
        _drop("s.x")(ds)
        _alter({"path": "s.y", "name": "x"})(ds)

    uri = _run(tmp_path, version, op)
    assert ls.dataset(uri).to_table().column("s").type.field("x").type == pa.string()


@pytest.mark.parametrize("version", VERSIONS)
def test_renamed_then_appended(tmp_path: Path, version: str) -> None:
    """Old files hold ``s.x``, files appended after the rename hold ``s.x2``."""

    def op(ds: Any) -> None:
        _alter({"path": "s.x", "name": "x2"}, {"path": "l.item.u", "name": "u2"})(ds)
        schema = lance.dataset(ds.uri).schema
        more = _table(version, n=5, start=20)
        renamed = [
            c.combine_chunks().view(f.type) for c, f in zip(more.columns, schema, strict=True)
        ]
        more = pa.Table.from_arrays(renamed, schema=schema)
        lance.write_dataset(more, ds.uri, mode="append", max_rows_per_file=4)

    uri = _write(tmp_path, version)
    op(lance.dataset(uri))
    _same(uri)
    frags = lance.dataset(uri).get_fragments()
    assert len(frags) == 5
    first, last = (f.data_files()[0].fields for f in (frags[0], frags[-1]))
    assert first == last  # the same field ids, stored under different names


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_lance_semantic_rename_reads_like_pylance(tmp_path: Path, version: str) -> None:
    """The same renames through lance-semantic: both libraries read the same rows."""
    uri = _write(tmp_path, version)
    ls.dataset(uri).alter_columns({"path": "s.x", "name": "x2"})
    ls.dataset(uri).alter_columns({"path": "l.item.u", "name": "u2"})
    _same(uri)


@pytest.mark.parametrize("version", ["2.1", "2.2", "2.3"])
@pytest.mark.parametrize(
    "alteration",
    [
        {"path": "s.x", "data_type": pa.int16()},
        {"path": "s.y", "data_type": pa.large_string()},
        {"path": "s.z.p", "data_type": pa.int64()},
        {"path": "l.item.u", "data_type": pa.int64()},
    ],
    ids=["member", "string-member", "deep", "list-item-member"],
)
@pytest.mark.parametrize("then", ["", "rename", "drop-other"])
def test_member_spread_over_data_files(
    tmp_path: Path, version: str, alteration: dict[str, Any], then: str
) -> None:
    """A nested type change writes the new member to a new data file of each fragment; the
    old file still stores the old member (its id no longer in the schema) next to the
    others: the struct is put together from both files by field id."""
    path = alteration["path"]
    parent, _, leaf = path.rpartition(".")

    def op(ds: Any) -> None:
        _alter(alteration)(ds)
        assert all(len(f.data_files()) == 2 for f in lance.dataset(ds.uri).get_fragments())
        if then == "rename":
            _alter({"path": path, "name": f"{leaf}_new"})(ds)
        elif then == "drop-other":
            other = "s.z.q" if parent == "s.z" else ("l.item.v" if parent == "l.item" else "s.y")
            _drop(other if other != path else "s.x")(ds)

    _run(tmp_path, version, op)
