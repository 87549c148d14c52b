"""Vector search: pylance's flat ``nearest`` vs lance-semantic's exact search, side by side.

Follows ``bench_core.py``'s method: the same work through both engines in one process, the
median of ``--repeat`` timings per engine (alternating which goes first), an untimed warm-up
round whose result is checked in full against the other engine, every timed result checked::

    python benchmarks/bench_vector.py [--rows N] [--dim D] [--repeat K] [--json out.json]

Data (deterministic): ``--rows`` rows (default 200,000) of ``id`` (int64) and ``v``
(``fixed_size_list<float32>[--dim]``, default 128, standard normal, seed 30), written by
pylance (data storage version 2.2, one fragment per 1,048,576 rows), without an index; and
the same rows in a flagged table written by lance-semantic (timed for information: pylance
cannot open it).

What is timed (``k = 10``, ``columns=["id"]``, l2; a new query every round):

``flat 1 query``     ``dataset(uri).to_table(columns=["id"], nearest={"column": "v", "q": q,
                     "k": 10})`` on a handle opened once
``flat 100 queries`` the same with a 2-D ``q`` of 100 queries (one result set per query)

Ratio is ours / pylance in time (below 1.0 means we are faster); ``best`` the same on the
fastest runs. Targets (issue 30): 1 query <= 1.0x, 100 queries <= 1.1x.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (puts src/ on sys.path, sets LANCE_LOG)
import lance  # noqa: E402
from _harness import WrongResult  # noqa: E402

import lance_semantic as ls  # noqa: E402

DEFAULT_ROWS, DEFAULT_DIM, K = 200_000, 128, 10
TARGETS = {"flat 1 query": 1.0, "flat 100 queries": 1.1}


def vectors(rows: int, dim: int) -> np.ndarray:
    return np.random.default_rng(30).standard_normal((rows, dim), dtype=np.float32)


def table(v: np.ndarray) -> pa.Table:
    column = pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), v.shape[1])
    return pa.table({"id": np.arange(len(v)), "v": column})


def query(v: np.ndarray, r: int, n: int) -> np.ndarray:
    """Round ``r``'s queries: ``n`` rows of the table, moved a little (no exact hit)."""
    rng = np.random.default_rng(1000 + r)
    picked = v[rng.choice(len(v), size=n, replace=False)]
    return (picked + rng.standard_normal(picked.shape, dtype=np.float32) * 0.1).astype(np.float32)


def search(ds: Any, q: np.ndarray) -> pa.Table:
    near = {"column": "v", "q": q if len(q) > 1 else q[0], "k": K}
    return ds.to_table(columns=["id"], nearest=near)


def main() -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p, rows_help="rows of the table (default 200,000)", repeat_help="timed rounds per engine"
    )
    p.add_argument("--dim", type=int, default=DEFAULT_DIM)
    args = p.parse_args()
    rows = args.rows if args.rows != h.DEFAULT_ROWS else DEFAULT_ROWS
    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    v = vectors(rows, args.dim)
    results: list[h.Result] = []
    flagged_runs: dict[str, list[float]] = {}
    with h.workdir("bench-vector-", args.tmpdir) as work:
        legacy, flagged = f"{work}/legacy.lance", f"{work}/flagged.lance"
        data = table(v)
        lance.write_dataset(data, legacy, data_storage_version="2.2")
        ls.write_dataset(data, flagged, semantic_types=True)
        del data
        engines = {"pylance": lance.dataset(legacy), "ours": ls.dataset(legacy)}
        mine_flagged = ls.dataset(flagged)
        for name, n in (("flat 1 query", 1), ("flat 100 queries", 100)):
            queries = {r: query(v, r, n) for r in range(args.repeat + 1)}
            answers: dict[int, pa.Table] = {}

            def run(engine: str, r: int, queries: dict[int, np.ndarray] = queries) -> Any:
                ds = engines[engine]
                return lambda: search(ds, queries[r])

            def check(
                engine: str,
                out: pa.Table,
                full: bool,
                n: int = n,
                answers: dict[int, pa.Table] = answers,
            ) -> None:
                h.check_rows(f"{engine} nearest", out.num_rows, n * K)
                if full:
                    key = len(answers)
                    answers[key] = out
                    if key == 1 and not answers[0]["id"].equals(answers[1]["id"]):
                        raise WrongResult("the engines' nearest rows differ")

            times = h.measure(["pylance", "ours"], args.repeat, run, check)
            results.append(h.Result.of(name, times["pylance"], times["ours"], TARGETS.get(name)))
            flagged_runs[name] = [
                h.timed(lambda r=r, qs=queries: search(mine_flagged, qs[r]))[0]
                for r in range(1, args.repeat + 1)
            ]
    print(h.format_table(results))
    for name, runs in flagged_runs.items():
        print(f"flagged table, ours only: {name}: median {np.median(runs):.4f} s")
    params = {"rows": rows, "dim": args.dim, "k": K, "repeat": args.repeat}
    return h.finish(args.json, env, params, results)


if __name__ == "__main__":
    sys.exit(main())
