"""Compaction of flagged tables (spec "Representation-only types": each data file may hold a
different physical layout; "Data Files and the Physical Schema"; "Contract and Invariants:
Lossless conversion"; validation bullet five: extension metadata survives compaction).

Fragments appended in different physical layouts of one column merge into data files whose
one layout holds every value: reads return the same output schema and values before and
after, and every merged data file's layout is one of the spec's physical layouts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.codecs import convert
from lance_semantic.commit.committer import commit
from lance_semantic.dataset.compaction import compact as compaction
from lance_semantic.dataset.compaction.compact import CompactionMetrics
from lance_semantic.errors import NotSupportedYetError
from lance_semantic.manifest.model import Delete, DeletionFile
from lance_semantic.schema.field import Field
from lance_semantic.schema.semantic import OUTPUT_ENCODING_KEY, semantic_type_of
from lance_semantic.storage.deletions import write_deleted_rows
from lance_semantic.types.layouts import is_physical_layout

# ---- helpers ---------------------------------------------------------------------------------


def _flagged(tmp_path: Path, table: pa.Table) -> ls.Dataset:
    ds = ls.write_dataset(table, str(tmp_path / "t"), data_storage_version="2.3")
    assert ds.semantic_types
    return ds


def _strings(values: list[str | None], layout: pa.DataType) -> pa.Array:
    if pa.types.is_dictionary(layout):
        plain = pa.array(values, layout.value_type)
        return plain.dictionary_encode().cast(layout)
    return pa.array(values, layout)


def _column(layout: pa.DataType, start: int, n: int = 4) -> pa.Array:
    binary = pa.types.is_dictionary(layout) and pa.types.is_binary(layout.value_type)
    binary = binary or layout in (pa.binary(), pa.large_binary(), pa.binary_view())
    values = [f"v{start + i % 3}" if i % 4 != 3 else None for i in range(n)]
    if binary:
        return _strings([v.encode() if v else None for v in values], layout)
    return _strings(values, layout)


def _file_fields(ds: ls.Dataset) -> list[tuple[Any, pa.Schema]]:
    """(fragment, data file schema) of every data file of the current version."""
    out = []
    for f in ds.manifest.fragments:
        for df in f.files:
            path = str(Path(ds.uri) / "data" / df.path)
            out.append((f, lance.file.LanceFileReader(path).metadata().schema))
    return out


def _assert_physical(field: Field, dt: pa.DataType) -> None:
    """``dt`` is a physical layout of ``field``'s semantic type, recursively."""
    if isinstance(dt, pa.ExtensionType):
        dt = dt.storage_type
    st = semantic_type_of(field)
    assert is_physical_layout(st, dt), (field.path, dt)
    if pa.types.is_struct(dt):
        by_name = {c.name: c for c in field.children}
        for i in range(dt.num_fields):
            _assert_physical(by_name[dt.field(i).name], dt.field(i).type)
    elif pa.types.is_list(dt) or pa.types.is_large_list(dt):
        _assert_physical(field.children[0], dt.value_type)
    elif pa.types.is_map(dt):
        key, value = field.children[0].children
        _assert_physical(key, dt.key_type)
        _assert_physical(value, dt.item_type)


def _assert_every_file_physical(ds: ls.Dataset) -> None:
    for _fragment, schema in _file_fields(ds):
        for f in schema:
            _assert_physical(ds.semantic_schema.field(f.name), f.type)


def _same(a: pa.Table, b: pa.Table) -> bool:
    """Same schema and values (dictionaries may be split into other chunks)."""
    return a.schema.equals(b.schema, check_metadata=True) and a.to_pylist() == b.to_pylist()


def _compact_and_compare(ds: ls.Dataset, **options: Any) -> CompactionMetrics:
    """Compact; reads return the same schema and values (and the flag stays)."""
    before, schema, semantic = ds.to_table(), ds.schema, ds.semantic_schema
    flags = ds.feature_flags
    metrics = ds.optimize.compact_files(**options)
    after = ds.to_table()
    assert ds.schema.equals(schema, check_metadata=True)
    assert after.schema.equals(schema, check_metadata=True)
    assert _same(after, before), (after, before)
    assert ds.semantic_schema == semantic
    assert ds.feature_flags.reader & ls.FLAG_SEMANTIC_TYPES
    assert ds.feature_flags.writer & ls.FLAG_SEMANTIC_TYPES
    assert flags.reader & ls.FLAG_SEMANTIC_TYPES
    reopened = ls.dataset(ds.uri)
    assert reopened.version == ds.version
    assert _same(reopened.to_table(), before)
    _assert_every_file_physical(ds)
    return metrics


def _delete(ds: ls.Dataset, sql: str, keep: Callable[[int], bool]) -> None:
    """Delete rows through ``ds.delete`` when it exists, else by writing deletion files."""
    try:
        ds.delete(sql)
        return
    except NotSupportedYetError:
        pass
    updated, gone = [], []
    for frag in ds.get_fragments():
        meta = frag.metadata
        assert meta.deletion_file is None
        ks = frag.to_table(columns=["k"])["k"].to_pylist()
        rows = [i for i, k in enumerate(ks) if not keep(k)]
        if not rows:
            continue
        if len(rows) == meta.physical_rows:
            gone.append(meta.id)
            continue
        file_id = random.getrandbits(64)
        bitmap = write_deleted_rows(ds._store, meta.id, ds.version, file_id, rows)
        deletion = DeletionFile("bitmap" if bitmap else "arrow", ds.version, file_id, len(rows))
        updated.append(replace(meta, deletion_file=deletion))
    op = Delete(updated_fragments=tuple(updated), deleted_fragment_ids=tuple(gone), predicate=sql)
    ds._advance(commit(ds._store, ds.manifest, op))


# ---- one column, every layout ----------------------------------------------------------------

STRING_CASES = [
    (
        [pa.string(), pa.large_string(), pa.string_view(), pa.dictionary(pa.int8(), pa.string())],
        pa.large_string(),
    ),
    ([pa.string(), pa.string_view(), pa.dictionary(pa.int16(), pa.string())], pa.string()),
    (
        [pa.dictionary(pa.int8(), pa.string()), pa.dictionary(pa.int32(), pa.large_string())],
        pa.dictionary(pa.int32(), pa.large_string()),
    ),
    ([pa.dictionary(pa.int8(), pa.string())] * 3, pa.dictionary(pa.int32(), pa.string())),
    (
        [pa.dictionary(pa.uint64(), pa.string()), pa.dictionary(pa.int8(), pa.string())],
        pa.dictionary(pa.int64(), pa.string()),
    ),
    (
        [pa.binary(), pa.large_binary(), pa.binary_view(), pa.dictionary(pa.int8(), pa.binary())],
        pa.large_binary(),
    ),
    ([pa.binary_view(), pa.binary()], pa.binary()),
]


@pytest.mark.parametrize(("layouts", "merged"), STRING_CASES, ids=lambda x: str(x))
def test_string_and_binary_layouts_merge_into_one_that_holds_every_value(
    layouts: list[pa.DataType], merged: pa.DataType, tmp_path: Path
) -> None:
    def table(i: int, layout: pa.DataType) -> pa.Table:
        return pa.table({"k": pa.array(range(4 * i, 4 * i + 4)), "s": _column(layout, 10 * i)})

    ds = _flagged(tmp_path, table(0, layouts[0]))
    for i, layout in enumerate(layouts[1:], start=1):
        ds.insert(table(i, layout))
    assert len(ds.manifest.fragments) == len(layouts)
    override = "large_binary" if merged in (pa.large_binary(), pa.binary()) else "large_utf8"
    if pa.types.is_dictionary(merged) and pa.types.is_binary(merged.value_type):
        override = "large_binary"
    overridden = ds.to_table(output_encodings={"s": override})
    metrics = _compact_and_compare(ds)
    assert metrics == CompactionMetrics(len(layouts), 1, len(layouts), 1)
    assert _same(ds.to_table(output_encodings={"s": override}), overridden)
    [(fragment, schema)] = _file_fields(ds)
    assert fragment.physical_rows == 4 * len(layouts)
    assert schema.field("s").type == merged
    assert schema.field("k").type == pa.int64()


def test_nested_children_decimals_lists_structs_and_maps(tmp_path: Path) -> None:
    """decimal128 + decimal256 -> decimal256; list + large_list (items of any string
    layout) -> large_list<large_utf8>; struct children merged one by one (a source without a
    child gives nulls); map keys merged like any string."""

    def st(x: pa.DataType | None) -> pa.DataType:
        kids = [("x", x)] if x is not None else []
        return pa.struct([*kids, ("y", pa.int8())])

    def table(
        i: int, dec: pa.DataType, lst: pa.DataType, x: pa.DataType | None, key: pa.DataType
    ) -> pa.Table:
        n = 3
        xs = [{"x": f"x{i}{j}", "y": j} if x is not None else {"y": j} for j in range(n)]
        items = [[f"e{i}"] * j for j in range(n)]
        item_type = lst.value_type
        if pa.types.is_dictionary(item_type):
            values = [pa.array(v).dictionary_encode().cast(item_type) for v in items]
            lists = pa.ListArray.from_arrays(
                pa.array([0, 0, 1, 3], pa.int32()), pa.concat_arrays(values)
            )
        else:
            lists = pa.array(items, lst)
        struct = pa.array(xs, st(pa.string() if x is not None else None))
        if x is not None and x != pa.string():
            struct = pa.StructArray.from_arrays(
                [_strings([f"x{i}{j}" for j in range(n)], x), struct.field("y")], ["x", "y"]
            )
        return pa.table(
            {
                "k": pa.array(range(10 * i, 10 * i + n)),
                "d": pa.array([Decimal(i * 10 + j) / 4 for j in range(n)], dec),
                "l": lists,
                "st": struct,
                "m": pa.array([[(f"k{j}", j)] for j in range(n)], pa.map_(key, pa.int64())),
            }
        )

    d128, d256 = pa.decimal128(12, 2), pa.decimal256(12, 2)
    ds = _flagged(tmp_path, table(0, d128, pa.list_(pa.string()), pa.string(), pa.string()))
    ds.insert(table(1, d256, pa.large_list(pa.large_string()), pa.large_string(), pa.string()))
    ds.insert(table(2, d128, pa.list_(pa.string_view()), None, pa.large_string()))
    ds.insert(
        table(
            3,
            d128,
            pa.list_(pa.dictionary(pa.int8(), pa.string())),
            pa.dictionary(pa.int8(), pa.string()),
            pa.string(),
        )
    )
    _compact_and_compare(ds)
    [(fragment, schema)] = _file_fields(ds)
    assert fragment.physical_rows == 12
    assert schema.field("d").type == d256
    assert schema.field("l").type == pa.large_list(pa.large_string())
    assert schema.field("st").type == pa.struct([("x", pa.large_string()), ("y", pa.int8())])
    assert schema.field("m").type == pa.map_(pa.large_string(), pa.int64())
    ids = [f.id for f in ds.semantic_schema if not f.children]
    assert sorted(fragment.files[0].fields) == sorted(ids)


def test_only_decimal128_and_lists_keep_the_narrow_layouts(tmp_path: Path) -> None:
    def table(i: int) -> pa.Table:
        return pa.table(
            {
                "d": pa.array([Decimal(i)], pa.decimal128(5, 1)),
                "l": pa.array([[i]], pa.list_(pa.int16())),
            }
        )

    ds = _flagged(tmp_path, table(0))
    ds.insert(table(1))
    _compact_and_compare(ds)
    [(_fragment, schema)] = _file_fields(ds)
    assert schema.types == [pa.decimal128(5, 1), pa.list_(pa.int16())]


# ---- extension and field metadata ------------------------------------------------------------


def test_unregistered_extension_metadata_survives_compaction(tmp_path: Path) -> None:
    """Validation bullet five, second half: ``example.bbox`` (unknown to every library
    here) keeps its ``ARROW:extension:*`` metadata through compaction, in the table schema
    and in the merged data file; other field metadata and registered extensions too."""
    bbox_md = {"ARROW:extension:name": "example.bbox", "ARROW:extension:metadata": "x"}
    schema = pa.schema(
        [
            pa.field("k", pa.int64(), metadata={"note": "caf\u00e9"}),
            pa.field("bbox", pa.list_(pa.float32(), 4), metadata=bbox_md),
            pa.field("u", pa.uuid()),
            pa.field("s", pa.string(), metadata={"lance-schema:output-encoding": "large_utf8"}),
        ],
        metadata={"owner": "tests"},
    )

    def table(i: int, s: pa.DataType) -> pa.Table:
        return pa.table(
            [
                pa.array([i, i + 1], pa.int64()),
                pa.array([[1.0, 2.0, 3.0, float(i)], None], pa.list_(pa.float32(), 4)),
                pa.ExtensionArray.from_storage(
                    pa.uuid(), pa.array([bytes([i]) * 16, None], pa.binary(16))
                ),
                pa.array([f"s{i}", None], s),
            ],
            schema=schema.set(3, schema.field("s").with_type(s)),
        )

    ds = _flagged(tmp_path, table(0, pa.large_string()))
    ds.insert(table(2, pa.string()))
    ds.insert(table(4, pa.string_view()))
    bbox = ds.semantic_schema.field("bbox")
    assert bbox.extension_name == "example.bbox"
    _compact_and_compare(ds)
    assert ds.schema.field("bbox").metadata == {
        b"ARROW:extension:name": b"example.bbox",
        b"ARROW:extension:metadata": b"x",
    }
    assert ds.schema.field("k").metadata == {b"note": "caf\u00e9".encode()}
    assert ds.schema.field("u").type == pa.uuid()
    assert ds.schema.field("s").type == pa.large_string()  # the recorded output encoding
    assert ds.semantic_schema.field("bbox") == bbox
    [(_fragment, file_schema)] = _file_fields(ds)
    assert file_schema.field("bbox").metadata == {
        b"ARROW:extension:name": b"example.bbox",
        b"ARROW:extension:metadata": b"x",
    }
    assert file_schema.field("k").metadata == {b"note": "caf\u00e9".encode()}
    assert file_schema.field("u").type == pa.uuid()
    assert OUTPUT_ENCODING_KEY.encode() not in (file_schema.field("s").metadata or {})


# ---- deletions, absent columns, batches over 32-bit offsets ----------------------------------


def test_deletions_are_materialized_in_mixed_layouts(tmp_path: Path) -> None:
    """Deleted rows are gone from the new files; no deletion file is referenced any more."""
    n = 6000

    def table(start: int, n: int, layout: pa.DataType) -> pa.Table:
        return pa.table({"k": pa.array(range(start, start + n)), "s": _column(layout, start, n)})

    ds = _flagged(tmp_path, table(0, n, pa.string()))
    ds.insert(table(n, 50, pa.large_string()))
    ds.insert(table(n + 50, 50, pa.dictionary(pa.int8(), pa.string())))
    _delete(
        ds, "k >= 100 and k < 5200 or k % 10 = 1", lambda k: not (100 <= k < 5200 or k % 10 == 1)
    )
    assert {f.deletion_file.file_type for f in ds.manifest.fragments} == {"bitmap", "arrow"}
    assert ds.feature_flags.reader & 1
    metrics = _compact_and_compare(ds, target_rows_per_fragment=1000)
    assert metrics == CompactionMetrics(3, 1, 6, 1)
    assert all(f.deletion_file is None for f in ds.manifest.fragments)
    assert not ds.feature_flags.reader & 1
    assert ds.count_rows() == sum(1 for k in range(n + 100) if not (100 <= k < 5200 or k % 10 == 1))
    [(_fragment, schema)] = _file_fields(ds)
    assert schema.field("s").type == pa.large_string()


def test_a_column_no_source_holds_stays_absent(tmp_path: Path) -> None:
    """A column missing from every merged fragment is not written (it reads as nulls); one
    missing from some of them is written with nulls for those rows."""
    ds = _flagged(tmp_path, pa.table({"k": range(100), "b": [str(i) for i in range(100)]}))
    ds.insert(pa.table({"k": [1000, 1001]}))
    ds.insert(pa.table({"k": [1002]}))
    _compact_and_compare(ds, target_rows_per_fragment=50)
    big, merged = ds.manifest.fragments
    k_id = ds.semantic_schema.field("k").id
    assert merged.files[0].fields == (k_id,)
    ds.insert(pa.table({"b": pa.array(["x"], pa.large_string())}))
    _compact_and_compare(ds, target_rows_per_fragment=50)
    [(fragment, schema)] = [(f, s) for f, s in _file_fields(ds) if f.id != big.id]
    assert schema.names == ["k", "b"]
    assert schema.field("b").type == pa.large_string()


def test_dictionary_sources_and_a_source_without_the_column(tmp_path: Path) -> None:
    dictionary = pa.array(["a", "b", "a"]).dictionary_encode()
    ds = _flagged(tmp_path, pa.table({"k": [0, 1, 2], "s": dictionary}))
    ds.insert(pa.table({"k": [3]}))
    _compact_and_compare(ds)
    [(_fragment, schema)] = _file_fields(ds)
    assert schema.field("s").type == pa.dictionary(pa.int32(), pa.string())
    assert ds.to_table()["s"].to_pylist() == ["a", "b", "a", None]


def test_batches_too_big_for_32_bit_offsets_are_split_not_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoding a dictionary into utf8 can outgrow 32-bit offsets within one batch even
    though every source fits; the batch is split (the file is written batch by batch)."""
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 200)
    value = "x" * 40
    dictionary = pa.array([value] * 30).dictionary_encode()  # 1200 bytes decoded
    ds = _flagged(tmp_path, pa.table({"s": pa.array(["a", "b"])}))
    ds.insert(pa.table({"s": dictionary}))
    batches: list[tuple[int, int]] = []
    real = compaction.convert_batch

    def spy(batch: pa.RecordBatch, *args: Any) -> Any:
        out = list(real(batch, *args))
        batches.append((batch.num_rows, len(out)))
        return iter(out)

    monkeypatch.setattr(compaction, "convert_batch", spy)
    _compact_and_compare(ds)
    assert any(parts > 1 for _rows, parts in batches)
    [(_fragment, schema)] = _file_fields(ds)
    assert schema.field("s").type == pa.string()
    assert ds.to_table()["s"].to_pylist() == ["a", "b", *[value] * 30]


def test_nothing_to_compact_commits_nothing(tmp_path: Path) -> None:
    ds = _flagged(tmp_path, pa.table({"s": pa.array(["a"], pa.large_string())}))
    assert ds.optimize.compact_files() == CompactionMetrics()
    assert ds.version == 1


def test_semantic_types_on_2_2_tables_merge_layouts_too(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(pa.table({"s": ["a"]}), uri, semantic_types=True)
    assert ds.semantic_types and ds.data_storage_version == "2.2"
    ds.insert(pa.table({"s": pa.array(["b"], pa.large_string())}))
    _compact_and_compare(ds)
    [(fragment, schema)] = _file_fields(ds)
    assert schema.field("s").type == pa.large_string()
    assert fragment.files[0].file_minor_version == 2
