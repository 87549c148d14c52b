"""Many fragments, selective filters and large takes, pylance vs lance-semantic in one process.

::

    python benchmarks/bench_fragments.py [--repeat K] [--only CASE ...] [--json out.json]
                                         [--tmpdir DIR]

Tables (written once by pylance, legacy, data storage 2.2; columns ``id`` int64 = row
position, ``i`` int64 = ``id``, ``f64`` float64, ``s`` string from ``datagen.py``):

- ``frag200``: 200 fragments x 100 rows; ``frag1000``: 1,000 fragments x 100 rows;
- ``big1``: 2,000,000 rows in one fragment; ``big2``: 2,000,000 rows in 2 fragments
  (1,048,576 rows per file, as ``bench_core.py``).

Cases (one function each, listed in :data:`CASES`; target 1.1x unless noted). Each times the
read on a handle opened once before the timing (opening is measured elsewhere), both engines
side by side, the one going first alternating; medians are reported (``best`` = ratio of the
fastest runs). Every result is checked outside the timing against the source data.

``scan 200``          ``to_table()`` of ``frag200``
``scan 1000``         ``to_table()`` of ``frag1000``
``count filter 200``  ``count_rows("i % 7 = 0")`` on ``frag200``
``selective 2M``      ``to_table(filter="i < 1000")`` on ``big1``
``non-selective 2M``  ``to_table(filter="f64 > -1.0")`` on ``big1`` (about 84 % of the rows;
                      target: no slower than before, shown against 1.1x)
``id = 5 at 1000``    ``to_table(filter="id = 5")`` on ``frag1000``
``take 100k``         ``take`` of 100,000 sorted distinct rows of ``big2``
``delete 1 at 1000``  ``delete("id = k")`` of one row of ``frag1000`` (target 1.5x)
``update 1 at 1000``  ``update({"f64": "-5.0"}, where="id = k")`` of one row of ``frag1000``
                      (target 1.5x)

The two mutations run on a copy of ``frag1000`` per engine, a different row each round
(each commits a version: later rounds meet the earlier rounds' deletion files), and are
checked outside the timing by the row's absence (or new value) and the table's row count.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
# _harness first: it puts src/ on sys.path and quiets pylance's log before lance loads
import _harness as h  # noqa: E402
import lance  # noqa: E402
from _harness import WrongResult  # noqa: E402
from datagen import generate  # noqa: E402

import lance_semantic as ls  # noqa: E402

STORAGE_VERSION = "2.2"
TARGET = 1.1
ENGINES = ("pylance", "lance-semantic")


def _source(rows: int) -> pa.Table:
    t = generate(rows)
    return pa.table({"id": t["id"], "i": t["id"], "f64": t["f64"], "s": t["s"]})


class Tables:
    """The benchmark tables, written on first use under ``workdir``."""

    LAYOUT = {
        "frag200": (20_000, 100),
        "frag1000": (100_000, 100),
        "big1": (2_000_000, 2_000_000),
        "big2": (2_000_000, 1_048_576),
    }

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.data: dict[str, pa.Table] = {}

    def uri(self, name: str) -> str:
        if name not in self.data:
            rows, per_file = self.LAYOUT[name]
            self.data[name] = _source(rows)
            lance.write_dataset(
                self.data[name],
                f"{self.workdir}/{name}",
                max_rows_per_file=per_file,
                data_storage_version=STORAGE_VERSION,
            )
        return f"{self.workdir}/{name}"

    def open(self, engine: str, name: str) -> Any:
        uri = self.uri(name)
        ds = lance.dataset(uri) if engine == "pylance" else ls.dataset(uri)
        want = rows_of(self.LAYOUT[name])
        h.check_rows(f"{engine} {name}", len(ds.get_fragments()), want)
        return ds


def rows_of(layout: tuple[int, int]) -> int:
    rows, per_file = layout
    return -(-rows // per_file)


@dataclass
class Case:
    name: str
    table: str
    work: Callable[[Any], Any]
    expected: Callable[[pa.Table], Any]
    target: float | None = TARGET


def _equal(engine: str, case: str, got: Any, want: Any, full: bool) -> None:
    if isinstance(want, int):
        if got != want:
            raise WrongResult(f"{engine} {case}: {got}, expected {want}")
        return
    h.check_rows(f"{engine} {case}", got.num_rows, want.num_rows)
    if full:
        if not got.equals(want):
            raise WrongResult(f"{engine} {case}: result differs from the source")
        return
    rows = h.sample_rows(want.num_rows, 7) if want.num_rows else np.array([], dtype=np.int64)
    if not got.take(rows).equals(want.take(rows)):
        raise WrongResult(f"{engine} {case}: sampled rows differ from the source")


def _scan(ds: Any) -> Any:
    return ds.to_table()


def _count_filter(ds: Any) -> Any:
    return ds.count_rows("i % 7 = 0")


def _selective(ds: Any) -> Any:
    return ds.to_table(filter="i < 1000")


def _non_selective(ds: Any) -> Any:
    return ds.to_table(filter="f64 > -1.0")


def _id5(ds: Any) -> Any:
    return ds.to_table(filter="id = 5")


TAKE_ROWS = np.sort(np.random.default_rng(13).choice(2_000_000, 100_000, replace=False))


def _take(ds: Any) -> Any:
    return ds.take(TAKE_ROWS)


CASES = [
    Case("scan 200", "frag200", _scan, lambda t: t),
    Case("scan 1000", "frag1000", _scan, lambda t: t),
    Case(
        "count filter 200",
        "frag200",
        _count_filter,
        lambda t: int((t["i"].to_numpy() % 7 == 0).sum()),
    ),
    Case("selective 2M", "big1", _selective, lambda t: t.filter(pc.less(t["i"], 1000))),
    Case(
        "non-selective 2M", "big1", _non_selective, lambda t: t.filter(pc.greater(t["f64"], -1.0))
    ),
    Case("id = 5 at 1000", "frag1000", _id5, lambda t: t.filter(pc.equal(t["id"], 5))),
    Case("take 100k", "big2", _take, lambda t: t.take(pa.array(TAKE_ROWS))),
]


#: rows of ``frag1000`` the mutation rounds change (one per round, spread over fragments)
MUTATED = [int(k) for k in np.random.default_rng(5).choice(100_000, 64, replace=False)]


@dataclass
class Mutation:
    name: str
    work: Callable[[Any, int], Any]
    check: Callable[[str, Any, int, int], None]
    target: float = 1.5


def _delete_one(ds: Any, k: int) -> Any:
    return ds.delete(f"id = {k}")


def _update_one(ds: Any, k: int) -> Any:
    return ds.update({"f64": "-5.0"}, where=f"id = {k}")


def _deleted(engine: str, ds: Any, k: int, done: int) -> None:
    h.check_rows(f"{engine} delete", ds.count_rows(), 100_000 - done)
    if ds.count_rows(f"id = {k}"):
        raise WrongResult(f"{engine} delete: row {k} is still there")


def _updated(engine: str, ds: Any, k: int, done: int) -> None:
    h.check_rows(f"{engine} update", ds.count_rows(), 100_000)
    got = ds.to_table(columns=["f64"], filter=f"id = {k}").column("f64").to_pylist()
    if got != [-5.0]:
        raise WrongResult(f"{engine} update: row {k} holds {got}")


MUTATIONS = [
    Mutation("delete 1 at 1000", _delete_one, _deleted),
    Mutation("update 1 at 1000", _update_one, _updated),
]


def run_mutation(m: Mutation, tables: Tables, repeat: int) -> h.Result:
    source = tables.uri("frag1000")
    handles = {}
    for e in ENGINES:
        copy = f"{tables.workdir}/{m.name.split()[0]}-{e}"
        shutil.copytree(source, copy)
        handles[e] = lance.dataset(copy) if e == "pylance" else ls.dataset(copy)
    done = {e: 0 for e in ENGINES}

    def run(engine: str, r: int) -> Callable[[], Any]:
        ds, k = handles[engine], MUTATED[r]
        return lambda: m.work(ds, k)

    def check(engine: str, out: Any, full: bool) -> None:
        done[engine] += 1
        m.check(engine, handles[engine], MUTATED[done[engine] - 1], done[engine])

    times = h.measure(list(ENGINES), repeat, run, check)
    return h.Result.of(m.name, times["pylance"], times["lance-semantic"], m.target)


def run_case(case: Case, tables: Tables, repeat: int) -> h.Result:
    handles = {e: tables.open(e, case.table) for e in ENGINES}
    want = case.expected(tables.data[case.table])

    def run(engine: str, r: int) -> Callable[[], Any]:
        ds = handles[engine]
        return lambda: case.work(ds)

    def check(engine: str, out: Any, full: bool) -> None:
        _equal(engine, case.name, out, want, full)

    times = h.measure(list(ENGINES), repeat, run, check)
    return h.Result.of(case.name, times["pylance"], times["lance-semantic"], case.target)


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    p.add_argument("--repeat", type=int, default=7, help="timed rounds per case")
    p.add_argument("--only", action="append", help="a case name (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args(argv)
    names = [c.name for c in CASES] + [m.name for m in MUTATIONS]
    if args.repeat + 1 > len(MUTATED):
        p.error(f"--repeat is at most {len(MUTATED) - 1}")
    unknown = set(args.only or ()) - set(names)
    if unknown:
        p.error(f"unknown case(s) {sorted(unknown)}; cases: {names}")
    env = h.environment()
    h.print_banner(env)
    results = []
    with h.workdir("bench-fragments-", args.tmpdir) as workdir:
        tables = Tables(workdir)
        for case in CASES:
            if args.only and case.name not in args.only:
                continue
            results.append(run_case(case, tables, args.repeat))
            print(h.format_table(results[-1:], widths=(18, 10, 17)).splitlines()[-1], flush=True)
        for m in MUTATIONS:
            if args.only and m.name not in args.only:
                continue
            results.append(run_mutation(m, tables, args.repeat))
            print(h.format_table(results[-1:], widths=(18, 10, 17)).splitlines()[-1], flush=True)
    print()
    print(h.format_table(results, widths=(18, 10, 17)))
    return h.finish(args.json, env, {"repeat": args.repeat}, results)


if __name__ == "__main__":
    sys.exit(main())
