"""pylance warns on stderr when a 2.3 data file is written; lance-semantic filters that line
(LANCE_LOG, set while lance is first imported) and says it once per process in its own words,
with the stable alternative. Run in subprocesses: the logger is set up once per process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[3] / "src")

SCRIPT = textwrap.dedent(
    """
    import os, sys, tempfile
    import pyarrow as pa
    import lance_semantic as ls
    t = pa.table({"a": [1, 2]})
    root = tempfile.mkdtemp()
    def mark(text):
        sys.stderr.write(f"<{text}>\\n"); sys.stderr.flush()
    mark("first")
    ds = ls.write_dataset(t, os.path.join(root, "a"), data_storage_version="2.3")
    mark("second")
    ds.insert(t)
    ls.write_dataset(t, os.path.join(root, "b"), data_storage_version="2.3")
    mark("stable")
    ls.write_dataset(t, os.path.join(root, "c"), semantic_types=True)
    mark("end")
    print(os.environ.get("LANCE_LOG"))
    """
)


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "LANCE_LOG"}
    environ.update({"PYTHONPATH": SRC, **env})
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=environ, timeout=120
    )


def _between(err: str, start: str, end: str) -> list[str]:
    return err.split(f"<{start}>\n")[1].split(f"<{end}>\n")[0].splitlines()


def test_the_first_2_3_write_says_it_once_and_pylance_says_nothing() -> None:
    done = _run()
    assert done.returncode == 0, done.stderr
    first = _between(done.stderr, "first", "second")
    assert len(first) == 1, done.stderr
    assert first[0].startswith("lance-semantic: note: data storage version 2.3 is unstable")
    assert 'data_storage_version="2.2" with semantic_types=True' in first[0]
    assert _between(done.stderr, "second", "stable") == []
    assert _between(done.stderr, "stable", "end") == []
    assert "WARN" not in done.stderr and "never for production" not in done.stderr
    assert done.stdout.strip() == "None"  # the environment is left as it was


def test_a_lance_log_the_user_set_is_left_alone() -> None:
    done = _run(LANCE_LOG="warn")
    assert done.returncode == 0, done.stderr
    first = _between(done.stderr, "first", "second")
    assert any("never for production" in line for line in first)  # pylance's own line
    assert sum(line.startswith("lance-semantic: note:") for line in first) == 1
    assert done.stdout.strip() == "warn"
