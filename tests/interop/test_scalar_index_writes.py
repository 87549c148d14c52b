"""``Dataset.create_scalar_index``: BTREE, BITMAP and LABEL_LIST indices written in
pylance 14's formats (issue 31 items 2 and 4).

Twin tables (the same rows, the same deletions, through pylance and through us) get the
same index from each; the index files decode to the same schema, metadata, global buffers
and values (a BTREE's rows of equal value may come in another order: pylance's sort is not
stable); pylance lists and describes our index, plans its filters through it
(``ScalarIndexQuery``) and returns the rows of a plain scan; our reader uses it too.
"""

from __future__ import annotations

import datetime
import decimal
import os
import shutil
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.errors import ColumnNotFoundError, NotSupportedYetError

pytestmark = pytest.mark.interop

ROWS, PER_FILE = 6_000, 2_000
DELETED = "id % 11 = 4"
_DAY0 = datetime.date(2020, 1, 1)
_T0 = datetime.datetime(2021, 1, 1)


def _keys(kind: str, n: int, rng: np.random.Generator) -> tuple[pa.Array, list[str]]:
    """``n`` keys of ``kind`` (few distinct values, nulls every 37th row) and filters."""
    x = rng.integers(0, 40, n)
    mask = np.arange(n) % 37 == 5
    if kind.startswith(("int", "uint")):
        t = pa.from_numpy_dtype(np.dtype(kind))
        return pa.array(x, t, mask=mask), ["k = 5", "k IN (1, 2, 30)", "k >= 3 AND k < 9"]
    if kind.startswith("float"):
        vals = x / 4 - 2.0
        vals[x == 39] = np.nan
        vals[x == 38] = -0.0
        t = pa.from_numpy_dtype(np.dtype(kind))
        return pa.array(vals.astype(kind), t, mask=mask), [
            "k = 0.5",
            "k IN (1.25, -2.0)",
            "k > 1.0 AND k <= 4.5",
        ]
    if kind in ("string", "large_string"):
        t = pa.string() if kind == "string" else pa.large_string()
        return pa.array([f"s{v:02d}" for v in x], t, mask=mask), [
            "k = 's05'",
            "k IN ('s01', 's33')",
            "k > 's30'",
        ]
    if kind == "binary":
        return pa.array([b"b%02d" % v for v in x], pa.binary(), mask=mask), [
            "k = X'623035'",
            "k > X'623330'",
        ]
    if kind == "date32":
        days = [_DAY0 + datetime.timedelta(days=int(v)) for v in x]
        return pa.array(days, pa.date32(), mask=mask), [
            "k = date '2020-01-06'",
            "k >= date '2020-01-10' AND k < date '2020-01-15'",
        ]
    if kind == "timestamp":
        ts = [_T0 + datetime.timedelta(minutes=int(v)) for v in x]
        return pa.array(ts, pa.timestamp("us"), mask=mask), [
            "k = timestamp '2021-01-01 00:05:00'",
            "k < timestamp '2021-01-01 00:03:00'",
        ]
    assert kind == "bool"
    return pa.array(x % 3 == 0, pa.bool_(), mask=mask), ["k = true", "k = false"]


KEY_KINDS = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "string",
    "large_string",
    "binary",
    "date32",
    "timestamp",
    "bool",
]


def _table(kind: str) -> tuple[pa.Table, list[str]]:
    rng = np.random.default_rng(len(kind))
    keys, filters = _keys(kind, ROWS, rng)
    ids = np.arange(ROWS)
    table = pa.table({"id": pa.array(ids, pa.int64()), "k": keys})
    return table, [*filters, "k IS NULL", "k IS NOT NULL AND id < 100"]


def _twins(tmp_path: Path, table: pa.Table) -> tuple[str, str]:
    theirs, ours = str(tmp_path / "theirs.lance"), str(tmp_path / "ours.lance")
    lance.write_dataset(table, theirs, max_rows_per_file=PER_FILE).delete(DELETED)
    ls.write_dataset(table, ours, max_rows_per_file=PER_FILE).delete(DELETED)
    return theirs, ours


Decoded = tuple[pa.Table, pa.Schema, dict[Any, Any], list[bytes]]


def _files(uri: str, name: str) -> dict[str, Decoded]:
    (segment,) = _described(uri, name).segments
    folder = os.path.join(uri, "_indices", segment.uuid)
    out = {}
    for f in sorted(os.listdir(folder)):
        reader = LanceFileReader(os.path.join(folder, f))
        meta = reader.metadata()
        assert (meta.major_version, meta.minor_version) == (2, 2)
        buffers = [bytes(reader.read_global_buffer(i)) for i in range(1, len(meta.global_buffers))]
        schema = meta.schema
        table = reader.read_all().to_table()
        out[f] = (table, schema.remove_metadata(), dict(schema.metadata or {}), buffers)
    return out


def _same_files(theirs: str, ours: str, name: str) -> None:
    a, b = _files(theirs, name), _files(ours, name)
    assert a.keys() == b.keys()
    for f in a:
        (ta, sa, ma, ga), (tb, sb, mb, gb) = a[f], b[f]
        assert sa == sb, f
        assert ma == mb, f
        assert ga == gb, f
        if f == "page_data.lance":  # equal values; rows of one value in any order
            assert _keyed(ta)[0] == _keyed(tb)[0]  # the same order, -0.0 before 0.0
            assert sorted(zip(*_keyed(ta), strict=True)) == sorted(zip(*_keyed(tb), strict=True))
        else:
            assert repr(ta.to_pylist()) == repr(tb.to_pylist()), f  # (NaN != NaN)


def _keyed(t: pa.Table) -> tuple[list[Any], list[int]]:
    values = [repr(v) for v in t.column("values").to_pylist()]  # (NaN != NaN)
    return values, t.column("ids").to_pylist()


def _described(uri: str, name: str) -> Any:
    (desc,) = [d for d in lance.dataset(uri).describe_indices() if d.name == name]
    return desc


def _entry_fields(uri: str, name: str) -> dict[str, Any]:
    """What pylance describes of index ``name`` (creation time and uuid aside)."""
    desc = _described(uri, name)
    (segment,) = desc.segments
    return {
        "type": desc.index_type,
        "fields": desc.fields,
        "field_names": desc.field_names,
        "fragment_ids": sorted(segment.fragment_ids),
        "type_url": desc.type_url,
        "rows": desc.num_rows_indexed,
        "index_version": segment.index_version,
        "dataset_version": segment.dataset_version_at_last_update,
        "details": desc.details,
    }


def _rows(t: pa.Table) -> list[Any]:
    return sorted(t.column("id").to_pylist())


@pytest.mark.parametrize("index_type", ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"])
@pytest.mark.parametrize("kind", KEY_KINDS)
def test_pylance_uses_our_index_like_its_own(tmp_path: Path, kind: str, index_type: str) -> None:
    table, filters = _table(kind)
    theirs, ours = _twins(tmp_path, table)
    if index_type == "BLOOMFILTER" and kind == "bool":  # refused by both
        with pytest.raises(ValueError, match="Bloom filter index does not support"):
            lance.dataset(theirs).create_scalar_index("k", index_type)
        with pytest.raises(ValueError, match="Bloom filter index does not support"):
            ls.dataset(ours).create_scalar_index("k", index_type)
        return
    lance.dataset(theirs).create_scalar_index("k", index_type)
    ds = ls.dataset(ours)
    assert ds.create_scalar_index("k", index_type) is None
    _same_files(theirs, ours, "k_idx")
    assert _entry_fields(ours, "k_idx") == _entry_fields(theirs, "k_idx")
    expected_stats = _stats(theirs, "k_idx", lance)
    assert _stats(ours, "k_idx", lance) == expected_stats
    assert _stats(ours, "k_idx", ls) == expected_stats
    pl = lance.dataset(ours)
    twin = lance.dataset(theirs)
    for f in filters:
        plan = pl.scanner(filter=f).explain_plan(True)
        # (pylance plans IS NULL and bool's NOT k without a zone map, ranges without a
        # bloom filter)
        if index_type not in ("ZONEMAP", "BLOOMFILTER") or f == filters[0]:
            assert "ScalarIndexQuery" in plan and "k_idx" in plan, (f, plan)
        expected = _rows(twin.to_table(filter=f, use_scalar_index=False))
        assert _rows(pl.to_table(filter=f)) == expected, f
        assert _rows(ds.to_table(filter=f)) == expected, f
        assert _rows(ds.to_table(filter=f, use_scalar_index=False)) == expected, f


def _list_table() -> pa.Table:
    rng = np.random.default_rng(7)
    rows: list[list[str | None] | None] = []
    for i in range(ROWS):
        if i % 41 == 3:
            rows.append(None)
        elif i % 43 == 1:
            rows.append([])
        else:
            items: list[str | None] = [f"t{v}" for v in rng.integers(0, 9, rng.integers(1, 4))]
            if i % 47 == 2:
                items.append(None)
            rows.append(items)
    return pa.table({"id": pa.array(np.arange(ROWS), pa.int64()), "k": pa.array(rows)})


LIST_FILTERS = [
    "array_has_any(k, ['t1', 't7'])",
    "array_has_all(k, ['t1', 't2'])",
    "array_has_any(k, ['t3'])",
    "k IS NULL",
    "array_has_all(k, ['t0']) AND id < 3000",
]


@pytest.mark.parametrize("list_type", ["list", "large_list"])
def test_label_list_like_pylances(tmp_path: Path, list_type: str) -> None:
    table = _list_table()
    if list_type == "large_list":
        table = table.set_column(1, "k", table.column("k").cast(pa.large_list(pa.string())))
    theirs, ours = _twins(tmp_path, table)
    lance.dataset(theirs).create_scalar_index("k", "LABEL_LIST")
    ds = ls.dataset(ours)
    ds.create_scalar_index("k", "label_list")
    _same_files(theirs, ours, "k_idx")
    assert _entry_fields(ours, "k_idx") == _entry_fields(theirs, "k_idx")
    assert (
        _stats(ours, "k_idx", ls) == _stats(ours, "k_idx", lance) == _stats(theirs, "k_idx", lance)
    )
    pl, twin = lance.dataset(ours), lance.dataset(theirs)
    for f in LIST_FILTERS:
        plan = pl.scanner(filter=f).explain_plan(True)
        if f != "k IS NULL":
            assert "ScalarIndexQuery" in plan, (f, plan)
        expected = _rows(twin.to_table(filter=f, use_scalar_index=False))
        assert _rows(pl.to_table(filter=f)) == expected, f
        assert _rows(ds.to_table(filter=f)) == expected, f


def test_defaults_names_replace_and_train_false(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(pa.table({"a": np.arange(100), "b": np.arange(100) % 3}), uri)
    ds.create_scalar_index("a", "BTREE")
    first = ds.list_indices()[0]["uuid"]
    ds.create_scalar_index("a", "BITMAP")  # replace=True: the same name, a new index
    (info,) = ds.list_indices()
    assert (info["name"], info["type"]) == ("a_idx", "Bitmap") and info["uuid"] != first
    version = ds.version
    with pytest.raises(RuntimeError, match="Index name 'a_idx' already exists"):
        ds.create_scalar_index("a", "BTREE", replace=False)
    assert ds.version == version
    given = "12345678-1234-1234-1234-123456789abc"
    ds.create_scalar_index("b", "BTREE", name="empty", train=False, index_uuid=given)
    pl = lance.dataset(uri)
    (empty,) = _described(uri, "empty").segments
    assert empty.uuid == given and sorted(empty.fragment_ids) == []
    # an empty index covers nothing: filters scan, in pylance and here
    assert pl.to_table(filter="b = 1").num_rows == ds.to_table(filter="b = 1").num_rows == 33
    files = _files(uri, "empty")
    assert {f: t.num_rows for f, (t, *_) in files.items()} == {
        "page_data.lance": 0,
        "page_lookup.lance": 0,
    }


def _bad(uri: str) -> ls.Dataset:
    table = pa.table(
        {
            "a": np.arange(10),
            "st": pa.array([{"x": i} for i in range(10)]),
            "v": pa.array([[1.0, 2.0]] * 10, pa.list_(pa.float32(), 2)),
            "l": pa.array([[1]] * 10),
            "d": pa.array([str(i % 3) for i in range(10)]).dictionary_encode(),
            "s": pa.array([f"word {i}" for i in range(10)]),
            "ls": pa.array([["a b"]] * 10),
        }
    )
    lance.write_dataset(table, uri)
    return ls.dataset(uri)


@pytest.mark.parametrize(
    ("column", "index_type", "kwargs", "error", "match"),
    [
        ("l", "BTREE", {}, TypeError, "BTREE/BITMAP index column l must be int"),
        ("st", "BITMAP", {}, TypeError, "BTREE/BITMAP index column st must be int"),
        ("v", "BTREE", {}, TypeError, "BTREE/BITMAP index column v must be int"),
        ("d", "BTREE", {}, TypeError, "BTREE/BITMAP index column d must be int"),
        ("a", "LABEL_LIST", {}, TypeError, "LABEL_LIST index column a must be a list"),
        ("st", "LABEL_LIST", {}, TypeError, "LABEL_LIST index column st must be a list"),
        ("v", "LABEL_LIST", {}, TypeError, "LABEL_LIST index column v must be a list"),
        ("nope", "BTREE", {}, ColumnNotFoundError, "column 'nope' does not exist"),
        ("a", "WHAT", {}, NotImplementedError, "Received WHAT"),
        ("a", "BTREE", {"foo": 1}, TypeError, "unknown option 'foo'"),
        ("a", "BTREE", {"fragment_ids": [0]}, ValueError, "distributed indexing"),
        ("a", "BTREE", {"index_uuid": "bad"}, ValueError, "Invalid UUID string"),
        ("a", 3, {}, TypeError, "index_type must be str"),
        ("st.x", "BTREE", {}, NotSupportedYetError, "nested field st.x"),
        ("st", "ZONEMAP", {}, NotSupportedYetError, "ZONEMAP index on column st"),
        ("st", "BLOOMFILTER", {}, ValueError, "Bloom filter index does not support"),
        ("a", "INVERTED", {}, TypeError, "INVERTED index column a must be string"),
        ("a", "FTS", {}, TypeError, "INVERTED index column a must be string"),
        ("s", "INVERTED", {"foo": 1}, ValueError, "unknown FTS index parameter 'foo'"),
        ("s", "INVERTED", {"base_tokenizer": "bogus"}, ValueError, "unknown base tokenizer"),
        ("s", "INVERTED", {"with_position": "yes"}, TypeError, "not an instance of 'bool'"),
        ("s", "INVERTED", {"base_tokenizer": "ngram"}, NotSupportedYetError, "'ngram'"),
        ("s", "INVERTED", {"block_size": 256}, NotSupportedYetError, "block_size 256"),
        ("s", "INVERTED", {"fragment_ids": [0]}, NotSupportedYetError, "fragment_ids"),
        ("s", "INVERTED", {"index_uuid": "bad"}, ValueError, "Invalid UUID string"),
        ("ls", "INVERTED", {}, NotSupportedYetError, "list column ls"),
        ("nope", "INVERTED", {}, KeyError, "nope not found in schema"),
        ("a", "NGRAM", {}, NotSupportedYetError, "NGRAM"),
    ],
)
def test_bad_input_commits_nothing(
    tmp_path: Path, column: str, index_type: Any, kwargs: dict[str, Any], error: type, match: str
) -> None:
    uri = str(tmp_path / "t.lance")
    ds = _bad(uri)
    with pytest.raises(error, match=match):
        ds.create_scalar_index(column, index_type, **kwargs)
    assert ds.version == 1 and ls.dataset(uri).version == 1
    assert not os.path.exists(os.path.join(uri, "_indices")) or not os.listdir(
        os.path.join(uri, "_indices")
    )
    if index_type in ("BTREE", "BITMAP", "LABEL_LIST") and error is TypeError and not kwargs:
        with pytest.raises(TypeError, match=f"column {column} "):
            lance.dataset(uri).create_scalar_index(column, index_type)


def test_create_index_points_to_create_scalar_index(tmp_path: Path) -> None:
    ds = _bad(str(tmp_path / "t.lance"))
    with pytest.raises(TypeError, match="build it with create_scalar_index"):
        ds.create_index("a", "BTREE")
    with pytest.raises(TypeError):  # pylance: "Vector column a must be FixedSizeListArray"
        lance.dataset(ds.uri).create_index("a", "BTREE")


@pytest.mark.parametrize(("column", "kind"), [("a", "BTREE"), ("t", "INVERTED")])
def test_a_failed_write_leaves_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str, kind: str
) -> None:
    uri = str(tmp_path / "t.lance")
    table = pa.table({"a": np.arange(10), "t": [f"word {i}" for i in range(10)]})
    ds = ls.write_dataset(table, uri)
    from lance_semantic.dataset.indices import commit_index

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(commit_index, "commit", boom)
    with pytest.raises(OSError, match="disk full"):
        ds.create_scalar_index(column, kind)
    assert ds.version == 1
    folder = os.path.join(uri, "_indices")
    assert not os.path.exists(folder) or os.listdir(folder) == []


MAINTENANCE_FILTERS = [
    "a = 3",
    "a = 105",
    "id = 50",
    "id IN (111, 112)",
    "array_has_any(l, ['1'])",
    "a > 4",
]


def _segments(uri: str) -> list[tuple[str, list[list[int]]]]:
    return [
        (d.name, [sorted(s.fragment_ids) for s in d.segments])
        for d in lance.dataset(uri).describe_indices()
    ]


def _stats(uri: str, name: str, lib: Any) -> dict[str, Any]:
    got = dict(lib.dataset(uri).stats.index_stats(name))
    got.pop("updated_at_timestamp_ms", None)
    return got


def test_append_delete_update_optimize_compact_like_pylance(tmp_path: Path) -> None:
    """The same maintenance through pylance (its own indices) and through us (ours):
    the same fragments covered at each step, the same statistics, and filters (through
    pylance and through us) equal a plain scan."""
    seen: dict[str, list[Any]] = {}
    for lib in (lance, ls):
        uri = str(tmp_path / f"{lib.__name__}.lance")
        table = pa.table(
            {
                "id": np.arange(100),
                "a": np.arange(100) % 7,
                "l": [[str(i % 3)] for i in range(100)],
            }
        )
        ds = lib.write_dataset(table, uri, max_rows_per_file=30)
        ds.create_scalar_index("a", "BTREE")
        ds.create_scalar_index("id", "BITMAP")
        ds.create_scalar_index("l", "LABEL_LIST")
        steps = []
        more = {"id": np.arange(100, 110), "a": np.arange(10) % 7, "l": [["1"]] * 10}
        ds.insert(pa.table(more))
        steps.append(_segments(uri))  # the new fragment is not indexed
        ds.delete("id % 9 = 2")
        ds.update({"a": "a + 100"}, where="id = 5")
        steps.append(_segments(uri))
        ds.optimize.optimize_indices()
        steps.append(_segments(uri))  # one segment over every fragment
        ds.insert(pa.table({"id": np.arange(110, 120), "a": np.arange(10) % 7, "l": [["2"]] * 10}))
        ds.delete("id % 9 = 4")
        metrics = ds.optimize.compact_files()
        steps.append((metrics.fragments_removed, metrics.fragments_added, _segments(uri)))
        steps.append([_stats(uri, n, lance) for n in ("a_idx", "id_idx", "l_idx")])
        assert [_stats(uri, n, ls) for n in ("a_idx", "id_idx", "l_idx")] == steps[-1]
        pl = lance.dataset(uri)
        for f in MAINTENANCE_FILTERS:
            assert "ScalarIndexQuery" in pl.scanner(filter=f).explain_plan(True), f
            expected = _rows(pl.to_table(filter=f, use_scalar_index=False))
            assert _rows(pl.to_table(filter=f)) == expected, f
            assert _rows(ls.dataset(uri).to_table(filter=f)) == expected, f
        seen[lib.__name__] = steps
    assert seen["lance_semantic"] == seen["lance"]


def test_drop_and_overwrite(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(pa.table({"a": np.arange(50) % 5}), uri)
    ds.create_scalar_index("a", "BITMAP")
    ds.drop_index("a_idx")
    assert ds.list_indices() == [] and lance.dataset(uri).describe_indices() == []
    ds.create_scalar_index("a", "BTREE")
    ds = ls.write_dataset(pa.table({"a": np.arange(5)}), uri, mode="overwrite")
    assert ds.list_indices() == lance.dataset(uri).describe_indices() == []
    assert ds.to_table(filter="a = 3").num_rows == 1


@pytest.mark.parametrize("kind", ["BTREE", "BITMAP", "LABEL_LIST"])
def test_pylances_own_indices_are_remapped_like_pylance(tmp_path: Path, kind: str) -> None:
    """pylance's own index on a table, compacted by pylance and by us: the same fragments
    covered, and pylance's filters through our remapped index equal its own."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    column = "l" if kind == "LABEL_LIST" else "a"
    for i in range(3):
        rows = np.arange(i * 100, (i + 1) * 100)
        t = pa.table({"id": rows, "a": rows % 13, "l": [[str(r % 4)] for r in rows]})
        lance.write_dataset(t, theirs, mode="append" if i else "create")
    lance.dataset(theirs).delete("id % 7 = 1")
    lance.dataset(theirs).create_scalar_index(column, kind)
    shutil.copytree(theirs, ours)
    lance.dataset(theirs).optimize.compact_files()
    ls.dataset(ours).optimize.compact_files()
    assert _segments(ours) == _segments(theirs)
    f = "array_has_any(l, ['1'])" if kind == "LABEL_LIST" else "a = 4"
    pl = lance.dataset(ours)
    assert "ScalarIndexQuery" in pl.scanner(filter=f).explain_plan(True)
    expected = _rows(lance.dataset(theirs).to_table(filter=f))
    assert _rows(pl.to_table(filter=f)) == _rows(ls.dataset(ours).to_table(filter=f)) == expected


# ---- flagged tables: one semantic type, several layouts in the data files --------------


def _flagged_part(lo: int, layout: str) -> pa.Table:
    ids = np.arange(lo, lo + PER_FILE)
    s = pa.array([f"s{i % 97:02d}" for i in ids], mask=ids % 89 == 0)
    d = pa.array([decimal.Decimal(int(i % 83)) / 4 for i in ids], pa.decimal128(10, 2))
    labels = pa.array([[f"t{i % 61}", f"u{i % 5}"] for i in ids])
    if layout == "large":
        s = s.cast(pa.large_string())
        d = d.cast(pa.decimal256(10, 2))
        labels = labels.cast(pa.large_list(pa.large_string()))
    elif layout == "dictionary":
        s = s.dictionary_encode()
    return pa.table({"id": pa.array(ids, pa.int64()), "s": s, "d": d, "l": labels})


FLAGGED_FILTERS = [
    "s = 's03'",
    "s IN ('s01', 's52')",
    "s >= 's95'",
    "s IS NULL",
    "d = CAST(2.25 AS DECIMAL(10, 2))",
    "d > CAST(20.25 AS DECIMAL(10, 2))",
    "array_has_any(l, ['t07', 't08'])",
    "array_has_all(l, ['t07', 'u2'])",
]


@pytest.mark.parametrize(
    ("column", "index_type", "key_type"),
    [
        ("s", "BTREE", pa.string()),
        ("s", "BITMAP", pa.string()),
        ("d", "BTREE", pa.decimal128(10, 2)),
        ("d", "BITMAP", pa.decimal128(10, 2)),
        ("l", "LABEL_LIST", pa.string()),
    ],
)
def test_flagged_layout_mixes_index_the_default_layout(
    tmp_path: Path, column: str, index_type: str, key_type: pa.DataType
) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(
        _flagged_part(0, "default"), uri, data_storage_version="2.2", semantic_types=True
    )
    ds.insert(_flagged_part(PER_FILE, "large"))
    ds.insert(_flagged_part(2 * PER_FILE, "dictionary"))
    ds.delete("id % 17 = 3")
    assert ds.semantic_types
    layouts = set()
    for fragment in ds.get_fragments():
        (data_file,) = fragment.metadata.files
        schema = LanceFileReader(os.path.join(uri, "data", data_file.path)).metadata().schema
        layouts.add(str(schema.field(column).type))
    assert len(layouts) > 1  # the data files hold different layouts of the column
    # the field's recorded output encoding is not the index's key layout
    ds.set_output_encoding(
        column, {"s": "large_utf8", "d": "decimal256", "l": "large_list"}[column]
    )
    ds.create_scalar_index(column, index_type)
    (info,) = ds.list_indices()
    folder = os.path.join(uri, "_indices", info["uuid"])
    for name in os.listdir(folder):
        got = LanceFileReader(os.path.join(folder, name)).metadata().schema.field(0).type
        assert got == key_type, name
    own = [f for f in FLAGGED_FILTERS if f.split("(")[-1].startswith(column) or f[0] == column]
    assert own
    for f in own:
        assert ds.scanner(filter=f)._scalar_choice() is not None, f
        assert _rows(ds.to_table(filter=f)) == _rows(ds.to_table(filter=f, use_scalar_index=False))


def test_zonemap_append_and_optimize_like_pylance(tmp_path: Path) -> None:
    seen = {}
    for lib in (lance, ls):
        uri = str(tmp_path / f"{lib.__name__}.lance")
        ds = lib.write_dataset(pa.table({"id": np.arange(20_000)}), uri, max_rows_per_file=9_000)
        ds.delete("id % 7 = 2")
        ds.create_scalar_index("id", "ZONEMAP")
        ds.insert(pa.table({"id": np.arange(20_000, 21_000)}))
        before = _segments(uri), _stats(uri, "id_idx", lance)
        ds.optimize.optimize_indices()
        after = _segments(uri), _stats(uri, "id_idx", lance)
        assert _stats(uri, "id_idx", ls) == after[1]
        pl = lance.dataset(uri)
        f = "id > 20500"
        assert "ScalarIndexQuery" in pl.scanner(filter=f).explain_plan(True)
        assert _rows(pl.to_table(filter=f)) == _rows(ls.dataset(uri).to_table(filter=f))
        seen[lib.__name__] = before, after
    assert seen["lance_semantic"] == seen["lance"]


@pytest.mark.parametrize(
    ("column", "index_type"),
    [("a", "BTREE"), ("a", "BITMAP"), ("l", "LABEL_LIST"), ("a", "ZONEMAP"), ("a", "BLOOMFILTER")],
)
@pytest.mark.parametrize("empty", ["train=False", "every row deleted"])
def test_empty_index_files_like_pylances(
    tmp_path: Path, column: str, index_type: str, empty: str
) -> None:
    table = pa.table({"id": np.arange(50), "a": np.arange(50) % 4, "l": [["x"]] * 50})
    theirs, ours = _twins(tmp_path, table)
    train = empty == "train=False"
    if not train:
        lance.dataset(theirs).delete("id >= 0")
        ls.dataset(ours).delete("id >= 0")
    lance.dataset(theirs).create_scalar_index(column, index_type, train=train)
    ls.dataset(ours).create_scalar_index(column, index_type, train=train)
    name = f"{column}_idx"
    _same_files(theirs, ours, name)
    assert _entry_fields(ours, name) == _entry_fields(theirs, name)
    f = "array_has_any(l, ['x'])" if column == "l" else "a = 1"
    assert _rows(lance.dataset(ours).to_table(filter=f)) == _rows(
        ls.dataset(ours).to_table(filter=f)
    )
