"""Commits and opens as tables grow: side by side with pylance at 1 and at 1,000 fragments.

Target (issue 13 item 3): append commit and open latest at most 1.5x pylance's time at 1 and at
1,000 fragments. Each engine gets its own twin table, built by its own single-row appends (so a
table of N fragments has N versions as well), data storage version 2.2.

- ``open latest (again)``: ``dataset(uri)`` of a version this process opened before;
- ``open latest (new)``: ``dataset(uri)`` right after another handle appended (the version is
  new to the process: the manifest is read, decoded and checked);
- ``append 1 row``: ``ds.insert(row)`` / ``lance.write_dataset(row, ds, mode="append")`` on a
  handle at the latest version (data file, transaction, manifest, hint).

Method as in ``bench_core.py`` (warm-up round, medians, alternating order); opens use
:func:`_harness.micro` (fastest of several blocks per round) where nothing changes between calls.
Every result is checked outside the timing: the row count of the version opened or written.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402  (puts src/ on sys.path, quiets pylance)
import lance  # noqa: E402
import pyarrow as pa  # noqa: E402

import lance_semantic as ls  # noqa: E402

TARGET = 1.5
SIZES = (1, 1000)
STORAGE_VERSION = "2.2"
ENGINES = ("pylance", "lance-semantic")


def _row(i: int) -> pa.Table:
    return pa.table({"i": pa.array([i], pa.int64()), "s": [f"row {i}"]})


def build(engine: str, uri: str, fragments: int) -> None:
    """A table of ``fragments`` single-row fragments, made by appends of that engine."""
    if engine == "pylance":
        ds = lance.write_dataset(_row(0), uri, data_storage_version=STORAGE_VERSION)
        for i in range(1, fragments):
            ds = lance.write_dataset(_row(i), ds, mode="append")
    else:
        ours = ls.write_dataset(_row(0), uri, data_storage_version=STORAGE_VERSION)
        for i in range(1, fragments):
            ours.insert(_row(i))


def _open(engine: str, uri: str) -> Any:
    return lance.dataset(uri) if engine == "pylance" else ls.dataset(uri)


def _append(engine: str, ds: Any, row: pa.Table) -> Any:
    if engine == "pylance":
        return lance.write_dataset(row, ds, mode="append")
    return ds.insert(row)


def _rows(ds: Any) -> int:
    return int(ds.count_rows())


def bench_open_again(uris: dict[str, str], repeat: int, n: int) -> h.Result:
    expected = {e: _rows(_open(e, u)) for e, u in uris.items()}

    def check(engine: str, ds: Any, full: bool) -> None:
        assert _rows(ds) == expected[engine]

    times = h.micro({e: (lambda e=e: _open(e, uris[e])) for e in ENGINES}, repeat, check)
    name = f"open latest (again) @{n}"
    return h.Result.of(name, times["pylance"], times["lance-semantic"], TARGET)


def bench_open_new(uris: dict[str, str], repeat: int, n: int) -> h.Result:
    writers = {e: _open(e, u) for e, u in uris.items()}
    counts = {e: _rows(w) for e, w in writers.items()}

    def run(engine: str, r: int) -> Callable[[], Any]:
        writers[engine] = _append(engine, writers[engine], _row(10_000 + r)) or writers[engine]
        counts[engine] += 1
        return lambda: _open(engine, uris[engine])

    def check(engine: str, ds: Any, full: bool) -> None:
        assert _rows(ds) == counts[engine]

    times = h.measure(ENGINES, repeat, run, check)
    return h.Result.of(f"open latest (new) @{n}", times["pylance"], times["lance-semantic"], TARGET)


def bench_append(uris: dict[str, str], repeat: int, n: int) -> h.Result:
    handles = {e: _open(e, u) for e, u in uris.items()}
    counts = {e: _rows(d) for e, d in handles.items()}

    def run(engine: str, r: int) -> Callable[[], Any]:
        ds = handles[engine] = _open(engine, uris[engine])  # at the latest version
        row = _row(20_000 + r)
        return lambda: _append(engine, ds, row)

    def check(engine: str, out: Any, full: bool) -> None:
        counts[engine] += 1
        assert _rows(_open(engine, uris[engine])) == counts[engine]

    times = h.measure(ENGINES, repeat, run, check)
    return h.Result.of(f"append 1 row @{n}", times["pylance"], times["lance-semantic"], TARGET)


CASES = {"open-again": bench_open_again, "open-new": bench_open_new, "append": bench_append}


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    p.add_argument("--repeat", type=int, default=9, help="timed repeats; the median is reported")
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="fragment counts")
    p.add_argument("--only", action="append", choices=sorted(CASES), help="cases (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args(argv)
    if args.repeat < 1 or min(args.sizes) < 1:
        p.error("--repeat and --sizes must be positive")
    env = h.environment()
    h.print_banner(env)
    started = time.perf_counter()
    results: list[h.Result] = []
    with h.workdir("lance-semantic-bench-commits-", args.tmpdir) as workdir:
        for n in args.sizes:
            uris = {e: os.path.join(workdir, f"{e}-{n}") for e in ENGINES}
            for engine, uri in uris.items():
                build(engine, uri, n)
            for name, case in CASES.items():
                if args.only is None or name in args.only:
                    results.append(case(uris, args.repeat, n))
    print(f"\ncommits and opens, data storage {STORAGE_VERSION}, repeat {args.repeat} (median)")
    print(h.format_table(results, widths=(28, 10, 17)))
    print(f"\n(every result validated outside the timing; {time.perf_counter() - started:.1f} s)")
    parameters = {"repeat": args.repeat, "sizes": args.sizes, "storage_version": STORAGE_VERSION}
    return h.finish(args.json, env, parameters, results)


if __name__ == "__main__":
    sys.exit(main())
