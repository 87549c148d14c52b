"""The least a scan of many small fragments costs through pylance's file API, beside pylance.

::

    python benchmarks/bench_floor.py [--fragments N] [--repeat K] [--json out.json] [--tmpdir DIR]

One table of ``N`` fragments x 100 rows (default 200; written once by pylance, storage 2.2,
``datagen.py``'s columns as in ``bench_fragments.py``), scanned whole in one process by:

``pylance``             ``lance.dataset(uri).to_table()`` on a handle opened before the timing
``file API``            pylance's native file readers, opened before the timing, read by 8
                        threads (each starts its share of the reads, then takes their
                        batches: what ``storage/datafile.read_whole`` does, with none of our
                        Python around it)
``file API, uring``     the same through pylance's ``file+uring://`` scheme (io_uring; left
                        out, with the reason, where it cannot be opened)
``lance-semantic``      ``ls.dataset(uri).to_table()`` on a handle opened before the timing

Every round runs each variant once, in a shuffled order, after ``gc.collect()``; the first
round is an untimed warm-up whose results are compared in full with pylance's. Printed:
medians of wall time, its ratio to pylance's, CPU time of the process (``process_time``) and
context switches (``getrusage``, voluntary and involuntary) per scan. This is the floor the
many-fragment targets of ``bench_fragments.py`` sit on: see "The floor of the file API" in
``benchmarks/README.md``.
"""

from __future__ import annotations

import gc
import os
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
# _harness first: it puts src/ on sys.path and quiets pylance's log before lance loads
import _harness as h  # noqa: E402
import lance  # noqa: E402
import lance.file  # noqa: E402
from _harness import WrongResult  # noqa: E402
from bench_fragments import STORAGE_VERSION, _source  # noqa: E402

import lance_semantic as ls  # noqa: E402

ROWS_PER_FRAGMENT = 100
THREADS = 8


def _table(uri: str, fragments: int) -> None:
    lance.write_dataset(
        _source(fragments * ROWS_PER_FRAGMENT),
        uri,
        max_rows_per_file=ROWS_PER_FRAGMENT,
        data_storage_version=STORAGE_VERSION,
    )


def _file_api(base: str, names: list[str], pool: ThreadPoolExecutor) -> Callable[[], Any]:
    """The whole-table read by open native readers on ``pool`` (their files under ``base``)."""
    session = lance.file.LanceFileSession(base)
    readers = [session.open_reader(n)._reader for n in names]
    share = -(-len(readers) // THREADS)
    groups = [readers[i : i + share] for i in range(0, len(readers), share)]

    def read(group: list[Any]) -> list[pa.RecordBatch]:
        started = [r.read_range(0, ROWS_PER_FRAGMENT, ROWS_PER_FRAGMENT, 16) for r in group]
        return [s.read_next_batch() for s in started]

    def scan() -> pa.Table:
        futures = [pool.submit(read, g) for g in groups]
        return pa.Table.from_batches([b for f in futures for b in f.result()])

    scan()  # (fails here, before the timing, where the scheme cannot be read)
    return scan


def _switches() -> int:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_nvcsw + r.ru_nivcsw


def main() -> int:
    p = h.parser(__doc__)
    p.add_argument("--fragments", type=int, default=200)
    p.add_argument("--repeat", type=int, default=40)
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args()
    env = h.environment()
    h.print_banner(env)
    with h.workdir("bench-floor-", args.tmpdir) as work:
        uri = f"{work}/frag{args.fragments}"
        _table(uri, args.fragments)
        pl, us = lance.dataset(uri), ls.dataset(uri)
        names = [f.metadata.files[0].path for f in pl.get_fragments()]
        with ThreadPoolExecutor(THREADS) as pool:
            variants: dict[str, Callable[[], Any]] = {
                "pylance": pl.to_table,
                "file API": _file_api(f"{uri}/data", names, pool),
            }
            try:
                variants["file API, uring"] = _file_api(f"file+uring://{uri}/data", names, pool)
            except Exception as e:  # (no io_uring here: seccomp, kernel, platform)
                print(f"file API, uring: left out ({type(e).__name__}: {e})")
            variants["lance-semantic"] = us.to_table
            rows = _run(variants, args.repeat, pl.to_table())
    base = rows["pylance"]["ms"]
    print(f"\n{args.fragments} fragments x {ROWS_PER_FRAGMENT} rows, medians of {args.repeat}")
    print(f"{'variant':18s} {'ms':>8s} {'ratio':>7s} {'CPU ms':>8s} {'switches':>9s}")
    for name, r in rows.items():
        print(
            f"{name:18s} {r['ms']:8.2f} {r['ms'] / base:6.3f}x {r['cpu_ms']:8.1f} "
            f"{r['switches']:9.0f}"
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        h.write_json(args.json, env, vars(args), floor=rows)
    return 0


def _run(
    variants: dict[str, Callable[[], Any]], repeat: int, want: pa.Table
) -> dict[str, dict[str, float]]:
    wall: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    switches: dict[str, list[int]] = {k: [] for k in variants}
    order = list(variants)
    for r in range(repeat + 1):
        random.shuffle(order)
        for name in order:
            fn = variants[name]
            gc.collect()
            s0, c0, t0 = _switches(), time.process_time(), time.perf_counter()
            out = fn()
            t1, c1, s1 = time.perf_counter(), time.process_time(), _switches()
            if r == 0:
                if not out.combine_chunks().equals(want.combine_chunks()):
                    raise WrongResult(f"{name}: the scan differs from pylance's")
            else:
                h.check_rows(name, out.num_rows, want.num_rows)
                wall[name].append(t1 - t0)
                cpu[name].append(c1 - c0)
                switches[name].append(s1 - s0)
            del out
    med = statistics.median
    return {
        k: {"ms": med(wall[k]) * 1e3, "cpu_ms": med(cpu[k]) * 1e3, "switches": med(switches[k])}
        for k in variants
    }


if __name__ == "__main__":
    sys.exit(main())
