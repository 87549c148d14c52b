"""Vector search on S3: pylance's ``nearest`` vs lance-semantic's over the same S3 table.

::

    python benchmarks/bench_vector_s3.py [--rows N] [--dim D] [--partitions P] [--sub-vectors M]
                                         [--repeat K] [--json out.json] [--tmpdir DIR]

One SeaweedFS server (``weed mini``, tests/s3/seaweed.py) on loopback holds one table, written
by pylance (data storage version 2.2): ``--rows`` rows (default 200,000) of ``id`` (int64) and
``v`` (``fixed_size_list<float32>[--dim]``, default 128, standard normal, seed 30, as
bench_vector.py), with pylance's IVF_PQ index (``--partitions`` 256, ``--sub-vectors`` 16).
Both engines read that one table with the same storage options.

What is timed (``k = 10``, ``columns=["id"]``, l2; a new query every round, on a handle each
engine opened once before the timing, so its caches are warm as a service's would be):

``flat``             ``nearest={..., "use_index": False}``: the exact search, a scan of ``v``
``ivf_pq``           ``nearest={..., "nprobes": 20}``: through the index (refine 0)
``ivf_pq refine 5``  the same with ``"refine_factor": 5`` (reads the refined rows' vectors)
``ivf_pq cold``      ``dataset(uri)`` and one ``nearest`` (nprobes 20): a fresh handle, so the
                     index files are opened and their partitions read anew

Method as ``bench_vector.py`` / ``_harness.measure``: an untimed warm-up round whose result is
compared with the other engine's (the same rows: both read pylance's index with the same
``nprobes`` and ``refine_factor``), then ``--repeat`` timed rounds with the engine that goes
first alternating; medians; ratio = ours / pylance (target 1.5x, issue 30 item 7).

Requests: after the timings, each case runs once more per engine, untimed, through a counting
proxy (``_counting_proxy.py``, a process of its own) on a handle opened through it, and the
GET requests and bytes are printed (the first query on a handle; then a second query).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
sys.path.insert(1, str(_HERE.parent))  # the checkout root, for tests/s3/seaweed.py
import _harness as h  # noqa: E402  (puts src/ on sys.path, sets LANCE_LOG)
import lance  # noqa: E402
from _counting_proxy import CountingProxy  # noqa: E402
from _harness import WrongResult  # noqa: E402
from tests.s3 import seaweed  # noqa: E402

import lance_semantic as ls  # noqa: E402

DEFAULT_ROWS, DEFAULT_DIM, K, NPROBES = 200_000, 128, 10, 20
TARGET = 1.5
CASES: dict[str, dict[str, Any]] = {
    "flat": {"use_index": False},
    "ivf_pq": {"nprobes": NPROBES},
    "ivf_pq refine 5": {"nprobes": NPROBES, "refine_factor": 5},
    "ivf_pq cold": {"nprobes": NPROBES},
}
LIBS = {"pylance": lance, "ours": ls}


def vectors(rows: int, dim: int) -> np.ndarray:
    return np.random.default_rng(30).standard_normal((rows, dim), dtype=np.float32)


def query(v: np.ndarray, r: int) -> np.ndarray:
    rng = np.random.default_rng(2000 + r)
    row = v[int(rng.integers(len(v)))]
    return (row + rng.standard_normal(row.shape, dtype=np.float32) * 0.1).astype(np.float32)


def search(ds: Any, q: np.ndarray, extra: dict[str, Any]) -> pa.Table:
    return ds.to_table(columns=["id"], nearest={"column": "v", "q": q, "k": K, **extra})


def requests_of(
    uri: str, options: dict[str, str], endpoint: str, v: np.ndarray, case: str
) -> list[str]:
    """Per engine, the GETs (count, ranged count, MB) of the case's first and second query on
    a handle opened through a counting proxy."""
    lines = []
    extra = CASES[case]
    for engine, lib in LIBS.items():
        proxy = CountingProxy(endpoint)
        try:
            counted = {**options, "aws_endpoint": proxy.endpoint}
            ds = lib.dataset(uri, storage_options=counted)
            for run in (1, 2):
                proxy.reset()
                search(ds, query(v, 100 + run), extra)
                log = proxy.log()
                kinds = Counter(r.kind for r in log)
                gets = [r for r in log if r.kind == "GET"]
                ranged = sum(1 for r in gets if r.range)
                mb = sum(r.received for r in gets) / 1e6
                lines.append(
                    f"{case:<16} query {run} {engine:<8} GET {kinds.get('GET', 0):>5} "
                    f"(ranged {ranged:>5}), HEAD {kinds.get('HEAD', 0):>3}, "
                    f"LIST {kinds.get('LIST', 0):>3}, {mb:8.2f} MB"
                )
        finally:
            proxy.stop()
    return lines


def main() -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p,
        rows_help="rows of the table (default 200,000)",
        repeat_help="timed rounds per engine",
        max_rows_per_file=True,
    )
    p.add_argument("--dim", type=int, default=DEFAULT_DIM)
    p.add_argument("--partitions", type=int, default=256)
    p.add_argument("--sub-vectors", type=int, default=16)
    args = p.parse_args()
    rows = args.rows if args.rows != h.DEFAULT_ROWS else DEFAULT_ROWS
    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    v = vectors(rows, args.dim)
    results: list[h.Result] = []
    request_lines: list[str] = []
    with h.workdir("bench-vector-s3-", args.tmpdir) as work:
        server = seaweed.start(Path(work))
        try:
            options = server.storage_options
            uri = server.uri("vectors")
            column = pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), args.dim)
            table = pa.table({"id": np.arange(rows), "v": column})
            lance.write_dataset(
                table,
                uri,
                data_storage_version="2.2",
                max_rows_per_file=args.max_rows_per_file,
                storage_options=options,
            )
            del table, column
            lance.dataset(uri, storage_options=options).create_index(
                "v", "IVF_PQ", num_partitions=args.partitions, num_sub_vectors=args.sub_vectors
            )
            handles = {e: lib.dataset(uri, storage_options=options) for e, lib in LIBS.items()}
            for case, extra in CASES.items():
                answers: list[pa.Table] = []

                def run(
                    engine: str, r: int, extra: dict[str, Any] = extra, case: str = case
                ) -> Any:
                    q = query(v, r)
                    if case.endswith("cold"):
                        lib = LIBS[engine]
                        return lambda: search(lib.dataset(uri, storage_options=options), q, extra)
                    ds = handles[engine]
                    return lambda: search(ds, q, extra)

                def check(
                    engine: str,
                    out: pa.Table,
                    full: bool,
                    answers: list[pa.Table] = answers,
                    case: str = case,
                ) -> None:
                    h.check_rows(f"{engine} nearest", out.num_rows, K)
                    if full:
                        answers.append(out)
                        if len(answers) == 2 and not answers[0]["id"].equals(answers[1]["id"]):
                            raise WrongResult(f"{case}: the engines' nearest rows differ")

                times = h.measure(list(LIBS), args.repeat, run, check)
                results.append(h.Result.of(case, times["pylance"], times["ours"], TARGET))
                print(f"  {case}: done", flush=True)
            for case in ("flat", "ivf_pq", "ivf_pq refine 5"):
                request_lines += requests_of(uri, options, server.endpoint, v, case)
        finally:
            server.stop()
    print(h.format_table(results))
    print()
    print("requests (a handle opened through a counting proxy; its first and second query):")
    print("\n".join(request_lines))
    params = {
        "rows": rows,
        "dim": args.dim,
        "partitions": args.partitions,
        "sub_vectors": args.sub_vectors,
        "k": K,
        "nprobes": NPROBES,
        "repeat": args.repeat,
    }
    if args.json:
        h.write_json(
            args.json,
            env,
            params,
            results=[r.__dict__ | {"status": r.status} for r in results],
            requests=request_lines,
        )
    return h.strict_exit([r.operation for r in results if r.status == "OVER"])


if __name__ == "__main__":
    sys.exit(main())
