"""``ls.check`` / ``lance-semantic check``: a sound table is ok after every operation, each
kind of damage is one problem with its code and path, everything pylance's ``validate()``
catches is caught, and the contract's invariants it cannot know (data file layouts on a
flagged table, output-encoding entries) are checked too. Check never writes."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

import lance
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main
from lance_semantic.commit.committer import list_versions
from lance_semantic.manifest import flags
from lance_semantic.manifest.codec import (
    decode_manifest_file,
    encode_manifest_file,
    read_inline_transaction,
)
from lance_semantic.manifest.model import Manifest
from lance_semantic.schema.field import freeze_metadata
from lance_semantic.storage.object_store import LocalObjectStore


def _table(tmp_path: Path, version: str = "2.3") -> str:
    """Two fragments, one with a deletion file; string, struct and list columns."""
    uri = str(tmp_path / "t")
    rows = {
        "id": list(range(10)),
        "s": [f"v{i}" for i in range(10)],
        "st": [{"a": i, "b": str(i)} for i in range(10)],
        "l": [[i] * (i % 3) for i in range(10)],
    }
    ds = ls.write_dataset(pa.table(rows), uri, data_storage_version=version, max_rows_per_file=6)
    ds.delete("id = 2 OR id = 3")
    return uri


def _tree(uri: str) -> dict[str, tuple[int, int]]:
    out = {}
    for d, _, files in os.walk(uri):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            out[os.path.relpath(p, uri)] = (st.st_size, st.st_mtime_ns)
    return out


def _latest_manifest_path(uri: str) -> str:
    versions = list_versions(LocalObjectStore(uri))
    return os.path.join(uri, "_versions", versions[max(versions)])


def _edit(uri: str, change: Callable[[Manifest], Manifest]) -> None:
    path = _latest_manifest_path(uri)
    with open(path, "rb") as fh:
        data = fh.read()
    m = decode_manifest_file(data)
    with open(path, "wb") as fh:
        fh.write(encode_manifest_file(change(m), read_inline_transaction(data)))


def _pylance_catches(uri: str) -> bool:
    try:
        lance.dataset(uri).validate()
    except BaseException:  # noqa: BLE001 - pylance raises OSError, ValueError or panics
        return True
    return False


def _checked(uri: str) -> ls.CheckReport:
    before = _tree(uri)
    report = ls.check(uri)
    assert _tree(uri) == before  # check never writes
    return report


# ---- sound tables ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.2", "2.3"], ids=["legacy", "flagged"])
def test_check_a_sound_table_is_ok_after_every_operation(tmp_path: Path, version: str) -> None:
    uri = _table(tmp_path, version)
    ds = ls.dataset(uri)
    steps: list[tuple[str, Callable[[], object]]] = [
        ("create+delete", lambda: None),
        (
            "append",
            lambda: ds.insert(
                pa.table({"id": [20], "s": ["x"], "st": [{"a": 1, "b": "c"}], "l": [[1]]})
            ),
        ),
        ("update", lambda: ds.update({"s": "'u'"}, where="id > 5")),
        (
            "merge_insert",
            lambda: (
                ds.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(
                    pa.table(
                        {
                            "id": [1, 30],
                            "s": ["m", "n"],
                            "st": [{"a": 0, "b": ""}] * 2,
                            "l": [[], [2]],
                        }
                    )
                )
            ),
        ),
        ("add_columns", lambda: ds.add_columns({"k": "id * 2"})),
        ("alter_columns", lambda: ds.alter_columns({"path": "s", "name": "s2"})),
        ("drop_columns", lambda: ds.drop_columns(["k"])),
        ("compact", lambda: ds.optimize.compact_files(target_rows_per_fragment=100)),
        ("restore", lambda: ds.checkout_version(2).restore()),
    ]
    for name, step in steps:
        step()
        ds = ls.dataset(uri)
        report = _checked(uri)
        assert report.ok, (name, report.problems)
        assert report.version == ds.version
    if version == "2.2":
        ls.upgrade(uri)
        assert _checked(uri).ok


def test_check_a_pylance_table_is_ok(tmp_path: Path) -> None:
    uri = str(tmp_path / "p")
    t = pa.table({"id": list(range(100)), "s": [str(i) for i in range(100)]})
    pds = lance.write_dataset(t, uri, max_rows_per_file=40)
    pds.delete("id < 7")
    pds.create_scalar_index("id", "BTREE")
    report = _checked(uri)
    assert report.ok, report.problems
    assert report.to_dict() == {"uri": uri, "version": 3, "ok": True, "problems": []}


# ---- damage: one problem each, with its code and path -----------------------------------------


def _data_file(uri: str) -> str:
    return os.path.join(uri, "data", ls.dataset(uri).manifest.fragments[0].files[0].path)


def _deletion_file(uri: str) -> str:
    m = ls.dataset(uri).manifest
    frag = next(f for f in m.fragments if f.deletion_file is not None)
    assert frag.deletion_file is not None
    return os.path.join(uri, frag.deletion_file.path(frag.id))


def _remove_data_file(uri: str) -> str:
    path = _data_file(uri)
    os.unlink(path)
    return path


def _truncate_data_file(uri: str) -> str:
    path = _data_file(uri)
    os.truncate(path, os.path.getsize(path) // 2)
    return path


def _garbage_data_file(uri: str) -> str:
    path = _data_file(uri)
    size = os.path.getsize(path)
    with open(path, "wb") as fh:
        fh.write(b"\x5a" * size)
    return path


def _remove_deletion_file(uri: str) -> str:
    path = _deletion_file(uri)
    os.unlink(path)
    return path


def _garbage_deletion_file(uri: str) -> str:
    path = _deletion_file(uri)
    with open(path, "wb") as fh:
        fh.write(b"not an arrow file")
    return path


def _fragments(
    change: Callable[[list], list], where: Callable[[str], str] = _latest_manifest_path
) -> Callable[[str], str]:
    """Edit the fragments; ``where`` gives the path the problem names."""

    def damage(uri: str) -> str:
        path = where(uri)  # before: a damaged manifest no longer opens
        _edit(uri, lambda m: dataclasses.replace(m, fragments=tuple(change(list(m.fragments)))))
        return path

    return damage


def _more_rows(frags: list) -> list:
    return [dataclasses.replace(frags[0], physical_rows=frags[0].physical_rows + 1), *frags[1:]]


def _duplicate_id(frags: list) -> list:
    return [frags[0], dataclasses.replace(frags[1], id=frags[0].id)]


def _deleted_count(frags: list) -> list:
    out = []
    for f in frags:
        if f.deletion_file is not None:
            bad = dataclasses.replace(f.deletion_file, num_deleted_rows=f.physical_rows + 5)
            f = dataclasses.replace(f, deletion_file=bad)
        out.append(f)
    return out


def _deleted_count_differs(uri: str) -> str:
    def change(frags: list) -> list:
        out = []
        for f in frags:
            if f.deletion_file is not None:
                bad = dataclasses.replace(f.deletion_file, num_deleted_rows=1)
                f = dataclasses.replace(f, deletion_file=bad)
            out.append(f)
        return out

    return _fragments(change, _deletion_file)(uri)


def _deletion_offsets_past_end(uri: str) -> str:
    # the deleted rows (2, 3) are in the first fragment of 6 rows; say it has 3
    def change(frags: list) -> list:
        f = frags[0]
        return [dataclasses.replace(f, physical_rows=3), *frags[1:]]

    return _fragments(change, _deletion_file)(uri)


def _unknown_flag(uri: str) -> str:
    _edit(
        uri, lambda m: dataclasses.replace(m, reader_feature_flags=m.reader_feature_flags | 1 << 40)
    )
    return _latest_manifest_path(uri)


def _missing_transaction(uri: str) -> str:
    m = ls.dataset(uri).manifest
    path = os.path.join(uri, "_transactions", m.transaction_file)
    os.unlink(path)
    return path


def _garbage_manifest(uri: str) -> str:
    """Garbage over the inline transaction (pylance panics reading it) and the message."""
    path = _latest_manifest_path(uri)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.write(b"\xff" * 64)
        fh.seek(size // 2)
        fh.write(b"\xff" * 16)
    return path


def _field_count(uri: str) -> str:
    def change(frags: list) -> list:
        f = frags[0]
        df = dataclasses.replace(f.files[0], fields=f.files[0].fields[:-1])
        return [dataclasses.replace(f, files=(df,)), *frags[1:]]

    return _fragments(change)(uri)


def _escaping_path(uri: str) -> str:
    """The first data file named ``../../outside/x.lance`` (a real file out there)."""
    outside = os.path.join(os.path.dirname(uri), "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "x.lance"), "wb") as fh:
        fh.write(b"not ours")

    def change(frags: list) -> list:
        f = frags[0]
        df = dataclasses.replace(f.files[0], path="../../outside/x.lance")
        return [dataclasses.replace(f, files=(df,)), *frags[1:]]

    return _fragments(change)(uri)


DAMAGES = [
    pytest.param(_escaping_path, "path-escape", id="path escapes the table"),
    pytest.param(_remove_data_file, "missing-file", id="data file missing"),
    pytest.param(_truncate_data_file, "unreadable-file", id="data file truncated"),
    pytest.param(_garbage_data_file, "unreadable-file", id="data file garbage"),
    pytest.param(_remove_deletion_file, "missing-file", id="deletion file missing"),
    pytest.param(_garbage_deletion_file, "unreadable-file", id="deletion file garbage"),
    pytest.param(_fragments(_more_rows, _data_file), "row-count", id="physical_rows wrong"),
    pytest.param(_fragments(_duplicate_id), "duplicate-fragment-id", id="duplicate fragment id"),
    pytest.param(
        _fragments(_deleted_count, _deletion_file), "deletion-count", id="more deleted than rows"
    ),
    pytest.param(_deleted_count_differs, "deletion-count", id="deleted count differs"),
    pytest.param(_deletion_offsets_past_end, "deletion-offset", id="deletion offset past end"),
    pytest.param(_unknown_flag, "unknown-feature-flag", id="unknown flag"),
    pytest.param(_missing_transaction, "missing-file", id="transaction file missing"),
    pytest.param(_garbage_manifest, "manifest-corrupt", id="manifest garbage"),
    pytest.param(_field_count, "data-file-fields", id="data file field ids"),
]


@pytest.mark.parametrize("version", ["2.2", "2.3"], ids=["legacy", "flagged"])
@pytest.mark.parametrize(("damage", "code"), DAMAGES)
def test_check_reports_each_damage_with_its_code_and_path(
    tmp_path: Path, version: str, damage: Callable[[str], str], code: str
) -> None:
    uri = _table(tmp_path, version)
    assert _checked(uri).ok
    path = damage(uri)
    report = _checked(uri)
    assert not report.ok
    assert code in {p.code for p in report.problems}, report.problems
    assert any(p.code == code and p.path == path for p in report.problems), report.problems
    assert all(p.message for p in report.problems)


@pytest.mark.parametrize(("damage", "code"), DAMAGES)
def test_check_catches_everything_pylance_validate_catches(
    tmp_path: Path, damage: Callable[[str], str], code: str
) -> None:
    uri = _table(tmp_path, "2.2")
    damage(uri)
    if _pylance_catches(uri):
        assert not _checked(uri).ok


# ---- the contract's invariants pylance cannot know --------------------------------------------


def test_check_writer_boundary_invariant_a_refused_layout_in_a_data_file(tmp_path: Path) -> None:
    """A flagged table's data file holding int32 for a string field (what the pre-issue-11
    writer left behind) is a ``layout`` problem."""
    uri = _table(tmp_path, "2.3")
    m = ls.dataset(uri).manifest
    frag = m.fragments[0]
    df = frag.files[0]
    schema, _ = lance.file.LanceFileReader(_data_file(uri)).metadata().schema, None
    bad = pa.table(
        {
            name: (
                pa.array(range(frag.physical_rows), pa.int32())
                if name == "s"
                else pa.nulls(frag.physical_rows, schema.field(name).type)
            )
            for name in schema.names
        }
    )
    name = "bad.lance"
    with lance.file.LanceFileWriter(
        os.path.join(uri, "data", name), bad.schema, version="2.1"
    ) as w:
        w.write_batch(bad)
    _edit(
        uri,
        lambda m: dataclasses.replace(
            m,
            fragments=(
                dataclasses.replace(frag, files=(dataclasses.replace(df, path=name),)),
                *m.fragments[1:],
            ),
        ),
    )
    report = _checked(uri)
    problems = [p for p in report.problems if p.code == "layout"]
    assert len(problems) == 1 and "'s'" in problems[0].message, report.problems
    assert problems[0].path == os.path.join(uri, "data", name)
    assert _pylance_catches(uri)  # pylance's validate() sees the type mismatch too


def test_check_index_field_ids_exist(tmp_path: Path) -> None:
    """An index on a field the schema no longer has (what drop_columns used to leave)
    is an ``index-field`` problem; pylance's filtered reads fail on such a table."""
    uri = str(tmp_path / "p")
    pds = lance.write_dataset(pa.table({"id": list(range(50)), "x": list(range(50))}), uri)
    pds.create_scalar_index("id", "BTREE")
    assert _checked(uri).ok
    _edit(
        uri,
        lambda m: dataclasses.replace(
            m,
            schema=dataclasses.replace(
                m.schema, fields=tuple(f for f in m.schema.fields if f.name != "id")
            ),
        ),
    )
    report = _checked(uri)
    assert [(p.code, p.path) for p in report.problems] == [
        ("index-field", _latest_manifest_path(uri))
    ]
    with pytest.raises(BaseException, match="field"):  # noqa: PT011 - pylance's OSError
        lance.dataset(uri).to_table(filter="x < 3")


def test_check_output_encoding_entries_are_valid(tmp_path: Path) -> None:
    uri = _table(tmp_path, "2.3")

    def change(m: Manifest) -> Manifest:
        fields = []
        for f in m.schema.fields:
            if f.name == "s":
                md = dict(f.metadata)
                md["lance-schema:output-encoding"] = b"decimal128"
                f = dataclasses.replace(f, metadata=freeze_metadata(md))
            fields.append(f)
        return dataclasses.replace(m, schema=dataclasses.replace(m.schema, fields=tuple(fields)))

    _edit(uri, change)
    report = _checked(uri)
    assert [(p.code, p.path) for p in report.problems] == [("output-encoding", "s")]


def test_check_an_old_version_and_a_missing_one(tmp_path: Path) -> None:
    uri = _table(tmp_path, "2.3")
    _remove_deletion_file(uri)  # version 2's deletion file; version 1 has none
    assert not ls.check(uri).ok
    assert ls.check(uri, version=1).ok
    missing = ls.check(uri, version=9)
    assert [p.code for p in missing.problems] == ["version-missing"]
    assert [p.code for p in ls.check(str(tmp_path / "none")).problems] == ["not-a-table"]
    with pytest.raises(ls.NotSupportedYetError, match="tag"):
        ls.check(uri, version="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ls.check(123)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ls.check(uri, version=-1)


# ---- the command ------------------------------------------------------------------------------


def test_check_command_exit_status_lines_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = _table(tmp_path, "2.3")
    assert main(["check", uri]) == 0
    assert capsys.readouterr().out.strip() == f"{uri} version 2: ok"
    data = _remove_deletion_file(uri)  # version 2's; version 1 has none
    _unknown_flag(uri)
    assert main(["check", uri]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert any(line.startswith("missing-file: " + data) for line in lines)
    assert any(line.startswith("unknown-feature-flag: ") for line in lines)
    assert main(["check", uri, "--json", "--version", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert main(["check", uri, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert {p["code"] for p in report["problems"]} == {"missing-file", "unknown-feature-flag"}
    assert main(["check", uri, "--storage-option", "nonsense"]) == 1
    assert "K=V" in capsys.readouterr().err
    assert flags.flag_names(1 << 40) == ["bit40"]


# ---- blob sidecars ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.2", "2.3"], ids=["legacy", "flagged"])
def test_check_blob_descriptors_point_at_bytes_that_exist(tmp_path: Path, version: str) -> None:
    from lance.blob import blob_array, blob_field

    values = [b"a" * 10, b"b" * 200_000, None, b"c" * 5_000_000]  # inline, packed, dedicated
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("clip")])
    table = pa.table({"id": pa.array(range(4)), "clip": blob_array(values)}, schema=schema)
    uri = str(tmp_path / "b")
    ls.write_dataset(table, uri, data_storage_version=version)
    assert _checked(uri).ok
    sidecars = sorted(str(p) for p in Path(uri, "data").glob("*/*.blob"))
    assert len(sidecars) == 2
    os.truncate(sidecars[0], 100)
    os.unlink(sidecars[1])
    report = _checked(uri)
    assert sorted((p.code, p.path) for p in report.problems) == sorted(
        [("blob-range", sidecars[0]), ("missing-file", sidecars[1])]
    )
