"""The command line (``cli/``): --version, help on every argument, the upgrade confirmation,
inspect's config / indices / tags / fragment summary, demo never overwriting, valid encodings
named, plain OS errors, progress bars. Subprocesses (or a pseudo-terminal) where what a user
sees depends on the process: its stdin, its terminal, its exit status."""

from __future__ import annotations

import argparse
import errno
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli import main as cli
from lance_semantic.cli.inspect import FRAGMENTS_SHOWN
from lance_semantic.dataset.core import progress

SRC = str(Path(__file__).resolve().parents[3] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC}


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "lance_semantic.cli.main", *args]


def _legacy(tmp_path: Path, name: str = "legacy") -> str:
    uri = str(tmp_path / name)
    lance.write_dataset(
        pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}), uri
    )
    return uri


# ---- --version and help -----------------------------------------------------------------------
def test_version_and_help_in_a_subprocess() -> None:
    procs = [
        subprocess.Popen(
            _cmd(*a), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
        )
        for a in (["--version"], ["--help"])
    ]
    (version, err), (helptext, _) = (p.communicate(timeout=120) for p in procs)
    assert [p.returncode for p in procs] == [0, 0], err
    assert version.strip() == f"lance-semantic {ls.__version__} (pylance {lance.__version__})"
    for command in ("inspect", "check", "upgrade", "set-output-encoding", "compact", "demo"):
        assert command in helptext
    assert "exit status" in helptext


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_every_argument_has_help() -> None:
    parser = cli.build_parser()
    commands = _subparsers(parser)
    assert set(commands) >= {"inspect", "check", "upgrade", "set-output-encoding", "demo"}
    for name, sub in [("", parser), *commands.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help, f"{name or 'lance-semantic'} {action.dest}: no help text"


# ---- upgrade asks first -----------------------------------------------------------------------
def test_upgrade_without_a_terminal_refuses_unless_yes(tmp_path: Path) -> None:
    uri = _legacy(tmp_path)
    files = sorted(os.listdir(os.path.join(uri, "_versions")))
    done = subprocess.run(
        _cmd("upgrade", uri), stdin=subprocess.DEVNULL, capture_output=True, text=True, env=ENV
    )
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "stock pylance 14 no longer opens" in done.stderr and "--yes" in done.stderr
    assert sorted(os.listdir(os.path.join(uri, "_versions"))) == files
    assert lance.dataset(uri).version == 1  # pylance still opens it
    assert cli.main(["upgrade", uri, "--yes"]) == 0
    assert ls.dataset(uri).semantic_types and ls.dataset(uri).version == 2


def _in_a_terminal(args: list[str], answer: str) -> tuple[int, str]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal; type ``answer`` once
    the question is asked. (exit status, everything shown)"""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(_cmd(*args), stdin=follower, stdout=follower, stderr=follower, env=ENV)
    os.close(follower)
    shown, asked = b"", False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        # poll, not select: by this point of a full run the descriptor may be past 1024
        ready = select.poll()
        ready.register(leader, select.POLLIN | select.POLLHUP)
        if ready.poll(200):
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            shown += chunk
        if not asked and b"[y/N]" in shown:
            os.write(leader, answer.encode() + b"\n")
            asked = True
        if proc.poll() is not None and not ready:
            break
    os.close(leader)
    return proc.wait(timeout=60), shown.decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pseudo-terminal")
def test_upgrade_in_a_terminal_asks_and_honours_the_answer(tmp_path: Path) -> None:
    uri = _legacy(tmp_path)
    code, shown = _in_a_terminal(["upgrade", uri], "n")
    assert code == 1, shown
    assert "stock pylance 14 will no longer open the table's new versions" in shown
    assert "not upgraded" in shown and ls.dataset(uri).version == 1
    code, shown = _in_a_terminal(["upgrade", uri], "y")
    assert code == 0, shown
    assert "version 1 -> 2" in shown and ls.dataset(uri).semantic_types


# ---- inspect ----------------------------------------------------------------------------------
def test_inspect_shows_config_indices_and_tags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = _legacy(tmp_path)
    assert cli.main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    assert "config:               none" in out and "indices:              none" in out
    assert "tags:" not in out  # no tags: no section
    ds = lance.dataset(uri)
    ds.create_scalar_index("id", "BTREE")
    ds.update_config({"lance.compaction.target_rows_per_fragment": "5"})
    lance.dataset(uri).tags.create("first", 1)
    assert cli.main(["inspect", uri]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "lance.compaction.target_rows_per_fragment = 5" in lines
    assert "indices:              1" in lines
    assert any(line.startswith("id_idx: BTree index on id") for line in lines), lines
    (index_line,) = [line for line in lines if line.startswith("id_idx:")]
    rows = lance.dataset(uri).count_rows()
    assert index_line.endswith(f"covers 1 of 1 fragments ({rows} of {rows} rows)")
    assert "tags:                 1" in lines and "first -> version 1" in lines
    # a tag file that does not decode is named, and the rest is still shown
    Path(uri, "_refs", "tags", "broken.json").write_text("{not json")
    assert cli.main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    assert "tags:                 unreadable (" in out and "broken.json" in out
    assert "fragments:" in out
    # the same table read by pylance: what inspect says is what pylance says
    tag = json.loads(Path(uri, "_refs", "tags", "first.json").read_text())
    assert tag["version"] == 1
    (theirs,) = lance.dataset(uri).describe_indices()
    assert (theirs.name, theirs.field_names) == ("id_idx", ["id"])
    assert theirs.type_url.endswith("BTreeIndexDetails")


def test_inspect_shows_what_each_index_covers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = str(tmp_path / "covered")
    table = pa.table({"id": pa.array(range(40), pa.int64())})
    lance.write_dataset(table, uri, max_rows_per_file=10)  # fragments 0-3
    ds = lance.dataset(uri)
    ds.create_scalar_index("id", "BTREE")
    ds.insert(table.slice(0, 5))  # 4: not covered
    ds = lance.dataset(uri)
    ds.insert(table.slice(0, 3))  # 5: not covered
    lance.dataset(uri).delete("id = 1")  # one row of fragment 0 and one of 4, one of 5
    assert cli.main(["inspect", uri]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    (index_line,) = [line for line in lines if line.startswith("id_idx:")]
    (theirs,) = lance.dataset(uri).describe_indices()
    assert theirs.segments[0].fragment_ids == {0, 1, 2, 3}
    assert index_line.endswith("covers 4 of 6 fragments (39 of 45 rows); not covered: 4-5")


def test_inspect_sums_up_fragments_beyond_twenty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = str(tmp_path / "many")
    n = FRAGMENTS_SHOWN + 5
    ls.write_dataset(pa.table({"a": pa.array(range(n), pa.int64())}), uri, max_rows_per_file=1)
    assert cli.main(["inspect", uri]) == 0
    out = capsys.readouterr().out
    assert sum(line.startswith("  fragment ") for line in out.splitlines()) == FRAGMENTS_SHOWN
    assert "... 5 more fragments (ids 20-24: 5 rows, 5 data files); --fragments lists" in out
    assert cli.main(["inspect", uri, "--fragments"]) == 0
    out = capsys.readouterr().out
    assert sum(line.startswith("  fragment ") for line in out.splitlines()) == n
    assert "more fragments" not in out


# ---- demo, encodings, OS errors ---------------------------------------------------------------
def test_demo_never_overwrites_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "semantic types: True" in out.out and out.err == ""  # stable 2.2 files: no notice
    uri = str(tmp_path / "demo.lance")
    before = sorted(os.listdir(os.path.join(uri, "_versions")))
    assert cli.main(["demo", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "already exists" in err and "never overwrites" in err
    assert sorted(os.listdir(os.path.join(uri, "_versions"))) == before


def test_an_invalid_encoding_lists_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = str(tmp_path / "flagged")
    ls.write_dataset(pa.table({"s": ["a"]}), uri, semantic_types=True)
    assert cli.main(["set-output-encoding", uri, "s", "bogus"]) == 1
    err = capsys.readouterr().err
    assert "unknown output encoding (valid for string: utf8, large_utf8, utf8_view" in err
    assert "dictionary:<key>:<value>" in err


def test_os_errors_are_plain_lines_with_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert cli.main(["demo", str(afile)]) == 1
    err = capsys.readouterr().err
    assert "[Errno" not in err and len(err.strip().splitlines()) == 1
    assert "Not a directory" in err and str(afile) in err
    e = OSError(errno.EACCES, "Permission denied", "/x/y")
    assert cli._message(e) == "Permission denied: /x/y"
    assert cli._message(ValueError("[Errno 2] No such file: '/a'")) == "No such file: '/a'"


# ---- progress bars ----------------------------------------------------------------------------
def test_progress_bars_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "DELAY_SECONDS", 0)
    counted: list[int] = []
    update = progress.Progress.update

    def counting(self: progress.Progress, n: int) -> None:
        counted.append(n)
        update(self, n)

    monkeypatch.setattr(progress.Progress, "update", counting)
    rows = pa.table({"a": pa.array(range(5000), pa.int64())})
    ds = ls.write_dataset(rows, str(tmp_path / "quiet"), max_rows_per_file=100)
    ds.optimize.compact_files(target_rows_per_fragment=2500)
    assert capsys.readouterr().err == ""
    counted.clear()
    ds = ls.write_dataset(rows, str(tmp_path / "shown"), max_rows_per_file=100, progress=True)
    assert "writing" in capsys.readouterr().err and sum(counted) == 5000
    counted.clear()
    metrics = ds.optimize.compact_files(target_rows_per_fragment=2500, progress=True)
    assert "compacting" in capsys.readouterr().err and sum(counted) == 5000
    assert metrics.fragments_added == 2
    with pytest.raises(TypeError, match="progress must be a bool"):
        ls.write_dataset(rows, str(tmp_path / "bad"), progress="yes")  # type: ignore[arg-type]


def test_compact_shows_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(pa.table({"a": pa.array(range(3000), pa.int64())}), uri, max_rows_per_file=100)
    forced = str(tmp_path / "forced")
    ls.write_dataset(
        pa.table({"a": pa.array(range(300), pa.int64())}), forced, max_rows_per_file=10
    )
    script = (
        "import sys; from lance_semantic.dataset.core import progress; progress.DELAY_SECONDS = 0; "
        "from lance_semantic.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    piped = subprocess.Popen(
        [sys.executable, "-c", script, "compact", uri, "--target-rows-per-fragment", "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    asked = subprocess.Popen(
        [sys.executable, "-c", script, "compact", forced, "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    (out, err), (out2, err2) = piped.communicate(timeout=120), asked.communicate(timeout=120)
    assert piped.returncode == 0 and asked.returncode == 0, err + err2
    assert "30 fragments -> 3" in out and err == ""  # stderr is a pipe: no bar
    assert "compacting" in err2 and "30 fragments -> 1" in out2


def test_warm_up_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["warm-up"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("JSON codec ready") and "encode_rows" in out and "render_rows" in out
    assert "vector index kernels ready: " in out and "assign" in out
