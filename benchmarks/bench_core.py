"""Core operations of lance-semantic against pylance, side by side in one process (DESIGN §7).

Runs the same work through pylance (``lance.write_dataset``, ``lance.dataset(uri)``) and through
lance-semantic on the deterministic table of ``datagen.py``, in a temporary directory, and prints
the median of ``--repeat`` timings per engine with the ratio ours / pylance::

    python benchmarks/bench_core.py [--rows N] [--repeat K] [--json out.json]

Operations (both engines get identical arguments; both write data storage version 2.2 with the
same ``max_rows_per_file``):

``write``         create a table from the in-memory table (one chunk per column; a new
                  directory per repeat, after ``os.sync()`` so earlier rounds' write-back
                  is not timed)
``write 8K batches``  the same from a table of 8,192-row chunks (a typical stream of batches)
``open``          open the latest version (manifest read)
``scan``          ``dataset(uri).to_table()``: open + read every row of the engine's own table
``scan other``    the same on the table the *other* engine wrote (cross-engine read)
``take cold``     ``dataset(uri).take(idx)``: open per call, 1,000 random rows in random order
``take warm``     ``ds.take(idx)`` on one handle opened (and used once) before timing
``count_rows``    ``dataset(uri).count_rows()``

Order of the engines alternates from repeat to repeat. An untimed first round per operation
warms both engines up and checks every result in full against the source table; each timed
result is checked again (row count and a sample of values) outside the timed region, so a fast
but wrong result fails the run instead of producing a number.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
_SRC = Path(__file__).resolve().parents[1] / "src"
if _SRC.is_dir() and str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

os.environ.setdefault("LANCE_LOG", "error")  # pylance warns on stderr when it creates a table
import lance  # noqa: E402
from datagen import DEFAULT_ROWS, generate, take_indices  # noqa: E402

import lance_semantic as ls  # noqa: E402

STORAGE_VERSION = "2.2"
#: operations with a DESIGN §7 target of at most 1.1x pylance's time
TARGETED = ("write", "write 8K batches", "scan", "scan other", "take cold", "take warm")
TARGET = 1.1
SAMPLE = 64  # values compared per timed result


# ---- engines ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Engine:
    name: str
    write: Callable[[pa.Table, str, int], Any]
    open: Callable[[str], Any]


def _pylance_write(table: pa.Table, uri: str, max_rows_per_file: int) -> Any:
    return lance.write_dataset(
        table,
        uri,
        mode="create",
        max_rows_per_file=max_rows_per_file,
        data_storage_version=STORAGE_VERSION,
    )


def _ours_write(table: pa.Table, uri: str, max_rows_per_file: int) -> Any:
    return ls.write_dataset(
        table,
        uri,
        mode="create",
        max_rows_per_file=max_rows_per_file,
        data_storage_version=STORAGE_VERSION,
    )


PYLANCE = Engine("pylance", _pylance_write, lance.dataset)
OURS = Engine("lance-semantic", _ours_write, ls.dataset)
ENGINES = (PYLANCE, OURS)


# ---- checks -----------------------------------------------------------------------------------
class WrongResult(AssertionError):
    """An engine returned a result that differs from the source table."""


def _check_rows(engine: str, op: str, got: int, want: int) -> None:
    if got != want:
        raise WrongResult(f"{engine} {op}: {got} rows, expected {want}")


def _check_sample(engine: str, op: str, got: pa.Table, want: pa.Table, rows: np.ndarray) -> None:
    _check_rows(engine, op, got.num_rows, want.num_rows)
    if got.schema.names != want.schema.names:
        raise WrongResult(
            f"{engine} {op}: columns {got.schema.names}, expected {want.schema.names}"
        )
    idx = pa.array(rows)
    if not got.take(idx).equals(want.take(idx)):
        raise WrongResult(f"{engine} {op}: sampled values differ from the source table")


def _check_full(engine: str, op: str, got: pa.Table, want: pa.Table) -> None:
    _check_rows(engine, op, got.num_rows, want.num_rows)
    if got.schema.types != want.schema.types:
        raise WrongResult(f"{engine} {op}: types {got.schema.types}, expected {want.schema.types}")
    if not got.equals(want):
        raise WrongResult(f"{engine} {op}: values differ from the source table")


def _fragments(engine: Engine, uri: str) -> list[int]:
    """Physical rows per fragment, as the table's manifest records them."""
    if engine is PYLANCE:
        return [f.metadata.physical_rows for f in lance.dataset(uri).get_fragments()]
    return [f.physical_rows for f in ls.dataset(uri).manifest.fragments]


# ---- timing -----------------------------------------------------------------------------------
@dataclass
class Result:
    operation: str
    pylance_s: float
    ours_s: float
    ratio: float
    target: float | None
    pylance_runs: list[float] = field(default_factory=list)
    ours_runs: list[float] = field(default_factory=list)

    @property
    def best_ratio(self) -> float:
        """Ours / pylance on the fastest run of each: a second view that damps one-sided noise."""
        if not self.pylance_runs or not self.ours_runs:
            return float("nan")
        return min(self.ours_runs) / min(self.pylance_runs)

    @property
    def status(self) -> str:
        if self.target is None:
            return ""
        return "ok" if self.ratio <= self.target else "OVER"


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _measure(
    op: str,
    repeat: int,
    run: Callable[[Engine, int], Callable[[], Any]],
    check: Callable[[Engine, Any, bool], None],
    after: Callable[[Engine, int], None] | None = None,
) -> Result:
    """``run(engine, r)`` prepares round ``r`` and returns the thunk to time; round 0 is the
    untimed warm-up with a full check. Rounds alternate which engine goes first."""
    times: dict[str, list[float]] = {e.name: [] for e in ENGINES}
    for r in range(repeat + 1):
        order = ENGINES if r % 2 == 0 else ENGINES[::-1]
        for engine in order:
            thunk = run(engine, r)
            seconds, out = _timed(thunk)
            check(engine, out, r == 0)
            del out
            if after is not None:
                after(engine, r)
            if r:
                times[engine.name].append(seconds)
    pl, ours = (statistics.median(times[e.name] or [float("nan")]) for e in ENGINES)
    return Result(
        op,
        pl,
        ours,
        ours / pl if pl else float("inf"),
        TARGET if op in TARGETED else None,
        times[PYLANCE.name],
        times[OURS.name],
    )


# ---- the suite --------------------------------------------------------------------------------
def run_suite(
    rows: int, repeat: int, max_rows_per_file: int, workdir: str, only: set[str] | None
) -> list[Result]:
    source = generate(rows)
    idx = take_indices(rows)
    want_take = source.take(pa.array(idx))
    rng = np.random.default_rng(7)
    sample = np.sort(rng.choice(rows, size=min(SAMPLE, rows), replace=False))
    take_sample = np.arange(len(idx))
    expected_frags = [min(max_rows_per_file, rows - s) for s in range(0, rows, max_rows_per_file)]
    results: list[Result] = []

    def wanted(op: str) -> bool:
        return only is None or op in only

    # writes: a fresh directory per round; the first write's round-0 tables are kept for the reads
    tables = {e.name: os.path.join(workdir, f"{e.name}-table") for e in ENGINES}

    def writes(op: str, data: pa.Table, keep: bool) -> None:
        def uri(e: Engine, r: int) -> str:
            if keep and r == 0:
                return tables[e.name]
            return os.path.join(workdir, f"{e.name}-{op.replace(' ', '-')}-{r}")

        def run(e: Engine, r: int) -> Callable[[], Any]:
            os.sync()  # earlier rounds' dirty pages are written back now, not inside this timing
            return lambda: e.write(data, uri(e, r), max_rows_per_file)

        def check(e: Engine, ds: Any, full: bool) -> None:
            frags = _fragments(e, ds.uri)
            if frags != expected_frags:
                raise WrongResult(
                    f"{e.name} {op}: fragments of {frags} rows, expected {expected_frags}"
                )
            # read back through the *other* engine: the table must be a real Lance table
            got = (OURS if e is PYLANCE else PYLANCE).open(ds.uri).to_table()
            if full:
                _check_full(e.name, op, got, source)
            else:
                _check_sample(e.name, op, got, source, sample)

        def drop(e: Engine, r: int) -> None:
            if not (keep and r == 0):
                shutil.rmtree(uri(e, r), ignore_errors=True)

        # the reads need the kept tables, so that write runs (untimed) even when not asked for
        res = _measure(op, repeat if wanted(op) else 0, run, check, drop)
        if wanted(op):
            results.append(res)

    writes("write", source, keep=True)
    if wanted("write 8K batches"):
        writes("write 8K batches", generate(rows, chunk_rows=8192), keep=False)

    def reads(
        op: str,
        uri_of: Callable[[Engine], str],
        call: Callable[[Engine, str], Any],
        check: Callable[[Engine, Any, bool], None],
    ) -> None:
        if wanted(op):
            results.append(_measure(op, repeat, lambda e, r: lambda: call(e, uri_of(e)), check))

    def check_scan(op: str) -> Callable[[Engine, Any, bool], None]:
        def check(e: Engine, got: pa.Table, full: bool) -> None:
            if full:
                _check_full(e.name, op, got, source)
            else:
                _check_sample(e.name, op, got, source, sample)

        return check

    def check_take(op: str) -> Callable[[Engine, Any, bool], None]:
        def check(e: Engine, got: pa.Table, full: bool) -> None:
            if full:
                _check_full(e.name, op, got, want_take)
            else:
                _check_sample(e.name, op, got, want_take, take_sample)

        return check

    def own(e: Engine) -> str:
        return tables[e.name]

    def other(e: Engine) -> str:
        return tables[(OURS if e is PYLANCE else PYLANCE).name]

    reads(
        "open",
        own,
        lambda e, u: e.open(u),
        lambda e, ds, full: _check_rows(e.name, "open", ds.count_rows(), rows),
    )
    reads("scan", own, lambda e, u: e.open(u).to_table(), check_scan("scan"))
    reads("scan other", other, lambda e, u: e.open(u).to_table(), check_scan("scan other"))
    reads("take cold", own, lambda e, u: e.open(u).take(idx), check_take("take cold"))
    if wanted("take warm"):
        handles = {e.name: e.open(own(e)) for e in ENGINES}
        for h in handles.values():
            h.take(idx)  # let the handle load (and pylance cache) file metadata
        results.append(
            _measure(
                "take warm",
                repeat,
                lambda e, r: lambda: handles[e.name].take(idx),
                check_take("take warm"),
            )
        )
        del handles
    reads(
        "count_rows",
        own,
        lambda e, u: e.open(u).count_rows(),
        lambda e, n, full: _check_rows(e.name, "count_rows", n, rows),
    )
    return results


# ---- environment and output -------------------------------------------------------------------
def environment() -> dict[str, Any]:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if dirty:
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


def format_table(results: list[Result]) -> str:
    head = (
        f"{'operation':<16} {'pylance s':>10} {'lance-semantic s':>17} {'ratio':>7} {'best':>7}"
        "  target"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        target = f"<= {r.target:.1f}x {r.status}" if r.target is not None else ""
        lines.append(
            f"{r.operation:<16} {r.pylance_s:>10.4f} {r.ours_s:>17.4f} "
            f"{r.ratio:>6.2f}x {r.best_ratio:>6.2f}x  {target}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--rows", type=int, default=DEFAULT_ROWS, help="rows in the table (default 2,000,000)"
    )
    p.add_argument(
        "--repeat", type=int, default=7, help="timed repeats per engine; the median is reported"
    )
    p.add_argument("--max-rows-per-file", type=int, default=1_048_576)
    p.add_argument("--json", metavar="PATH", help="also write the results and environment as JSON")
    p.add_argument("--only", action="append", help="run only this operation (repeatable)")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rows < 1:
        p.error("--rows and --repeat must be positive")

    env = environment()
    print(
        f"machine: {env['cores']} cores ({env['usable_cores']} usable), {env['cpu']}, "
        f"{env['platform']}"
    )
    print(
        f"versions: python {env['python']}, pylance {env['pylance']}, lance-semantic "
        f"{env['lance_semantic']} ({env['lance_semantic_commit']}), pyarrow {env['pyarrow']}, "
        f"numpy {env['numpy']}"
    )
    print(
        f"rows {args.rows:,}, repeat {args.repeat} (median), "
        f"max_rows_per_file {args.max_rows_per_file:,}, data storage version {STORAGE_VERSION}"
    )
    workdir = tempfile.mkdtemp(prefix="lance-semantic-bench-", dir=args.tmpdir)
    started = time.perf_counter()
    try:
        results = run_suite(
            args.rows,
            args.repeat,
            args.max_rows_per_file,
            workdir,
            set(args.only) if args.only else None,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(format_table(results))
    print(
        "\nseconds: median of the timed runs; ratio: lance-semantic / pylance (medians); "
        "best: the same on the fastest runs"
    )
    print(
        f"(every result validated against the source table; {time.perf_counter() - started:.1f} s)"
    )
    if args.json:
        payload = {
            "environment": env,
            "parameters": {
                "rows": args.rows,
                "repeat": args.repeat,
                "max_rows_per_file": args.max_rows_per_file,
                "storage_version": STORAGE_VERSION,
            },
            "results": [
                asdict(r) | {"best_ratio": r.best_ratio, "status": r.status} for r in results
            ],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    over = [r.operation for r in results if r.status == "OVER"]
    return 1 if over and os.environ.get("BENCH_STRICT") else 0


if __name__ == "__main__":
    raise SystemExit(main())
