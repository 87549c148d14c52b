"""Concurrent writers: how often a commit fails with a conflict, pylance vs lance-semantic.

::

    python benchmarks/bench_conflicts.py [--procs 4] [--iters 40] [--rows 200] [--rounds 3]
                                         [--only ours|pylance ...] [--json out.json]

For each engine and round, a table of ``--procs`` x ``--rows`` rows (``id`` int64, ``f``
float64; two fragments, so every fragment holds rows of several writers) is written by that
engine. ``--procs`` spawned processes, released together at a barrier, then each run
``--iters`` operations on their own ids only (writer ``p`` owns ids ``p * rows ...`` and
inserts new ids from ``10**9 + p * 10**6``), cycling through

``append``        two new rows
``delete``        ``delete("id IN (a, b)")``: two of its live rows
``update``        ``update({"f": "f + 1"}, where="id IN (a, b)")``
``merge_insert``  ``merge_insert("id")``: two of its live rows (f + 1) and one new row

each on a handle opened just before (so writers race on every commit). The id ranges are
disjoint, so no two writers ever change the same row: a conflict is the engine refusing work
that could have been rebased. An operation that raises a conflict (ours:
``CommitConflictError``; pylance: an error naming a commit conflict or write contention) is
counted and changed nothing; each writer tracks what its rows must be.

Checked after each round: the final table holds exactly the expected rows and values (no lost
or duplicated rows) read by both libraries, and every version of the table opens in both
libraries with the same row count and no duplicated id.

Printed: per operation, attempts and conflict rate for both engines, side by side.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402,F401  (sys.path for src/, LANCE_LOG)
import lance  # noqa: E402
import pyarrow as pa  # noqa: E402

import lance_semantic as ls  # noqa: E402

OPS = ("append", "delete", "update", "merge_insert")
TIMEOUT = 600


def _table(ids: list[int], f: list[float]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "f": pa.array(f, pa.float64())})


def _engine(name: str) -> Any:
    return ls if name == "ours" else lance


def _is_conflict(e: BaseException) -> bool:
    if isinstance(e, ls.CommitConflictError):
        return True
    text = f"{type(e).__name__} {e}".lower()
    return "conflict" in text or "contention" in text


_barrier: Any = None


def _init(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def _worker(engine: str, uri: str, p: int, rows: int, iters: int, seed: int) -> Any:
    mod = _engine(engine)
    rng = random.Random(seed)
    live = {i: float(i) for i in range(p * rows, (p + 1) * rows)}
    fresh = iter(range(10**9 + p * 10**6, 10**9 + (p + 1) * 10**6))
    attempts: Counter[str] = Counter()
    conflicts: Counter[str] = Counter()
    errors: list[str] = []
    _barrier.wait(TIMEOUT)
    for k in range(iters):
        op = OPS[(k + p) % len(OPS)]
        pick = rng.sample(sorted(live), 2)
        attempts[op] += 1
        try:
            if op == "append":
                new = [next(fresh), next(fresh)]
                mod.write_dataset(_table(new, [float(i) for i in new]), uri, mode="append")
                live.update({i: float(i) for i in new})
                continue
            ds = mod.dataset(uri)
            where = f"id IN ({pick[0]}, {pick[1]})"
            if op == "delete":
                ds.delete(where)
                for i in pick:
                    del live[i]
            elif op == "update":
                ds.update({"f": "f + 1"}, where=where)
                for i in pick:
                    live[i] += 1
            else:
                new = next(fresh)
                src = _table([*pick, new], [live[pick[0]] + 1, live[pick[1]] + 1, float(new)])
                ds.merge_insert(
                    "id"
                ).when_matched_update_all().when_not_matched_insert_all().execute(src)
                live.update({pick[0]: live[pick[0]] + 1, pick[1]: live[pick[1]] + 1, new: new})
        except Exception as e:  # noqa: BLE001 -- counted and reported
            if _is_conflict(e):
                conflicts[op] += 1
            else:
                errors.append(f"{op}: {type(e).__name__}: {e}")
    return dict(attempts), dict(conflicts), live, errors


def _check(uri: str, expected: dict[int, float]) -> list[str]:
    problems = []
    for name, t in (
        ("ours", ls.dataset(uri).to_table()),
        ("pylance", lance.dataset(uri).to_table()),
    ):
        ids = t["id"].to_pylist()
        if len(ids) != len(set(ids)):
            problems.append(f"{name} reads duplicated ids")
        got = dict(zip(ids, t["f"].to_pylist(), strict=True))
        if got != expected:
            lost = sorted(set(expected) - set(got))[:5]
            extra = sorted(set(got) - set(expected))[:5]
            wrong = sorted(i for i in set(got) & set(expected) if got[i] != expected[i])[:5]
            problems.append(f"{name}: lost {lost} extra {extra} wrong values {wrong}")
    latest = lance.dataset(uri).version
    for v in range(1, latest + 1):
        theirs = lance.dataset(uri, version=v)
        ours = ls.dataset(uri, version=v)
        ids = ours.to_table(columns=["id"])["id"].to_pylist()
        if theirs.count_rows() != ours.count_rows() or len(ids) != len(set(ids)):
            problems.append(f"version {v}: pylance {theirs.count_rows()} rows, ours {len(ids)}")
    return problems


def run_round(engine: str, tmp: Path, args: argparse.Namespace, r: int) -> dict[str, Any]:
    uri = str(tmp / f"{engine}-{r}")
    n = args.procs * args.rows
    base = _table(list(range(n)), [float(i) for i in range(n)])
    _engine(engine).write_dataset(base, uri, max_rows_per_file=(n + 1) // 2)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(args.procs)
    t0 = time.perf_counter()
    with ctx.Pool(args.procs, initializer=_init, initargs=(barrier,)) as pool:
        jobs = [
            pool.apply_async(_worker, (engine, uri, p, args.rows, args.iters, 1000 * r + p))
            for p in range(args.procs)
        ]
        outs = [j.get(TIMEOUT) for j in jobs]
    elapsed = time.perf_counter() - t0
    attempts: Counter[str] = Counter()
    conflicts: Counter[str] = Counter()
    expected: dict[int, float] = {}
    errors: list[str] = []
    for a, c, live, err in outs:
        attempts.update(a)
        conflicts.update(c)
        expected.update(live)
        errors += err
    problems = _check(uri, expected)
    shutil.rmtree(uri, ignore_errors=True)
    return {
        "attempts": dict(attempts),
        "conflicts": dict(conflicts),
        "errors": errors,
        "problems": problems,
        "seconds": elapsed,
    }


def _rate(c: int, a: int) -> str:
    return f"{100 * c / a:5.1f} % ({c}/{a})" if a else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="*", choices=["ours", "pylance"], default=["pylance", "ours"])
    ap.add_argument("--json")
    ap.add_argument("--tmpdir")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-conflicts-", dir=args.tmpdir))
    totals: dict[str, dict[str, Counter[str]]] = {}
    failed = False
    try:
        for r in range(args.rounds):
            for engine in args.only if r % 2 == 0 else list(reversed(args.only)):
                res = run_round(engine, tmp, args, r)
                t = totals.setdefault(engine, {"attempts": Counter(), "conflicts": Counter()})
                t["attempts"].update(res["attempts"])
                t["conflicts"].update(res["conflicts"])
                status = "ok" if not (res["errors"] or res["problems"]) else "FAILED"
                failed |= status != "ok"
                print(f"round {r} {engine:8s} {res['seconds']:6.1f} s  {status}")
                for line in res["errors"][:5] + res["problems"]:
                    print(f"    {line}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\n{args.procs} processes x {args.iters} operations x {args.rounds} rounds, "
        f"disjoint ids; conflict rate = failed / attempted"
    )
    print(f"{'operation':14s}" + "".join(f"{e:>24s}" for e in args.only))
    for op in (*OPS, "all"):
        cells = []
        for e in args.only:
            a = totals[e]["attempts"]
            c = totals[e]["conflicts"]
            if op == "all":
                cells.append(_rate(sum(c.values()), sum(a.values())))
            else:
                cells.append(_rate(c[op], a[op]))
        print(f"{op:14s}" + "".join(f"{c:>24s}" for c in cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({e: {k: dict(v) for k, v in t.items()} for e, t in totals.items()}, f)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
