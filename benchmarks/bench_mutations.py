"""Row mutations and the semantic-type upgrade, pylance vs lance-semantic in one process.

::

    python benchmarks/bench_mutations.py [--rows N] [--repeat K] [--upgrade-rows N]
                                         [--only OP ...] [--json out.json] [--tmpdir DIR]

Mutations (target: lance-semantic at most 1.5x pylance's time). A legacy table of ``--rows``
rows (default 2,000,000: ``id`` int64, ``f64`` float64, ``s`` string from ``datagen.py``; data
storage 2.2, 1,048,576 rows per file, so 2 fragments) is written once by pylance. Every round
gives each engine a fresh copy of it (``shutil.copytree`` then ``os.sync()``, untimed) and
times ``lance.dataset(uri).<op>`` against ``ls.dataset(uri).<op>`` (open included):

``delete``        ``delete("id % 100 = 7")``: 1 % of the rows, deletion files only
``update``        ``update({"f64": "f64 + 1.5"}, where="id % 100 = 7")``: 1 % rewritten
``merge_insert``  upsert of 20,000 keys on ``id``: 10,000 existing (``id % 200 = 7``) and
                  10,000 new; ``when_matched_update_all().when_not_matched_insert_all()``

Upgrade (target: 10M rows at most 1.2x 100 rows). ``ls.upgrade(uri)`` on a pylance-written
legacy table of 100 rows and of ``--upgrade-rows`` rows (default 10,000,000, 10 fragments),
built once; each round upgrades a fresh copy whose ``data/`` files are hard links (the upgrade
writes only a new manifest and transaction, so the copy costs no data I/O). pylance has no
upgrade; its ``update_config`` on the same tables (also one metadata-only commit) is shown
for context.

Method as in ``bench_core.py``: one untimed warm-up round per operation whose result is
checked in full, then ``--repeat`` timed rounds; the engine (or table size) that goes first
alternates; medians are reported (``best`` = ratio of the fastest runs). Each timed result is
checked outside the timing: the operation's counts, ``count_rows`` through the *other* engine
and 64 sampled keys against the expected rows; an upgrade must add exactly one version, set
the flag, keep the Arrow schema and leave every data file untouched.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
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
MAX_ROWS_PER_FILE = 1_048_576
MUTATION_TARGET = 1.5
UPGRADE_TARGET = 1.2
UPGRADE_SMALL = 100
UPGRADE_ROWS = 10_000_000
ENGINES = ("pylance", "lance-semantic")
COLUMNS = ["id", "f64", "s"]


# ---- the operations ---------------------------------------------------------------------------
def _open(engine: str, uri: str) -> Any:
    return lance.dataset(uri) if engine == "pylance" else ls.dataset(uri)


def _counts(result: Any, keys: tuple[str, ...]) -> tuple[int, ...]:
    """Counts from a pylance result dict or one of our result dataclasses."""
    return tuple(int(result[k] if isinstance(result, dict) else getattr(result, k)) for k in keys)


def _merge_source(rows: int) -> pa.Table:
    """20,000 keys (1 % of 2M): half existing (id % 200 = 7), half new (ids from ``rows``)."""
    n = max(rows // 100, 2)
    existing = np.arange(7, rows, 200, dtype=np.int64)[: n // 2]
    new = np.arange(rows, rows + n - len(existing), dtype=np.int64)
    ids = np.concatenate([existing, new])
    rng = np.random.default_rng(11)
    return pa.table(
        {
            "id": pa.array(ids),
            "f64": pa.array(rng.standard_normal(len(ids))),
            "s": pa.array([f"merged-{i}" for i in ids]),
        }
    )


class Mutation:
    """One mutation: the call, its expected counts and the expected table after it."""

    def __init__(self, name: str, source: pa.Table) -> None:
        self.name = name
        ids = source.column("id")
        hit = pa.array(ids.to_numpy() % 100 == 7)
        self.merge = _merge_source(source.num_rows) if name == "merge_insert" else None
        if name == "delete":
            self.keys = ("num_deleted_rows",)
            self.want_counts = (int(pc.sum(hit).as_py()),)
            self.expected = source.filter(pc.invert(hit))
        elif name == "update":
            self.keys = ("num_rows_updated",)
            self.want_counts = (int(pc.sum(hit).as_py()),)
            f = pc.if_else(hit, pc.add(source.column("f64"), 1.5), source.column("f64"))
            self.expected = source.set_column(1, "f64", f)
        else:
            assert self.merge is not None
            self.keys = ("num_inserted_rows", "num_updated_rows", "num_deleted_rows")
            matched = pc.is_in(ids, value_set=self.merge.column("id"))
            n_new = self.merge.num_rows - int(pc.sum(matched).as_py())
            self.want_counts = (n_new, int(pc.sum(matched).as_py()), 0)
            kept = source.filter(pc.invert(matched))
            self.expected = pa.concat_tables([kept, self.merge.cast(source.schema)])
        self.expected = self.expected.sort_by("id")

    def run(self, engine: str, uri: str) -> Callable[[], Any]:
        if self.name == "delete":
            return lambda: _open(engine, uri).delete("id % 100 = 7")
        if self.name == "update":
            return lambda: _open(engine, uri).update({"f64": "f64 + 1.5"}, where="id % 100 = 7")
        merge = self.merge

        def go() -> Any:
            ds = _open(engine, uri)
            builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            return builder.execute(merge)

        return go

    def check(self, engine: str, uri: str, result: Any, full: bool, sample: np.ndarray) -> None:
        got_counts = _counts(result, self.keys)
        if got_counts != self.want_counts:
            raise WrongResult(
                f"{engine} {self.name}: counts {got_counts}, expected {self.want_counts}"
            )
        other = _open("lance-semantic" if engine == "pylance" else "pylance", uri)
        if other.count_rows() != self.expected.num_rows:
            n = other.count_rows()
            raise WrongResult(f"{engine} {self.name}: {n} rows, expected {self.expected.num_rows}")
        if full:
            got = other.to_table().sort_by("id")
            if got.schema.types != self.expected.schema.types or not got.equals(self.expected):
                raise WrongResult(f"{engine} {self.name}: the table differs from the expected one")
            return
        keys = self.expected.column("id").take(pa.array(sample))
        want = self.expected.take(pa.array(sample))
        key_list = ", ".join(str(k) for k in keys.to_pylist())
        got = other.to_table(filter=f"id IN ({key_list})").sort_by("id")
        if not got.equals(want):
            raise WrongResult(f"{engine} {self.name}: sampled rows differ from the expected ones")


def _fresh_copy(base: str, dst: str, *, link_data: bool = False) -> str:
    """A copy of ``base`` at ``dst``; with ``link_data`` the data files are hard links."""
    if link_data:
        shutil.copytree(
            base,
            dst,
            ignore=lambda d, names: ["data"] if os.path.abspath(d) == os.path.abspath(base) else [],
        )
        shutil.copytree(
            os.path.join(base, "data"), os.path.join(dst, "data"), copy_function=os.link
        )
    else:
        shutil.copytree(base, dst)
    return dst


# ---- the suite --------------------------------------------------------------------------------
def run_mutations(rows: int, repeat: int, workdir: str, only: set[str] | None) -> list[h.Result]:
    source = generate(rows).select(COLUMNS)
    base = os.path.join(workdir, "base")
    lance.write_dataset(
        source, base, max_rows_per_file=MAX_ROWS_PER_FILE, data_storage_version=STORAGE_VERSION
    )
    results = []
    for name in ("delete", "update", "merge_insert"):
        if only is None or name in only:
            results.append(_bench_mutation(Mutation(name, source), base, repeat, workdir))
    shutil.rmtree(base, ignore_errors=True)
    return results


def _bench_mutation(m: Mutation, base: str, repeat: int, workdir: str) -> h.Result:
    sample = h.sample_rows(m.expected.num_rows, 5)
    uris: dict[str, str] = {}  # the copy each engine works on in the current round

    def prepare(engine: str, r: int) -> Callable[[], Any]:
        uris[engine] = _fresh_copy(base, os.path.join(workdir, f"{m.name}-{engine}-{r}"))
        os.sync()  # the copy's write-back happens now, not inside the timing
        return m.run(engine, uris[engine])

    def check(engine: str, out: Any, full: bool) -> None:
        m.check(engine, uris[engine], out, full, sample)

    def cleanup(engine: str, r: int) -> None:
        shutil.rmtree(uris[engine], ignore_errors=True)

    times = h.measure(ENGINES, repeat, prepare, check, cleanup)
    return h.Result.of(m.name, times[ENGINES[0]], times[ENGINES[1]], MUTATION_TARGET)


def _data_listing(uri: str) -> dict[str, tuple[int, int]]:
    d = os.path.join(uri, "data")
    return {
        n: (os.stat(os.path.join(d, n)).st_size, os.stat(os.path.join(d, n)).st_mtime_ns)
        for n in os.listdir(d)
    }


def run_upgrade(big_rows: int, repeat: int, workdir: str) -> list[h.Result]:
    bases = {}
    for label, n in (("small", UPGRADE_SMALL), ("large", big_rows)):
        bases[label] = os.path.join(workdir, f"legacy-{label}")
        t = generate(n).select(COLUMNS)
        lance.write_dataset(
            t,
            bases[label],
            max_rows_per_file=MAX_ROWS_PER_FILE,
            data_storage_version=STORAGE_VERSION,
        )
        del t
    before = {label: ls.dataset(b) for label, b in bases.items()}
    listings = {label: _data_listing(b) for label, b in bases.items()}
    return [
        _bench_upgrade(op, engine, bases, before, listings, repeat, workdir)
        for op, engine in (("upgrade", "lance-semantic"), ("update_config (pylance)", "pylance"))
    ]


def _bench_upgrade(
    op: str,
    engine: str,
    bases: dict[str, str],
    before: dict[str, Any],
    listings: dict[str, dict[str, tuple[int, int]]],
    repeat: int,
    workdir: str,
) -> h.Result:
    """``op`` on a fresh copy of the small and of the large table in every round."""
    uris: dict[str, str] = {}  # the copy of each table in the current round

    def prepare(label: str, r: int) -> Callable[[], Any]:
        dst = os.path.join(workdir, f"{op.split()[0]}-{label}-{r}")
        u = uris[label] = _fresh_copy(bases[label], dst, link_data=True)
        os.sync()
        if engine == "pylance":
            return lambda: lance.dataset(u).update_config({"bench": "1"})
        return lambda: ls.upgrade(u)

    def check(label: str, out: Any, full: bool) -> None:
        u = uris[label]
        old = before[label]
        if _data_listing(u) != listings[label]:
            raise WrongResult(f"{engine} {label}: data files changed")
        if engine == "pylance":
            return
        ds = ls.dataset(u)
        if ds.version != old.version + 1 or not ds.semantic_types:
            raise WrongResult(f"upgrade {label}: version {ds.version}, flag {ds.semantic_types}")
        if ds.schema.types != old.schema.types:
            raise WrongResult(f"upgrade {label}: read types changed")
        if full and ds.count_rows() != old.count_rows():
            raise WrongResult(f"upgrade {label}: row count changed")

    def cleanup(label: str, r: int) -> None:
        shutil.rmtree(uris[label], ignore_errors=True)

    times = h.measure(("small", "large"), repeat, prepare, check, cleanup)
    target = UPGRADE_TARGET if engine == "lance-semantic" else None
    return h.Result.of(op, times["small"], times["large"], target)


def format_upgrade(results: list[h.Result], big_rows: int) -> str:
    columns = (f"{UPGRADE_SMALL} rows s", f"{big_rows:,} rows s")
    return h.format_table(results, columns, widths=(24, 12, 16))


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p,
        rows_help="rows for the mutations",
        repeat_help="timed repeats; the median is reported",
        max_rows_per_file=False,
    )
    p.add_argument("--upgrade-rows", type=int, default=UPGRADE_ROWS, help="the large upgrade table")
    p.add_argument(
        "--only", action="append", help="delete, update, merge_insert or upgrade (repeatable)"
    )
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rows < 200 or args.upgrade_rows < 1:
        p.error("--repeat must be positive and --rows at least 200")
    only = set(args.only) if args.only else None

    env = h.environment()
    h.print_banner(env)
    started = time.perf_counter()
    mutations: list[h.Result] = []
    upgrades: list[h.Result] = []
    with h.workdir("lance-semantic-bench-mut-", args.tmpdir) as workdir:
        if only is None or only & {"delete", "update", "merge_insert"}:
            mutations = run_mutations(args.rows, args.repeat, workdir, only)
        if only is None or "upgrade" in only:
            upgrades = run_upgrade(args.upgrade_rows, args.repeat, workdir)
    if mutations:
        print(
            f"\nmutations: {args.rows:,} rows, 1 % touched, repeat {args.repeat} (median), "
            f"data storage {STORAGE_VERSION}, a fresh copy per run"
        )
        print(h.format_table(mutations))
    if upgrades:
        print(
            f"\nupgrade: legacy table of {UPGRADE_SMALL} vs {args.upgrade_rows:,} rows, "
            f"repeat {args.repeat} (median); ratio = large / small"
        )
        print(format_upgrade(upgrades, args.upgrade_rows))
    print(f"\n(every result validated outside the timing; {time.perf_counter() - started:.1f} s)")
    parameters = {
        "rows": args.rows,
        "upgrade_rows": args.upgrade_rows,
        "repeat": args.repeat,
        "storage_version": STORAGE_VERSION,
    }
    return h.finish(args.json, env, parameters, mutations + upgrades)


if __name__ == "__main__":
    raise SystemExit(main())
