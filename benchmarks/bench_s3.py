"""Tables on S3, lance-semantic against pylance: timings and the requests each engine makes.

::

    python benchmarks/bench_s3.py [--rows N] [--repeat K] [--append-rows N] [--only OP ...]
                                  [--json out.json] [--tmpdir DIR] [--requests]

One SeaweedFS server (``weed mini``, tests/s3/seaweed.py) runs on loopback for the whole run.
Both engines use its one bucket, each under its own prefixes (``s3://lance-semantic/<engine>/
...``), with the same pylance-style ``storage_options``. Operations (data storage version 2.2,
the same ``max_rows_per_file`` for both, so ``--rows`` 500,000 make one fragment):

``write``    ``write_dataset(table, uri, mode="create")`` of ``--rows`` rows from ``datagen.py``
             (a new prefix per round, removed after its checks; ``os.sync()`` before each)
``open``     ``dataset(uri)``: open the latest version of that table
``scan``     ``dataset(uri).to_table()``
``take``     ``dataset(uri).take(idx)``, 1,000 distinct random rows in random order
``append``   ``write_dataset(rows, uri, mode="append")`` of ``--append-rows`` rows (default 10)
             to an existing table of 1,000 rows (each round adds one version)
``insert``   the same append on a handle at the latest version, opened before (untimed):
             ``ds.insert(rows)``, pylance ``write_dataset(rows, ds, mode="append")``

Timing follows the other scripts (``_harness.measure``): an untimed warm-up round checked in
full, then ``--repeat`` timed rounds with the engine that goes first alternating; medians and
the ratio ours / pylance (target 1.2x). Every result is checked outside the timing: tables are
read back by the *other* engine, scans and takes compared with the source rows.

Requests: a counting reverse proxy (``_counting_proxy.py``, a process of its own) sits in front
of SeaweedFS for each engine. The timed rounds go straight to SeaweedFS; after them, each
operation runs twice more, untimed, with ``aws_endpoint`` pointed at the engine's proxy, and the
requests of each run are counted per method (``LIST`` = a ``GET`` with ``list-type``), with the
TCP connections the engine opened (``conns``; each costs a handshake, and a TLS one on S3). Each
operation gets new proxies (new ports), so its run 1 is the first use of those storage options
in the process (what an engine caches per store or per open file is cold, as in a new process);
run 2 follows it, as the timed rounds follow the warm-up. ``--requests`` prints every request.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
sys.path.insert(1, str(_HERE.parent))  # the checkout root, for tests/s3/seaweed.py
# _harness first: it puts src/ on sys.path and quiets pylance's log before lance loads
import _harness as h  # noqa: E402
import lance  # noqa: E402
import obstore  # noqa: E402
from _counting_proxy import CountingProxy, Request  # noqa: E402
from _harness import WrongResult  # noqa: E402
from datagen import generate, take_indices  # noqa: E402
from obstore.exceptions import AlreadyExistsError  # noqa: E402
from obstore.store import S3Store  # noqa: E402
from tests.s3 import seaweed  # noqa: E402

import lance_semantic as ls  # noqa: E402

STORAGE_VERSION = "2.2"
MAX_ROWS_PER_FILE = 1_048_576
DEFAULT_ROWS = 500_000
BASE_ROWS = 1_000  # rows of the table the appends go to
TARGET = 1.2
OPERATIONS = ("write", "open", "scan", "take", "append", "insert")
KINDS = ("GET", "LIST", "HEAD", "PUT", "POST", "DELETE")
U64_MAX = 2**64 - 1
Options = Mapping[str, str]


# ---- engines ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Engine:
    name: str
    write_dataset: Callable[..., Any]
    dataset: Callable[..., Any]

    def write(self, data: pa.Table, uri: str, options: Options, mode: str = "create") -> Any:
        return self.write_dataset(
            data,
            uri,
            mode=mode,
            max_rows_per_file=MAX_ROWS_PER_FILE,
            data_storage_version=STORAGE_VERSION,
            storage_options=dict(options),
        )

    def insert(self, ds: Any, data: pa.Table) -> Any:
        """Append ``data`` on the handle ``ds``."""
        if self is PYLANCE:
            return lance.write_dataset(data, ds, mode="append")
        return ds.insert(data)

    def open(self, uri: str, options: Options) -> Any:
        return self.dataset(uri, storage_options=dict(options))

    def fragments(self, uri: str, options: Options) -> list[int]:
        """Physical rows per fragment, as the table's manifest records them."""
        ds = self.open(uri, options)
        if self is PYLANCE:
            return [f.metadata.physical_rows for f in ds.get_fragments()]
        return [f.physical_rows for f in ds.manifest.fragments]


PYLANCE = Engine("pylance", lance.write_dataset, lance.dataset)
OURS = Engine("lance-semantic", ls.write_dataset, ls.dataset)
ENGINES = (PYLANCE, OURS)


def other(e: Engine) -> Engine:
    return OURS if e is PYLANCE else PYLANCE


# ---- checks -----------------------------------------------------------------------------------
def check_table(what: str, got: pa.Table, want: pa.Table, full: bool) -> None:
    """In full (types and values), or the row count and :data:`_harness.SAMPLE` rows."""
    h.check_rows(what, got.num_rows, want.num_rows)
    if got.schema.names != want.schema.names:
        raise WrongResult(f"{what}: columns {got.schema.names}, expected {want.schema.names}")
    if full:
        if got.schema.types != want.schema.types or not got.equals(want):
            raise WrongResult(f"{what}: differs from the source rows")
        return
    idx = pa.array(h.sample_rows(want.num_rows, 7))
    if not got.take(idx).equals(want.take(idx)):
        raise WrongResult(f"{what}: sampled rows differ from the source rows")


# ---- the server, its bucket and the proxies -----------------------------------------------------
class Site:
    """The SeaweedFS server, a counting proxy per engine, and the tables' URIs."""

    def __init__(self, directory: str) -> None:
        self.server = seaweed.start(Path(directory))
        self.proxies: dict[str, CountingProxy] = {}
        self.direct: Options = self.server.storage_options
        o = {k: v for k, v in self.direct.items() if k != "allow_http"}
        self._bucket = S3Store(seaweed.BUCKET, config=o, client_options={"allow_http": True})
        try:
            self.renew_proxies()
        except BaseException:
            self.stop()
            raise

    def renew_proxies(self) -> None:
        """A new proxy (on a new port) per engine: storage options the process has not seen,
        so nothing either engine caches per store or per file is warm for them."""
        for p in self.proxies.values():
            p.stop()
        self.proxies = {}
        for e in ENGINES:
            self.proxies[e.name] = CountingProxy(self.server.endpoint)
            self._check_proxy(self.proxies[e.name])

    def _check_proxy(self, proxy: CountingProxy) -> None:
        """Through ``proxy``, a signed PUT must succeed (SigV4 signs the Host header, which the
        proxy passes on unchanged) and a second ``If-None-Match: *`` PUT of the key must come
        back as 412 (the commit protocol of both engines depends on it)."""
        config = {k: v for k, v in self.direct.items() if k != "allow_http"}
        config["aws_endpoint"] = proxy.endpoint
        client = {"allow_http": True}
        store = S3Store(seaweed.BUCKET, prefix="_proxy-check", config=config, client_options=client)
        key = f"{uuid.uuid4().hex}.probe"
        proxy.reset()
        obstore.put(store, key, b"first", mode="create")
        try:
            obstore.put(store, key, b"second", mode="create")
        except AlreadyExistsError:
            pass
        else:
            raise RuntimeError("a second If-None-Match: * PUT through the proxy was accepted")
        statuses = [r.status for r in proxy.log()]
        if statuses != [200, 412]:
            raise RuntimeError(f"the proxy forwarded the probe PUTs as {statuses}")
        obstore.delete(self._bucket, f"_proxy-check/{key}")
        proxy.reset()

    def counted(self, e: Engine) -> Options:
        """The engine's storage options with ``aws_endpoint`` at its proxy."""
        return {**self.direct, "aws_endpoint": self.proxies[e.name].endpoint}

    def uri(self, e: Engine, name: str) -> str:
        return self.server.uri(f"{e.name}/{name}")

    def remove(self, uri: str) -> None:
        """Deletes every object under the table ``uri`` (straight to SeaweedFS)."""
        prefix = uri.split(f"{seaweed.BUCKET}/", 1)[1] + "/"
        keys = [o["path"] for batch in obstore.list(self._bucket, prefix) for o in batch]
        for i in range(0, len(keys), 1000):
            obstore.delete(self._bucket, keys[i : i + 1000])

    def stop(self) -> None:
        for p in self.proxies.values():
            p.stop()
        self.server.stop()


# ---- requests ---------------------------------------------------------------------------------
def describe(req: Request, table: str) -> str:
    """``KIND key`` with the key relative to the table (``<table>/`` cut off), listings as
    ``LIST <prefix>``, a V2 manifest name with its version, query values left out."""
    parts = urllib.parse.urlsplit(req.target)
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    path = urllib.parse.unquote(parts.path).lstrip("/")
    path = path.split("/", 1)[1] if "/" in path else ""  # drop the bucket
    root = table.split(f"{seaweed.BUCKET}/", 1)[1]
    if req.kind == "LIST":
        prefix = query.get("prefix", [""])[0]
        key = prefix[len(root) + 1 :] if prefix.startswith(root + "/") else prefix
        extra = " (delimiter /)" if "delimiter" in query else ""
        return f"LIST {key or '<table>/'}{extra}"
    key = path[len(root) + 1 :] if path.startswith(root + "/") else path
    folder, _, name = key.rpartition("/")
    if folder == "_versions" and name.endswith(".manifest"):
        stem = name.removesuffix(".manifest")
        if len(stem) == 20 and stem.isdigit():
            key = f"_versions/<version {U64_MAX - int(stem)}>.manifest"
    elif folder == "data" and name.endswith(".lance"):
        key = "data/<file>.lance"
    elif folder == "_transactions" and name.endswith(".txn"):
        key = f"_transactions/{name.split('-', 1)[0]}-<uuid>.txn"
    names = [q for q in sorted(query) if q not in ("x-id",)]
    suffix = f"?{'&'.join(names)}" if names else ""
    ranged = " (range)" if req.range else ""
    status = "" if req.status < 300 else f" -> {req.status}"
    return f"{req.kind} {key}{suffix}{ranged}{status}"


@dataclass
class Counted:
    """The requests of one engine's counted run of one operation."""

    operation: str
    run: int  # 1: the first run through the proxy, 2: the one after it
    engine: str
    table: str
    requests: list[Request]

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.kind for r in self.requests)

    @property
    def connections(self) -> int:
        """New TCP connections the engine opened to the proxy during the run."""
        return sum(r.new_connection for r in self.requests)

    def described(self, plain: bool = False) -> Counter[str]:
        """How many requests of each description (``plain``: without the delimiter note,
        which is how the two engines' listings differ)."""
        out = (describe(r, self.table) for r in self.requests)
        return Counter(d.replace(" (delimiter /)", "") if plain else d for d in out)

    def record(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "run": self.run,
            "engine": self.engine,
            "counts": {k: self.counts.get(k, 0) for k in KINDS} | {"total": len(self.requests)},
            "bytes_sent": sum(r.sent for r in self.requests),
            "bytes_received": sum(r.received for r in self.requests),
            "resent": sum(r.resent for r in self.requests),
            "connections": self.connections,
            "requests": [describe(r, self.table) for r in self.requests],
        }


def format_counts(counted: list[Counted]) -> str:
    head = (
        f"{'operation':<9} {'run':>3} {'engine':<15}"
        + "".join(f"{k:>7}" for k in KINDS)
        + f"{'total':>7}{'conns':>7}{'MB sent':>9}{'MB recv':>9}"
    )
    lines = [head, "-" * len(head)]
    for c in counted:
        n = c.counts
        lines.append(
            f"{c.operation:<9} {c.run:>3} {c.engine:<15}"
            + "".join(f"{n.get(k, 0):>7}" for k in KINDS)
            + f"{len(c.requests):>7}"
            + f"{c.connections:>7}"
            + f"{sum(r.sent for r in c.requests) / 1e6:>9.2f}"
            + f"{sum(r.received for r in c.requests) / 1e6:>9.2f}"
        )
    return "\n".join(lines)


def format_requests(counted: list[Counted], every: bool) -> str:
    """Per operation, run and engine: the requests grouped by description, in the order of
    first appearance (``every``: each request in order)."""
    lines = []
    for c in counted:
        lines.append(f"{c.operation} (run {c.run}) / {c.engine}: {len(c.requests)} requests")
        if every:
            lines.extend(f"    {describe(r, c.table)}" for r in c.requests)
        else:
            lines.extend(f"  {n:>5} x {d}" for d, n in c.described().items())
    return "\n".join(lines)


def format_differences(counted: list[Counted]) -> str:
    """Per operation and run, the requests one engine makes and the other does not."""
    lines = []
    pairs: dict[tuple[str, int], dict[str, Counted]] = {}
    for c in counted:
        pairs.setdefault((c.operation, c.run), {})[c.engine] = c
    for (op, run), by_engine in pairs.items():
        if len(by_engine) != 2:
            continue
        ours = by_engine[OURS.name].described(plain=True)
        theirs = by_engine[PYLANCE.name].described(plain=True)
        more, fewer = ours - theirs, theirs - ours
        if not more and not fewer:
            lines.append(f"{op} (run {run}): the same requests")
            continue
        lines.append(f"{op} (run {run}):")
        lines.extend(f"  + {n} x {d}  (lance-semantic only)" for d, n in more.items())
        lines.extend(f"  - {n} x {d}  (pylance only)" for d, n in fewer.items())
    return "\n".join(lines)


# ---- the suite --------------------------------------------------------------------------------
class Suite:
    def __init__(self, site: Site, rows: int, append_rows: int, repeat: int) -> None:
        self.site = site
        self.rows = rows
        self.append_rows = append_rows
        self.repeat = repeat
        self.source = generate(rows)
        self.idx = take_indices(rows)
        self.want_take = self.source.take(pa.array(self.idx))
        #: the appends' source: the base table, then one slice of ``append_rows`` per append
        self.append_source = generate(BASE_ROWS + append_rows * 2 * (repeat + 3))
        self.appended = {e.name: 0 for e in ENGINES}
        self.tables = {e.name: site.uri(e, "table") for e in ENGINES}
        self.append_tables = {e.name: site.uri(e, "append") for e in ENGINES}

    # -- set-up: the tables the reads and appends use, written by each engine itself --
    def prepare(self) -> None:
        for e in ENGINES:
            e.write(self.source, self.tables[e.name], self.site.direct)
            self.check_written(e, self.tables[e.name], full=True)
            base = self.append_source.slice(0, BASE_ROWS)
            e.write(base, self.append_tables[e.name], self.site.direct)

    def check_written(self, e: Engine, uri: str, full: bool) -> None:
        frags = e.fragments(uri, self.site.direct)
        want = [
            min(MAX_ROWS_PER_FILE, self.rows - s) for s in range(0, self.rows, MAX_ROWS_PER_FILE)
        ]
        if frags != want:
            raise WrongResult(f"{e.name} write: fragments of {frags} rows, expected {want}")
        back = other(e).open(uri, self.site.direct).to_table()
        check_table(f"{e.name} write, read by {other(e).name}", back, self.source, full)

    # -- the operations: (thunk to time, check of its result) --
    def work(self, op: str, e: Engine, options: Options, tag: str) -> Callable[[], Any]:
        if op == "write":
            uri = self.site.uri(e, f"write-{tag}")
            return lambda: e.write(self.source, uri, options)
        uri = self.tables[e.name]
        if op == "open":
            return lambda: e.open(uri, options)
        if op == "scan":
            return lambda: e.open(uri, options).to_table()
        if op == "take":
            return lambda: e.open(uri, options).take(self.idx)
        if op in ("append", "insert"):
            start = BASE_ROWS + self.append_rows * self.appended[e.name]
            self.appended[e.name] += 1
            batch = self.append_source.slice(start, self.append_rows)
            uri = self.append_tables[e.name]
            if op == "append":
                return lambda: e.write(batch, uri, options, mode="append")
            ds = e.open(uri, options)  # untimed: the handle is at the latest version
            return lambda: e.insert(ds, batch)
        raise ValueError(op)

    def check(self, op: str, e: Engine, out: Any, full: bool, tag: str) -> None:
        what = f"{e.name} {op}"
        if op == "write":
            uri = self.site.uri(e, f"write-{tag}")
            self.check_written(e, uri, full)
            self.site.remove(uri)
        elif op == "open":
            h.check_rows(what, out.count_rows(), self.rows)
            if out.version != 1:
                raise WrongResult(f"{what}: version {out.version}, expected 1")
        elif op == "scan":
            check_table(what, out, self.source, full)
        elif op == "take":
            check_table(what, out, self.want_take, full=True)
        elif op in ("append", "insert"):
            rows = BASE_ROWS + self.append_rows * self.appended[e.name]
            uri = self.append_tables[e.name]
            latest = other(e).open(uri, self.site.direct)
            if latest.version != 1 + self.appended[e.name]:
                raise WrongResult(f"{what}: version {latest.version} after the append")
            want = self.append_source.slice(0, rows)
            if full:
                check_table(f"{what}, read by {other(e).name}", latest.to_table(), want, True)
            else:
                h.check_rows(what, latest.count_rows(), rows)
                tail = np.arange(rows - self.append_rows, rows)
                got = latest.take(tail)
                check_table(
                    f"{what} (appended rows)", got, want.slice(rows - self.append_rows), True
                )

    def timed(self, op: str) -> h.Result:
        tags: dict[str, str] = {}

        def run(e: Engine, r: int) -> Callable[[], Any]:
            if op == "write":
                os.sync()  # earlier rounds' dirty pages are written back now, not while timed
            tags[e.name] = f"r{r}"
            return self.work(op, e, self.site.direct, tags[e.name])

        def check(e: Engine, out: Any, full: bool) -> None:
            self.check(op, e, out, full, tags[e.name])

        times = h.measure(ENGINES, self.repeat, run, check)
        return h.Result.of(op, times[PYLANCE], times[OURS], TARGET)

    def counted(self, op: str, runs: int = 2) -> list[Counted]:
        """``runs`` untimed runs per engine through its proxy, each result checked. The first
        is the first use of these storage options in the process (nothing cached for them),
        the later ones run as the timed rounds did, after a first."""
        self.site.renew_proxies()
        out = []
        for run in range(1, runs + 1):
            for e in ENGINES:
                proxy = self.site.proxies[e.name]
                tag = f"counted{run}"
                thunk = self.work(op, e, self.site.counted(e), tag)
                proxy.reset()
                result = thunk()
                requests = proxy.log()
                self.check(op, e, result, full=False, tag=tag)
                del result
                table = {
                    "write": self.site.uri(e, f"write-{tag}"),
                    "append": self.append_tables[e.name],
                    "insert": self.append_tables[e.name],
                }.get(op, self.tables[e.name])
                out.append(Counted(op, run, e.name, table, requests))
        return out


# ---- command line and output -------------------------------------------------------------------
def paired(r: h.Result) -> float:
    """The median of the per-round ratios ours / pylance (the two ran back to back)."""
    ratios = [b / a for a, b in zip(r.pylance_runs, r.ours_runs, strict=True) if a]
    return statistics.median(ratios) if ratios else float("nan")


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _weed_version() -> str:
    """The version number ``weed version`` prints (``version 8000GB 4.48 pypi linux amd64``)."""
    out = subprocess.run([seaweed.weed_binary(), "version"], capture_output=True, text=True)
    words = out.stdout.split()
    return next((w for w in words if w[:1].isdigit() and "." in w), " ".join(words[:3]))


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows written and read")
    p.add_argument("--repeat", type=int, default=7, help="timed rounds per operation")
    p.add_argument("--append-rows", type=int, default=10, help="rows per append")
    p.add_argument("--only", action="append", choices=OPERATIONS, help="operation (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--tmpdir", help="parent of the temporary directory (SeaweedFS's data)")
    p.add_argument("--requests", action="store_true", help="print every counted request")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rows < 1 or args.append_rows < 1:
        p.error("--rows, --repeat and --append-rows must be positive")
    ops = [op for op in OPERATIONS if not args.only or op in args.only]

    env = h.environment()
    env["seaweedfs"] = _weed_version()
    env["load_average_start"] = _load()
    h.print_banner(env, versions=("pyarrow", "numpy", "seaweedfs"))
    print(
        f"load average (1/5/15 min) {env['load_average_start']}; rows {args.rows:,}, "
        f"repeat {args.repeat} (median), append {args.append_rows} rows, "
        f"data storage version {STORAGE_VERSION}"
    )
    started = time.perf_counter()
    results: list[h.Result] = []
    counted: list[Counted] = []
    with h.workdir("bench-s3-", args.tmpdir) as workdir:
        site = Site(workdir)
        print(
            "SeaweedFS up; proxies checked (signed PUT passes, a second If-None-Match: * PUT "
            "comes back 412)",
            flush=True,
        )
        try:
            suite = Suite(site, args.rows, args.append_rows, args.repeat)
            suite.prepare()
            for op in ops:
                results.append(suite.timed(op))
                print(h.format_table(results[-1:], widths=(9, 10, 17)).splitlines()[-1], flush=True)
            for op in ops:
                counted.extend(suite.counted(op))
        finally:
            site.stop()
    env["load_average_end"] = _load()
    print()
    print(h.format_table(results, widths=(9, 10, 17)))
    print("paired: " + ", ".join(f"{r.operation} {paired(r):.2f}x" for r in results))
    print(
        "\nseconds: median of the timed runs (straight to SeaweedFS); ratio: lance-semantic / "
        "pylance (medians); best: the same on the fastest runs; paired: the median of the "
        "per-round ratios (damps load that drifts between rounds)"
    )
    print(
        "\nrequests per operation (untimed, through the counting proxies; run 1: the first use "
        "of new storage options in the process, run 2: the next):\n"
    )
    print(format_counts(counted))
    print("\nrequests by key (<table>/ cut off):\n")
    print(format_requests(counted, every=args.requests))
    print("\nrequests one engine makes and the other does not:\n")
    print(format_differences(counted))
    print(
        f"\n(every result validated; load average at the end {env['load_average_end']}; "
        f"{time.perf_counter() - started:.1f} s)"
    )
    parameters = {
        "rows": args.rows,
        "repeat": args.repeat,
        "append_rows": args.append_rows,
        "base_rows": BASE_ROWS,
        "max_rows_per_file": MAX_ROWS_PER_FILE,
        "storage_version": STORAGE_VERSION,
    }
    if args.json:
        records = [
            {**vars(r), "best_ratio": r.best_ratio, "paired_ratio": paired(r), "status": r.status}
            for r in results
        ]
        h.write_json(
            args.json, env, parameters, results=records, requests=[c.record() for c in counted]
        )
    return h.strict_exit([r.operation for r in results if r.status == "OVER"])


if __name__ == "__main__":
    raise SystemExit(main())
