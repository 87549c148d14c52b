"""Spec "Contract and Invariants": the writer encodes the caller's values unchanged, whatever
the Arrow memory layout of the arrays that hold them. Inputs arrive as slices (a table's
chunks, ``Table.slice``, a reader's batches), so every nested shape is written from arrays
that start at a non-zero offset, on every write path, legacy and flagged, and read back equal.

pylance 14's encoder panics on a sliced struct whose child is a struct (its own
``write_dataset`` too); ``storage.datafile`` copies such a column to offset 0 first.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls

INNER = pa.struct([("item", pa.string()), ("n", pa.int32())])

SHAPES = {
    "struct<struct>": (
        pa.struct([("x", INNER), ("y", pa.int64())]),
        lambda i: (
            None if i % 5 == 3 else {"x": None if i % 4 == 1 else {"item": f"v{i}", "n": i}, "y": i}
        ),
    ),
    "struct<struct<struct>>": (
        pa.struct([("x", pa.struct([("z", INNER)]))]),
        lambda i: {"x": {"z": {"item": str(i), "n": -i}}} if i % 3 else {"x": None},
    ),
    "list<struct<struct>>": (
        pa.list_(pa.struct([("x", INNER)])),
        lambda i: [{"x": {"item": "a" * (i % 3), "n": i}}] * (i % 3) if i % 4 else None,
    ),
    "large_list<struct<struct>>": (
        pa.large_list(pa.struct([("x", INNER)])),
        lambda i: [{"x": None}, {"x": {"item": "b", "n": i}}] if i % 2 else [],
    ),
    "struct<list<struct<struct>>>": (
        pa.struct([("l", pa.list_(pa.struct([("x", INNER)])))]),
        lambda i: {"l": [{"x": {"item": "c", "n": i}}]} if i % 2 else {"l": None},
    ),
    "struct<string, list<int>>": (
        pa.struct([("s", pa.string()), ("l", pa.list_(pa.int32()))]),
        lambda i: {"s": f"s{i}", "l": list(range(i % 4))},
    ),
    # the boundary converts views (flagged) or casts (legacy): the cast of a sliced struct
    # is a struct at offset 0 whose children are still slices
    "struct<struct, list<binary_view>>": (
        pa.struct([("x", INNER), ("b", pa.list_(pa.binary_view()))]),
        lambda i: {"x": {"item": "w", "n": i}, "b": [b"q" * i]} if i % 3 else None,
    ),
    "struct<struct<struct>, list<binary_view>>": (
        pa.struct([("a", pa.struct([("x", INNER)])), ("b", pa.list_(pa.binary_view()))]),
        lambda i: {"a": {"x": {"item": "w", "n": i}} if i % 2 else None, "b": [b"r"] * i},
    ),
    "struct<utf8_view, struct>": (
        pa.struct([("v", pa.string_view()), ("x", INNER)]),
        lambda i: {"v": "view" * i, "x": None if i % 2 else {"item": "z", "n": i}},
    ),
    "list<string>": (pa.list_(pa.string()), lambda i: [f"e{i}"] * (i % 3)),
    "string": (pa.string(), lambda i: None if i % 6 == 0 else "t" * (i % 7)),
}

N = 12
#: (offset, length) slices: the start, the middle, the end, empty ones at every position
SLICES = [(1, N - 1), (3, 5), (N - 2, 2), (0, 0), (4, 0), (N, 0)]


def _column(shape: str) -> pa.Array:
    dt, value = SHAPES[shape]
    return pa.array([value(i) for i in range(N)], dt)


def _sliced_table(shape: str) -> pa.Table:
    """One table whose chunks are all slices of one array (every offset in ``SLICES``)."""
    base = _column(shape)
    return pa.Table.from_batches(
        [pa.record_batch([base.slice(o, n)], names=["c"]) for o, n in SLICES]
    )


def _expected(shape: str) -> list[object]:
    base = _column(shape).to_pylist()
    return [v for o, n in SLICES for v in base[o : o + n]]


@pytest.mark.parametrize("version", ["2.2", "2.3"], ids=["legacy", "flagged"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_writer_boundary_sliced_inputs_of_every_shape_round_trip(
    tmp_path: Path, shape: str, version: str
) -> None:
    table = _sliced_table(shape)
    expected = _expected(shape)
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(table, uri, data_storage_version=version)  # create
    assert ds.to_table().column("c").to_pylist() == expected
    ds = ls.write_dataset(table.to_reader(), uri, mode="append")  # a reader's batches
    ds.insert(table.slice(2, 5))  # Table.slice over chunks
    ds = ls.write_dataset(table, uri, mode="overwrite")
    ds.insert(list(table.to_batches()))
    got = ls.dataset(uri).to_table().column("c").to_pylist()
    assert got == expected + expected


@pytest.mark.parametrize("version", ["2.2", "2.3"], ids=["legacy", "flagged"])
def test_writer_boundary_sliced_nested_structs_in_rewrites(tmp_path: Path, version: str) -> None:
    """update, merge_insert and add_columns hand the encoder slices of what they read."""
    shape = "struct<struct>"
    base = _column(shape)
    ids = pa.array(range(N), pa.int64())
    table = pa.Table.from_batches(
        [pa.record_batch([ids.slice(o, 4), base.slice(o, 4)], names=["id", "c"]) for o in (0, 4, 8)]
    )
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(table, uri, data_storage_version=version, max_rows_per_file=5)
    ds.update({"id": "id + 100"}, where="id % 2 = 0")
    source = pa.Table.from_batches(
        [pa.record_batch([ids.slice(5, 3), base.slice(1, 3)], names=["id", "c"])]
    )
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    ds.add_columns({"k": "id * 2"})
    got = {r["id"]: (r["c"], r["k"]) for r in ls.dataset(uri).to_table().to_pylist()}
    values = base.to_pylist()
    want = {(i + 100 if i % 2 == 0 else i): (values[i], 0) for i in range(N)}
    for j, i in enumerate((5, 6, 7)):  # 5 and 7 match and are updated, 6 (now 106) is new
        want[i] = (values[1 + j], 0)
    want = {k: (c, 2 * k) for k, (c, _) in want.items()}
    assert got == want
