"""Two-phase writes (``ls.fragment.write_fragments`` + ``ls.LanceOperation`` +
``ls.Dataset.commit``): fragments written in spawned processes and pickled back, one commit;
flagged creates whose workers feed one column in different layouts; stale ``read_version``
appends that rebase; a refused write in a worker raising the same error on the caller; and
legacy results equal to pylance's own two-phase results (types, values, field ids).
"""

from __future__ import annotations

import base64
import json
import multiprocessing as mp
import os
import pickle
import random
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import lance
import lance.fragment
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from tests.fixtures.tables import all_types_table

import lance_semantic as ls
from lance_semantic.dataset.writes.fragment_metadata import plain
from lance_semantic.manifest._pb import lance_table_pb2 as tpb
from lance_semantic.manifest.codec import decode_manifest_file, encode_manifest_file

pytestmark = pytest.mark.interop

WORKERS = 2


# ---- what the workers run (module level: spawned interpreters import it by name) -----------


def _layout_table(layout: str, start: int) -> pa.Table:
    values = [f"v{start + i}" for i in range(4)]
    arrays = {
        "utf8": pa.array(values),
        "large_utf8": pa.array(values, pa.large_string()),
        "dictionary": pa.array(values).dictionary_encode(),
        "utf8_view": pa.array(values, pa.string_view()),
        "int64": pa.array(range(4), pa.int64()),
    }
    return pa.table({"id": pa.array(range(start, start + 4), pa.int64()), "s": arrays[layout]})


def _worker_write(uri: str, layout: str, start: int, options: dict[str, Any]) -> bytes:
    """Write one table's rows as fragments; hand back the pickled fragments, or the pickled
    error (so the test sees exactly what unpickling gives the caller)."""
    try:
        fragments = ls.fragment.write_fragments(_layout_table(layout, start), uri, **options)
    except Exception as e:  # noqa: BLE001 - the error itself is the result
        return pickle.dumps(e)
    return pickle.dumps(fragments)


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    ctx = mp.get_context("spawn")
    root = str(Path(__file__).resolve().parents[2])
    added = root not in sys.path  # spawned workers import tests.interop.test_two_phase
    if added:
        sys.path.insert(0, root)
    try:
        workers = ctx.Pool(WORKERS)
    finally:
        if added:
            sys.path.remove(root)
    with workers:
        yield workers


def _in_workers(pool: Any, uri: str, layouts: list[str], **options: Any) -> list[Any]:
    pending = [
        pool.apply_async(_worker_write, (uri, layout, 100 * i, options))
        for i, layout in enumerate(layouts)
    ]
    return [pickle.loads(r.get(timeout=120)) for r in pending]


def _file_types(uri: str, ds: ls.Dataset, column: str) -> list[pa.DataType]:
    """The Arrow type each data file stores ``column`` in, fragment by fragment."""
    out = []
    for fragment in ds.manifest.fragments:
        for df in fragment.files:
            schema = LanceFileReader(os.path.join(uri, "data", df.path)).metadata().schema
            out.append(schema.field(column).type)
    return out


# ---- spawned workers, one commit --------------------------------------------------------------


def test_fragments_from_spawned_workers_one_commit(pool: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    results = _in_workers(pool, uri, ["utf8", "utf8"])
    fragments = [f for r in results for f in r]
    assert all(isinstance(f, ls.fragment.FragmentMetadata) and f.id == 0 for f in fragments)
    assert not os.path.exists(os.path.join(uri, "_versions"))  # nothing committed yet
    schema = _layout_table("utf8", 0).schema
    ds = ls.Dataset.commit(uri, ls.LanceOperation.Overwrite(schema, fragments))
    assert ds.version == 1 and not ds.semantic_types
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 1]
    theirs = lance.dataset(uri)
    assert theirs.version == 1
    assert theirs.to_table().equals(ds.to_table())
    assert sorted(ds.to_table()["id"].to_pylist()) == [0, 1, 2, 3, 100, 101, 102, 103]


def test_flagged_create_workers_feed_different_layouts(pool: Any, tmp_path: Path) -> None:
    """One string column fed as utf8, large_utf8, dictionary and utf8_view by four workers:
    one semantic type, each data file in its own layout (the view written as utf8), the
    output encoding taken from the schema the commit is given, as write_dataset takes it
    from its input."""
    uri = str(tmp_path / "t")
    layouts = ["utf8", "large_utf8", "dictionary", "utf8_view"]
    results = _in_workers(pool, uri, layouts, data_storage_version="2.3")
    fragments = [f for r in results for f in r]
    new_schema = _layout_table("large_utf8", 0).schema
    ds = ls.Dataset.commit(uri, ls.LanceOperation.Overwrite(new_schema, fragments))
    assert ds.semantic_types and ds.data_storage_version == "2.3"
    field = ds.semantic_schema.field("s")
    assert (field.logical_type, field.output_encoding) == ("string", "large_utf8")
    assert _file_types(uri, ds, "s") == [
        pa.string(),
        pa.large_string(),
        pa.dictionary(pa.int32(), pa.string()),
        pa.string(),
    ]
    table = ds.to_table()
    assert table.schema.field("s").type == pa.large_string()
    expected = [f"v{100 * i + k}" for i in range(4) for k in range(4)]
    assert table.sort_by("id")["s"].to_pylist() == expected
    # the same rows through write_dataset record the same schema
    direct = ls.write_dataset(
        _layout_table("large_utf8", 0), str(tmp_path / "direct"), data_storage_version="2.3"
    )
    assert direct.semantic_schema == ds.semantic_schema
    with pytest.raises(Exception, match="cannot be read by this version"):
        lance.dataset(uri).to_table()  # stock pylance refuses the flagged table


def test_worker_refused_type_raises_same_error_on_caller(pool: Any, tmp_path: Path) -> None:
    flagged = ls.write_dataset(
        _layout_table("utf8", 0), str(tmp_path / "f"), data_storage_version="2.3"
    )
    legacy = ls.write_dataset(_layout_table("utf8", 0), str(tmp_path / "l"))
    refused = _in_workers(pool, flagged.uri, ["int64"])[0]
    mismatch = _in_workers(pool, legacy.uri, ["large_utf8"])[0]
    assert type(refused) is ls.UnsupportedInputTypeError
    assert (refused.field_path, refused.semantic_type, refused.input_type) == (
        "s",
        "string",
        "int64",
    )
    assert type(mismatch) is ls.SchemaMismatchError
    assert (mismatch.field_path, mismatch.table_type, mismatch.input_type) == (
        "s",
        "string",
        "large_string",
    )
    for ds in (flagged, legacy):  # nothing left behind: one data file, one version
        assert len(os.listdir(os.path.join(ds.uri, "data"))) == 1
        assert ls.dataset(ds.uri).version == 1


def test_stale_read_version_append_rebases(pool: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    base = ls.write_dataset(_layout_table("utf8", 0), uri, data_storage_version="2.3")
    results = _in_workers(pool, uri, ["large_utf8", "dictionary"])
    # two more versions land after the workers read version 1
    ls.write_dataset(_layout_table("utf8", 500), uri, mode="append")
    ls.dataset(uri).delete("id = 0")
    ds = base
    for fragments in results:  # each commit read version 1: both rebase
        ds = ls.Dataset.commit(uri, ls.LanceOperation.Append(fragments), read_version=1)
    assert ds.version == 5
    ids = sorted(ds.to_table()["id"].to_pylist())
    assert ids == sorted(
        [1, 2, 3] + list(range(500, 504)) + list(range(0, 4)) + list(range(100, 104))
    )
    ids = [f.fragment_id for f in ds.get_fragments()]
    assert ids == sorted(set(ids))
    assert _file_types(uri, ds, "s")[-2:] == [
        pa.large_string(),
        pa.dictionary(pa.int32(), pa.string()),
    ]
    assert ls.check(uri).ok


# ---- legacy results equal pylance's two-phase results ------------------------------------------


def _fields(schema: Any) -> list[tuple[str, int]]:
    """(path, field id) of every field, from our TableSchema or pylance's lance_schema."""
    if isinstance(schema, ls.TableSchema):
        return [(f.path, f.id) for f in schema]
    out: list[tuple[str, int]] = []

    def walk(fields: Any, prefix: str) -> None:
        for f in fields:
            path = f"{prefix}.{f.name()}" if prefix else f.name()
            out.append((path, f.id()))
            walk(f.children(), path)

    walk(schema.fields(), "")
    return out


def _pylance_two_phase(uri: str, tables: list[pa.Table], version: str) -> lance.LanceDataset:
    first = [
        f
        for t in tables[:2]
        for f in lance.fragment.write_fragments(t, uri, data_storage_version=version)
    ]
    ds = lance.LanceDataset.commit(uri, lance.LanceOperation.Overwrite(tables[0].schema, first))
    later = lance.fragment.write_fragments(tables[2], uri)
    return lance.LanceDataset.commit(
        uri, lance.LanceOperation.Append(later), read_version=ds.version
    )


def _our_two_phase(uri: str, tables: list[pa.Table], version: str) -> ls.Dataset:
    first = [
        f
        for t in tables[:2]
        for f in ls.fragment.write_fragments(t, uri, data_storage_version=version)
    ]
    ds = ls.Dataset.commit(uri, ls.LanceOperation.Overwrite(tables[0].schema, first))
    later = ls.fragment.write_fragments(tables[2], uri)
    return ls.Dataset.commit(uri, ls.LanceOperation.Append(later), read_version=ds.version)


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_legacy_two_phase_equals_pylance(tmp_path: Path, version: str) -> None:
    tables = [all_types_table(version, start=6 * i) for i in range(3)]
    theirs = _pylance_two_phase(str(tmp_path / "p"), tables, version)
    ours = _our_two_phase(str(tmp_path / "o"), tables, version)
    assert ours.version == theirs.version == 2
    assert ours.data_storage_version == theirs.data_storage_version == version
    assert ours.schema == theirs.schema
    assert ours.to_table().equals(theirs.to_table())
    assert _fields(ours.semantic_schema) == _fields(theirs.lance_schema)
    assert [f.fragment_id for f in ours.get_fragments()] == [
        f.fragment_id for f in theirs.get_fragments()
    ]
    ours_files = [df.fields for f in ours.manifest.fragments for df in f.files]
    theirs_files = [tuple(df.fields) for f in theirs.get_fragments() for df in f.data_files()]
    assert ours_files == theirs_files
    # pylance reads ours as it reads its own
    again = lance.dataset(ours.uri)
    assert again.schema == theirs.schema
    assert again.to_table().equals(theirs.to_table())


def test_fragments_cross_between_libraries(tmp_path: Path) -> None:
    """pylance commits our fragments (through their JSON), we commit pylance's."""
    t = all_types_table("2.2")
    ours = ls.fragment.write_fragments(t, str(tmp_path / "a"))
    theirs = [lance.fragment.FragmentMetadata.from_json(json.dumps(f.to_json())) for f in ours]
    a = lance.LanceDataset.commit(
        str(tmp_path / "a"), lance.LanceOperation.Overwrite(t.schema, theirs)
    )
    assert a.to_table().equals(t)
    assert ls.dataset(a.uri).to_table().equals(t)
    pylance_frags = lance.fragment.write_fragments(t, str(tmp_path / "b"))
    b = ls.Dataset.commit(str(tmp_path / "b"), ls.LanceOperation.Overwrite(t.schema, pylance_frags))
    assert b.to_table().equals(t)
    assert lance.dataset(b.uri).to_table().equals(t)


# ---- what a commit refuses -----------------------------------------------------------------------


def test_commit_refuses_fragments_that_do_not_fit(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    large = ls.fragment.write_fragments(_layout_table("large_utf8", 0), uri)
    with pytest.raises(ls.SchemaMismatchError) as info:  # legacy: exact Arrow types
        ls.Dataset.commit(uri, ls.LanceOperation.Overwrite(_layout_table("utf8", 0).schema, large))
    assert info.value.field_path == "s"
    assert not os.path.exists(os.path.join(uri, "_versions"))
    ds = ls.write_dataset(_layout_table("utf8", 0), uri)
    with pytest.raises(ValueError, match="read_version is required"):
        ls.Dataset.commit(uri, ls.LanceOperation.Append(large))
    with pytest.raises(ls.SchemaMismatchError):
        ls.Dataset.commit(uri, ls.LanceOperation.Append(large), read_version=1)
    old = ls.fragment.write_fragments(
        _layout_table("utf8", 0), str(tmp_path / "x"), data_storage_version="2.1"
    )
    with pytest.raises(ValueError, match="data storage version"):
        ls.Dataset.commit(uri, ls.LanceOperation.Append(old), read_version=1)
    with pytest.raises(ValueError, match="same version"):
        ls.Dataset.commit(
            str(tmp_path / "y"),
            ls.LanceOperation.Overwrite(_layout_table("utf8", 0).schema, old + large),
        )
    assert ls.dataset(uri).version == ds.version == 1


def test_fragment_metadata_is_pylance_shaped() -> None:
    f = ls.fragment.FragmentMetadata(
        0, (ls.fragment.DataFile("a.lance", (0, 1), (0, 1), 2, 2, 10),), 5
    )
    assert (f.id, f.physical_rows, f.num_rows, f.num_deletions, f.deletion_file) == (
        0,
        5,
        5,
        0,
        None,
    )
    assert f.files[0].path == "a.lance"
    theirs = lance.fragment.FragmentMetadata.from_json(json.dumps(f.to_json()))
    assert (theirs.id, theirs.physical_rows, theirs.files[0].path) == (0, 5, "a.lance")
    back = ls.fragment.FragmentMetadata.from_json(json.dumps(theirs.to_json()))
    assert back == f
    with pytest.raises(TypeError, match="fragments must"):
        ls.LanceOperation.Append(["not a fragment"])  # type: ignore[list-item]


#: pylance's FragmentMetadata names we do not model: stable row ids, row versions, overlays
_UNMODELLED = {"row_id_meta", "created_at_version_meta", "last_updated_at_version_meta", "overlays"}


def test_fragment_handle_metadata_has_pylance_surface(tmp_path: Path) -> None:
    """``get_fragment(i).metadata`` is a FragmentMetadata, as pylance's: every public name
    of pylance's (but the unmodelled ones) is there, and gives what pylance's gives, for
    fragments with and without deletions."""
    uri = str(tmp_path / "t")
    lance.write_dataset(_layout_table("utf8", 0), uri, max_rows_per_file=2)
    lance.dataset(uri).delete("id = 1")
    ours, theirs = ls.dataset(uri), lance.dataset(uri)
    names = {n for n in dir(theirs.get_fragments()[0].metadata) if not n.startswith("_")}
    for a, b in zip(ours.get_fragments(), theirs.get_fragments(), strict=True):
        mine, their = a.metadata, b.metadata
        assert isinstance(mine, ls.fragment.FragmentMetadata)
        assert not names - _UNMODELLED - set(dir(mine))
        assert (mine.id, mine.physical_rows, mine.num_rows, mine.num_deletions) == (
            their.id,
            their.physical_rows,
            their.num_rows,
            their.num_deletions,
        )
        with pytest.warns(DeprecationWarning, match="data_files is deprecated"):
            their_files = their.data_files()
        with pytest.warns(DeprecationWarning, match="data_files is deprecated"):
            assert [f.path for f in mine.data_files()] == [f.path for f in their_files]
        j, k = mine.to_json(), their.to_json()
        assert j["files"] == k["files"] and j["deletion_file"] == k["deletion_file"]
        # what a worker does with it: JSON out, back in, committed by either library
        back = ls.fragment.FragmentMetadata.from_json(json.dumps(j))
        assert ls.fragment.FragmentMetadata.from_json(json.dumps(k)) == back
    old = [f.metadata for f in ours.get_fragments()]
    again = [ls.fragment.FragmentMetadata.from_json(json.dumps(f.to_json())) for f in old]
    done = ls.Dataset.commit(
        uri, ls.LanceOperation.Delete(again[:1], [again[1].id], "id < 4"), read_version=2
    )
    assert done.to_table().equals(lance.dataset(uri).to_table())
    assert done.to_table()["id"].to_pylist() == [0]


@pytest.mark.parametrize("raw", [b"\x2a\x02\x0a\x00", b"\x4a\x01\x01", b"\x2a\x00\x4a\x00"])
def test_fragment_metadata_json_keeps_unmodelled_fields(raw: bytes) -> None:
    """A fragment's unmodelled protobuf fields (row-id sequences, row versions) survive its
    JSON (nothing lost on the way to a worker and back), and pylance still reads the JSON."""
    f = ls.fragment.FragmentMetadata(
        3, (ls.fragment.DataFile("a.lance", (0,), (0,), 2, 2, 10),), 5, passthrough=raw
    )
    text = json.dumps(f.to_json())
    back = ls.fragment.FragmentMetadata.from_json(text)
    assert back == f and back.passthrough == raw
    theirs = lance.fragment.FragmentMetadata.from_json(text)
    assert (theirs.id, theirs.physical_rows, theirs.files[0].path) == (3, 5, "a.lance")
    plain = ls.fragment.FragmentMetadata(3, f.files, 5)
    assert "passthrough" not in plain.to_json()  # (pylance's keys only, when there is none)


def test_other_operations_commit(tmp_path: Path) -> None:
    """Restore, UpdateConfig, Delete and a Rewrite of id-less fragments (ids reserved)."""
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_layout_table("utf8", 0), uri, max_rows_per_file=2)
    ds.insert(_layout_table("utf8", 10))
    cfg = ls.LanceOperation.UpdateConfig(config_updates=ls.LanceOperation.UpdateMap({"k": "v"}))
    ds = ls.Dataset.commit(uri, cfg, read_version=ds.version)
    assert dict(ds.manifest.config)["k"] == "v"
    old = [f.metadata for f in ds.get_fragments()]
    new = ls.fragment.write_fragments(ds.to_table(), uri)
    ds = ls.Dataset.commit(
        uri,
        ls.LanceOperation.Rewrite([ls.LanceOperation.RewriteGroup(old, new)]),
        read_version=ds.version,
    )
    assert len(ds.get_fragments()) == 1 and ds.get_fragments()[0].fragment_id == 3
    assert sorted(ds.to_table()["id"].to_pylist()) == [0, 1, 2, 3, 10, 11, 12, 13]
    theirs = lance.dataset(uri)
    assert theirs.to_table().equals(ds.to_table())
    frag = ds.get_fragments()[0].metadata
    delete = ls.LanceOperation.Delete([], [frag.id], "true")
    ds = ls.Dataset.commit(uri, delete, read_version=ds.version)
    assert ds.count_rows() == 0
    ds = ls.Dataset.commit(uri, ls.LanceOperation.Restore(2))
    assert ds.count_rows() == 8 and lance.dataset(uri).count_rows() == 8


#: passthrough bytes a fragment's JSON must not carry: each would change or hide what the
#: fragment records once merged into its manifest entry
_HOSTILE = {
    "garbage": bytes(range(256)),
    "explicit id 0": b"\x08\x00",
    "id": b"\x08\x07",
    "a data file": b"\x12\x03\x0a\x01\x61",
    "deletion file": b"\x1a\x00",
    "physical rows": b"\x20\x05",
    "unknown field 99": b"\x98\x06\x01",
    "mistyped field 5": b"\x28\x01",
    "truncated": b"\x2a\x05\x0a",
    "group wire type": b"\x2b\x2c",
}


@pytest.mark.parametrize("name", sorted(_HOSTILE))
def test_fragment_json_refuses_hostile_passthrough(name: str, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_layout_table("utf8", 0), uri)
    data = dict(ds.get_fragment(0).metadata.to_json())
    data["passthrough"] = base64.b64encode(_HOSTILE[name]).decode()
    with pytest.raises(ValueError, match="passthrough"):
        ls.fragment.FragmentMetadata.from_json(json.dumps(data))
    for text in ("not base64!", 7):
        with pytest.raises(ValueError, match="passthrough"):
            ls.fragment.FragmentMetadata.from_json(dict(data, passthrough=text))
    assert ls.dataset(uri).version == 1


def test_fragment_json_passthrough_fuzz_never_changes_what_is_recorded(tmp_path: Path) -> None:
    """Random passthrough bytes: refused, or recorded in a manifest with the fragment's id,
    files, deletion file and row count what the JSON says, and the bytes kept."""
    rng = random.Random(13)
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_layout_table("utf8", 0), uri)
    base = dict(ds.get_fragment(0).metadata.to_json())
    pieces = [b"\x2a\x02\x0a\x00", b"\x4a\x01\x01", b"\x08\x00", b"\x20\x01", b"\x2a"]
    accepted = 0
    for _ in range(300):
        raw = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:
            raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        data = dict(base, passthrough=base64.b64encode(raw).decode())
        try:
            f = ls.fragment.FragmentMetadata.from_json(json.dumps(data))
        except ValueError:
            continue
        accepted += 1
        # as a manifest records it: the passthrough merged into the fragment's entry
        manifest = replace(ds.manifest, fragments=(plain(f),))
        got = decode_manifest_file(encode_manifest_file(manifest)).fragments[0]
        assert (got.id, got.files, got.physical_rows, got.deletion_file) == (
            0,
            ds.get_fragment(0).metadata.files,
            4,
            None,
        )
        assert got.passthrough == f.passthrough  # (canonical: what the manifest records)
        assert tpb.DataFragment.FromString(got.passthrough) == tpb.DataFragment.FromString(raw)
    assert accepted  # (the well-formed sequences got through)


def _missing_fragment_ops(lib: Any, ghost: Any) -> list[Any]:
    op = lib.LanceOperation
    return [
        op.Delete(updated_fragments=[ghost], deleted_fragment_ids=[], predicate="id < 0"),
        op.Delete(updated_fragments=[], deleted_fragment_ids=[99], predicate="id < 0"),
        op.Update(updated_fragments=[ghost], removed_fragment_ids=[], new_fragments=[]),
        op.Update(updated_fragments=[], removed_fragment_ids=[99], new_fragments=[]),
    ]


def test_delete_and_update_of_missing_fragments_commit_as_pylance(tmp_path: Path) -> None:
    """A Delete or Update naming a fragment the table lacks (updated or removed) commits a
    version with the table's fragments unchanged, as pylance does (a Rewrite refuses)."""
    got = {}
    for name, lib in (("pylance", lance), ("ours", ls)):
        uri = str(tmp_path / name)
        lance.write_dataset(_layout_table("utf8", 0), uri, max_rows_per_file=2)
        meta = dict(lance.dataset(uri).get_fragments()[0].metadata.to_json(), id=99)
        fragment = lance.fragment.FragmentMetadata if lib is lance else ls.fragment.FragmentMetadata
        ghost = fragment.from_json(json.dumps(meta))
        for op in _missing_fragment_ops(lib, ghost):
            commit = lance.LanceDataset.commit if lib is lance else ls.Dataset.commit
            commit(uri, op, read_version=lance.dataset(uri).version)
        got[name] = uri
    for reader in (lance.dataset, ls.dataset):
        a, b = reader(got["pylance"]), reader(got["ours"])
        assert a.version == b.version == 5
        assert [f.fragment_id for f in a.get_fragments()] == [0, 1]
        assert [f.fragment_id for f in b.get_fragments()] == [0, 1]
        assert a.to_table().equals(b.to_table())
