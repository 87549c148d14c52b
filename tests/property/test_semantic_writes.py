"""Properties of writes to flagged tables (spec "Semantic Types", "Schema Compatibility",
"Data Files and the Physical Schema", "Output Encoding", "Failure Semantics"; STYLE.md §(c)
Tests: any accepted layout, written then read, gives equal values; compatibility ignores
layouts; an override never changes values).

Every example writes a fresh table in its own temporary directory. ``LS_PROP_EXAMPLES``
(default 40) sets the number of examples per property, for longer bug hunts.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.file import LanceFileReader
from tests.property.strategies import (
    Sem,
    TableSpec,
    build_table,
    decimals,
    dictionary_columns,
    expected_output_type,
    layout_of,
    layout_path,
    leaf_trees,
    nodes,
    other_type_than,
    replace_at,
    rows_of,
    same_type,
    table_layouts,
    table_specs,
    tables_of,
    to_physical_layout,
)

import lance_semantic as ls
from lance_semantic.types.arrow_names import layout_name
from lance_semantic.types.layouts import default_output_encoding, output_encodings

EXAMPLES = settings(
    max_examples=int(os.environ.get("LS_PROP_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@contextmanager
def fresh_uri() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="ls-prop-") as d:
        yield os.path.join(d, "t.lance")


def create(table: pa.Table, uri: str) -> ls.Dataset:
    ds = ls.write_dataset(table, uri, data_storage_version="2.3")
    assert ds.semantic_types
    return ds


def data_files(uri: str) -> tuple[set[str], int | None]:
    """The files under ``data/`` and the directory's mtime (which any file created and
    deleted again would also change)."""
    data = os.path.join(uri, "data")
    if not os.path.isdir(data):
        return set(), None
    return set(os.listdir(data)), os.stat(data).st_mtime_ns


def values(table: pa.Table) -> dict[str, list]:
    """Python values per column (dictionaries decoded, views and offset widths erased)."""
    return {name: table.column(name).to_pylist() for name in table.column_names}


def concat_values(*tables: pa.Table) -> dict[str, list]:
    out: dict[str, list] = {}
    for t in tables:
        for name, vs in values(t).items():
            out.setdefault(name, []).extend(vs)
    return out


def type_at(t: pa.DataType, path: tuple[str, ...]) -> pa.DataType:
    for name in path:
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            assert t.value_field.name == name, (t, path)
            t = t.value_type
        else:
            t = t.field(name).type
    return t


def representation_nodes(
    spec: TableSpec, schema: pa.Schema
) -> list[tuple[str, Sem, tuple[str, ...]]]:
    """(table field path, semantic tree, layout path) of every representation-only node."""
    out = []
    for name, sem in spec.columns:
        for path, node in nodes(sem, (name,)):
            if node.semantic_type.kind == "representation":
                lpath = (name, *layout_path(schema.field(name).type, path[1:]))
                out.append((".".join(lpath), node, lpath))
    return out


@st.composite
def two_appends(draw: st.DrawFn) -> tuple[TableSpec, pa.Table, pa.Table]:
    """A table spec, and its values in two independently drawn accepted layouts (several
    batches, sliced arrays; the second with its columns in any order: appends match columns
    by name)."""
    spec = draw(table_specs())
    rows_a, rows_b = draw(rows_of(spec)), draw(rows_of(spec))
    a = draw(tables_of(draw(table_layouts(spec, rows_a)), rows_a))
    b = draw(tables_of(draw(table_layouts(spec, rows_b)), rows_b))
    b = b.select(draw(st.permutations(b.column_names)))
    return spec, a, b


# ---- (a) values survive any pair of accepted layouts; reads use the created layout ----


@EXAMPLES
@given(two_appends())
def test_append_in_another_accepted_layout_reads_back_all_values(case) -> None:
    spec, a, b = case
    with fresh_uri() as uri:
        create(a, uri)
        ds = ls.write_dataset(b, uri, mode="append")
        assert ds.count_rows() == a.num_rows + b.num_rows
        out = ls.dataset(uri).to_table()
        # the output layout is the one recorded at creation (spec "Output Encoding")
        for field in a.schema:
            assert same_type(out.schema.field(field.name).type, field.type), field.name
        assert values(out) == concat_values(a, b)


@EXAMPLES
@given(two_appends())
def test_default_encodings_read_the_same_values(case) -> None:
    """Written in any accepted layouts, read with every field's default encoding."""
    spec, a, b = case
    with fresh_uri() as uri:
        create(a, uri)
        ds = ls.write_dataset(b, uri, mode="append")
        defaults = {
            path: default_output_encoding(node.semantic_type)
            for path, node, _ in representation_nodes(spec, a.schema)
        }
        out = ds.to_table(output_encodings=defaults)
        for path, node, lpath in representation_nodes(spec, a.schema):
            got = type_at(out.schema.field(lpath[0]).type, lpath[1:])
            want = defaults[path]
            if node.kind == "list":
                assert pa.types.is_list(got), (path, got)
            else:
                assert same_type(got, expected_output_type(node, want)), (path, got)
        assert values(out) == concat_values(a, b)


# ---- (b) every data file keeps the layout it was appended in ----


@EXAMPLES
@given(two_appends())
def test_each_data_file_keeps_its_own_layout(case) -> None:
    spec, a, b = case
    with fresh_uri() as uri:
        create(a, uri)
        ds = ls.write_dataset(b, uri, mode="append")
        # an empty write adds no fragment (as in pylance)
        appends = [t for t in (a, b) if t.num_rows]
        for fragment, appended in zip(ds.manifest.fragments, appends, strict=True):
            assert fragment.physical_rows == appended.num_rows
            file_columns: dict[str, pa.DataType] = {}
            for df in fragment.files:
                schema = LanceFileReader(os.path.join(uri, "data", df.path)).metadata().schema
                file_columns.update({f.name: f.type for f in schema})
            for field in appended.schema:
                want = to_physical_layout(field.type)
                got = file_columns[field.name]
                assert same_type(got, want), (field.name, str(got), str(want))


# ---- (c) an input layout of another semantic type fails before any file is written ----


@st.composite
def unaccepted_appends(draw: st.DrawFn):
    spec = draw(table_specs())
    rows = draw(rows_of(spec))
    created = build_table(draw(table_layouts(spec, rows)), rows)
    candidates = [
        (ci, path, node)
        for ci, (name, sem) in enumerate(spec.columns)
        for path, node in nodes(sem, (name,))
    ]
    ci, path, node = draw(st.sampled_from(candidates))
    other = draw(other_type_than(node))
    name, sem = spec.columns[ci]
    columns = list(spec.columns)
    columns[ci] = (name, replace_at(sem, path[1:], other))
    bad_spec = TableSpec(tuple(columns))
    bad_rows = draw(rows_of(bad_spec))
    bad = build_table(draw(table_layouts(bad_spec, bad_rows)), bad_rows)
    # the field's path in the table (list elements named as in the created layout)
    table_path = ".".join((name, *layout_path(created.schema.field(name).type, path[1:])))
    bad_node_type = type_at(
        bad.schema.field(name).type, layout_path(bad.schema.field(name).type, path[1:])
    )
    return created, bad, table_path, node, bad_node_type


@EXAMPLES
@given(unaccepted_appends())
def test_unaccepted_input_names_the_field_and_writes_nothing(case) -> None:
    created, bad, table_path, node, bad_type = case
    with fresh_uri() as uri:
        create(created, uri)
        before_version, before_files = ls.dataset(uri).version, data_files(uri)
        with pytest.raises(ls.UnsupportedInputTypeError) as err:
            ls.write_dataset(bad, uri, mode="append")
        assert err.value.field_path == table_path
        assert err.value.semantic_type == str(node.semantic_type)
        assert err.value.input_type == layout_name(bad_type)
        assert ls.dataset(uri).version == before_version
        assert data_files(uri) == before_files


@st.composite
def mismatched_decimals(draw: st.DrawFn):
    """A decimal field (at the top, or in lists and structs), and an input with a decimal of
    other precision or scale there, in either width."""
    table_dec = draw(decimals())
    other = draw(decimals().filter(lambda d: d.category != table_dec.category))
    tree, path = table_dec, ()
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            tree, path = Sem("list", children=(("item", tree),)), ("item", *path)
        else:
            sibling = draw(leaf_trees())
            tree, path = Sem("struct", children=(("a", tree), ("b", sibling))), ("a", *path)
    spec = TableSpec((("d", tree),))
    bad_spec = TableSpec((("d", replace_at(tree, path, other)),))
    rows, bad_rows = draw(rows_of(spec)), draw(rows_of(bad_spec))
    created = build_table(draw(table_layouts(spec, rows)), rows)
    bad = build_table(draw(table_layouts(bad_spec, bad_rows)), bad_rows)
    table_path = ".".join(("d", *layout_path(created.schema.field("d").type, path)))
    return created, bad, table_path, table_dec, other


@EXAMPLES
@given(mismatched_decimals())
def test_decimal_of_other_precision_or_scale_is_a_schema_mismatch(case) -> None:
    created, bad, table_path, table_dec, other = case
    with fresh_uri() as uri:
        create(created, uri)
        before_version, before_files = ls.dataset(uri).version, data_files(uri)
        with pytest.raises(ls.SchemaMismatchError) as err:
            ls.write_dataset(bad, uri, mode="append")
        assert err.value.field_path == table_path
        assert err.value.table_type == str(table_dec.semantic_type)
        assert err.value.input_type == str(other.semantic_type)
        assert ls.dataset(uri).version == before_version
        assert data_files(uri) == before_files


# ---- (d) an output-encoding override never changes values ----


@EXAMPLES
@given(two_appends())
def test_every_output_encoding_override_keeps_values(case) -> None:
    """For each representation-only field, every encoding valid for its type is requested
    (read k asks encoding k modulo the type's count, so every field sees all of its own)."""
    spec, a, b = case
    with fresh_uri() as uri:
        create(a, uri)
        ds = ls.write_dataset(b, uri, mode="append")
        expected = concat_values(a, b)
        reps = representation_nodes(spec, a.schema)
        encodings = {path: output_encodings(node.semantic_type) for path, node, _ in reps}
        for k in range(max((len(e) for e in encodings.values()), default=0)):
            overrides = {path: encs[k % len(encs)] for path, encs in encodings.items()}
            out = ds.to_table(output_encodings=overrides)
            for path, node, lpath in reps:
                got = type_at(out.schema.field(lpath[0]).type, lpath[1:])
                want = overrides[path]
                if node.kind == "list":
                    is_kind = pa.types.is_list if want == "list" else pa.types.is_large_list
                    assert is_kind(got), (path, want, got)
                else:
                    assert same_type(got, expected_output_type(node, want)), (path, want, got)
            assert values(out) == expected, overrides


@st.composite
def dictionary_tables(draw: st.DrawFn):
    sem, column, dict_layout = draw(dictionary_columns())
    created = build_table(pa.schema([pa.field("s", dict_layout)]), {"s": column})
    other = draw(layout_of(sem, column))
    appended = build_table(pa.schema([pa.field("s", other)]), {"s": column})
    return sem, created, appended


@settings(EXAMPLES, max_examples=max(1, EXAMPLES.max_examples // 2))
@given(dictionary_tables())
def test_dictionary_layouts_at_key_capacity_keep_values(case) -> None:
    """Dictionaries as wide as their key allows, read back in every output encoding (a
    reader may split batches to fit a narrow key, never change a value)."""
    sem, created, appended = case
    with fresh_uri() as uri:
        create(created, uri)
        ds = ls.write_dataset(appended, uri, mode="append")
        expected = concat_values(created, appended)
        out = ds.to_table()
        assert same_type(out.schema.field("s").type, created.schema.field("s").type)
        assert values(out) == expected
        for encoding in output_encodings(sem.semantic_type):
            out = ds.to_table(output_encodings={"s": encoding})
            assert same_type(out.schema.field("s").type, expected_output_type(sem, encoding))
            assert values(out) == expected, encoding
