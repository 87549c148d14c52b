"""Blob columns against the pylance oracle (facts §10; spec "Value-transforming types").

Both ways: tables pylance writes read the same through us (descriptors, takes and
``take_blobs`` bytes), and tables we write are byte-identical to pylance's where the bytes
are deterministic (data files, sidecars, manifest field trees) and read the same through
pylance.
"""

from __future__ import annotations

import io
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import Blob, blob_array, blob_field
from tests.blob_support import data_files

import lance_semantic as ls
from lance_semantic.errors import InvalidBlobError, UnsupportedInputTypeError, UnsupportedTypeError

KB, MB = 1024, 1024 * 1024
V1_FIELD = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})


@pytest.fixture
def external(tmp_path: Path) -> str:
    path = tmp_path / "external.bin"
    path.write_bytes(bytes(range(256)) * 8)
    return f"file://{path}"


def _v2_values(external: str) -> list[object]:
    """Every kind: inline, null, packed, dedicated, external (whole and a range), empty."""
    return [
        b"x" * 10,
        None,
        b"y" * 100_000,
        b"z" * (5 * MB),
        external,
        Blob.from_uri(external, position=10, size=20),
        b"",
        b"w" * 70_000,
    ]


def _v2_table(values: list[object], field: pa.Field | None = None) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), field or blob_field("b")])
    return pa.table({"id": pa.array(range(len(values))), "b": blob_array(values)}, schema=schema)


def _v1_table(values: list[bytes | None]) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), V1_FIELD])
    return pa.table(
        {"id": pa.array(range(len(values))), "b": pa.array(values, pa.large_binary())},
        schema=schema,
    )


def _bytes(files: list) -> list[bytes | None]:
    return [None if f is None else f.read() for f in files]


def _assert_reads_match(path: Path, indices: list[int]) -> None:
    ours, theirs = ls.dataset(str(path)), lance.dataset(str(path))
    a, b = ours.to_table(), theirs.to_table()
    assert a.schema.equals(b.schema, check_metadata=True)
    assert a.equals(b)
    assert ours.take(indices, columns=["b"]).equals(theirs.take(indices, columns=["b"]))
    assert _bytes(ours.take_blobs("b", indices=indices)) == _bytes(
        theirs.take_blobs("b", indices=indices)
    )


# ---- pylance writes, we read -----------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_blob_v1_tables_pylance_writes_read_the_same(tmp_path: Path, version: str) -> None:
    values = [b"q" * 10, None, b"r" * 70_000, b""]
    lance.write_dataset(_v1_table(values), tmp_path / "t", data_storage_version=version)
    _assert_reads_match(tmp_path / "t", [3, 0, 1, 2, 0])
    assert _bytes(ls.dataset(str(tmp_path / "t")).take_blobs("b", indices=[0, 1, 2, 3])) == values


def test_blob_v2_tables_pylance_writes_read_the_same(tmp_path: Path, external: str) -> None:
    values = _v2_values(external)
    lance.write_dataset(_v2_table(values), tmp_path / "t", allow_external_blob_outside_bases=True)
    _assert_reads_match(tmp_path / "t", [7, 0, 3, 1, 2, 4, 5, 6, 0])


def test_blob_v1_input_on_2_2_becomes_v2_as_pylance_does(tmp_path: Path) -> None:
    values = [b"q" * 10, None, b"r" * 70_000]
    lance.write_dataset(_v1_table(values), tmp_path / "p")
    ls.write_dataset(_v1_table(values), str(tmp_path / "o"))
    ours, theirs = ls.dataset(str(tmp_path / "o")), lance.dataset(str(tmp_path / "p"))
    assert ours.semantic_schema.fields[1] == _top_field(theirs, "b")
    assert data_files(tmp_path / "o") == data_files(tmp_path / "p")
    assert ours.to_table().equals(theirs.to_table())
    _assert_reads_match(tmp_path / "p", [2, 1, 0])


def _top_field(ds: lance.LanceDataset, name: str) -> ls.Field:
    """The pylance table's field tree, as decoded by our manifest codec."""
    return next(f for f in ls.dataset(ds.uri).semantic_schema.fields if f.name == name)


# ---- we write, pylance reads -----------------------------------------------------------------


def test_blob_v2_writes_are_byte_identical_to_pylance(tmp_path: Path, external: str) -> None:
    """Same data file bytes, same sidecars (names and bytes), same field tree."""
    table = _v2_table(_v2_values(external))
    lance.write_dataset(table, tmp_path / "p", allow_external_blob_outside_bases=True)
    ls.write_dataset(table, str(tmp_path / "o"), allow_external_blob_outside_bases=True)
    assert data_files(tmp_path / "o") == data_files(tmp_path / "p")
    theirs = lance.dataset(str(tmp_path / "p"))
    assert ls.dataset(str(tmp_path / "o")).semantic_schema.fields == tuple(
        ls.dataset(theirs.uri).semantic_schema.fields
    )
    _assert_reads_match(tmp_path / "o", [0, 2, 3, 4, 5, 6, 7, 1])
    assert _bytes(lance.dataset(str(tmp_path / "o")).take_blobs("b", indices=[0, 2, 6])) == [
        b"x" * 10,
        b"y" * 100_000,
        b"",
    ]


@pytest.mark.parametrize("version", ["2.0", "2.1"])
def test_blob_v1_writes_are_byte_identical_to_pylance(tmp_path: Path, version: str) -> None:
    table = _v1_table([b"q" * 10, None, b"r" * 70_000])
    lance.write_dataset(table, tmp_path / "p", data_storage_version=version)
    ls.write_dataset(table, str(tmp_path / "o"), data_storage_version=version)
    assert data_files(tmp_path / "o") == data_files(tmp_path / "p")
    _assert_reads_match(tmp_path / "o", [2, 0, 1])


def test_blob_thresholds_and_pack_rollover_follow_field_metadata(tmp_path: Path) -> None:
    """Inline / packed / dedicated cut-offs and the packed sidecar size limit, from
    ``blob_field(..., *_threshold=...)``, choose exactly what pylance chooses."""
    field = blob_field(
        "b", inline_size_threshold=200, dedicated_size_threshold=1000, pack_file_size_threshold=700
    )
    values = [b"a" * 100, b"b" * 300, b"c" * 3000, b"d" * 300, b"e" * 300, b"f" * 200, b"g" * 201]
    table = _v2_table(values, field)
    lance.write_dataset(table, tmp_path / "p")
    ls.write_dataset(table, str(tmp_path / "o"))
    assert data_files(tmp_path / "o") == data_files(tmp_path / "p")
    kinds = ls.dataset(str(tmp_path / "o")).to_table().column("b").combine_chunks()
    assert kinds.field("kind").to_pylist() == [0, 1, 2, 1, 1, 0, 1]
    assert _bytes(ls.dataset(str(tmp_path / "o")).take_blobs("b", indices=range(7))) == values


def test_blob_payloads_with_every_byte_value_round_trip(tmp_path: Path) -> None:
    """Every byte value in inline, packed and dedicated payloads (a regression: a signed
    view of the buffer broke the dedicated writer on bytes >= 0x80)."""
    payloads = [bytes(range(256)) * n for n in (4, 400, 20_000)]
    table = _v2_table(payloads)
    lance.write_dataset(table, tmp_path / "p")
    ls.write_dataset(table, str(tmp_path / "o"))
    assert data_files(tmp_path / "o") == data_files(tmp_path / "p")
    assert _bytes(ls.dataset(str(tmp_path / "o")).take_blobs("b", indices=[0, 1, 2])) == payloads


def test_blob_ids_restart_per_data_file(tmp_path: Path) -> None:
    table = _v2_table([b"a" * 70_000] * 5)
    lance.write_dataset(table, tmp_path / "p", max_rows_per_file=2)
    ls.write_dataset(table, str(tmp_path / "o"), max_rows_per_file=2)
    assert [p for p, _ in data_files(tmp_path / "o")] == [p for p, _ in data_files(tmp_path / "p")]
    _assert_reads_match(tmp_path / "o", [4, 0, 2])


# ---- appends both ways, deletions ----------------------------------------------------------


def test_blob_appends_interleave_with_pylance(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_v2_table([b"a" * 10, b"b" * 70_000]), uri)
    lance.write_dataset(_v2_table([b"c" * 5 * MB, None]), uri, mode="append")
    ls.write_dataset(_v2_table([b"d", b"e" * 100_000]), uri, mode="append")
    expected = [b"a" * 10, b"b" * 70_000, b"c" * 5 * MB, None, b"d", b"e" * 100_000]
    assert _bytes(ls.dataset(uri).take_blobs("b", indices=range(6))) == expected
    assert _bytes(lance.dataset(uri).take_blobs("b", indices=range(6))) == expected
    _assert_reads_match(tmp_path / "t", [5, 0, 3])


def test_take_blobs_counts_live_rows_after_a_delete(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    values = [bytes([i]) * (i * 20_000) for i in range(6)]
    ls.write_dataset(_v2_table(values), uri)
    ls.dataset(uri).delete("id IN (1, 3)")
    live = [values[i] for i in (0, 2, 4, 5)]
    assert _bytes(ls.dataset(uri).take_blobs("b", indices=[3, 0, 1, 2])) == [
        live[3],
        live[0],
        live[1],
        live[2],
    ]
    _assert_reads_match(tmp_path / "t", [0, 1, 2, 3])
    frag = ls.dataset(uri).get_fragments()[0].fragment_id
    addresses = [(frag << 32) | 4]
    assert _bytes(ls.dataset(uri).take_blobs("b", addresses=addresses)) == [values[4]]


# ---- the blob files --------------------------------------------------------------------------


def test_take_blobs_returns_seekable_read_only_files(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    payload = bytes(range(256)) * 400  # packed (over the inline limit)
    ls.write_dataset(_v2_table([payload]), uri)
    (f,) = ls.dataset(uri).take_blobs("b", indices=[0])
    assert f.size() == len(payload) and f.seekable() and f.readable()
    assert f.seek(1000) == 1000 and f.read(5) == payload[1000:1005] and f.tell() == 1005
    assert f.seek(-3, io.SEEK_END) == len(payload) - 3 and f.read() == payload[-3:]
    assert f.read_range(10, 4) == payload[10:14] and f.tell() == len(payload)
    f.seek(0)
    assert io.BufferedReader(f).read() == payload
    f.close()
    assert f.closed


def test_take_blobs_refuses_other_columns(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_v2_table([b"a"]), uri)
    with pytest.raises(ls.LanceSemanticError, match="not a blob column"):
        ls.dataset(uri).take_blobs("id", indices=[0])
    with pytest.raises(ls.ColumnNotFoundError):
        ls.dataset(uri).take_blobs("nope", indices=[0])


# ---- refusals: the error, and nothing referenced -------------------------------------------


def _refused(uri: str, data: pa.Table, error: type[Exception], match: str, **kw: object) -> None:
    before = ls.dataset(uri).version
    with pytest.raises(error, match=match):
        ls.write_dataset(data, uri, mode="append", **kw)
    assert ls.dataset(uri).version == before


def test_invalid_blob_values_are_refused_with_the_row(tmp_path: Path, external: str) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_v2_table([b"a"]), uri)
    both = pa.StructArray.from_arrays(
        [pa.array([b"x", b"y"], pa.large_binary()), pa.array([None, external])],
        fields=list(blob_field("b").type.storage_type)[:2],
    )
    bad = pa.table(
        {"id": [7, 8], "b": both},
        schema=pa.schema([pa.field("id", pa.int64()), pa.field("b", both.type, metadata=_V2_META)]),
    )
    _refused(uri, bad, InvalidBlobError, "'b', row 1: invalid blob: exactly one of data and uri")
    _refused(uri, _v2_table([b"a", external]), InvalidBlobError, "row 1.*allow_external_blob")
    _refused(
        uri,
        _v2_table(["relative/path.bin"]),
        InvalidBlobError,
        "not absolute",
        allow_external_blob_outside_bases=True,
    )
    assert _bytes(ls.dataset(uri).take_blobs("b", indices=[0])) == [b"a"]


_V2_META = {"ARROW:extension:name": "lance.blob.v2", "ARROW:extension:metadata": ""}


def test_blob_v2_needs_data_storage_2_2(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedTypeError, match="2.2 or later"):
        ls.write_dataset(_v2_table([b"a"]), str(tmp_path / "t"), data_storage_version="2.1")
    assert not (tmp_path / "t" / "_versions").exists()


def test_blob_v1_column_refuses_other_layouts(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_v1_table([b"a"]), uri, data_storage_version="2.1", semantic_types=True)
    data = pa.table({"id": [1], "b": pa.array([b"x"], pa.binary())})
    _refused(uri, data, UnsupportedInputTypeError, "'b'.*blob v1")


# ---- flagged tables --------------------------------------------------------------------------


def test_blob_on_flagged_tables(tmp_path: Path, external: str) -> None:
    """Blob is value-transforming on a flagged table too: the same descriptors and bytes as
    the legacy twin, which pylance can read (the flagged one it must refuse)."""
    values = _v2_values(external)
    ls.write_dataset(
        _v2_table(values),
        str(tmp_path / "f"),
        semantic_types=True,
        allow_external_blob_outside_bases=True,
    )
    ls.write_dataset(_v2_table(values), str(tmp_path / "l"), allow_external_blob_outside_bases=True)
    flagged, legacy = ls.dataset(str(tmp_path / "f")), ls.dataset(str(tmp_path / "l"))
    assert flagged.semantic_types and not legacy.semantic_types
    assert str(flagged.semantic_schema.field("b").semantic_type) == "blob"
    assert flagged.semantic_schema.field("b").semantic_type.kind == "value_transforming"
    assert flagged.to_table().equals(legacy.to_table())
    assert data_files(tmp_path / "f") == data_files(tmp_path / "l")
    idx = list(range(len(values)))
    assert _bytes(flagged.take_blobs("b", indices=idx)) == _bytes(
        legacy.take_blobs("b", indices=idx)
    )
    # plain bytes append to a blob v2 column (engines drop the extension)
    flagged.insert(pa.table({"id": [99], "b": pa.array([b"p" * 70_000], pa.large_binary())}))
    assert _bytes(ls.dataset(str(tmp_path / "f")).take_blobs("b", indices=[len(values)])) == [
        b"p" * 70_000
    ]
    with pytest.raises(Exception, match="(?i)feature|flag|unsupported"):
        lance.dataset(str(tmp_path / "f")).to_table()


# ---- rewrites: update, merge_insert, compaction ---------------------------------------------


def _by_id(ds: ls.Dataset | lance.LanceDataset) -> dict[int, bytes | None]:
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    return dict(zip(ids, _bytes(ds.take_blobs("b", indices=list(range(len(ids))))), strict=True))


@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_rewrites_keep_blob_values(tmp_path: Path, external: str, flagged: bool) -> None:
    """update, merge_insert and compact_files read blob values back (bytes, or the URI of
    an external blob) and store them afresh, as pylance does; the values never change."""
    values = _v2_values(external)
    uri = str(tmp_path / "o")
    twin = tmp_path / "p"
    ls.write_dataset(
        _v2_table(values), uri, allow_external_blob_outside_bases=True, semantic_types=flagged
    )
    lance.write_dataset(_v2_table(values), twin, allow_external_blob_outside_bases=True)
    expected = {
        i: None if i == 1 else ls.dataset(uri).take_blobs("b", indices=[i])[0].read()
        for i in range(len(values))
    }
    expected = {i + 10 if i < 3 else i: v for i, v in expected.items()}
    ds = ls.dataset(uri)
    ds.update({"id": "id + 10"}, where="id < 3")
    lance.dataset(twin).update({"id": "id + 10"}, where="id < 3")
    assert _by_id(ls.dataset(uri)) == expected == _by_id(lance.dataset(twin))
    source = _v2_table([b"m" * 80_000, b"n"])
    source = source.set_column(0, "id", pa.array([4, 42], pa.int64()))
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(source)
    expected |= {4: b"m" * 80_000, 42: b"n"}
    assert _by_id(ls.dataset(uri)) == expected
    ds.optimize.compact_files()
    assert len(ls.dataset(uri).get_fragments()) == 1
    assert _by_id(ls.dataset(uri)) == expected
    if not flagged:  # pylance reads the rewritten table the same
        assert _by_id(lance.dataset(uri)) == expected


def test_compaction_of_blob_v1_tables_matches_pylance(tmp_path: Path) -> None:
    values = [b"q" * 10, None, b"r" * 70_000]
    for root in ("o", "p"):
        lance.write_dataset(_v1_table(values), tmp_path / root, data_storage_version="2.1")
        lance.write_dataset(
            _v1_table([b"s" * 5]), tmp_path / root, mode="append", data_storage_version="2.1"
        )
    ls.dataset(str(tmp_path / "o")).optimize.compact_files()
    lance.dataset(tmp_path / "p").optimize.compact_files()
    _assert_reads_match(tmp_path / "o", [3, 2, 1, 0])
    assert _by_id(ls.dataset(str(tmp_path / "o"))) == _by_id(lance.dataset(tmp_path / "p"))


def test_blob_columns_through_schema_evolution(tmp_path: Path) -> None:
    """add_columns of a blob column (sidecars per new data file), rename, drop; pylance
    reads every version the same."""
    uri = str(tmp_path / "t")
    ls.write_dataset(_v2_table([b"x" * 10, b"y" * 100_000, None]), uri)
    ds = ls.dataset(uri)
    ds.add_columns(
        pa.table(
            {"c": blob_array([b"q", b"r" * 70_000, None])}, schema=pa.schema([blob_field("c")])
        )
    )
    ds.alter_columns({"path": "b", "name": "clip"})
    assert _bytes(ds.take_blobs("c", indices=[0, 1, 2])) == [b"q", b"r" * 70_000, None]
    assert _bytes(ds.take_blobs("clip", indices=[1])) == [b"y" * 100_000]
    theirs = lance.dataset(uri)
    assert ds.to_table().equals(theirs.to_table())
    assert _bytes(theirs.take_blobs("c", indices=[1])) == [b"r" * 70_000]
    ds.drop_columns(["clip"])
    assert ls.dataset(uri).to_table().equals(lance.dataset(uri).to_table())
    assert ls.dataset(uri).schema.names == ["id", "c"]
