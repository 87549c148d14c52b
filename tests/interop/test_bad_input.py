"""Bad input: missing / existing tables, damaged manifests, appends of the wrong types, JSON
columns and the CLI on good and bad tables. pylance 14 is the oracle where it has an opinion
(it refuses the same appends, and it cannot open the same damaged manifests either).

Every refused write must leave the table exactly as it was: same version, no new manifest,
no data file left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main as cli_main
from lance_semantic.errors import (
    CorruptManifestError,
    DatasetExistsError,
    DatasetNotFoundError,
    SchemaMismatchError,
)
from lance_semantic.storage.paths import parse_manifest_name

pytestmark = pytest.mark.interop

SRC = str(Path(ls.__file__).resolve().parents[1])


def _base() -> pa.Table:
    return pa.table(
        {
            "a": pa.array([1, 2, 3], pa.int64()),
            "s": pa.array(["x", None, "z"]),
            "st": pa.array(
                [{"x": 1, "y": 1.5}, {"x": 2, "y": None}, {"x": 3, "y": 0.5}],
                pa.struct([("x", pa.int32()), ("y", pa.float64())]),
            ),
        }
    )


def _snapshot(uri: str) -> dict[str, list[str]]:
    """Every file of the table directory (``_transactions`` excluded: pylance too leaves the
    transaction of a failed commit behind), by folder."""
    out = {}
    for folder in ("_versions", "data", "_deletions"):
        path = os.path.join(uri, folder)
        out[folder] = sorted(os.listdir(path)) if os.path.isdir(path) else []
    return out


def _latest_manifest(uri: str) -> str:
    vdir = os.path.join(uri, "_versions")
    versions = {p[0]: n for n in os.listdir(vdir) if (p := parse_manifest_name(n)) is not None}
    return os.path.join(vdir, versions[max(versions)])


@pytest.fixture(params=["ours", "pylance"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A two-version table (create + append) written by either library."""
    uri = str(tmp_path / "t")
    if request.param == "ours":
        ls.write_dataset(_base(), uri)
        ls.write_dataset(_base(), uri, mode="append")
    else:
        lance.write_dataset(_base(), uri)
        lance.write_dataset(_base(), uri, mode="append")
    return uri


# ---- missing and existing tables -------------------------------------------------------------


def test_missing_table(tmp_path: Path) -> None:
    uri = str(tmp_path / "nope")
    with pytest.raises(DatasetNotFoundError) as info:
        ls.dataset(uri)
    assert info.value.uri == uri
    assert uri in str(info.value)
    assert not os.path.exists(uri)  # opening never creates anything
    with pytest.raises(Exception):  # noqa: B017 - the oracle agrees
        lance.dataset(uri)


def test_empty_directory_is_not_a_table(tmp_path: Path) -> None:
    (tmp_path / "empty" / "_versions").mkdir(parents=True)
    with pytest.raises(DatasetNotFoundError):
        ls.dataset(str(tmp_path / "empty"))


def test_missing_version(table: str) -> None:
    with pytest.raises(DatasetNotFoundError) as info:
        ls.dataset(table, version=9)
    assert "9" in str(info.value)
    with pytest.raises(DatasetNotFoundError):
        ls.dataset(table).checkout_version(3)


def test_create_over_existing_table(table: str) -> None:
    before = _snapshot(table)
    with pytest.raises(DatasetExistsError) as info:
        ls.write_dataset(_base(), table)
    assert info.value.uri == table
    with pytest.raises(DatasetExistsError):
        ls.write_dataset(_base(), table, mode="create")
    assert _snapshot(table) == before
    assert ls.dataset(table).version == lance.dataset(table).version == 2
    assert lance.dataset(table).count_rows() == 6


# ---- damaged manifests -----------------------------------------------------------------------


def _damage(uri: str, how: str) -> str:
    path = _latest_manifest(uri)
    data = Path(path).read_bytes()
    if how == "truncated":
        damaged = data[: len(data) // 2]
    elif how == "tiny":
        damaged = data[:7]
    elif how == "empty":
        damaged = b""
    elif how == "garbage":
        damaged = bytes((i * 37 + 11) % 256 for i in range(300))
    elif how == "garbage_protobuf":  # valid framing around bytes that are no Manifest message
        body = b"\xff" * 40
        damaged = (
            len(body).to_bytes(4, "little")
            + body
            + (0).to_bytes(8, "little")
            + b"\x00\x00\x02\x00LANC"
        )
    else:  # pragma: no cover
        raise ValueError(how)
    Path(path).write_bytes(damaged)
    return path


@pytest.mark.parametrize("how", ["truncated", "tiny", "empty", "garbage", "garbage_protobuf"])
def test_corrupt_manifest(table: str, how: str) -> None:
    path = _damage(table, how)
    with pytest.raises(Exception):  # noqa: B017 - pylance cannot open it either
        lance.dataset(table).to_table()
    with pytest.raises(CorruptManifestError) as info:
        ls.dataset(table)
    err = info.value
    assert os.path.basename(err.path) == os.path.basename(path)
    assert os.path.basename(path) in str(err)
    assert "\n" not in str(err)
    # the versions before it are intact
    assert ls.dataset(table, version=1).count_rows() == 3


# ---- appends of the wrong types --------------------------------------------------------------

MISMATCHES = [
    # (column replaced, new array, field path, table type, input type)
    ("a", pa.array([1.0], pa.float64()), "a", "int64", "double"),
    ("a", pa.array([1], pa.int32()), "a", "int64", "int32"),
    ("s", pa.array(["q"], pa.large_string()), "s", "string", "large_string"),
    (
        "st",
        pa.array([{"x": 1, "y": 2.0}], pa.struct([("x", pa.int64()), ("y", pa.float64())])),
        "st.x",
        "int32",
        "int64",
    ),
]


def _replace(column: str, array: pa.Array) -> pa.Table:
    base = _base().slice(0, 1)
    i = base.schema.get_field_index(column)
    return base.set_column(i, column, array)


@pytest.mark.parametrize(("column", "array", "path", "table_type", "input_type"), MISMATCHES)
def test_append_with_mismatched_type(
    table: str, column: str, array: pa.Array, path: str, table_type: str, input_type: str
) -> None:
    bad = _replace(column, array)
    before = _snapshot(table)
    with pytest.raises(Exception, match="(?i)schema"):  # the oracle refuses the same append
        lance.write_dataset(bad, table, mode="append")
    assert _snapshot(table) == before

    ds = ls.dataset(table)
    with pytest.raises(SchemaMismatchError) as info:
        ds.insert(bad)
    err = info.value
    assert (err.field_path, err.table_type, err.input_type) == (path, table_type, input_type)
    with pytest.raises(SchemaMismatchError):
        ls.write_dataset(bad, table, mode="append")

    assert ds.version == 2
    assert _snapshot(table) == before  # no manifest, no orphan data file
    assert lance.dataset(table).version == ls.dataset(table).version == 2
    assert lance.dataset(table).count_rows() == 6


def test_append_with_extra_column(table: str) -> None:
    bad = _base().append_column("extra", pa.array([1, 2, 3], pa.int64()))
    before = _snapshot(table)
    with pytest.raises(SchemaMismatchError) as info:
        ls.write_dataset(bad, table, mode="append")
    assert info.value.field_path == "extra"
    assert _snapshot(table) == before


def test_failure_while_writing_leaves_nothing_behind(table: str) -> None:
    """A stream that breaks after some data files were written: the table stays as it was."""
    schema = _base().schema

    def batches() -> Iterator[pa.RecordBatch]:
        for _ in range(3):
            yield from _base().to_batches()
        raise RuntimeError("source broke")

    before = _snapshot(table)
    with pytest.raises(RuntimeError, match="source broke"):
        ls.write_dataset(
            pa.RecordBatchReader.from_batches(schema, batches()),
            table,
            mode="append",
            max_rows_per_file=2,
        )
    assert _snapshot(table) == before
    assert ls.dataset(table).version == lance.dataset(table).version == 2


def test_null_struct_on_2_0_is_refused_without_traces(tmp_path: Path) -> None:
    """Data storage 2.0 cannot hold null structs (pylance refuses them too)."""
    uri = str(tmp_path / "t")
    ls.write_dataset(_base(), uri, data_storage_version="2.0")
    bad = _base().set_column(
        2, "st", pa.array([None, {"x": 1, "y": 1.0}, None], _base()["st"].type)
    )
    with pytest.raises(Exception):  # noqa: B017 - the oracle refuses it as well
        lance.write_dataset(bad, str(tmp_path / "p"), data_storage_version="2.0")
    before = _snapshot(uri)
    with pytest.raises(Exception):  # noqa: B017
        ls.write_dataset(bad, uri, mode="append")
    assert _snapshot(uri) == before
    assert ls.dataset(uri).version == 1


# ---- JSON ------------------------------------------------------------------------------------


def test_invalid_json_is_refused_naming_the_row_and_nothing_is_written(tmp_path: Path) -> None:
    uri = str(tmp_path / "j")
    data = pa.table({"i": [1, 2], "j": pa.array(['{"a": 1}', "[2"], pa.json_())})
    with pytest.raises(ls.InvalidJsonError) as err:
        ls.write_dataset(data, uri)
    assert (err.value.field_path, err.value.row) == ("j", 1)
    assert not os.path.exists(os.path.join(uri, "_versions"))
    assert not os.path.isdir(os.path.join(uri, "data")) or not os.listdir(os.path.join(uri, "data"))


def test_json_columns_interoperate_with_pylance(tmp_path: Path) -> None:
    """pylance's json columns read as pylance reads them (arrow.json text); our appends of
    arrow.json text are stored as pylance's JSONB and read back by pylance."""
    uri = str(tmp_path / "j")
    data = pa.table({"i": [1, 2], "j": pa.array(['{"b":1, "a":[1.0]}', "[2]"], pa.json_())})
    lance.write_dataset(data, uri)
    ds = ls.dataset(uri)
    assert ds.to_table().equals(lance.dataset(uri).to_table())
    assert ds.schema.field("j").type == pa.json_(pa.string())
    ds.insert(data)
    theirs = lance.dataset(uri).to_table()
    assert theirs.column("j").to_pylist() == ['{"a":[1.0],"b":1}', "[2]"] * 2
    assert ls.dataset(uri).to_table().equals(theirs)


# ---- CLI -------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "lance_semantic.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_cli_on_bad_tables_in_a_subprocess(tmp_path: Path) -> None:
    """Missing and corrupt tables: non-zero exit, one line on stderr, no traceback."""
    corrupt = str(tmp_path / "corrupt")
    lance.write_dataset(_base(), corrupt)
    _damage(corrupt, "truncated")
    missing = str(tmp_path / "missing")
    # run both interpreters at once: starting one costs more than the test itself
    procs = {
        name: _cli("inspect", uri) for name, uri in (("missing", missing), ("corrupt", corrupt))
    }
    out = {name: (p.communicate(timeout=120), p.returncode) for name, p in procs.items()}
    for name in ("missing", "corrupt"):
        (stdout, stderr), code = out[name]
        assert code != 0, name
        assert "Traceback" not in stderr, stderr
        assert len(stderr.strip().splitlines()) == 1, stderr
        assert stdout == ""
    assert "missing" in out["missing"][0][1]
    assert os.path.basename(_latest_manifest(corrupt)) in out["corrupt"][0][1]


def test_cli_inspect_prints_version_flags_schema_and_fragments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = str(tmp_path / "t")
    lance.write_dataset(_base(), uri)
    lance.write_dataset(_base(), uri, mode="append")
    lance.dataset(uri).delete("a = 2")
    assert cli_main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert "version:              3" in out
    assert any(line.startswith("data storage version:") and line.endswith("2.2") for line in lines)
    flags = next(line for line in lines if line.startswith("feature flags:"))
    assert "reader=1" in flags and "writer=1" in flags and "deletion_files" in flags
    # schema with ids, nested fields under their parent
    for want in (
        "[0] a: int64",
        "[1] s: string",
        "[2] st: struct",
        "[3] x: int32",
        "[4] y: double",
    ):
        assert want in lines, want
    assert out.index("[2] st: struct") < out.index("[3] x: int32")
    # fragments with their data files and field ids (as pylance wrote them)
    frags = lance.dataset(uri).get_fragments()
    assert any(line.startswith("fragments:") and "2" in line and "4 rows" in line for line in lines)
    for frag in frags:
        assert any(
            line.startswith(f"fragment {frag.fragment_id}:") and "1 deleted" in line
            for line in lines
        )
        for df in frag.metadata.files:
            row = next(line for line in lines if line.startswith(df.path))
            assert f"fields={list(df.fields)}" in row

    assert cli_main(["inspect", uri, "--version", "1"]) == 0
    first = capsys.readouterr().out
    assert "version:              1" in first and "reader=0 writer=0" in first


def test_cli_in_process_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["inspect", str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    uri = str(tmp_path / "t")
    ls.write_dataset(_base(), uri)
    assert cli_main(["inspect", uri, "--version", "5"]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "5" in err
