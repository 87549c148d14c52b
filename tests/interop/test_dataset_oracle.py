"""The dataset layer against stock pylance 14.0.2 as the oracle.

Every test runs the same table operations through ``lance`` and through ``lance_semantic``
and compares what each side sees, over data storage versions 2.0, 2.1, 2.2 (2.3 for a few)
and every logical type of ``tests/fixtures/tables.py``:

(a) pylance creates and appends, we read: Arrow schema (field + schema metadata), values,
    field ids / parents / logical types (against ``lance_schema``), fragments and DataFiles;
(b) we create and append, pylance reads the same; our DataFile.fields / column_indices equal
    those of a pylance-written twin;
(c) mixed chains of writers (we, pylance, we / pylance, we, pylance) with consecutive versions;
(d) take, filtered / projected / limited scans, fragments and deletion files written by pylance
    (array and bitmap), all compared with pylance's answers on the same table;
(e) feature flags: an unknown reader bit refuses the open, an unknown writer bit refuses
    commits but not reads.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from tests.fixtures.tables import all_types_table, fsl_struct_table

import lance_semantic as ls
from lance_semantic.errors import UnsupportedFeatureError
from lance_semantic.manifest.codec import (
    decode_manifest_file,
    encode_manifest_file,
    read_inline_transaction,
)
from lance_semantic.storage.paths import parse_manifest_name

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2"]
VERSIONS_23 = [*VERSIONS, "2.3"]

# ---- helpers ---------------------------------------------------------------------------------


def _ls_create(data: Any, uri: Path | str, version: str, **kwargs: Any) -> ls.Dataset:
    """Create a legacy table with lance-semantic (2.3 opts out of semantic types, so that
    stock pylance can read it)."""
    if version == "2.3":
        kwargs.setdefault("semantic_types", False)
    return ls.write_dataset(data, str(uri), data_storage_version=version, **kwargs)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        value |= (b & 0x7F) << shift
        shift, pos = shift + 7, pos + 1
        if not b & 0x80:
            return value, pos


def _pb_field(data: bytes) -> tuple[int, int, str, str, bool]:
    """(id, parent_id, name, logical_type, nullable) of a ``lance.file.Field`` message,
    decoded without any generated code."""
    one: dict[int, Any] = {}
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        if tag & 7 == 0:
            value, pos = _varint(data, pos)
        elif tag & 7 == 2:
            n, pos = _varint(data, pos)
            value, pos = data[pos : pos + n], pos + n
        else:  # pragma: no cover - Field has no fixed-width members
            raise AssertionError(f"unexpected wire type in {data!r}")
        one.setdefault(tag >> 3, value)

    def signed(v: int) -> int:
        return v - (1 << 64) if v >= 1 << 63 else v

    return (
        signed(one.get(3, 0)),
        signed(one.get(4, 0)),
        bytes(one.get(2, b"")).decode(),
        bytes(one.get(5, b"")).decode(),
        bool(one.get(6, 0)),
    )


def _pylance_fields(lds: Any) -> list[tuple[int, int, str, str, bool]]:
    """pylance's own field records (pre-order), from its pickled ``lance_schema``."""
    _metadata_json, *protos = lds.lance_schema.__reduce__()[1]
    return [_pb_field(p) for p in protos]


def _pylance_paths(fields: Any, prefix: str = "") -> list[tuple[int, str]]:
    """(id, dotted path) of every ``LanceField``, walked recursively through ``children()``."""
    out = []
    for f in fields:
        path = prefix + f.name()
        out.append((f.id(), path))
        out += _pylance_paths(f.children(), path + ".")
    return out


def _assert_same_fields(ours: ls.Dataset, lds: Any) -> None:
    mine = [(f.id, f.parent_id, f.name, f.logical_type, f.nullable) for f in ours.semantic_schema]
    assert mine == _pylance_fields(lds)
    assert [(f.id, f.path) for f in ours.semantic_schema] == _pylance_paths(
        lds.lance_schema.fields()
    )


def _deletion(d: Any) -> tuple[str, int] | None:
    if d is None:
        return None
    kind = d.file_type
    return ("bitmap" if kind == "bitmap" else "array", d.num_deleted_rows)


def _fragments(ds: Any, *, exact: bool = True) -> list[tuple[Any, ...]]:
    """(id, physical rows, data files, deletion file) of every fragment of a pylance or a
    lance-semantic dataset (both expose the same names). ``exact=False`` leaves out what
    differs between two writers of the same rows: data file names and sizes."""
    out = []
    for f in ds.get_fragments():
        m = f.metadata
        files = []
        for df in m.files:
            layout = [list(df.fields), list(df.column_indices)]
            layout += [df.file_major_version, df.file_minor_version]
            files.append(tuple([df.path, *layout, df.file_size_bytes] if exact else layout))
        out.append((f.fragment_id, m.physical_rows, files, _deletion(m.deletion_file)))
    return out


def _plain(t: pa.Table) -> pa.Table:
    """Dictionary columns decoded, so values compare whatever the dictionaries look like."""
    cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in t.columns]
    return pa.table(cols, names=t.column_names)


def _assert_same_table(ours: pa.Table, theirs: pa.Table, *, schema_metadata: bool = True) -> None:
    if schema_metadata:
        assert ours.schema.equals(theirs.schema, check_metadata=True), (ours.schema, theirs.schema)
    else:  # pylance drops the schema-level metadata of unordered takes
        assert ours.schema.remove_metadata().equals(
            theirs.schema.remove_metadata(), check_metadata=True
        )
        for a, b in zip(ours.schema, theirs.schema, strict=True):
            assert a.equals(b, check_metadata=True), (a, b)
    assert ours.num_rows == theirs.num_rows
    p_ours, p_theirs = _plain(ours), _plain(theirs)
    for name in ours.column_names:
        assert p_ours[name].equals(p_theirs[name]), name


def _concat(*tables: pa.Table) -> pa.Table:
    return pa.concat_tables(tables)


# ---- (a) pylance writes, we read -------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_23)
def test_pylance_creates_and_appends_we_read(version: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    t1, t2 = all_types_table(version), all_types_table(version, start=6)
    lance.write_dataset(t1, uri, data_storage_version=version)
    lance.write_dataset(t2, uri, mode="append")
    theirs = lance.dataset(uri)

    ours = ls.dataset(uri)
    assert ours.version == theirs.version == 2
    assert ours.data_storage_version == theirs.data_storage_version == version
    assert ours.schema.equals(theirs.schema, check_metadata=True)
    assert ours.schema.equals(t1.schema, check_metadata=True)
    assert ours.schema.metadata == {b"owner": b"tests"}
    assert ours.schema.field("b").metadata == {b"note": b"first", b"bytes": "caf\u00e9".encode()}
    _assert_same_fields(ours, theirs)
    assert _fragments(ours) == _fragments(theirs)
    assert [f.fragment_id for f in ours.get_fragments()] == [0, 1]

    table = ours.to_table()
    _assert_same_table(table, theirs.to_table())
    _assert_same_table(table, _concat(t1, t2))
    assert ours.count_rows() == theirs.count_rows() == 12

    assert [v["version"] for v in ours.versions()] == [v["version"] for v in theirs.versions()]
    first = ours.checkout_version(1)
    assert ours.version == 2 and first.version == 1
    _assert_same_table(first.to_table(), t1)
    _assert_same_table(ls.dataset(uri, version=1).to_table(), theirs.checkout_version(1).to_table())


@pytest.mark.parametrize("version", ["2.2", "2.3"])
def test_fsl_of_struct_pylance_to_us_and_back(version: str, tmp_path: Path) -> None:
    """FSL<struct> alone (pylance reads it only from 2.2+ files and alone, see the fixture)."""
    t1, t2 = fsl_struct_table(), fsl_struct_table(start=4)
    lance.write_dataset(t1, tmp_path / "p", data_storage_version=version)
    lance.write_dataset(t2, tmp_path / "p", mode="append")
    theirs, ours = lance.dataset(tmp_path / "p"), ls.dataset(str(tmp_path / "p"))
    _assert_same_fields(ours, theirs)
    assert _fragments(ours) == _fragments(theirs)
    _assert_same_table(ours.to_table(), _concat(t1, t2))

    _ls_create(t1, tmp_path / "o", version)
    ls.write_dataset(t2, str(tmp_path / "o"), mode="append")
    back = lance.dataset(tmp_path / "o")
    _assert_same_table(back.to_table(), _concat(t1, t2))
    _assert_same_fields(ls.dataset(str(tmp_path / "o")), back)
    assert _fragments(ls.dataset(str(tmp_path / "o")), exact=False) == _fragments(
        theirs, exact=False
    )


# ---- (b) we write, pylance reads -------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_23)
def test_we_create_and_append_pylance_reads(version: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "ours")
    t1, t2 = all_types_table(version), all_types_table(version, start=6)
    created = _ls_create(t1, uri, version)
    assert created.version == 1
    appended = ls.write_dataset(t2, uri, mode="append")
    assert appended.version == 2

    theirs = lance.dataset(uri)
    assert theirs.version == 2
    assert theirs.data_storage_version == version
    assert theirs.schema.equals(t1.schema, check_metadata=True)
    assert theirs.schema.equals(appended.schema, check_metadata=True)
    _assert_same_table(theirs.to_table(), _concat(t1, t2))
    _assert_same_table(theirs.checkout_version(1).to_table(), t1)
    _assert_same_fields(appended, theirs)
    assert [v["version"] for v in theirs.versions()] == [1, 2]
    # pylance sees exactly the fragments and data files we committed
    assert _fragments(theirs) == _fragments(ls.dataset(uri))

    # ... and they are what pylance itself writes for the same operations
    twin = str(tmp_path / "twin")
    lance.write_dataset(t1, twin, data_storage_version=version)
    lance.write_dataset(t2, twin, mode="append")
    assert _fragments(theirs, exact=False) == _fragments(lance.dataset(twin), exact=False)
    assert _pylance_fields(theirs) == _pylance_fields(lance.dataset(twin))


@pytest.mark.parametrize("version", VERSIONS)
def test_we_split_by_max_rows_per_file_like_pylance(version: str, tmp_path: Path) -> None:
    """One input of 20 rows, at most 7 rows per data file: 3 fragments, as pylance writes."""
    full = all_types_table(version, n=20)
    lance.write_dataset(full, tmp_path / "twin", data_storage_version=version, max_rows_per_file=7)
    ours = _ls_create(full, tmp_path / "ours", version, max_rows_per_file=7)
    assert [f.metadata.physical_rows for f in ours.get_fragments()] == [7, 7, 6]
    theirs = lance.dataset(tmp_path / "ours")
    assert _fragments(theirs, exact=False) == _fragments(
        lance.dataset(tmp_path / "twin"), exact=False
    )
    _assert_same_table(theirs.to_table(), full)
    _assert_same_table(ours.to_table(), full)


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_queries_our_table(version: str, tmp_path: Path) -> None:
    """pylance's take / filter / fragment reads on a table we wrote see the rows we wrote."""
    uri = str(tmp_path / "t")
    parts = [all_types_table(version, n=5, start=s) for s in (0, 5, 10)]
    _ls_create(parts[0], uri, version)
    for p in parts[1:]:
        ls.dataset(uri).insert(p)
    full = _concat(*parts)
    theirs = lance.dataset(uri)
    assert [f.fragment_id for f in theirs.get_fragments()] == [0, 1, 2]
    idx = [14, 0, 7, 7, 3]
    _assert_same_table(theirs.take(idx), full.take(idx), schema_metadata=False)
    expected = full.filter(pc.greater(pc.struct_field(full["st"], "x"), 6))
    _assert_same_table(theirs.to_table(filter="st.x > 6"), expected)
    for frag, part in zip(theirs.get_fragments(), parts, strict=True):
        _assert_same_table(frag.to_table(), part)


# ---- (c) mixed writers -----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_23)
def test_we_create_pylance_appends_we_append(version: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    t1, t2, t3 = (all_types_table(version, start=s) for s in (0, 6, 12))
    ours = _ls_create(t1, uri, version)
    lance.write_dataset(t2, uri, mode="append")
    # our handle is still at version 1: the commit must land on top of pylance's version 2
    assert ours.version == 1
    ours.insert(t3)
    assert ours.version == 3

    theirs = lance.dataset(uri)
    assert theirs.version == 3
    assert [v["version"] for v in theirs.versions()] == [1, 2, 3]
    assert [v["version"] for v in ours.versions()] == [1, 2, 3]
    _assert_same_table(theirs.to_table(), _concat(t1, t2, t3))
    _assert_same_table(theirs.checkout_version(2).to_table(), _concat(t1, t2))
    _assert_same_fields(ls.dataset(uri), theirs)
    frags = _fragments(theirs, exact=False)
    assert [f[0] for f in frags] == [0, 1, 2]
    assert all(f[2] == frags[0][2] for f in frags)  # same fields / file version in every file
    assert _fragments(ls.dataset(uri)) == _fragments(theirs)


@pytest.mark.parametrize("version", VERSIONS_23)
def test_pylance_creates_we_append_pylance_appends(version: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    t1, t2, t3 = (all_types_table(version, start=s) for s in (0, 6, 12))
    lance.write_dataset(t1, uri, data_storage_version=version)
    mine = ls.write_dataset(t2, uri, mode="append")
    assert mine.version == 2
    lance.write_dataset(t3, uri, mode="append")

    ours = ls.dataset(uri)
    theirs = lance.dataset(uri)
    assert ours.version == theirs.version == 3
    assert [v["version"] for v in ours.versions()] == [1, 2, 3]
    assert ours.data_storage_version == version
    assert ours.schema.equals(theirs.schema, check_metadata=True)
    _assert_same_table(ours.to_table(), _concat(t1, t2, t3))
    _assert_same_table(ours.to_table(), theirs.to_table())
    _assert_same_table(ours.checkout_version(2).to_table(), _concat(t1, t2))
    _assert_same_fields(ours, theirs)
    frags = _fragments(ours, exact=False)
    assert [f[0] for f in frags] == [0, 1, 2]
    assert all(f[2] == frags[0][2] for f in frags)
    assert _fragments(ours) == _fragments(theirs)


@pytest.mark.parametrize("shape", ["reversed", "subset"])
@pytest.mark.parametrize("version", VERSIONS)
def test_append_of_reordered_or_partial_columns(version: str, shape: str, tmp_path: Path) -> None:
    """Appends whose columns come in another order (DataFile.fields in file order, e.g.
    [.., 2, 1, 0]) or leave nullable columns out (they read as nulls)."""
    t1, t2 = all_types_table(version), all_types_table(version, start=6)
    if shape == "reversed":
        extra = t2.select(list(reversed(t2.column_names)))
    else:
        extra = t2.select(["i64", "st", "s"])
    layouts = []
    for writer in WRITERS:
        uri = str(tmp_path / writer)
        lance.write_dataset(t1, uri, data_storage_version=version)
        if writer == "pylance":
            lance.write_dataset(extra, uri, mode="append")
        else:
            ls.write_dataset(extra, uri, mode="append")
        ours, theirs = ls.dataset(uri), lance.dataset(uri)
        assert ours.version == theirs.version == 2
        assert _fragments(ours) == _fragments(theirs)
        layouts.append(_fragments(theirs, exact=False))
        _assert_same_table(ours.to_table(), theirs.to_table())
        _assert_same_table(ours.take([7, 1, 11]), theirs.take([7, 1, 11]), schema_metadata=False)
        _assert_same_table(
            ours.to_table(columns=["i32", "st.y"], filter="i64 > 3"),
            theirs.to_table(columns=["i32", "st.y"], filter="i64 > 3"),
        )
    assert layouts[0] == layouts[1]
    if shape == "reversed":
        fields = layouts[0][1][2][0][0]
        assert fields != sorted(fields)  # file order, not id order


def test_v1_manifest_names(tmp_path: Path) -> None:
    """A table pylance created with V1 manifest names ({version}.manifest) keeps them."""
    uri = str(tmp_path / "t")
    t1, t2 = all_types_table("2.2"), all_types_table("2.2", start=6)
    lance.write_dataset(t1, uri, enable_v2_manifest_paths=False)
    _assert_same_table(ls.dataset(uri).to_table(), t1)
    assert ls.dataset(uri).insert(t2).version == 2
    names = sorted(n for n in os.listdir(os.path.join(uri, "_versions")) if n.endswith(".manifest"))
    assert names == ["1.manifest", "2.manifest"]
    theirs = lance.dataset(uri)
    assert theirs.version == 2
    _assert_same_table(theirs.to_table(), _concat(t1, t2))
    lance.write_dataset(t1, uri, mode="append")
    assert ls.dataset(uri).version == 3


@pytest.mark.parametrize("version", VERSIONS)
def test_restore_matches_pylance(version: str, tmp_path: Path) -> None:
    """Restoring version 1 of a table with appends and deletions: the same manifest content
    as pylance's restore of a twin, and pylance keeps writing on top of it."""
    t1, t2 = all_types_table(version), all_types_table(version, start=6)
    uris = [str(tmp_path / "ours"), str(tmp_path / "twin")]
    for uri in uris:
        lance.write_dataset(t1, uri, data_storage_version=version)
        lance.write_dataset(t2, uri, mode="append")
        lance.dataset(uri).delete("i64 > 3000000021")
    restored = ls.dataset(uris[0]).checkout_version(1).restore()
    lance.dataset(uris[1]).checkout_version(1).restore()
    assert restored.version == 4
    ours, twin = lance.dataset(uris[0]), lance.dataset(uris[1])
    assert ours.version == twin.version == 4
    assert _fragments(ours, exact=False) == _fragments(twin, exact=False)
    assert restored.feature_flags.reader == restored.feature_flags.writer == 0  # no deletions
    _assert_same_table(ours.to_table(), t1)
    _assert_same_table(restored.to_table(), t1)
    t3 = all_types_table(version, start=20)
    for uri in uris:
        lance.write_dataset(t3, uri, mode="append")
    # the high-water mark survived the restore: the new fragment is 2 in both tables
    assert [f.fragment_id for f in lance.dataset(uris[0]).get_fragments()] == [0, 2]
    assert _fragments(lance.dataset(uris[0]), exact=False) == _fragments(
        lance.dataset(uris[1]), exact=False
    )
    _assert_same_table(ls.dataset(uris[0]).to_table(), _concat(t1, t3))


# ---- (d) take, scans and fragments on multi-fragment tables ----------------------------------

N_ROWS = 20


@pytest.fixture(scope="module", params=VERSIONS)
def multi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same 20 rows as 3 fragments (7, 7, 6 rows), written by pylance (max_rows_per_file)
    and by us (three commits)."""
    version = request.param
    root = tmp_path_factory.mktemp(f"multi-{version}")
    full = all_types_table(version, n=N_ROWS)
    lance.write_dataset(full, root / "pylance", data_storage_version=version, max_rows_per_file=7)
    sizes = [(0, 7), (7, 7), (14, 6)]
    _ls_create(all_types_table(version, n=7), root / "ours", version)
    for start, n in sizes[1:]:
        ls.write_dataset(
            all_types_table(version, n=n, start=start), str(root / "ours"), mode="append"
        )
    return {
        "version": version,
        "full": full,
        "pylance": str(root / "pylance"),
        "ours": str(root / "ours"),
    }


WRITERS = ["pylance", "ours"]
RNG = np.random.default_rng(20251130)
TAKES = [
    [19, 0, 5, 5, 13, 7, 6, 0, 12, 12, 1],
    RNG.integers(0, N_ROWS, 25).tolist(),
    [3],
    [],
]
TAKE_COLUMNS = [None, ["i64", "s", "st"], ["dict_s", "lst_struct", "uuid", "bf16", "fsl_nested"]]


@pytest.mark.parametrize("writer", WRITERS)
def test_multi_fragment_layout(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    assert _fragments(ours) == _fragments(theirs)
    assert [f.metadata.physical_rows for f in ours.get_fragments()] == [7, 7, 6]
    _assert_same_table(ours.to_table(), multi["full"])
    _assert_same_table(ours.to_table(), theirs.to_table())
    # both writers lay the rows out identically (ids, DataFile.fields, column_indices)
    assert _fragments(lance.dataset(multi["pylance"]), exact=False) == _fragments(
        lance.dataset(multi["ours"]), exact=False
    )


@pytest.mark.parametrize("columns", TAKE_COLUMNS)
@pytest.mark.parametrize("indices", TAKES)
@pytest.mark.parametrize("writer", WRITERS)
def test_take_matches_pylance(
    multi: dict, writer: str, indices: list, columns: list | None
) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    got = ours.take(indices, columns=columns)
    _assert_same_table(got, theirs.take(indices, columns=columns), schema_metadata=False)
    full = multi["full"] if columns is None else multi["full"].select(columns)
    _assert_same_table(got, full.take(pa.array(indices, pa.int64())), schema_metadata=False)
    # takes keep the schema a scan of the same columns returns (metadata included)
    assert got.schema.equals(ours.to_table(columns=columns, limit=0).schema, check_metadata=True)


@pytest.mark.parametrize("writer", WRITERS)
def test_take_accepts_numpy_and_arrow_indices(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    idx = TAKES[0]
    expected = theirs.take(idx, columns=["i64", "st"])
    for form in (np.array(idx, dtype=np.int64), pa.array(idx, pa.uint64()), tuple(idx)):
        _assert_same_table(ours.take(form, columns=["i64", "st"]), expected, schema_metadata=False)


@pytest.mark.parametrize("writer", WRITERS)
def test_take_out_of_range_is_refused_like_pylance(multi: dict, writer: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - pylance's own error class is an OSError
        lance.dataset(multi[writer]).take([N_ROWS])
    with pytest.raises(ls.LanceSemanticError):
        ls.dataset(multi[writer]).take([0, N_ROWS])


NESTED_TAKES = [
    ["i64", "st.y"],
    ["st.y"],
    ["st.y", "st.x", "i64"],
    ["st.z.w", "st.y"],
    ["i64", "st.z", "st.x"],
    ["st", "st.x"],
]


@pytest.mark.parametrize("columns", NESTED_TAKES)
@pytest.mark.parametrize("writer", WRITERS)
def test_take_of_nested_columns_matches_pylance(multi: dict, writer: str, columns: list) -> None:
    """pylance's take keeps the struct around selected children (``st: struct<y>``): top-level
    columns in the order asked, the children of one struct in schema order."""
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    idx = [9, 2, 2, 15]
    expected = theirs.take(idx, columns=columns)
    _assert_same_table(ours.take(idx, columns=columns), expected, schema_metadata=False)


def test_take_of_nested_column_values(multi: dict) -> None:
    ours = ls.dataset(multi["pylance"])
    got = ours.take([9, 2, 2, 15], columns=["st.y"])
    assert got.column_names == ["st"]
    assert pc.struct_field(got.column("st"), "y").to_pylist() == ["y9", "y2", "y2", "y15"]


FILTERS = [
    "i64 > 5 AND s IS NOT NULL",
    "st.x > 2",
    "s LIKE 's1%'",
    "st.z.w < 10.0 OR i32 IS NULL",
    "b AND u16 < 15",
    "i64 < 0",
]
SCANS = [
    (None, None, None),
    (["i64", "st.y"], 3, 2),
    (["s", "st"], None, 4),
    (["i32"], 5, None),
    (["st.z.w", "dict_s", "lst"], 2, 6),
    (["dec128", "ts_ny", "fsl"], 0, None),
    (["u64"], None, 50),
]


@pytest.mark.parametrize(("columns", "limit", "offset"), SCANS)
@pytest.mark.parametrize("flt", FILTERS)
@pytest.mark.parametrize("writer", WRITERS)
def test_filtered_scan_matches_pylance(
    multi: dict, writer: str, flt: str, columns: list | None, limit: int | None, offset: int | None
) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    got = ours.to_table(columns=columns, filter=flt, limit=limit, offset=offset)
    _assert_same_table(
        got, theirs.to_table(columns=columns, filter=flt, limit=limit, offset=offset)
    )


@pytest.mark.parametrize(("columns", "limit", "offset"), SCANS)
@pytest.mark.parametrize("writer", WRITERS)
def test_unfiltered_scan_matches_pylance(
    multi: dict, writer: str, columns: list | None, limit: int | None, offset: int | None
) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    got = ours.to_table(columns=columns, limit=limit, offset=offset)
    _assert_same_table(got, theirs.to_table(columns=columns, limit=limit, offset=offset))


@pytest.mark.parametrize("writer", WRITERS)
def test_to_batches_respects_batch_size(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    batches = list(ours.to_batches(batch_size=4, filter="i64 >= 0"))
    assert batches and all(0 < b.num_rows <= 4 for b in batches)
    _assert_same_table(pa.Table.from_batches(batches), theirs.to_table())
    _assert_same_table(ours.to_table(batch_size=3), theirs.to_table())


@pytest.mark.parametrize("flt", FILTERS)
@pytest.mark.parametrize("writer", WRITERS)
def test_count_rows_with_filter_matches_pylance(multi: dict, writer: str, flt: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    assert ours.count_rows() == theirs.count_rows() == N_ROWS
    assert ours.count_rows(filter=flt) == theirs.count_rows(filter=flt)


@pytest.mark.parametrize("writer", WRITERS)
def test_empty_projection_keeps_row_count(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    want = theirs.to_table(columns=[])
    assert want.num_rows == N_ROWS and want.num_columns == 0
    got = ours.to_table(columns=[])
    assert (got.num_rows, got.num_columns) == (want.num_rows, want.num_columns)
    filtered = theirs.to_table(columns=[], filter="i64 > 5")
    assert ours.to_table(columns=[], filter="i64 > 5").num_rows == filtered.num_rows > 0


@pytest.mark.parametrize("writer", WRITERS)
def test_fragment_reads_match_pylance(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    for mine, other in zip(ours.get_fragments(), theirs.get_fragments(), strict=True):
        assert mine.fragment_id == other.fragment_id
        _assert_same_table(mine.to_table(), other.to_table())
        _assert_same_table(
            mine.to_table(columns=["i64", "st.y"], filter="i64 > 5"),
            other.to_table(columns=["i64", "st.y"], filter="i64 > 5"),
        )
        # pylance's fragment take wants strictly increasing offsets
        _assert_same_table(
            mine.take([0, 2, 5], columns=["s", "lst"]),
            other.take([0, 2, 5], columns=["s", "lst"]),
            schema_metadata=False,
        )
        _assert_same_table(
            mine.take([5, 0, 0, 2], columns=["s", "lst"]),
            other.to_table(columns=["s", "lst"]).take([5, 0, 0, 2]),
        )


@pytest.mark.parametrize("writer", WRITERS)
def test_fragment_count_rows_with_filter_matches_pylance(multi: dict, writer: str) -> None:
    ours, theirs = ls.dataset(multi[writer]), lance.dataset(multi[writer])
    got = [f.count_rows("i64 > 5") for f in ours.get_fragments()]
    assert got == [f.count_rows("i64 > 5") for f in theirs.get_fragments()] == [6, 7, 6]


# pyarrow.compute.Expression filters: pylance converts them to Substrait, which knows neither
# durations nor float16 / dictionary columns, so these run on a table of plain columns.


@pytest.fixture(scope="module")
def plain_tables(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("plain")
    parts = [
        pa.table(
            {
                "i64": pa.array(range(s, s + 8), pa.int64()),
                "s": pa.array([f"s{i}" if i % 3 else None for i in range(s, s + 8)]),
                "f64": pa.array([i / 3 for i in range(s, s + 8)]),
                "st": pa.array([{"x": i, "y": f"y{i}"} for i in range(s, s + 8)]),
            }
        )
        for s in (0, 8, 16)
    ]
    for p in parts:
        lance.write_dataset(p, root / "pylance", mode="append")
        ls.write_dataset(p, str(root / "ours"), mode="append")
    return {"pylance": str(root / "pylance"), "ours": str(root / "ours")}


EXPRESSIONS = [
    (pc.field("i64") > 5) & pc.field("s").is_valid(),
    pc.field("f64") < 3.0,
    ~(pc.field("i64") == 3),
    pc.field("s").isin(["s1", "s22", "s5", "s7", "s8", "s10", "s13", "s14"]),
]


@pytest.mark.parametrize(("columns", "limit", "offset"), [(None, None, None), (["st", "s"], 4, 3)])
@pytest.mark.parametrize("expr", EXPRESSIONS, ids=str)
@pytest.mark.parametrize("writer", WRITERS)
def test_expression_filter_matches_pylance(
    plain_tables: dict, writer: str, expr: pc.Expression, columns: Any, limit: Any, offset: Any
) -> None:
    ours, theirs = ls.dataset(plain_tables[writer]), lance.dataset(plain_tables[writer])
    want = theirs.to_table(filter=expr, columns=columns, limit=limit, offset=offset)
    assert want.num_rows > 0
    _assert_same_table(
        ours.to_table(filter=expr, columns=columns, limit=limit, offset=offset), want
    )


# ---- deletion files written by pylance -------------------------------------------------------

DEL_ROWS = 12_000


@pytest.fixture(scope="module", params=VERSIONS)
def deleted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two 6000-row fragments and a 50-row one; pylance deletes every 7th row, then > 5000
    rows of fragment 0 (bitmap deletion file) and all of fragment 2 (fragment dropped)."""
    version = request.param
    root = tmp_path_factory.mktemp(f"deleted-{version}")

    def rows(start: int, n: int) -> pa.Table:
        r = range(start, start + n)
        return pa.table(
            {
                "i": pa.array(r, pa.int64()),
                "s": pa.array([None if i % 10 == 0 else f"v{i}" for i in r]),
                "st": pa.array([{"x": i, "y": str(i)} for i in r]),
            }
        )

    uris = {}
    for writer in WRITERS:
        uri = str(root / writer)
        if writer == "pylance":
            lance.write_dataset(
                rows(0, DEL_ROWS), uri, data_storage_version=version, max_rows_per_file=6000
            )
            lance.write_dataset(rows(DEL_ROWS, 50), uri, mode="append")
        else:
            _ls_create(rows(0, 6000), uri, version)
            for start, n in ((6000, 6000), (DEL_ROWS, 50)):
                ls.write_dataset(rows(start, n), uri, mode="append")
        lds = lance.dataset(uri)
        lds.delete("i % 7 = 3")
        lds.delete("i >= 100 AND i < 5500")
        lds.delete(f"i >= {DEL_ROWS}")
        uris[writer] = uri
        uris[f"{writer}-undeleted"] = lds.version - 3
    full = rows(0, DEL_ROWS + 50)
    keep = [i for i in range(DEL_ROWS) if i % 7 != 3 and not 100 <= i < 5500]
    return {"version": version, "expected": full.take(keep), **uris}


@pytest.mark.parametrize("writer", WRITERS)
def test_deletions_by_pylance_read_back(deleted: dict, writer: str) -> None:
    ours, theirs = ls.dataset(deleted[writer]), lance.dataset(deleted[writer])
    assert ours.version == theirs.version == deleted[f"{writer}-undeleted"] + 3
    frags = _fragments(ours)
    assert frags == _fragments(theirs)
    assert [f[0] for f in frags] == [0, 1]  # fragment 2 was deleted entirely
    assert frags[0][3][0] == "bitmap" and frags[0][3][1] > 5000
    assert frags[1][3][0] == "array" and frags[1][3][1] < 5000
    assert ours.feature_flags.reader & 1 and ours.feature_flags.writer & 1
    assert ours.count_rows() == theirs.count_rows() == deleted["expected"].num_rows
    _assert_same_table(ours.to_table(), theirs.to_table())
    _assert_same_table(ours.to_table(), deleted["expected"])
    # older versions still see the deleted rows
    assert ours.checkout_version(deleted[f"{writer}-undeleted"]).count_rows() == DEL_ROWS + 50


@pytest.mark.parametrize("writer", WRITERS)
def test_take_and_scans_skip_deleted_rows(deleted: dict, writer: str) -> None:
    ours, theirs = ls.dataset(deleted[writer]), lance.dataset(deleted[writer])
    n = theirs.count_rows()
    idx = np.random.default_rng(7).integers(0, n, 300)
    idx[10:20] = idx[0]  # duplicates
    idx = np.concatenate([idx, [n - 1, 0, 600, 599]])  # both fragments, unordered
    _assert_same_table(ours.take(idx), theirs.take(idx), schema_metadata=False)
    nested = ours.take(idx, columns=["st.x", "i"])
    _assert_same_table(nested, theirs.take(idx, columns=["st.x", "i"]), schema_metadata=False)
    want = pc.struct_field(deleted["expected"]["st"], "x").take(pa.array(idx))
    assert pc.struct_field(nested.column("st"), "x").equals(want)
    for flt, cols, limit, offset in [
        ("i > 5990", None, 7, 3),
        ("s IS NULL", ["i"], None, None),
        ("st.x BETWEEN 95 AND 5510", ["st.y", "i"], None, 2),
        (None, ["i"], 10, 95),
        (None, None, 5, n - 3),
    ]:
        _assert_same_table(
            ours.to_table(filter=flt, columns=cols, limit=limit, offset=offset),
            theirs.to_table(filter=flt, columns=cols, limit=limit, offset=offset),
        )


@pytest.mark.parametrize("writer", WRITERS)
def test_count_rows_with_filter_on_deletions(deleted: dict, writer: str) -> None:
    ours, theirs = ls.dataset(deleted[writer]), lance.dataset(deleted[writer])
    for flt in ("i > 5990", "s IS NULL", "st.x < 200"):
        assert ours.count_rows(filter=flt) == theirs.count_rows(filter=flt) > 0


def test_we_append_to_a_table_with_deletions(deleted: dict, tmp_path: Path) -> None:
    import shutil

    uri = str(tmp_path / "copy")
    shutil.copytree(deleted["pylance"], uri)
    before = _fragments(lance.dataset(uri))
    extra = pa.table(
        {
            "i": pa.array([-1, -2], pa.int64()),
            "s": ["a", None],
            "st": [{"x": -1, "y": "a"}, {"x": -2, "y": None}],
        }
    )
    version = lance.dataset(uri).version
    ds = ls.dataset(uri).insert(extra)
    assert ds.version == version + 1
    theirs = lance.dataset(uri)
    assert theirs.version == version + 1
    after = _fragments(theirs)
    assert after[:2] == before  # deletion files carried over untouched
    assert after[2][0] == 3  # max_fragment_id (2, the dropped fragment) is not reused
    assert theirs.count_rows() == deleted["expected"].num_rows + 2
    _assert_same_table(theirs.to_table(), _concat(deleted["expected"], extra.cast(theirs.schema)))
    assert ds.feature_flags.reader & 1 and ds.feature_flags.writer & 1
    # pylance can keep deleting on top of our commit
    theirs.delete("i = -1")
    assert ls.dataset(uri).count_rows() == deleted["expected"].num_rows + 1


# ---- (e) feature flags -----------------------------------------------------------------------

UNKNOWN_BIT = 40


def _patch_latest(uri: str, *, reader: int = 0, writer: int = 0) -> None:
    """OR ``reader`` / ``writer`` into the flags of the latest manifest, in place."""
    vdir = os.path.join(uri, "_versions")
    versions = {}
    for name in os.listdir(vdir):
        parsed = parse_manifest_name(name)
        if parsed is not None:
            versions[parsed[0]] = name
    path = os.path.join(vdir, versions[max(versions)])
    with open(path, "rb") as f:
        data = f.read()
    manifest = decode_manifest_file(data, path)
    patched = dataclasses.replace(
        manifest,
        reader_feature_flags=manifest.reader_feature_flags | reader,
        writer_feature_flags=manifest.writer_feature_flags | writer,
    )
    with open(path, "wb") as f:
        f.write(encode_manifest_file(patched, read_inline_transaction(data, path)))


def _two_versions(uri: str, writer: str) -> pa.Table:
    t1, t2 = all_types_table("2.2"), all_types_table("2.2", start=6)
    if writer == "pylance":
        lance.write_dataset(t1, uri)
        lance.write_dataset(t2, uri, mode="append")
    else:
        ls.write_dataset(t1, uri)
        ls.write_dataset(t2, uri, mode="append")
    return _concat(t1, t2)


def _snapshot(uri: str) -> dict[str, list[str]]:
    return {d: sorted(os.listdir(os.path.join(uri, d))) for d in ("_versions", "data")}


@pytest.mark.parametrize("writer", WRITERS)
def test_unknown_reader_flag_refuses_open(writer: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    _two_versions(uri, writer)
    _patch_latest(uri, reader=1 << UNKNOWN_BIT, writer=1 << UNKNOWN_BIT)
    with pytest.raises(Exception, match="cannot be read"):  # the oracle refuses it too
        lance.dataset(uri)
    with pytest.raises(UnsupportedFeatureError) as info:
        ls.dataset(uri)
    err = info.value
    assert err.kind == "reader"
    assert err.bits == (UNKNOWN_BIT,)
    assert err.flags == 1 << UNKNOWN_BIT
    assert str(UNKNOWN_BIT) in str(err)
    # the version before the patched one is still readable
    assert ls.dataset(uri, version=1).count_rows() == 6


@pytest.mark.parametrize("writer", WRITERS)
def test_unknown_writer_flag_allows_reads_refuses_commits(writer: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    expected = _two_versions(uri, writer)
    _patch_latest(uri, writer=1 << UNKNOWN_BIT)
    with pytest.raises(Exception, match="cannot be written"):  # the oracle refuses to append
        lance.write_dataset(all_types_table("2.2", start=50), uri, mode="append")
    before = _snapshot(uri)

    ds = ls.dataset(uri)
    assert ds.feature_flags.writer & (1 << UNKNOWN_BIT)
    _assert_same_table(ds.to_table(), expected)
    _assert_same_table(ds.to_table(), lance.dataset(uri).to_table())
    _assert_same_table(ds.take([11, 0]), lance.dataset(uri).take([11, 0]), schema_metadata=False)

    with pytest.raises(UnsupportedFeatureError) as info:
        ds.insert(all_types_table("2.2", start=100))
    assert info.value.kind == "writer"
    assert info.value.bits == (UNKNOWN_BIT,)
    with pytest.raises(UnsupportedFeatureError):
        ls.write_dataset(all_types_table("2.2", start=100), uri, mode="append")

    assert ds.version == 2
    assert ls.dataset(uri).version == lance.dataset(uri).version == 2
    assert _snapshot(uri) == before  # no manifest, no data file left behind
    _assert_same_table(ls.dataset(uri).to_table(), expected)


def test_flagged_table_is_refused_by_pylance(tmp_path: Path) -> None:
    """A new 2.3 table carries FLAG_SEMANTIC_TYPES (reader and writer): stock pylance, the
    "older client", must refuse to read it and to append to it; we read it."""
    uri = str(tmp_path / "t")
    t = all_types_table("2.3")
    ds = ls.write_dataset(t, uri, data_storage_version="2.3")
    assert ds.semantic_types
    assert ds.feature_flags.reader & ls.FLAG_SEMANTIC_TYPES
    assert ds.feature_flags.writer & ls.FLAG_SEMANTIC_TYPES
    with pytest.raises(Exception, match="cannot be read"):
        lance.dataset(uri)
    with pytest.raises(Exception, match="cannot be read"):
        lance.write_dataset(t, uri, mode="append")
    assert ls.dataset(uri).version == 1
    _assert_same_table(ls.dataset(uri).to_table(), t)
