"""Spec "Failure Semantics": *a writer tries to set lance-schema:output-encoding to a value
that is invalid for the field's type or parameters* -> the schema update fails. An entry
given in the input field metadata is such an attempt, on every path that creates columns
of a flagged table (create, overwrite, ``add_columns``, ``alter_columns``), at any depth:
it raises ``InvalidOutputEncodingError`` before any data file is written or committed.

Plus spec "Output Encoding" (recorded at creation when the input layout differs from the
default) for json: a column created from JSONB (``lance.json``) input records ``lance.json``.
And "Legacy tables ... no output encoding applies": on legacy tables the key is plain
metadata, stored as pylance stores it; an upgrade does not turn it into a read type.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.codecs.json import encode_json

KEY = "lance-schema:output-encoding"


def _md(entry: str) -> dict[str, str]:
    return {KEY: entry}


@dataclass(frozen=True)
class Case:
    """A column whose field (or a nested child at ``path``) carries an invalid entry."""

    field: pa.Field
    values: list[Any]
    path: str
    entry: str

    def array(self) -> pa.Array:
        dt = self.field.type
        if isinstance(dt, pa.BaseExtensionType):
            return pa.ExtensionArray.from_storage(dt, pa.array(self.values, dt.storage_type))
        return pa.array(self.values, dt)


def _top(name: str, dt: pa.DataType, values: list[Any], entry: str) -> tuple[str, Case]:
    return name, Case(pa.field("c", dt, metadata=_md(entry)), values, "c", entry)


TOP = dict(
    [
        _top("decimal40_decimal128", pa.decimal256(40, 1), [Decimal("1.5"), None], "decimal128"),
        _top("string_large_list", pa.string(), ["a", None], "large_list"),
        _top("string_float_key", pa.string(), ["a", None], "dictionary:float32:utf8"),
        _top("string_binary_values", pa.string(), ["a", None], "dictionary:int8:binary"),
        # the input layout (large_utf8) would take the entry's place: still refused
        _top("large_string_nonsense", pa.large_string(), ["a", None], "nonsense"),
        _top("int32_large_utf8", pa.int32(), [1, None], "large_utf8"),
        _top("list_utf8", pa.list_(pa.int8()), [[1], None], "utf8"),
        _top("binary_utf8", pa.binary(), [b"x", None], "utf8"),
        _top("json_utf8", pa.json_(), ['{"a": 1}', None], "utf8"),
        _top("struct_list", pa.struct([("x", pa.int8())]), [{"x": 1}, None], "list"),
        _top("fsl_large_list", pa.list_(pa.float32(), 2), [[1.0, 2.0], None], "large_list"),
        _top("empty_entry", pa.string(), ["a", None], ""),
    ]
)

NESTED = {
    "struct_member": Case(
        pa.field("c", pa.struct([pa.field("x", pa.string(), metadata=_md("large_list"))])),
        [{"x": "a"}, None],
        "c.x",
        "large_list",
    ),
    "struct_member_decimal": Case(
        pa.field("c", pa.struct([pa.field("d", pa.decimal256(40, 0), metadata=_md("decimal128"))])),
        [{"d": Decimal(1)}, None],
        "c.d",
        "decimal128",
    ),
    "list_item": Case(
        pa.field("c", pa.list_(pa.field("item", pa.decimal128(5, 2), metadata=_md("utf8")))),
        [[Decimal("1.25")], None],
        "c.item",
        "utf8",
    ),
    "map_value": Case(
        pa.field(
            "c",
            pa.map_(pa.string(), pa.field("value", pa.string(), metadata=_md("decimal256"))),
        ),
        [[("k", "v")], None],
        "c.entries.value",
        "decimal256",
    ),
    "list_struct_member": Case(
        pa.field(
            "c",
            pa.list_(pa.struct([pa.field("y", pa.int64(), metadata=_md("large_utf8"))])),
        ),
        [[{"y": 1}], None],
        "c.item.y",
        "large_utf8",
    ),
}

CASES = {**TOP, **NESTED}


def _data(case: Case) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), case.field])
    return pa.Table.from_arrays([pa.array([0, 1], pa.int64()), case.array()], schema=schema)


def _flagged(tmp_path: Path) -> ls.Dataset:
    ids = pa.table({"id": pa.array([0, 1], pa.int64())})
    return ls.write_dataset(ids, str(tmp_path / "t"), data_storage_version="2.3")


def _files(uri: str) -> list[str]:
    """Every file of the table (data files, deletion files, manifests, transactions)."""
    out = []
    for dirpath, _dirs, names in os.walk(uri):
        out += [os.path.relpath(os.path.join(dirpath, n), uri) for n in names]
    return sorted(out)


def _create(tmp_path: Path, case: Case) -> Callable[[], object]:
    return lambda: ls.write_dataset(_data(case), str(tmp_path / "t"), data_storage_version="2.3")


def _overwrite(tmp_path: Path, case: Case) -> Callable[[], object]:
    ds = _flagged(tmp_path)
    return lambda: ls.write_dataset(_data(case), ds.uri, mode="overwrite")


def _overwrite_legacy_into_flagged(tmp_path: Path, case: Case) -> Callable[[], object]:
    ds = ls.write_dataset(pa.table({"id": [0, 1]}), str(tmp_path / "t"))
    return lambda: ls.write_dataset(
        _data(case), ds.uri, mode="overwrite", data_storage_version="2.3"
    )


def _add_field(tmp_path: Path, case: Case) -> Callable[[], object]:
    ds = _flagged(tmp_path)
    return lambda: ds.add_columns(case.field)


def _add_data(tmp_path: Path, case: Case) -> Callable[[], object]:
    ds = _flagged(tmp_path)
    values = pa.Table.from_arrays([case.array()], schema=pa.schema([case.field]))
    return lambda: ds.add_columns(values)


def _add_function(tmp_path: Path, case: Case) -> Callable[[], object]:
    ds = _flagged(tmp_path)
    schema = pa.schema([case.field])

    def compute(batch: pa.RecordBatch) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays([case.array()[: batch.num_rows]], schema=schema)

    return lambda: ds.add_columns(compute)


PATHS = {
    "create": _create,
    "overwrite": _overwrite,
    "overwrite_into_flagged": _overwrite_legacy_into_flagged,
    "add_columns_field": _add_field,
    "add_columns_data": _add_data,
    "add_columns_function": _add_function,
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("path", list(PATHS))
def test_failure_invalid_entry_in_input_metadata_fails_before_anything_is_written(
    tmp_path: Path, path: str, case: str
) -> None:
    c = CASES[case]
    run = PATHS[path](tmp_path, c)
    uri = str(tmp_path / "t")
    before = _files(uri) if os.path.exists(uri) else []
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        run()
    assert (err.value.field_path, err.value.encoding) == (c.path, c.entry)
    assert isinstance(err.value, ValueError)
    if path == "create":
        if os.path.exists(uri):
            assert not [f for f in _files(uri) if f.startswith(("data", "_versions"))]
        with pytest.raises(ls.DatasetNotFoundError):
            ls.dataset(uri)
    else:
        assert _files(uri) == before  # no data file, no manifest, nothing
        assert ls.dataset(uri).version == 1


#: alter_columns: the column exists without the entry; the new type's child carries it
ALTERS = {
    # one semantic type: a metadata-only change of the output encodings
    "struct_member": (NESTED["struct_member"], pa.struct([("x", pa.string())])),
    "list_item": (NESTED["list_item"], pa.list_(pa.decimal128(5, 2))),
    "map_value": (NESTED["map_value"], pa.map_(pa.string(), pa.string())),
    # a cast into a new column
    "list_item_cast": (
        Case(
            pa.field("c", pa.list_(pa.field("item", pa.int64(), metadata=_md("utf8")))),
            [[1], None],
            "c.item",
            "utf8",
        ),
        pa.list_(pa.int32()),
    ),
    "struct_member_cast": (
        Case(
            pa.field("c", pa.struct([pa.field("x", pa.int64(), metadata=_md("utf8"))])),
            [{"x": 1}, None],
            "c.x",
            "utf8",
        ),
        pa.struct([("x", pa.int32())]),
    ),
}


@pytest.mark.parametrize("case", list(ALTERS))
def test_failure_invalid_entry_in_an_altered_type_fails_before_anything_is_written(
    tmp_path: Path, case: str
) -> None:
    c, current = ALTERS[case]
    plain = pa.table({"id": pa.array([0, 1], pa.int64()), "c": pa.array(c.values, current)})
    ds = ls.write_dataset(plain, str(tmp_path / "t"), data_storage_version="2.3")
    before = _files(ds.uri)
    with pytest.raises(ls.InvalidOutputEncodingError) as err:
        ds.alter_columns({"path": "c", "data_type": c.field.type})
    assert (err.value.field_path, err.value.encoding) == (c.path, c.entry)
    assert _files(ds.uri) == before and ls.dataset(ds.uri).version == 1


def test_valid_entry_in_input_metadata_is_recorded(tmp_path: Path) -> None:
    """The input layout is the default, the entry names another valid encoding: recorded,
    and reads follow it (an entry is what set_output_encoding would set)."""
    schema = pa.schema(
        [
            pa.field("s", pa.string(), metadata=_md("utf8_view")),
            pa.field("d", pa.decimal128(9, 2), metadata=_md("decimal256")),
            pa.field("st", pa.struct([pa.field("x", pa.binary(), metadata=_md("large_binary"))])),
        ]
    )
    data = pa.Table.from_arrays(
        [
            pa.array(["a"]),
            pa.array([Decimal("1.25")], pa.decimal128(9, 2)),
            pa.array([{"x": b"q"}], schema.field("st").type),
        ],
        schema=schema,
    )
    ds = ls.write_dataset(data, str(tmp_path / "t"), data_storage_version="2.3")
    got = {f.path: f.output_encoding for f in ls.dataset(ds.uri).semantic_schema}
    assert got == {"s": "utf8_view", "d": "decimal256", "st": None, "st.x": "large_binary"}
    read = ds.to_table()
    assert read.schema.field("s").type == pa.string_view()
    assert read.schema.field("d").type == pa.decimal256(9, 2)
    assert read.schema.field("st").type.field("x").type == pa.large_binary()
    assert read.to_pylist() == data.to_pylist()


# ---- json: a JSONB input records lance.json ---------------------------------------------------

JSONB_FIELD = pa.field("j", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"})
DOCS = ['{"b": 2, "a": [1, 2.5]}', None, '"x"']
RENDERED = ['{"a":[1,2.5],"b":2}', None, '"x"']


def _jsonb() -> pa.Array:
    return encode_json(pa.array(DOCS), path="j")


def _text() -> pa.Array:
    return pa.ExtensionArray.from_storage(pa.json_(), pa.array(DOCS))


def test_json_column_created_from_jsonb_records_lance_json(tmp_path: Path) -> None:
    item = pa.field("doc", pa.large_binary(), metadata={"ARROW:extension:name": "lance.json"})
    nested = pa.StructArray.from_arrays([_jsonb()], fields=[item])
    data = pa.Table.from_arrays(
        [_jsonb(), _text(), nested],
        schema=pa.schema([JSONB_FIELD, pa.field("t", pa.json_()), pa.field("s", nested.type)]),
    )
    ds = ls.write_dataset(data, str(tmp_path / "t"), data_storage_version="2.3")
    got = {f.path: (f.logical_type, f.output_encoding) for f in ls.dataset(ds.uri).semantic_schema}
    assert got == {
        "j": ("json", "lance.json"),  # differs from the default: recorded
        "t": ("json", None),  # arrow.json text is the default
        "s": ("struct", None),
        "s.doc": ("json", "lance.json"),
    }
    read = ls.dataset(ds.uri).to_table()
    assert read.schema.field("j").type == pa.large_binary()
    assert read.schema.field("j").metadata[b"ARROW:extension:name"] == b"lance.json"
    assert read.column("j").combine_chunks().equals(_jsonb())  # the JSONB, as stored
    assert read.schema.field("t").type == pa.json_(pa.string())
    assert read.column("t").to_pylist() == RENDERED
    assert read.column("s").combine_chunks().field("doc").equals(_jsonb())
    # the request override still wins, and the text is pylance's rendering
    text = ds.to_table(output_encodings={"j": "arrow.json", "s.doc": "arrow.json"})
    assert text.column("j").to_pylist() == RENDERED
    # the read-back appends as JSONB input; the entry stays
    ds.insert(read)
    assert ls.dataset(ds.uri).semantic_schema.field("j").output_encoding == "lance.json"
    assert ds.count_rows() == 6


def test_json_column_added_from_jsonb_records_lance_json(tmp_path: Path) -> None:
    ds = ls.write_dataset(
        pa.table({"id": pa.array([0, 1, 2], pa.int64())}),
        str(tmp_path / "t"),
        data_storage_version="2.3",
    )
    ds.add_columns(pa.Table.from_arrays([_jsonb()], schema=pa.schema([JSONB_FIELD])))
    assert ds.semantic_schema.field("j").output_encoding == "lance.json"
    assert ds.to_table().column("j").combine_chunks().equals(_jsonb())


def test_legacy_json_from_jsonb_reads_as_text_like_pylance(tmp_path: Path) -> None:
    """No output encoding applies on legacy tables: the column reads as arrow.json text,
    exactly as pylance's own table of the same input."""
    data = pa.Table.from_arrays([_jsonb()], schema=pa.schema([JSONB_FIELD]))
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ls.write_dataset(data, ours)
    lance.write_dataset(data, theirs)
    assert ls.dataset(ours).semantic_schema.field("j").output_encoding is None
    want = lance.dataset(theirs).to_table()
    assert ls.dataset(ours).to_table().equals(want)
    assert lance.dataset(ours).to_table().equals(want)
    assert want.column("j").to_pylist() == RENDERED


# ---- legacy tables: the key is plain metadata ----------------------------------------------

STRAY = pa.schema(
    [
        pa.field("d", pa.decimal256(40, 1), metadata=_md("decimal128")),  # invalid
        pa.field("s", pa.string(), metadata=_md("large_utf8")),  # valid, not the read type
        pa.field("ls", pa.large_string(), metadata=_md("utf8_view")),  # an alias's entry
        pa.field("i", pa.int32(), metadata={**_md("large_utf8"), "note": "n"}),
    ]
)


def _stray_table() -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array([Decimal("1.5")], pa.decimal256(40, 1)),
            pa.array(["a"]),
            pa.array(["b"], pa.large_string()),
            pa.array([1], pa.int32()),
        ],
        schema=STRAY,
    )


def test_legacy_tables_store_the_key_as_plain_metadata_like_pylance(tmp_path: Path) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ls.write_dataset(_stray_table(), ours)
    lance.write_dataset(_stray_table(), theirs)
    mine = [(f.path, f.logical_type, dict(f.metadata)) for f in ls.dataset(ours).semantic_schema]
    oracle = [
        (f.path, f.logical_type, dict(f.metadata)) for f in ls.dataset(theirs).semantic_schema
    ]
    assert mine == oracle
    assert ls.dataset(ours).schema.equals(lance.dataset(theirs).schema, check_metadata=True)
    assert ls.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert ls.dataset(ours).schema.types == STRAY.types  # no entry is honoured


def test_upgrade_replaces_stray_entries_by_the_read_type(tmp_path: Path) -> None:
    """An upgrade records the encoding that reproduces today's read type; a key that was
    plain metadata on the legacy table (valid or not) never becomes a read type."""
    uri = str(tmp_path / "t")
    lance.write_dataset(_stray_table(), uri)
    want = lance.dataset(uri).to_table()
    ds = ls.upgrade(uri)
    got = {f.path: (f.logical_type, f.output_encoding) for f in ds.semantic_schema}
    assert got == {
        "d": ("decimal:40:1", None),
        "s": ("string", None),
        "ls": ("string", "large_utf8"),
        "i": ("int32", None),
    }
    assert dict(ds.semantic_schema.field("i").metadata) == {"note": b"n"}
    assert ds.to_table().schema.types == want.schema.types
    assert ds.to_table().to_pylist() == want.to_pylist()
