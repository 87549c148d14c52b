"""Spec "Compatibility and Migration: Upgrade" and the first "Validation" bullet, whole:
an upgraded legacy table reads back the same Arrow types, values and field ids as before the
upgrade, in one metadata-only commit, after which older clients refuse it. Plus restores
("Once set, the flag remains set in all later versions, including restores") and the legacy
type with no canonical form (a dictionary of non-string values).
"""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main
from lance_semantic.manifest.codec import read_inline_transaction
from lance_semantic.storage.paths import parse_manifest_name

ROOT = Path(__file__).resolve().parents[2]
FLAG = ls.FLAG_SEMANTIC_TYPES
REFUSED = "cannot be read by this version of Lance"

ITEM = pa.struct([("k", pa.int32()), ("v", pa.string())])


def legacy_rows(start: int, n: int) -> pa.Table:
    """Every legacy alias of the spec's upgrade table, plus plain string and int columns."""
    r = range(start, start + n)
    return pa.table(
        {
            "id": pa.array(r, pa.int64()),
            "s": pa.array([f"s{i}" if i % 4 else None for i in r], pa.string()),
            "ls": pa.array([f"large{i}" * (i % 3) for i in r], pa.large_string()),
            "lb": pa.array([bytes([i % 256]) * (i % 5) for i in r], pa.large_binary()),
            "ll": pa.array([[i, i + 1][: i % 3] for i in r], pa.large_list(pa.int64())),
            "lls": pa.array([[{"k": i, "v": f"v{i}"}] for i in r], pa.large_list(ITEM)),
            "lst": pa.array([[{"k": i, "v": None}] * (i % 2) for i in r], pa.list_(ITEM)),
            "dict": pa.array([f"d{i % 3}" for i in r]).dictionary_encode(),
            "dict16": pa.array([f"e{i % 2}" for i in r], pa.large_string())
            .dictionary_encode()
            .cast(pa.dictionary(pa.int16(), pa.large_string())),
            "dec": pa.array([Decimal(i) / 100 for i in r], pa.decimal256(10, 2)),
            "dec128": pa.array([Decimal(i) / 10 for i in r], pa.decimal128(12, 1)),
            "dec76": pa.array([Decimal(i) * 10**40 for i in r], pa.decimal256(60, 0)),
        }
    )


def data_files(uri: str) -> dict[str, tuple[int, int]]:
    """Every file under data/ with its size and modification time."""
    out = {}
    for dirpath, _dirs, files in os.walk(os.path.join(uri, "data")):
        for name in files:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), uri)] = (st.st_size, st.st_mtime_ns)
    return out


def field_ids(fields: Any, prefix: str = "") -> list[tuple[int, str]]:
    """(id, path) of every pylance ``LanceField``, walked through ``children()``."""
    out = []
    for f in fields:
        path = prefix + f.name()
        out.append((f.id(), path))
        out += field_ids(f.children(), path + ".")
    return out


def transaction(uri: str, version: int) -> Any:
    vdir = os.path.join(uri, "_versions")
    name = next(n for n in os.listdir(vdir) if (parse_manifest_name(n) or (0,))[0] == version)
    with open(os.path.join(vdir, name), "rb") as f:
        return read_inline_transaction(f.read())


def plain(t: pa.Table) -> pa.Table:
    """Dictionaries decoded, so values compare whatever dictionary each batch carries."""
    cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in t.columns]
    return pa.table(cols, names=t.column_names)


def assert_same_read(got: pa.Table, want: pa.Table) -> None:
    assert got.schema.types == want.schema.types, (got.schema, want.schema)
    assert got.schema.names == want.schema.names
    assert plain(got).equals(plain(want))


@pytest.fixture(params=["2.1", "2.2"])
def legacy(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A legacy table written by pylance: two fragments, every legacy alias."""
    uri = str(tmp_path / "legacy")
    lance.write_dataset(legacy_rows(0, 20), uri, data_storage_version=request.param)
    lance.write_dataset(legacy_rows(20, 7), uri, mode="append")
    return uri


# ---- upgrade -----------------------------------------------------------------------------------


def test_validation_upgraded_legacy_table_reads_back_the_same(legacy: str) -> None:
    before = lance.dataset(legacy)
    want_schema, want_rows = before.schema, before.to_table()
    want_ids = field_ids(before.lance_schema.fields())
    want_files = data_files(legacy)
    logical = {f.path: f.logical_type for f in ls.dataset(legacy).semantic_schema}
    assert {logical[k] for k in ("ls", "lb", "ll", "lls", "lst", "dict", "dec", "dec76")} == {
        "large_string",
        "large_binary",
        "large_list",
        "large_list.struct",
        "list.struct",
        "dict:string:int32:false",
        "decimal:256:10:2",
        "decimal:256:60:0",
    }
    assert not ls.dataset(legacy).semantic_types

    ds = ls.upgrade(legacy)

    # one metadata-only commit, then the flag, in both words
    assert ds.version == before.version + 1
    assert ds.semantic_types
    assert ds.feature_flags.reader & FLAG and ds.feature_flags.writer & FLAG
    txn = transaction(legacy, ds.version)
    assert type(txn.operation).__name__ == "Project"
    assert txn.read_version == before.version
    assert data_files(legacy) == want_files  # no data file written, rewritten or touched
    assert ds.manifest.fragments == ls.dataset(legacy, version=before.version).manifest.fragments

    # canonical names plus the output encoding that reproduces today's read type
    got = {f.path: (f.logical_type, f.output_encoding) for f in ds.semantic_schema}
    assert got["s"] == ("string", None)
    assert got["ls"] == ("string", "large_utf8")
    assert got["lb"] == ("binary", "large_binary")
    assert got["ll"] == ("list", "large_list")
    assert got["lls"] == ("list", "large_list")
    assert got["lst"] == ("list", None)
    assert got["dict"] == ("string", "dictionary:int32:utf8")
    assert got["dict16"] == ("string", "dictionary:int16:large_utf8")
    assert got["dec"] == ("decimal:10:2", "decimal256")
    assert got["dec128"] == ("decimal:12:1", None)
    assert got["dec76"] == ("decimal:60:0", None)  # decimal256 is already the default

    # the same Arrow types, values and field ids as pylance read before the upgrade
    for reopened in (ds, ls.dataset(legacy)):
        assert reopened.schema.types == want_schema.types
        assert reopened.schema.names == want_schema.names
        assert_same_read(reopened.to_table(), want_rows)
        assert [(f.id, f.path) for f in reopened.semantic_schema] == want_ids
        assert_same_read(reopened.take([0, 26, 3]), before.take([0, 26, 3]))
        assert reopened.count_rows() == 27
    # and the same as our own read of the legacy version
    assert_same_read(ls.dataset(legacy, version=before.version).to_table(), want_rows)

    # older clients now refuse the table with the "unsupported" feature-flag error
    with pytest.raises(Exception, match=REFUSED):
        lance.dataset(legacy)
    # the legacy version itself is still readable by them
    assert_same_read(lance.dataset(legacy, version=before.version).to_table(), want_rows)


def test_upgraded_table_accepts_other_layouts_and_keeps_its_read_types(legacy: str) -> None:
    ds = ls.upgrade(legacy)
    want = ds.schema
    more = legacy_rows(27, 3)
    more = more.set_column(2, "ls", more.column("ls").cast(pa.string_view()))  # was refused
    more = more.set_column(4, "ll", more.column("ll").cast(pa.list_(pa.int64())))
    ds.insert(more)
    got = ls.dataset(legacy).to_table()
    assert got.schema.types == want.types
    assert got.column("ls").to_pylist()[27:] == legacy_rows(27, 3).column("ls").to_pylist()
    assert got.num_rows == 30


def test_upgrade_through_the_dataset_method(legacy: str) -> None:
    ds = ls.dataset(legacy)
    v = ds.version
    assert ds.upgrade_semantic_types() is ds
    assert ds.version == v + 1 and ds.semantic_types


def test_upgrading_a_flagged_table_is_a_no_op(tmp_path: Path, legacy: str) -> None:
    uri = str(tmp_path / "flagged")
    ds = ls.write_dataset(legacy_rows(0, 5), uri, data_storage_version="2.3")
    assert ds.semantic_types and ds.version == 1
    before = os.listdir(os.path.join(uri, "_versions"))
    assert ls.upgrade(uri).version == 1
    assert ls.dataset(uri).upgrade_semantic_types().version == 1
    assert ls.dataset(uri).version == 1
    assert os.listdir(os.path.join(uri, "_versions")) == before
    # an upgraded table too
    v = ls.upgrade(legacy).version
    assert ls.upgrade(legacy).version == v == ls.dataset(legacy).version


def test_cli_upgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = str(tmp_path / "legacy")
    lance.write_dataset(legacy_rows(0, 5), uri)
    files = data_files(uri)
    # the real command line once (a subprocess costs seconds of imports), then in-process
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "lance_semantic.cli.main", "upgrade", uri, "--yes"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "version 1 -> 2" in done.stdout
    ds = ls.dataset(uri)
    assert ds.semantic_types and ds.version == 2
    assert data_files(uri) == files
    assert main(["upgrade", uri, "--yes"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert ls.dataset(uri).version == 2
    assert main(["upgrade", uri + "-missing", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_dictionary_of_non_string_values_refuses_the_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = str(tmp_path / "dict")
    t = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "di": pa.DictionaryArray.from_arrays(
                pa.array([0, 1, 0], pa.int16()), pa.array([10, 20], pa.int64())
            ),
        }
    )
    lance.write_dataset(t, uri)
    ds = ls.dataset(uri)
    assert ds.semantic_schema.field("di").logical_type == "dict:int64:int16:false"
    listing = sorted(os.listdir(uri)), sorted(os.listdir(os.path.join(uri, "_versions")))
    with pytest.raises(ls.UnsupportedTypeError, match="di") as err:
        ls.upgrade(uri)
    assert "dict:int64:int16:false" in str(err.value) or "int64" in str(err.value)
    with pytest.raises(ls.UnsupportedTypeError):
        ds.upgrade_semantic_types()
    # nothing committed: same version, no new manifest, pylance still reads it
    assert ds.version == 1 and ls.dataset(uri).version == 1
    assert (sorted(os.listdir(uri)), sorted(os.listdir(os.path.join(uri, "_versions")))) == listing
    assert lance.dataset(uri).to_table().equals(t)
    assert main(["upgrade", uri, "--yes"]) == 1
    assert "di" in capsys.readouterr().err
    assert ls.dataset(uri).version == 1


# ---- restore -----------------------------------------------------------------------------------


def test_restore_commits_an_old_version_as_the_newest(legacy: str) -> None:
    ds = ls.dataset(legacy)
    first = ds.checkout_version(1)
    want = first.to_table()
    restored = first.restore()
    assert restored.version == 3 and ls.dataset(legacy).version == 3
    assert type(transaction(legacy, 3).operation).__name__ == "Restore"
    assert_same_read(ls.dataset(legacy).to_table(), want)
    assert ls.dataset(legacy).count_rows() == 20
    # a legacy restore stays legacy and pylance reads it as its own restore
    assert not restored.semantic_types
    assert_same_read(lance.dataset(legacy).to_table(), want)


def test_restoring_a_pre_upgrade_version_keeps_the_flag(legacy: str) -> None:
    before = lance.dataset(legacy)
    legacy_version, want_schema, want = before.version, before.schema, before.to_table()
    ds = ls.upgrade(legacy)
    ds.insert(legacy_rows(27, 3).set_column(2, "ls", pa.array(["x", "y", "z"], pa.string_view())))
    latest = ds.version

    restored = ls.dataset(legacy).checkout_version(legacy_version).restore()

    assert restored.version == latest + 1
    assert restored.feature_flags.reader & FLAG and restored.feature_flags.writer & FLAG
    reopened = ls.dataset(legacy)
    assert reopened.semantic_types and reopened.version == latest + 1
    # flagged writers write only canonical names: the restore rewrote the old schema's
    # legacy aliases as the upgrade does (canonical type plus the implied output encoding)
    got = {f.path: (f.logical_type, f.output_encoding) for f in reopened.semantic_schema}
    assert got == {f.path: (f.logical_type, f.output_encoding) for f in ds.semantic_schema}
    assert got["ls"] == ("string", "large_utf8") and got["dec"] == ("decimal:10:2", "decimal256")
    assert got["dict"] == ("string", "dictionary:int32:utf8")
    assert [f.id for f in reopened.semantic_schema] == [f.id for f in ds.semantic_schema]
    assert reopened.schema.types == want_schema.types
    assert_same_read(reopened.to_table(), want)
    assert reopened.count_rows() == 27
    with pytest.raises(Exception, match=REFUSED):
        lance.dataset(legacy)
    # and it is a flagged table in every respect: appends of other layouts, output encodings
    reopened.insert(legacy_rows(40, 2).set_column(1, "s", pa.array(["p", "q"], pa.large_string())))
    got = ls.dataset(legacy).to_table()
    assert got.schema.types == want_schema.types and got.num_rows == 29
    assert got.column("s").to_pylist()[-2:] == ["p", "q"]
    assert ls.dataset(legacy).to_table(output_encodings={"ls": "utf8"}).column("ls").type == (
        pa.string()
    )
    # restoring the upgraded version again, or any later one, keeps the flag too
    again = ls.dataset(legacy).checkout_version(legacy_version + 1).restore()
    assert again.semantic_types


def test_restore_then_upgrade_again_is_a_no_op(legacy: str) -> None:
    v = lance.dataset(legacy).version
    ls.upgrade(legacy)
    restored = ls.dataset(legacy).checkout_version(v).restore()
    assert ls.upgrade(legacy).version == restored.version
