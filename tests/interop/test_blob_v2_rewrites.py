"""Rewrites of tables with blob v2 columns keep every blob (updates, merge_insert updates).

pylance 14 writes ``large_binary`` + ``lance-encoding:blob`` on data storage 2.2 as blob v2,
and so do we: the table field is ``struct<data, uri>`` with the ``lance.blob.v2`` extension
and no extension metadata. A rewrite reads the blobs back as values (the logical struct with
``position`` and ``size``) and writes them again, so the write boundary must take either
logical layout for such a field, and empty extension metadata for none. (Both once failed
with a ``SchemaMismatchError``, "extension type differs", where pylance's update succeeds.)

The class: tables written by pylance and by us, on 2.2 (pylance-readable: compared with
pylance's update of a twin) and flagged on 2.3; blobs of every kind (null, empty, inline,
packed in a sidecar, dedicated), in several fragments; updates matching none, one, a few and
most rows; a merge_insert updating some rows and inserting others.
"""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

_FIELD = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("k", pa.int64()), _FIELD])

#: blob sizes by row: null, empty, inline, packed (> 64 KiB), dedicated (> 4 MiB, once)
_SIZES = [None, 0, 10, 3000, 70_000]
_DEDICATED_ROW = 13


def _blob(j: int) -> bytes | None:
    size = 4_200_000 if j == _DEDICATED_ROW else _SIZES[j % len(_SIZES)]
    return None if size is None else bytes([j % 251]) * size


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "k": ids, "b": [_blob(j) for j in ids]}, _SCHEMA)


def _write(uri: str, writer: str, version: str) -> None:
    for f in range(4):
        data = _rows(list(range(f * 6, f * 6 + 6)))
        mode = "append" if f else "create"
        if writer == "pylance":
            lance.write_dataset(data, uri, mode=mode, data_storage_version=version)
        elif f:
            ls.dataset(uri).insert(data)
        else:
            ls.write_dataset(data, uri, data_storage_version=version)


def _blobs_by_id(ds: ls.LanceDataset) -> dict[int, bytes | None]:
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    files = ds.take_blobs("b", indices=list(range(len(ids))))
    return {i: None if f is None else f.readall() for i, f in zip(ids, files, strict=True)}


WHERE = {"none": "k < 0", "one": "k = 13", "few": "k % 5 = 2", "most": "k % 7 <> 0"}
TABLES = [("pylance", "2.2"), ("ours", "2.2"), ("ours", "2.3")]


@pytest.mark.parametrize(("writer", "version"), TABLES)
@pytest.mark.parametrize("where", sorted(WHERE))
def test_updates_keep_blob_v2_values(tmp_path: Path, writer: str, version: str, where: str) -> None:
    uri = str(tmp_path / "t")
    _write(uri, writer, version)
    ds = ls.dataset(uri)
    field = ds.semantic_schema.field("b")
    assert field.extension_name == "lance.blob.v2", field
    ds.update({"id": "id + 1000"}, where=WHERE[where])
    got = _blobs_by_id(ls.dataset(uri))
    moved = {j: j + 1000 for j in range(24) if eval(_py(WHERE[where]), {"k": j})}
    assert got == {moved.get(j, j): _blob(j) for j in range(24)}
    if version == "2.3":
        return
    # the pylance oracle: its update of a twin, and its read of ours
    twin = str(tmp_path / "twin")
    _write(twin, writer, version)
    lance.dataset(twin).update({"id": "id + 1000"}, where=WHERE[where])
    mine, theirs = lance.dataset(uri), lance.dataset(twin)
    for ds_ in (mine, theirs):
        ids = ds_.to_table(columns=["id"]).column("id").to_pylist()
        files = ds_.take_blobs("b", indices=list(range(len(ids))))
        read = {i: None if f is None else f.readall() for i, f in zip(ids, files, strict=True)}
        assert read == got
    assert mine.schema == theirs.schema


def _py(sql: str) -> str:
    return sql.replace("<>", "!=").replace(" = ", " == ")


@pytest.mark.parametrize(("writer", "version"), TABLES)
def test_merge_insert_keeps_blob_v2_values(tmp_path: Path, writer: str, version: str) -> None:
    uri = str(tmp_path / "t")
    _write(uri, writer, version)
    ds = ls.dataset(uri)
    source = pa.table(
        {
            "id": [2, 13, 20, 30, 31],
            "k": [102, 113, 120, 130, 131],
            "b": [_blob(j) for j in (7, 3, 13, 30, 31)],
        },
        _SCHEMA,
    )
    result = (
        ds.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(source)
    )
    assert (result.num_updated_rows, result.num_inserted_rows) == (3, 2)
    want: dict[int, bytes | None] = {j: _blob(j) for j in range(24)}
    want.update({2: _blob(7), 13: _blob(3), 20: _blob(13), 30: _blob(30), 31: _blob(31)})
    assert _blobs_by_id(ls.dataset(uri)) == want
    if version == "2.3":
        return
    mine = lance.dataset(uri)
    ids = mine.to_table(columns=["id"]).column("id").to_pylist()
    files = mine.take_blobs("b", indices=list(range(len(ids))))
    assert {i: None if f is None else f.readall() for i, f in zip(ids, files, strict=True)} == want


def test_missing_and_empty_extension_metadata_are_the_same(tmp_path: Path) -> None:
    """An append of the logical struct whose extension metadata is empty (what Arrow's
    extension types export) matches a table field recorded without it (what pylance
    writes)."""
    uri = str(tmp_path / "t")
    lance.write_dataset(_rows([0, 1]), uri, data_storage_version="2.2")
    ds = ls.dataset(uri)
    assert ds.semantic_schema.field("b").metadata.get("ARROW:extension:metadata") is None
    logical = pa.struct([pa.field("data", pa.large_binary()), pa.field("uri", pa.string())])
    md = {"ARROW:extension:name": "lance.blob.v2", "ARROW:extension:metadata": ""}
    blobs = pa.array([{"data": _blob(2), "uri": None}, {"data": _blob(4), "uri": None}], logical)
    schema = pa.schema([*_SCHEMA][:2] + [pa.field("b", logical, metadata=md)])
    ds.insert(pa.table({"id": [2, 3], "k": [2, 3], "b": blobs}, schema))
    assert _blobs_by_id(ls.dataset(uri)) == {0: _blob(0), 1: _blob(1), 2: _blob(2), 3: _blob(4)}
