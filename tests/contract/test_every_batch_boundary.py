"""Spec "Contract and Invariants", writer boundary: *every* array handed to the encoder has
the exact Arrow type recorded for its field, so the boundary (accept, convert, invariant)
runs on every batch of a write, not only on the first. And spec "Failure Semantics", json
row: ``InvalidJsonError.row`` is the row of the caller's input, counted across batches and
chunks, with the positions inside lists and maps.

Each case is generated for every write path that takes user batches (create, overwrite,
append / insert, add_columns with a batch function), for the bad batch in every position,
on legacy and flagged tables.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import lance
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls

VERSIONS = [pytest.param("2.2", id="legacy"), pytest.param("2.3", id="flagged")]


def _batches(arrays: list[pa.Array], name: str = "s") -> list[pa.RecordBatch]:
    return [pa.record_batch([a], names=[name]) for a in arrays]


def _data_files(uri: str) -> set[str]:
    data = os.path.join(uri, "data")
    return set(os.listdir(data)) if os.path.isdir(data) else set()


Write = Callable[[str, list[pa.RecordBatch], str], object]


def _create(uri: str, batches: list[pa.RecordBatch], version: str) -> object:
    return ls.write_dataset(batches, uri, data_storage_version=version)


def _overwrite(uri: str, batches: list[pa.RecordBatch], version: str) -> object:
    return ls.write_dataset(batches, uri, mode="overwrite", data_storage_version=version)


def _append(uri: str, batches: list[pa.RecordBatch], version: str) -> object:
    return ls.write_dataset(batches, uri, mode="append")


def _insert(uri: str, batches: list[pa.RecordBatch], version: str) -> object:
    return ls.dataset(uri).insert(batches)


WRITES = [
    pytest.param(_create, False, id="create"),
    pytest.param(_overwrite, True, id="overwrite"),
    pytest.param(_append, True, id="append"),
    pytest.param(_insert, True, id="insert"),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("write", "existing"), WRITES)
@pytest.mark.parametrize("bad_at", [1, 2])
@pytest.mark.parametrize(
    "bad",
    [
        pa.array([7], pa.int32()),
        pa.array([b"x"], pa.binary()),
        pa.array([["x"]], pa.list_(pa.string())),
        pa.array([{"x": "y"}]),
    ],
    ids=["int32", "binary", "list", "struct"],
)
def test_writer_boundary_every_batch_refuses_a_later_batch_of_another_type(
    tmp_path: Path, version: str, write: Write, existing: bool, bad_at: int, bad: pa.Array
) -> None:
    uri = str(tmp_path / "t")
    if existing:
        ls.write_dataset(pa.table({"s": ["seed"]}), uri, data_storage_version=version)
    before = _data_files(uri)
    good = [pa.array(["a", "b"]), pa.array(["c"], pa.large_string())]
    if version == "2.2":  # legacy rule: the table's one Arrow type
        good = [pa.array(["a", "b"]), pa.array(["c"])]
    arrays = [*good]
    arrays.insert(bad_at, bad)
    expected = ls.SchemaMismatchError if version == "2.2" else ls.UnsupportedInputTypeError
    with pytest.raises(expected) as info:
        write(uri, _batches(arrays), version)
    assert info.value.field_path == "s"
    # nothing committed, nothing left behind
    if existing:
        assert ls.dataset(uri).version == 1
        assert ls.dataset(uri).to_table().column("s").to_pylist() == ["seed"]
    else:
        assert not os.path.exists(os.path.join(uri, "_versions"))
    assert _data_files(uri) == before


def test_writer_boundary_every_batch_refuses_other_columns_in_a_later_batch(
    tmp_path: Path,
) -> None:
    first = pa.record_batch({"a": [1], "b": ["x"]})
    # (another order is taken: tests/interop/test_column_order_in_one_write.py)
    for later in (
        pa.record_batch({"a": [2]}),  # a column less
        pa.record_batch({"a": [2], "b": ["y"], "c": [1.0]}),  # a column more
    ):
        for version in ("2.2", "2.3"):
            uri = str(tmp_path / f"t{version}{len(later.schema)}{later.schema.names[0]}")
            with pytest.raises(ls.SchemaMismatchError):
                ls.write_dataset([first, later], uri, data_storage_version=version)
            assert not os.path.exists(os.path.join(uri, "_versions"))


def test_writer_boundary_every_batch_flagged_layouts_vary_between_batches(
    tmp_path: Path,
) -> None:
    """An accepted layout may change from batch to batch; each data file keeps its own, the
    values round-trip and pylance's file reader sees the declared layouts."""
    layouts = [
        pa.array(["a", None]),
        pa.array(["b"], pa.large_string()),
        pa.array(["c", "d"], pa.string_view()),
        pa.array(["e", "e"]).dictionary_encode(),
        pa.array(["f"]),
    ]
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_batches(layouts), uri, data_storage_version="2.3")
    assert ds.to_table().column("s").to_pylist() == ["a", None, "b", "c", "d", "e", "e", "f"]
    stored = set()
    for name in _data_files(uri):
        reader = lance.file.LanceFileReader(os.path.join(uri, "data", name))
        stored.add(str(reader.metadata().schema.field("s").type))
    assert stored == {
        "string",
        "large_string",
        "dictionary<values=string, indices=int32, ordered=0>",
    }
    ds.insert(_batches(list(reversed(layouts))))
    assert ds.count_rows() == 16


def test_writer_boundary_every_batch_in_add_columns_function(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    for version in ("2.2", "2.3"):
        path = f"{uri}{version}"
        ds = ls.write_dataset(
            pa.table({"i": range(6)}), path, data_storage_version=version, max_rows_per_file=3
        )
        calls: list[int] = []

        def new(batch: pa.RecordBatch, calls: list[int] = calls) -> pa.RecordBatch:
            calls.append(1)
            arr = pa.array([str(v) for v in batch.column("i").to_pylist()])
            if len(calls) > 1:
                arr = pa.array(batch.column("i").to_pylist(), pa.int32())
            return pa.record_batch({"s": arr})

        # refused by add_columns itself (a function's batches keep one schema)
        with pytest.raises(ls.errors.SchemaEvolutionError):
            ds.add_columns(new)  # one call per fragment
        assert ls.dataset(path).version == 1
        assert len(calls) == 2


def test_invariant_check_file_layout_refuses_wrong_layouts() -> None:
    """The writers' last guard, whatever path built the batches."""
    from lance_semantic.schema.arrow import schema_from_arrow
    from lance_semantic.schema.semantic import canonicalize_created
    from lance_semantic.write.boundary import check_file_layout

    arrow = pa.schema([("s", pa.string()), ("l", pa.list_(pa.string()))])
    legacy = schema_from_arrow(arrow)
    flagged = canonicalize_created(legacy, arrow)
    check_file_layout(legacy.fields, arrow, flagged=False)
    ok = pa.schema([("s", pa.large_string()), ("l", pa.large_list(pa.large_string()))])
    check_file_layout(flagged.fields, ok, flagged=True)
    with pytest.raises(ls.InvariantViolationError) as info:
        check_file_layout(legacy.fields, ok, flagged=False)
    assert info.value.field_path == "s"
    for bad, path in [
        (pa.schema([("s", pa.int32()), ("l", pa.list_(pa.string()))]), "s"),
        (pa.schema([("s", pa.string_view()), ("l", pa.list_(pa.string()))]), "s"),
        (pa.schema([("s", pa.string()), ("l", pa.list_(pa.int8()))]), "l.item"),
        (pa.schema([("s", pa.string()), ("l", pa.list_(pa.binary_view()))]), "l"),
    ]:
        with pytest.raises(ls.InvariantViolationError) as info:
            check_file_layout(flagged.fields, bad, flagged=True)
        assert info.value.field_path == path


# ---- rows of the caller's input ------------------------------------------------------------

J = pa.json_(pa.string())


def _json(values: list[str | None]) -> pa.Array:
    return pa.ExtensionArray.from_storage(J, pa.array(values, pa.string()))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("form", ["batches", "chunked_table", "reader"])
@pytest.mark.parametrize("bad_row", [0, 4, 9])
def test_failure_row_invalid_json_names_the_row_of_the_input(
    tmp_path: Path, version: str, form: str, bad_row: int
) -> None:
    docs: list[str | None] = [f'{{"n": {i}}}' for i in range(10)]
    docs[bad_row] = '{"n": '
    docs[5] = None
    sizes = [3, 1, 4, 2]
    batches, start = [], 0
    for n in sizes:
        batches.append(pa.record_batch([_json(docs[start : start + n])], names=["j"]))
        start += n
    data: object = batches
    if form == "chunked_table":
        data = pa.Table.from_batches(batches)
    elif form == "reader":
        data = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    uri = str(tmp_path / "t")
    with pytest.raises(ls.InvalidJsonError) as info:
        ls.write_dataset(data, uri, data_storage_version=version)
    assert (info.value.field_path, info.value.row, info.value.elements) == ("j", bad_row, ())
    assert f"row {bad_row}:" in str(info.value)
    assert not os.path.exists(os.path.join(uri, "_versions"))


@pytest.mark.parametrize("version", VERSIONS)
def test_failure_row_invalid_json_inside_lists_and_maps_names_the_top_level_row(
    tmp_path: Path, version: str
) -> None:
    first = pa.record_batch([_json_lists([["1"], ["2", "3"]])], names=["l"])
    second = pa.record_batch([_json_lists([[], ["1", "2"], None, ["4", "{bad"]])], names=["l"])
    with pytest.raises(ls.InvalidJsonError) as info:
        ls.write_dataset([first, second], str(tmp_path / "l"), data_storage_version=version)
    assert (info.value.field_path, info.value.row, info.value.elements) == ("l.item", 5, (1,))
    assert "row 5, element [1]" in str(info.value)

    # list<struct<json>>, map<string, json> and fixed_size_list<json>, in several chunks
    def structs(docs: list[str]) -> pa.Array:
        return pa.StructArray.from_arrays([_json(docs)], fields=[pa.field("doc", J)])

    lst = pa.chunked_array(
        [
            pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), structs(["0"])),
            pa.ListArray.from_arrays(
                pa.array([0, 1, 4], pa.int32()), structs(["1", "2", "3", "[1,"])
            ),
        ]
    )
    with pytest.raises(ls.InvalidJsonError) as info:
        ls.write_dataset(pa.table({"l": lst}), str(tmp_path / "ls"), data_storage_version=version)
    assert (info.value.field_path, info.value.row, info.value.elements) == ("l.item.doc", 2, (2,))

    def maps(offsets: list[int], keys: list[str], docs: list[str]) -> pa.Array:
        return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(keys), _json(docs))

    mp = pa.chunked_array(
        [maps([0, 1], ["a"], ["1"]), maps([0, 2, 3], ["a", "b", "c"], ["1", "2", "nope"])]
    )
    with pytest.raises(ls.InvalidJsonError) as info:
        ls.write_dataset(pa.table({"m": mp}), str(tmp_path / "m"), data_storage_version=version)
    assert info.value.row == 2 and info.value.elements == (0,)
    assert info.value.field_path.endswith("value")


def _json_lists(rows: list[list[str] | None]) -> pa.Array:
    offsets: list[int | None] = [0]
    flat: list[str] = []
    for r in rows:
        flat.extend(r or [])
        offsets.append(len(flat))
    mask = pa.array([r is None for r in rows])
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), _json(flat), mask=mask)


def test_failure_row_invalid_blob_names_the_row_of_the_input(tmp_path: Path) -> None:
    """Blob values are checked per data file; the row is still the input's."""
    from lance.blob import blob_array, blob_field

    schema = pa.schema([blob_field("b")])
    good = blob_array([b"x"] * 3)
    bad = pa.StructArray.from_arrays(
        [pa.array([b"y", b"z"], pa.large_binary()), pa.array([None, "file:///x"], pa.string())],
        names=["data", "uri"],
    )
    bad = pa.ExtensionArray.from_storage(good.type, bad.cast(good.type.storage_type))
    batches = [pa.record_batch([good], schema=schema), pa.record_batch([bad], schema=schema)]
    with pytest.raises(ls.InvalidBlobError) as info:
        ls.write_dataset(batches, str(tmp_path / "b"), max_rows_per_file=2)
    assert info.value.row == 4
    assert lance  # the blob helpers come from pylance
