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

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
# _harness first: it puts src/ on sys.path and quiets pylance's log before lance loads
import _harness as h  # noqa: E402
import lance  # noqa: E402
from _harness import WrongResult  # noqa: E402
from datagen import generate, take_indices  # noqa: E402

import lance_semantic as ls  # noqa: E402

STORAGE_VERSION = "2.2"
#: operations with a DESIGN §7 target of at most 1.1x pylance's time
TARGETED = ("write", "write 8K batches", "scan", "scan other", "take cold", "take warm")
TARGET = 1.1


# ---- engines ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Engine:
    name: str
    write: Callable[[pa.Table, str, int], Any]
    open: Callable[[str], Any]


def _writer(write_dataset: Callable[..., Any]) -> Callable[[pa.Table, str, int], Any]:
    """``write_dataset`` of one engine with the arguments both engines get."""

    def write(table: pa.Table, uri: str, max_rows_per_file: int) -> Any:
        return write_dataset(
            table,
            uri,
            mode="create",
            max_rows_per_file=max_rows_per_file,
            data_storage_version=STORAGE_VERSION,
        )

    return write


PYLANCE = Engine("pylance", _writer(lance.write_dataset), lance.dataset)
OURS = Engine("lance-semantic", _writer(ls.write_dataset), ls.dataset)
ENGINES = (PYLANCE, OURS)


# ---- checks -----------------------------------------------------------------------------------
def _check_sample(engine: str, op: str, got: pa.Table, want: pa.Table, rows: np.ndarray) -> None:
    h.check_rows(f"{engine} {op}", got.num_rows, want.num_rows)
    if got.schema.names != want.schema.names:
        raise WrongResult(
            f"{engine} {op}: columns {got.schema.names}, expected {want.schema.names}"
        )
    idx = pa.array(rows)
    if not got.take(idx).equals(want.take(idx)):
        raise WrongResult(f"{engine} {op}: sampled values differ from the source table")


def _check_full(engine: str, op: str, got: pa.Table, want: pa.Table) -> None:
    h.check_rows(f"{engine} {op}", got.num_rows, want.num_rows)
    if got.schema.types != want.schema.types:
        raise WrongResult(f"{engine} {op}: types {got.schema.types}, expected {want.schema.types}")
    if not got.equals(want):
        raise WrongResult(f"{engine} {op}: values differ from the source table")


def _check_table(
    op: str, want: pa.Table, sample: np.ndarray
) -> Callable[[Engine, pa.Table, bool], None]:
    """The check of a table result: in full after the warm-up, else the ``sample`` rows."""

    def check(e: Engine, got: pa.Table, full: bool) -> None:
        if full:
            _check_full(e.name, op, got, want)
        else:
            _check_sample(e.name, op, got, want, sample)

    return check


def _fragments(engine: Engine, uri: str) -> list[int]:
    """Physical rows per fragment, as the table's manifest records them."""
    if engine is PYLANCE:
        return [f.metadata.physical_rows for f in lance.dataset(uri).get_fragments()]
    return [f.physical_rows for f in ls.dataset(uri).manifest.fragments]


# ---- timing -----------------------------------------------------------------------------------
def _measure(
    op: str,
    repeat: int,
    run: Callable[[Engine, int], Callable[[], Any]],
    check: Callable[[Engine, Any, bool], None],
    after: Callable[[Engine, int], None] | None = None,
) -> h.Result:
    """``run(engine, r)`` prepares round ``r`` and returns the thunk to time; round 0 is the
    untimed warm-up with a full check. Rounds alternate which engine goes first."""
    times = h.measure(ENGINES, repeat, run, check, after)
    return h.Result.of(op, times[PYLANCE], times[OURS], TARGET if op in TARGETED else None)


# ---- the suite --------------------------------------------------------------------------------
def run_suite(
    rows: int, repeat: int, max_rows_per_file: int, workdir: str, only: set[str] | None
) -> list[h.Result]:
    source = generate(rows)
    idx = take_indices(rows)
    want_take = source.take(pa.array(idx))
    sample = h.sample_rows(rows, 7)
    take_sample = np.arange(len(idx))
    expected_frags = [min(max_rows_per_file, rows - s) for s in range(0, rows, max_rows_per_file)]
    results: list[h.Result] = []

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

        check_read_back = _check_table(op, source, sample)

        def check(e: Engine, ds: Any, full: bool) -> None:
            frags = _fragments(e, ds.uri)
            if frags != expected_frags:
                raise WrongResult(
                    f"{e.name} {op}: fragments of {frags} rows, expected {expected_frags}"
                )
            # read back through the *other* engine: the table must be a real Lance table
            check_read_back(e, (OURS if e is PYLANCE else PYLANCE).open(ds.uri).to_table(), full)

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
        return _check_table(op, source, sample)

    def check_take(op: str) -> Callable[[Engine, Any, bool], None]:
        return _check_table(op, want_take, take_sample)

    def own(e: Engine) -> str:
        return tables[e.name]

    def other(e: Engine) -> str:
        return tables[(OURS if e is PYLANCE else PYLANCE).name]

    reads(
        "open",
        own,
        lambda e, u: e.open(u),
        lambda e, ds, full: h.check_rows(f"{e.name} open", ds.count_rows(), rows),
    )
    reads("scan", own, lambda e, u: e.open(u).to_table(), check_scan("scan"))
    reads("scan other", other, lambda e, u: e.open(u).to_table(), check_scan("scan other"))
    reads("take cold", own, lambda e, u: e.open(u).take(idx), check_take("take cold"))
    if wanted("take warm"):
        handles = {e.name: e.open(own(e)) for e in ENGINES}
        for handle in handles.values():
            handle.take(idx)  # let the handle load (and pylance cache) file metadata
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
        lambda e, n, full: h.check_rows(f"{e.name} count_rows", n, rows),
    )
    return results


# ---- command line and output -------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p,
        rows_help="rows in the table (default 2,000,000)",
        repeat_help="timed repeats per engine; the median is reported",
    )
    p.add_argument("--only", action="append", help="run only this operation (repeatable)")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rows < 1:
        p.error("--rows and --repeat must be positive")

    env = h.environment()
    h.print_banner(env, versions=("pyarrow", "numpy"))
    print(
        f"rows {args.rows:,}, repeat {args.repeat} (median), "
        f"max_rows_per_file {args.max_rows_per_file:,}, data storage version {STORAGE_VERSION}"
    )
    started = time.perf_counter()
    with h.workdir("lance-semantic-bench-", args.tmpdir) as workdir:
        results = run_suite(
            args.rows,
            args.repeat,
            args.max_rows_per_file,
            workdir,
            set(args.only) if args.only else None,
        )
    print()
    print(h.format_table(results))
    print(
        "\nseconds: median of the timed runs; ratio: lance-semantic / pylance (medians); "
        "best: the same on the fastest runs"
    )
    print(
        f"(every result validated against the source table; {time.perf_counter() - started:.1f} s)"
    )
    parameters = {
        "rows": args.rows,
        "repeat": args.repeat,
        "max_rows_per_file": args.max_rows_per_file,
        "storage_version": STORAGE_VERSION,
    }
    return h.finish(args.json, env, parameters, results)


if __name__ == "__main__":
    raise SystemExit(main())
