"""Vector search: pylance's ``nearest`` vs lance-semantic's, flat and through IVF indices.

Follows ``bench_core.py``'s method: the same work through both engines in one process, the
median of ``--repeat`` timings per engine (alternating which goes first), an untimed warm-up
round whose result is checked in full against the other engine, every timed result checked::

    python benchmarks/bench_vector.py [--rows N] [--dim D] [--repeat K] [--queries Q]
                                      [--no-flat] [--no-ivf] [--no-flagged-ivf]
                                      [--json out.json]

Data (deterministic): ``--rows`` rows (default 200,000) of ``id`` (int64) and ``v``
(``fixed_size_list<float32>[--dim]``, default 128, standard normal, seed 30), written by
pylance (data storage version 2.2, one fragment per 1,048,576 rows), without an index; and
the same rows in a flagged table written by lance-semantic (timed for information: pylance
cannot open it).

What is timed (``k = 10``, ``columns=["id"]``, l2; a new query every round):

``flat 1 query``     ``dataset(uri).to_table(columns=["id"], nearest={"column": "v", "q": q,
                     "k": 10})`` on a handle opened once
``flat 100 queries`` the same with a 2-D ``q`` of 100 queries (one result set per query)

``IVF_FLAT``, ``IVF_PQ`` pylance builds the index on the legacy table once
(``num_partitions`` = sqrt(rows), IVF_PQ ``num_sub_vectors`` = dim / 8, l2); both engines
                     then search the SAME index files through their own readers: each round
                     ``--queries`` (default 20) new queries in turn, each
                     ``dataset(uri).to_table(columns=["id"], nearest={"column": "v", "q": q,
                     "k": 10, "nprobes": 20[, "refine_factor": 5]})``, on handles opened
                     once (their caches fill as in real use: a round's queries probe
                     partitions the earlier rounds may not have read). Every timed round's
                     ids are checked against the other engine's (the same index and
                     nprobes: the same rows, but for float ties). The search kernels are
                     loaded before timing (``warm_up_search_kernels``).

For information (ours only): the same IVF searches on the flagged twin with the same kind of
index built by lance-semantic (``create_index`` with the same parameters), and the builds'
seconds of both engines.

Ratio is ours / pylance in time (below 1.0 means we are faster); ``best`` the same on the
fastest runs. Targets (issue 30): 1 query <= 1.0x, 100 queries <= 1.1x, IVF_FLAT / IVF_PQ
queries (refine none and 5) <= 1.2x.
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
from lance_semantic.vector import warm_up_search_kernels  # noqa: E402

DEFAULT_ROWS, DEFAULT_DIM, K = 200_000, 128, 10
NPROBES, REFINE, DEFAULT_QUERIES = 20, 5, 20
IVF_KINDS = ("IVF_FLAT", "IVF_PQ")
TARGETS = {
    "flat 1 query": 1.0,
    "flat 100 queries": 1.1,
    **{f"{kind} {refine}": 1.2 for kind in IVF_KINDS for refine in ("refine -", "refine 5")},
}


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


def ivf_params(kind: str, rows: int, dim: int) -> dict[str, Any]:
    """The index both engines build (pylance's on the legacy table, ours on the flagged twin)."""
    params: dict[str, Any] = {"num_partitions": max(1, int(np.sqrt(rows))), "metric": "l2"}
    if kind == "IVF_PQ":
        params["num_sub_vectors"] = max(1, dim // 8)
    return params


def ivf_search(ds: Any, qs: np.ndarray, refine: int | None) -> list[pa.Table]:
    """One round: each query of ``qs`` in turn, through the index."""
    out = []
    for q in qs:
        near: dict[str, Any] = {"column": "v", "q": q, "k": K, "nprobes": NPROBES}
        if refine is not None:
            near["refine_factor"] = refine
        out.append(ds.to_table(columns=["id"], nearest=near))
    return out


def same_rows(a: list[pa.Table], b: list[pa.Table], what: str) -> None:
    """The same ids per query, but where distances tie (float rounding may order them apart,
    or pick another row at the k-th distance)."""
    if len(a) != len(b):
        raise WrongResult(f"{what}: {len(a)} result sets against {len(b)}")
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        h.check_rows(f"{what} query {i}", x.num_rows, y.num_rows)
        ids_x, ids_y = x["id"].to_numpy(), y["id"].to_numpy()
        if np.array_equal(ids_x, ids_y):
            continue
        d = x["_distance"].to_numpy()
        for j in np.flatnonzero(ids_x != ids_y):
            tied = np.abs(d - d[j]) <= 1e-5 * max(abs(float(d[j])), 1.0)
            if ids_y[j] not in ids_x[tied] and j != len(d) - 1:
                raise WrongResult(f"{what} query {i}: the engines' nearest rows differ")


def ivf_cases(
    args: Any,
    v: np.ndarray,
    legacy: str,
    flagged: str,
    results: list[h.Result],
    info: dict[str, float],
) -> None:
    """The IVF cases: pylance's index on ``legacy`` searched by both engines; ours on
    ``flagged`` (ours only)."""
    n = args.queries
    for kind in IVF_KINDS:
        params = ivf_params(kind, len(v), v.shape[1])
        info[f"{kind} build, pylance"], _ = h.timed(
            lambda kind=kind, params=params: lance.dataset(legacy).create_index(
                "v", kind, replace=True, **params
            )
        )
        if args.flagged_ivf:
            info[f"{kind} build, ours (flagged)"], _ = h.timed(
                lambda kind=kind, params=params: ls.dataset(flagged).create_index(
                    "v", kind, replace=True, **params
                )
            )
        engines = {"pylance": lance.dataset(legacy), "ours": ls.dataset(legacy)}
        mine_flagged = ls.dataset(flagged)
        for refine in (None, REFINE):
            name = f"{kind} refine {'-' if refine is None else refine}"
            queries = {r: query(v, 500 + r, n) for r in range(args.repeat + 1)}
            answers: dict[int, list[pa.Table]] = {}
            at: list[int] = [0]

            def run(
                engine: str,
                r: int,
                queries: dict[int, np.ndarray] = queries,
                refine: int | None = refine,
                at: list[int] = at,
                engines: dict[str, Any] = engines,
            ) -> Any:
                at[0] = r
                ds = engines[engine]
                return lambda: ivf_search(ds, queries[r], refine)

            def check(
                engine: str,
                out: list[pa.Table],
                full: bool,
                answers: dict[int, list[pa.Table]] = answers,
                name: str = name,
                at: list[int] = at,
            ) -> None:
                r = at[0]
                if r in answers:  # the other engine ran this round first
                    same_rows(answers.pop(r), out, f"{name} round {r}")
                else:
                    answers[r] = out

            times = h.measure(["pylance", "ours"], args.repeat, run, check)
            results.append(h.Result.of(name, times["pylance"], times["ours"], TARGETS.get(name)))
            if not args.flagged_ivf:
                continue
            runs = [
                h.timed(
                    lambda r=r, qs=queries, f=refine, ds=mine_flagged: ivf_search(ds, qs[r], f)
                )[0]
                for r in range(1, args.repeat + 1)
            ]
            info[f"{name}, ours on the flagged twin's own index"] = float(np.median(runs))


def main() -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p, rows_help="rows of the table (default 200,000)", repeat_help="timed rounds per engine"
    )
    p.add_argument("--dim", type=int, default=DEFAULT_DIM)
    p.add_argument(
        "--queries", type=int, default=DEFAULT_QUERIES, help="queries per IVF round (default 20)"
    )
    p.add_argument("--no-flat", action="store_true", help="skip the flat cases")
    p.add_argument("--no-ivf", action="store_true", help="skip the IVF cases")
    p.add_argument(
        "--no-flagged-ivf",
        dest="flagged_ivf",
        action="store_false",
        help="skip our index build and search on the flagged twin (information only)",
    )
    args = p.parse_args()
    rows = args.rows if args.rows != h.DEFAULT_ROWS else DEFAULT_ROWS
    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    v = vectors(rows, args.dim)
    results: list[h.Result] = []
    flagged_runs: dict[str, list[float]] = {}
    info: dict[str, float] = {}
    warm_up_search_kernels()
    with h.workdir("bench-vector-", args.tmpdir) as work:
        legacy, flagged = f"{work}/legacy.lance", f"{work}/flagged.lance"
        data = table(v)
        lance.write_dataset(data, legacy, data_storage_version="2.2")
        ls.write_dataset(data, flagged, semantic_types=True)
        del data
        engines = {"pylance": lance.dataset(legacy), "ours": ls.dataset(legacy)}
        mine_flagged = ls.dataset(flagged)
        flat_cases = () if args.no_flat else (("flat 1 query", 1), ("flat 100 queries", 100))
        for name, n in flat_cases:
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
        if not args.no_ivf:
            ivf_cases(args, v, legacy, flagged, results, info)
    print(h.format_table(results))
    for name, runs in flagged_runs.items():
        print(f"flagged table, ours only: {name}: median {np.median(runs):.4f} s")
    for name, seconds in info.items():
        print(f"for information: {name}: {seconds:.4f} s")
    params = {
        "rows": rows,
        "dim": args.dim,
        "k": K,
        "repeat": args.repeat,
        "nprobes": NPROBES,
        "queries_per_ivf_round": args.queries,
    }
    return h.finish(args.json, env, params, results)


if __name__ == "__main__":
    sys.exit(main())
