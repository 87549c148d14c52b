"""Blob columns: pylance's blob writer and readers vs lance-semantic's, side by side (DESIGN §7).

Follows ``bench_core.py``'s method: the same work through both engines in one process, the
median of ``--repeat`` timings per engine (alternating which goes first), an untimed warm-up
round whose results are checked in full, every timed result checked on a sample::

    python benchmarks/bench_blob.py [--small N] [--medium N] [--large N] [--take N]
                                    [--small-kib N] [--medium-kib N] [--large-mib N]
                                    [--repeat K] [--only OP ...] [--json out.json]
                                    [--tmpdir DIR]

Data (deterministic: random, incompressible bytes from a fixed seed; rows in shuffled order):

``--small``   20,000 values of ``--small-kib`` 4 KiB   (blob v2: inline, in the data file)
``--medium``  600 values of ``--medium-kib`` 200 KiB   (blob v2: packed sidecars)
``--large``   12 values of ``--large-mib`` 8 MiB       (blob v2: one dedicated sidecar each)

about 305 MB of blob bytes in 20,612 rows, plus an ``id`` int64 column. The blob v2 input is
``pa.table({"id": ..., "b": blob_array(values)}, schema=[id, blob_field("b")])``, the
``BlobArray`` built from buffers (the value ``blob_array(list_of_bytes)`` gives, without 305 MB
of Python ``bytes``); the v2 kinds follow pylance's default thresholds (inline up to 64 KiB,
dedicated over 4 MiB). The blob v1 input is the same bytes as a ``large_binary`` column with
``lance-encoding:blob: true``. One fragment (``max_rows_per_file`` 1,048,576).

What is timed (the reads run on one table pylance wrote, untimed, before the reads):

``write v2``        ``write_dataset(table, uri, data_storage_version="2.2")`` into a new
                    directory per round, after ``os.sync()`` (earlier rounds' write-back is
                    not timed): data file, sidecars, manifest.
``scan v2``         ``dataset(uri).to_table()``: open plus every row's descriptor (both
                    engines return descriptor structs, not bytes).
``take_blobs v2``   ``dataset(uri).take_blobs("b", indices=idx)`` and ``f.read()`` of every
                    file object: ``--take`` 1,000 random rows in random order (mostly inline).
``take_blobs v2 big``  the same for every packed and dedicated row (612 rows, ~224 MB), in
                    random order: the sidecar read path at volume.
``write v1``        as ``write v2`` for the blob v1 table at data storage version 2.1.
``scan v1``         as ``scan v2`` on the blob v1 table (descriptors: position, size).
``take_blobs v1``   as ``take_blobs v2`` on the blob v1 table (bytes in the data file).

Writes are timed with ``measure()``; the reads, 1-300 ms calls on files in the page cache,
with ``micro()`` (per round, the fastest of 5 alternating calls; ``_harness.py``).

Checks (outside the timing): a written table is read back through the *other* engine. Its
descriptors must have the expected ``kind`` (v2; from the size and the thresholds), ``size``
and (v2) empty ``blob_uri`` for every row, and its bytes must equal the input: every row's
after the warm-up round, a sample after timed rounds (64 random rows plus the first 4 packed
and 2 dedicated ones). A scan must equal pylance's descriptors of the table (every row after
the warm-up, the sample rows otherwise); a take must return each row's input bytes (every row
after the warm-up, 64 of them otherwise, and every file object's ``size()``).

Throughput is blob bytes per second: written bytes for writes, bytes read for takes (none for
scans, which read descriptors only). Ratio is ours / pylance in time (below 1.0 means we are
faster); ``best`` the same on the fastest runs. Target (DESIGN §7): bulk write, scan and take
at most 1.1x pylance's time. An operation that raises or returns a wrong result (either engine) is
reported as FAILED, the others still run, and the exit status is 1.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import traceback
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
from datagen import SEED, take_indices  # noqa: E402
from lance.blob import BlobType, blob_field  # noqa: E402

import lance_semantic as ls  # noqa: E402

#: DESIGN §7: bulk write, scan and take at most 1.1x pylance's time
TARGET = 1.1
ENGINES = ("pylance", "ours")
ALL_OPS = (
    "write v2",
    "scan v2",
    "take_blobs v2",
    "take_blobs v2 big",
    "write v1",
    "scan v1",
    "take_blobs v1",
    "scan v2 bulk",
    "scan v1 bulk",
)
#: pylance's default blob v2 thresholds (bytes): inline up to, dedicated over
INLINE_MAX, DEDICATED_OVER = 64 * 1024, 4 * 1024 * 1024
INLINE, PACKED, DEDICATED = 0, 1, 2
V1_FIELD = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})


# ---- data -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BlobData:
    """The blob values: ``sizes[i]`` bytes at ``offsets[i]`` of ``data``, row ``i``."""

    sizes: np.ndarray
    offsets: np.ndarray
    data: np.ndarray
    values: pa.LargeBinaryArray

    @property
    def rows(self) -> int:
        return len(self.sizes)

    @property
    def nbytes(self) -> int:
        return int(self.offsets[-1])

    def value(self, row: int) -> memoryview:
        return memoryview(self.data[self.offsets[row] : self.offsets[row + 1]])

    def kinds(self) -> np.ndarray:
        """The blob v2 kind pylance's default thresholds give each row."""
        kind = np.full(self.rows, INLINE, dtype=np.uint8)
        kind[self.sizes > INLINE_MAX] = PACKED
        kind[self.sizes > DEDICATED_OVER] = DEDICATED
        return kind

    def v2_table(self) -> pa.Table:
        n = self.rows
        storage = pa.StructArray.from_arrays(
            [
                self.values,
                pa.nulls(n, pa.utf8()),
                pa.nulls(n, pa.uint64()),
                pa.nulls(n, pa.uint64()),
            ],
            names=["data", "uri", "position", "size"],
        )
        blobs = pa.ExtensionArray.from_storage(BlobType(), storage)
        schema = pa.schema([pa.field("id", pa.int64()), blob_field("b")])
        return pa.table({"id": np.arange(n, dtype=np.int64), "b": blobs}, schema=schema)

    def v1_table(self) -> pa.Table:
        schema = pa.schema([pa.field("id", pa.int64()), V1_FIELD])
        ids = np.arange(self.rows, dtype=np.int64)
        return pa.table({"id": ids, "b": self.values}, schema=schema)


def generate(counts: list[tuple[int, int]], seed: int = SEED) -> BlobData:
    """``count`` values of ``size`` bytes for each pair, rows shuffled, random bytes."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([np.full(c, s, dtype=np.int64) for c, s in counts])
    rng.shuffle(sizes)
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    data = np.frombuffer(rng.bytes(int(offsets[-1])), dtype=np.uint8)
    values = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(sizes), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return BlobData(sizes, offsets, data, values)


# ---- engines ----------------------------------------------------------------------------------
def open_ds(engine: str, uri: str) -> Any:
    return lance.dataset(uri) if engine == "pylance" else ls.dataset(uri)


def other(engine: str) -> str:
    return "ours" if engine == "pylance" else "pylance"


def write(engine: str, table: pa.Table, uri: str, version: str) -> str:
    fn = lance.write_dataset if engine == "pylance" else ls.write_dataset
    fn(table, uri, data_storage_version=version, max_rows_per_file=1_048_576)
    return uri


def take_bytes(engine: str, uri: str, rows: list[int]) -> tuple[list[bytes], list[int]]:
    """The bytes and ``size()`` of the blobs at ``rows``, through file objects."""
    files = open_ds(engine, uri).take_blobs("b", indices=rows)
    return [f.read() for f in files], [f.size() for f in files]


def descriptors(engine: str, uri: str) -> pa.StructArray:
    return open_ds(engine, uri).to_table().column("b").combine_chunks()


# ---- checks -----------------------------------------------------------------------------------
def check_bytes(what: str, got: list[bytes], sizes: list[int], blobs: BlobData, rows: Any) -> None:
    """``got[i]`` must be row ``rows[i]``'s value and ``sizes[i]`` its length."""
    want_sizes = blobs.sizes[np.asarray(rows, dtype=np.int64)].tolist()
    h.check_rows(what, len(got), len(want_sizes))
    if sizes != want_sizes:
        bad = next(i for i, (a, b) in enumerate(zip(sizes, want_sizes, strict=True)) if a != b)
        raise WrongResult(f"{what}: row {rows[bad]}: size() {sizes[bad]}, want {want_sizes[bad]}")
    for i, row in enumerate(rows):
        if got[i] != blobs.value(int(row)):
            raise WrongResult(f"{what}: row {row}: {len(got[i])} bytes differ from the input")


def check_descriptors(what: str, desc: pa.StructArray, blobs: BlobData, v2: bool) -> None:
    """Every row's ``size`` (and v2 ``kind``, empty ``blob_uri``) as the input says."""
    h.check_rows(what, len(desc), blobs.rows)
    cols = {"size": blobs.sizes.astype(np.uint64)}
    if v2:
        cols["kind"] = blobs.kinds()
    for name, want in cols.items():
        got = desc.field(name).to_numpy(zero_copy_only=False)
        if not np.array_equal(got, want):
            bad = int(np.argmax(got != want))
            raise WrongResult(f"{what}: row {bad}: {name} {got[bad]}, want {want[bad]}")
    if v2 and desc.field("blob_uri").to_pylist() != [""] * blobs.rows:
        raise WrongResult(f"{what}: a non-empty blob_uri")


# ---- the suite --------------------------------------------------------------------------------
@dataclass
class Suite:
    blobs: BlobData
    take_rows: list[int]
    big_rows: list[int]
    sample: list[int]  # rows whose bytes a timed write's check reads back
    repeat: int
    workdir: str
    results: list[h.Result]
    failures: list[str]
    throughput: list[str]

    def run(self, fn: Callable[..., h.Result], op: str, *args: Any, mb: float = 0) -> None:
        """``fn(op, *args)``: its result, or a failure, and the throughput line."""
        try:
            res = fn(op, *args)
        except Exception as e:  # report it, keep going with the other operations
            traceback.print_exc()
            self.failures.append(f"{op}: {type(e).__name__}: {e}")
            return
        self.results.append(res)
        if mb:
            self.throughput.append(
                f"{op:<18} {mb:>7.1f} MB  pylance {mb / res.pylance_s:>6.0f} MB/s  "
                f"lance-semantic {mb / res.ours_s:>6.0f} MB/s"
            )

    # -- writes
    def writes(self, op: str, table: pa.Table, version: str, v2: bool) -> h.Result:
        name = op.replace(" ", "-")

        def uri(engine: str, r: int) -> str:
            return os.path.join(self.workdir, f"{name}-{engine}-{r}")

        def run(engine: str, r: int) -> Callable[[], Any]:
            os.sync()  # earlier rounds' dirty pages are written back now, not inside this timing
            return lambda: write(engine, table, uri(engine, r), version)

        def check(engine: str, out: str, full: bool) -> None:
            reader = other(engine)
            what = f"{engine} {op} (read by {reader})"
            check_descriptors(what, descriptors(reader, out), self.blobs, v2)
            rows = list(range(self.blobs.rows)) if full else self.sample
            for part in range(0, len(rows), 2_000):  # about 2k file objects at a time
                chunk = rows[part : part + 2_000]
                check_bytes(what, *take_bytes(reader, out, chunk), self.blobs, chunk)

        def drop(engine: str, r: int) -> None:
            shutil.rmtree(uri(engine, r), ignore_errors=True)

        times = h.measure(ENGINES, self.repeat, run, check, drop)
        return h.Result.of(op, times["pylance"], times["ours"], TARGET)

    # -- reads of the table pylance wrote
    def scan(self, op: str, uri: str, rows: int | None = None) -> h.Result:
        want = descriptors("pylance", uri)
        idx = pa.array(h.sample_rows(rows or self.blobs.rows, 11))
        want_sample = want.take(idx)

        def check(engine: str, got: pa.Table, full: bool) -> None:
            col = got.column("b").combine_chunks()
            h.check_rows(f"{engine} {op}", len(col), len(want))
            if got.schema.names != ["id", "b"] or col.type != want.type:
                raise WrongResult(f"{engine} {op}: schema {got.schema}, want b: {want.type}")
            if not (col.equals(want) if full else col.take(idx).equals(want_sample)):
                raise WrongResult(f"{engine} {op}: descriptors differ from pylance's")

        times = h.micro(
            {e: (lambda e=e: open_ds(e, uri).to_table()) for e in ENGINES},
            self.repeat,
            check,
        )
        return h.Result.of(op, times["pylance"], times["ours"], TARGET)

    def take(self, op: str, uri: str, rows: list[int]) -> h.Result:
        sample = sorted(h.sample_rows(len(rows), 13).tolist())

        def check(engine: str, out: tuple[list[bytes], list[int]], full: bool) -> None:
            got, sizes = out
            what = f"{engine} {op}"
            if full:
                check_bytes(what, got, sizes, self.blobs, rows)
            else:
                h.check_rows(what, len(got), len(rows))
                want_sizes = self.blobs.sizes[rows].tolist()
                if sizes != want_sizes or [len(g) for g in got] != want_sizes:
                    raise WrongResult(f"{what}: sizes differ from the input")
                check_bytes(
                    what,
                    [got[i] for i in sample],
                    [sizes[i] for i in sample],
                    self.blobs,
                    [rows[i] for i in sample],
                )

        times = h.micro(
            {e: (lambda e=e: take_bytes(e, uri, rows)) for e in ENGINES}, self.repeat, check
        )
        return h.Result.of(op, times["pylance"], times["ours"], TARGET)


def run_suite(blobs: BlobData, args: Any, workdir: str, only: set[str] | None) -> Suite:
    rng = np.random.default_rng(SEED + 2)
    kinds = blobs.kinds()
    big = np.flatnonzero(kinds != INLINE)
    packed, dedicated = np.flatnonzero(kinds == PACKED), np.flatnonzero(kinds == DEDICATED)
    sample = {*h.sample_rows(blobs.rows, 7).tolist(), *packed[:4].tolist()}
    suite = Suite(
        blobs=blobs,
        take_rows=take_indices(blobs.rows, args.take).tolist(),
        big_rows=rng.permutation(big).tolist(),
        sample=sorted(sample | set(dedicated[:2].tolist())),
        repeat=args.repeat,
        workdir=workdir,
        results=[],
        failures=[],
        throughput=[],
    )

    def wanted(op: str) -> bool:
        return only is None or op in only

    mb = blobs.nbytes / 1e6
    take_mb = blobs.sizes[suite.take_rows].sum() / 1e6
    big_mb = blobs.sizes[suite.big_rows].sum() / 1e6
    for v2, version in ((True, "2.2"), (False, "2.1")):
        tag = "v2" if v2 else "v1"
        table = blobs.v2_table() if v2 else blobs.v1_table()
        if wanted(f"write {tag}"):
            suite.run(suite.writes, f"write {tag}", table, version, v2, mb=mb)
        reads = [f"scan {tag}", f"take_blobs {tag}"] + (["take_blobs v2 big"] if v2 else [])
        if not any(wanted(op) for op in reads):
            continue
        ref = os.path.join(workdir, f"reference-{tag}")
        write("pylance", table, ref, version)  # the table both engines read
        if wanted(f"scan {tag}"):
            suite.run(suite.scan, f"scan {tag}", ref)
        if wanted(f"take_blobs {tag}"):
            suite.run(suite.take, f"take_blobs {tag}", ref, suite.take_rows, mb=take_mb)
        if v2 and wanted("take_blobs v2 big") and suite.big_rows:
            suite.run(suite.take, "take_blobs v2 big", ref, suite.big_rows, mb=big_mb)
        shutil.rmtree(ref, ignore_errors=True)
    # a bulk descriptor scan: the fixed cost per data file of reading descriptors through
    # the shadow table (read/blob_descriptors.py) is amortised over many rows
    n = args.scan_rows
    small = pa.array([b"s" * 64] * n, pa.large_binary())
    for v2, version in ((True, "2.2"), (False, "2.1")):
        op = f"scan {'v2' if v2 else 'v1'} bulk"
        if not n or not wanted(op):
            continue
        ref = os.path.join(workdir, f"bulk-{version}")
        bulk = BlobData(np.full(n, 64), np.arange(n + 1) * 64, np.zeros(0, np.uint8), small)
        write("pylance", bulk.v2_table() if v2 else bulk.v1_table(), ref, version)
        suite.run(suite.scan, op, ref, n)
        shutil.rmtree(ref, ignore_errors=True)
    return suite


# ---- command line and output -------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    p.add_argument("--small", type=int, default=20_000, help="small (inline) values (20,000)")
    p.add_argument("--small-kib", type=int, default=4, help="size of a small value (4 KiB)")
    p.add_argument("--medium", type=int, default=600, help="medium (packed) values (600)")
    p.add_argument("--medium-kib", type=int, default=200, help="size of a medium value (200)")
    p.add_argument("--large", type=int, default=12, help="large (dedicated) values (12)")
    p.add_argument("--large-mib", type=int, default=8, help="size of a large value (8 MiB)")
    p.add_argument("--take", type=int, default=1_000, help="random rows per take_blobs (1,000)")
    p.add_argument(
        "--scan-rows",
        type=int,
        default=1_000_000,
        help="rows of 64-byte inline values for the bulk scans (1,000,000; 0 skips them)",
    )
    p.add_argument("--repeat", type=int, default=7, help="timed repeats; the median is reported")
    p.add_argument("--only", action="append", choices=ALL_OPS, help="run only this (repeatable)")
    p.add_argument("--json", metavar="PATH", help="also write the results and environment")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args(argv)
    counts = [
        (args.small, args.small_kib << 10),
        (args.medium, args.medium_kib << 10),
        (args.large, args.large_mib << 20),
    ]
    if args.repeat < 1 or min(c for c, _ in counts) < 0 or sum(c for c, _ in counts) < 1:
        p.error("--repeat must be positive and at least one value is needed")

    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    started = time.perf_counter()
    blobs = generate(counts)
    kinds = np.bincount(blobs.kinds(), minlength=3)
    print(
        f"{blobs.rows:,} rows, {blobs.nbytes / 1e6:.1f} MB of blob bytes: "
        f"{args.small:,} x {args.small_kib} KiB, {args.medium:,} x {args.medium_kib} KiB, "
        f"{args.large:,} x {args.large_mib} MiB (v2 kinds: {kinds[INLINE]:,} inline, "
        f"{kinds[PACKED]:,} packed, {kinds[DEDICATED]:,} dedicated); take {args.take:,} rows; "
        f"repeat {args.repeat} (median)"
    )
    with h.workdir("lance-semantic-bench-blob-", args.tmpdir) as workdir:
        suite = run_suite(blobs, args, workdir, set(args.only) if args.only else None)
    print()
    print(h.format_table(suite.results, widths=(18, 10, 17)))
    print("\nthroughput (blob bytes per second, medians):")
    print("\n".join(suite.throughput) or "(none)")
    print(
        "\nseconds: median of the timed runs; ratio: lance-semantic / pylance time (medians), "
        "best: the same on the fastest runs; target: at most 1.1x pylance's time"
    )
    for failure in suite.failures:
        print(f"FAILED {failure}")
    print(f"({time.perf_counter() - started:.1f} s)")
    params = vars(args) | {"rows": blobs.rows, "blob_bytes": blobs.nbytes}
    status = h.finish(args.json, env, params | {"failures": suite.failures}, suite.results)
    return 1 if suite.failures else status


if __name__ == "__main__":
    raise SystemExit(main())
