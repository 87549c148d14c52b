"""The harness the benchmark scripts share: set-up, timing, checks and output.

Import it before ``lance``: it puts ``src/`` on ``sys.path`` (when the checkout has one) and
sets ``LANCE_LOG=error`` (pylance warns on stderr when it creates a table or reads 2.3 files).

Timing (DESIGN §7 method):

- :func:`measure` runs one untimed warm-up round (round 0, checked in full) and then ``repeat``
  timed rounds; the order of the variants rotates from round to round (for two variants, the
  one that goes first alternates). :func:`micro` does the same for in-memory calls of
  microseconds to milliseconds: per round, the fastest of several alternating blocks.
- :class:`Result` holds one side-by-side figure: medians, ``ratio`` of the medians and
  ``best_ratio`` of the fastest runs, with a target status; :func:`format_table` prints a list
  of them.

Output: :func:`environment` (machine and versions), :func:`print_banner`, :func:`write_json`,
:func:`strict_exit` (``BENCH_STRICT=1``: exit 1 when a ratio is over its target) and
:func:`finish` (both for a list of :class:`Result`).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

_ROOT = Path(__file__).resolve().parents[1]
_SRC = _ROOT / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

os.environ.setdefault("LANCE_LOG", "error")
import lance  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from datagen import DEFAULT_ROWS  # noqa: E402

import lance_semantic as ls  # noqa: E402

SAMPLE = 64  # rows compared per timed result
MICRO_SECONDS = 0.002  # a block of a micro timing runs the call about this long
BLOCKS = 5  # blocks per round of a micro timing
SLOW_CALL = 0.05  # a call this slow is a round of its own (no blocks)

V = TypeVar("V", bound=Hashable)


# ---- checks -------------------------------------------------------------------------------------
class WrongResult(AssertionError):
    """A result differs from what the source data says it must be."""


def check_rows(what: str, got: int, want: int) -> None:
    if got != want:
        raise WrongResult(f"{what}: {got} rows, expected {want}")


def sample_rows(rows: int, seed: int) -> np.ndarray:
    """Up to :data:`SAMPLE` distinct row offsets in ``[0, rows)``, sorted."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(rows, size=min(SAMPLE, rows), replace=False))


# ---- timing -------------------------------------------------------------------------------------
def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds of one call of ``fn`` (after a ``gc.collect()``) and its result."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def measure(
    variants: Sequence[V],
    repeat: int,
    run: Callable[[V, int], Callable[[], Any]],
    check: Callable[[V, Any, bool], None],
    after: Callable[[V, int], None] | None = None,
) -> dict[V, list[float]]:
    """``run(variant, r)`` prepares round ``r`` (untimed) and returns the thunk to time;
    ``check(variant, result, full)`` checks its result outside the timing and ``after(variant,
    r)`` cleans up. Round 0 is the untimed warm-up, checked in full (``full=True``); the order
    of the variants rotates from round to round so none is always first. Returns the timed
    rounds' seconds per variant."""
    times: dict[V, list[float]] = {v: [] for v in variants}
    for r in range(repeat + 1):
        k = r % len(variants)
        for v in [*variants[k:], *variants[:k]]:
            thunk = run(v, r)
            seconds, out = timed(thunk)
            check(v, out, r == 0)
            del out
            if after is not None:
                after(v, r)
            if r:
                times[v].append(seconds)
    return times


def per_call(fn: Callable[[], Any], calls: int) -> tuple[float, Any]:
    """Seconds per call of ``fn`` over ``calls`` back-to-back calls, and the last result."""
    out = None
    t0 = time.perf_counter()
    for _ in range(calls):
        out = fn()
    return (time.perf_counter() - t0) / calls, out


def micro(
    fns: dict[str, Callable[[], Any]],
    repeat: int,
    check: Callable[[str, Any, bool], None] | None = None,
) -> dict[str, list[float]]:
    """Timings of in-memory calls, robust to other load on the machine.

    A warm-up call per variant (checked in full) sets how many back-to-back calls make a block
    of about :data:`MICRO_SECONDS`. Each round runs :data:`BLOCKS` blocks per variant, the
    variants' order rotating from block to block, and keeps each variant's fastest block
    (timeit's rule: noise on a shared machine only adds time). The per-call figure of every
    round goes into the result; every block's last result is checked outside the timing."""
    names = list(fns)
    calls, slowest = {}, 0.0
    for v in names:
        seconds, out = timed(fns[v])
        if check is not None:
            check(v, out, True)
        del out
        slowest = max(slowest, seconds)
        calls[v] = max(1, min(100_000, int(MICRO_SECONDS / max(seconds, 1e-7))))
    blocks = BLOCKS if slowest < SLOW_CALL else 1
    runs: dict[str, list[float]] = {v: [] for v in names}
    for r in range(repeat):
        gc.collect()
        best = dict.fromkeys(names, math.inf)
        for b in range(blocks):
            k = (r * blocks + b) % len(names)
            for v in [*names[k:], *names[:k]]:
                seconds, out = per_call(fns[v], calls[v])
                best[v] = min(best[v], seconds)
                if check is not None:
                    check(v, out, False)
                del out
        for v in names:
            runs[v].append(best[v])
    return runs


# ---- results ------------------------------------------------------------------------------------
class Targeted:
    """A ``ratio`` with an optional ``target`` (``None``: shown for context only)."""

    ratio: float
    target: float | None

    @property
    def status(self) -> str:
        if self.target is None:
            return ""
        return "ok" if self.ratio <= self.target else "OVER"

    def target_cell(self, context: str = "") -> str:
        """The target column: ``<= 1.1x ok`` / ``<= 1.1x OVER``, or ``context`` without one."""
        return f"<= {self.target:.1f}x {self.status}" if self.target is not None else context


@dataclass
class Result(Targeted):
    """One operation timed on two sides: ``pylance_s`` is the first side's median (pylance, or
    whatever the script compares against), ``ours_s`` the second's; ``ratio`` = ours / first."""

    operation: str
    pylance_s: float
    ours_s: float
    ratio: float
    target: float | None
    pylance_runs: list[float] = field(default_factory=list)
    ours_runs: list[float] = field(default_factory=list)

    @classmethod
    def of(
        cls, operation: str, first: list[float], ours: list[float], target: float | None
    ) -> Result:
        """The medians and their ratio from the timed runs of the two sides."""
        a, b = (statistics.median(runs or [float("nan")]) for runs in (first, ours))
        return cls(operation, a, b, b / a if a else float("inf"), target, first, ours)

    @property
    def best_ratio(self) -> float:
        """Ours / pylance on the fastest run of each: a second view that damps one-sided noise."""
        if not self.pylance_runs or not self.ours_runs:
            return float("nan")
        return min(self.ours_runs) / min(self.pylance_runs)


def format_table(
    results: list[Result],
    columns: tuple[str, str] = ("pylance s", "lance-semantic s"),
    widths: tuple[int, int, int] = (16, 10, 17),
) -> str:
    """One line per result: the two medians, the ratio of the medians, the ratio of the fastest
    runs and the target. ``widths`` are those of the operation and the two seconds columns."""
    w_op, w_a, w_b = widths
    head = (
        f"{'operation':<{w_op}} {columns[0]:>{w_a}} {columns[1]:>{w_b}} {'ratio':>7} {'best':>7}"
        "  target"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(
            f"{r.operation:<{w_op}} {r.pylance_s:>{w_a}.4f} {r.ours_s:>{w_b}.4f} "
            f"{r.ratio:>6.2f}x {r.best_ratio:>6.2f}x  {r.target_cell()}"
        )
    return "\n".join(lines)


def finish(
    json_path: str | None, env: dict[str, Any], parameters: dict[str, Any], results: list[Result]
) -> int:
    """Writes the results to ``json_path`` (when given, with the derived ``best_ratio`` and
    ``status``) and returns the exit status (:func:`strict_exit`)."""
    if json_path:
        records = [asdict(r) | {"best_ratio": r.best_ratio, "status": r.status} for r in results]
        write_json(json_path, env, parameters, results=records)
    return strict_exit([r.operation for r in results if r.status == "OVER"])


# ---- command line, environment and output -------------------------------------------------------
def parser(doc: str | None) -> argparse.ArgumentParser:
    """A parser described by the first paragraph of the script's docstring."""
    return argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])


def add_common_args(
    p: argparse.ArgumentParser,
    *,
    rows_help: str,
    repeat_help: str,
    json_help: str = "also write the results and environment as JSON",
    max_rows_per_file: bool = True,
) -> None:
    """``--rows``, ``--repeat`` (default 7), ``--max-rows-per-file`` (default 1,048,576; only
    with ``max_rows_per_file``), ``--json`` and ``--tmpdir``."""
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS, help=rows_help)
    p.add_argument("--repeat", type=int, default=7, help=repeat_help)
    if max_rows_per_file:
        p.add_argument("--max-rows-per-file", type=int, default=1_048_576)
    p.add_argument("--json", metavar="PATH", help=json_help)
    p.add_argument("--tmpdir", help="parent of the temporary working directory")


def environment() -> dict[str, Any]:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        if _git("status", "--porcelain", "--", "src"):
            commit += "+uncommitted src changes"
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    return {
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pylance": lance.__version__,
        "lance_semantic": ls.__version__,
        "lance_semantic_commit": commit,
        "pyarrow": pa.__version__,
        "numpy": np.__version__,
    }


def _git(*args: str) -> str:
    """``git`` in the checkout's root (so the pathspec ``src`` means the package sources)."""
    out = subprocess.run(["git", *args], cwd=_ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def print_banner(env: dict[str, Any], versions: tuple[str, ...] = ("pyarrow",)) -> None:
    """The ``machine:`` and ``versions:`` lines; ``versions`` names the libraries listed after
    lance-semantic."""
    print(
        f"machine: {env['cores']} cores ({env['usable_cores']} usable), {env['cpu']}, "
        f"{env['platform']}"
    )
    libs = ", ".join(f"{k} {env[k]}" for k in versions)
    print(
        f"versions: python {env['python']}, pylance {env['pylance']}, lance-semantic "
        f"{env['lance_semantic']} ({env['lance_semantic_commit']}), {libs}"
    )


@contextmanager
def workdir(prefix: str, parent: str | None) -> Iterator[str]:
    """A temporary working directory under ``parent``, removed at the end."""
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_json(path: str, env: dict[str, Any], parameters: dict[str, Any], **sections: Any) -> None:
    """``{"environment": env, "parameters": parameters, **sections}``, indented."""
    payload = {"environment": env, "parameters": parameters, **sections}
    Path(path).write_text(json.dumps(payload, indent=2) + "\n")


def strict_exit(over: list[str]) -> int:
    """The exit status: 1 when something is over its target and ``BENCH_STRICT`` is set."""
    return 1 if over and os.environ.get("BENCH_STRICT") else 0
