"""Costs of the Semantic Type Contract on flagged tables (DESIGN §7), in one process.

Four measurements, each a ratio of lance-semantic against itself or against the bare Arrow
operation it wraps, plus pylance figures for context::

    python benchmarks/bench_semantic.py [--rows N] [--repeat K] [--json out.json]
                                        [--only 1 --only 3 ...] [--tmpdir DIR]

1. ``append``    LargeUtf8 data appended to a ``string`` column of a table created from utf8
                 (pylance rejects this append) vs the same data appended as utf8; both through
                 ``ls.write_dataset(mode="append")`` on flagged (2.3) tables. Target <= 1.1x.
                 Context: pylance's same-layout utf8 append on a legacy 2.3 table.
2. ``boundary``  The writer boundary's own cost per write: ``bind_input(table_fields,
                 schema)`` and ``to_physical(batch, bound)`` on a 10k-row and a 10M-row batch
                 of utf8 / large_utf8 / dictionary columns (representation-only, so nothing
                 is converted). Target: 10M / 10k about 1x (O(fields), not O(rows)); reported
                 against 1.5x so timer noise on a few microseconds does not flag it. Context:
                 utf8_view input (converted, O(rows) by contract) and a whole append with the
                 encoder stubbed out.
3. ``output``    Output re-encoding on read: the converter of ``resolve_converter(src, dst)``
                 applied to the arrays a plain read returns vs ``arr.cast(dst)`` of the same
                 arrays, for utf8 -> large_utf8, dictionary -> utf8, utf8 -> utf8_view and
                 large_utf8 -> utf8. Target <= 1.5x. Context: end-to-end ``to_table`` with and
                 without the override, and pylance's ``to_table`` of a legacy table holding the
                 same layout.
4. ``mixed``     Scan of a table whose 4 fragments were written from utf8, large_utf8,
                 utf8_view and dictionary input vs the same rows in 4 utf8 fragments.
                 Target <= 1.2x.

Method as in ``bench_core.py``: one untimed warm-up round per measurement, then ``--repeat``
timed rounds whose order rotates, medians reported (``best`` = ratio of the fastest runs),
``os.sync()`` before every timed write, and every result checked outside the timed region (in
full after the warm-up round, by row count and sampled rows afterwards). In-memory calls of
microseconds to milliseconds (section 2, section 3's converter vs cast) are timed by
:func:`_harness.micro`: per round, the fastest of several alternating blocks of back-to-back
calls.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
# _harness first: it puts src/ on sys.path and quiets pylance's log before lance loads
import _harness as h  # noqa: E402
import lance  # noqa: E402
from _harness import WrongResult, measure, micro  # noqa: E402
from datagen import generate  # noqa: E402
from lance.file import LanceFileReader  # noqa: E402

import lance_semantic as ls  # noqa: E402
import lance_semantic.write.fragments as _fragments_mod  # noqa: E402
from lance_semantic.codecs.convert import resolve_converter
from lance_semantic.storage.datafile import WrittenFile  # noqa: E402
from lance_semantic.write.boundary import bind_input, to_physical  # noqa: E402

STORAGE_VERSION: Final = "2.3"  # flagged tables; pylance's context tables use the same file format
BASE_ROWS = 10_000  # rows of the table an append goes into
SMALL, BIG = 10_000, 10_000_000  # batch sizes of the boundary measurement
READ_BATCH = 65_536  # to_table's batch size: the arrays a read converts

STRING = {
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string_view(),
    "dictionary": pa.dictionary(pa.int32(), pa.string()),
}


# ---- results ------------------------------------------------------------------------------------
@dataclass
class Timing:
    section: str
    name: str
    runs: list[float]
    unit: str = "s"

    @property
    def median(self) -> float:
        return statistics.median(self.runs) if self.runs else float("nan")

    @property
    def best(self) -> float:
        return min(self.runs) if self.runs else float("nan")


@dataclass
class Ratio(h.Targeted):
    section: str
    name: str
    numerator: str
    denominator: str
    ratio: float
    best_ratio: float
    paired_ratio: float  # median over rounds of the round's ratio (damps drift under load)
    target: float | None


@dataclass
class Report:
    timings: dict[str, Timing] = field(default_factory=dict)
    ratios: list[Ratio] = field(default_factory=list)

    def add(self, t: Timing) -> Timing:
        self.timings[f"{t.section}/{t.name}"] = t
        return t

    def ratio(
        self, section: str, name: str, num: Timing, den: Timing, target: float | None
    ) -> Ratio:
        r = Ratio(
            section,
            name,
            num.name,
            den.name,
            num.median / den.median if den.median else float("inf"),
            num.best / den.best if den.best else float("inf"),
            statistics.median(a / b for a, b in zip(num.runs, den.runs, strict=True)),
            target,
        )
        self.ratios.append(r)
        return r


# ---- data and checks ----------------------------------------------------------------------------
def source_table(rows: int) -> pa.Table:
    """``rows`` rows of an int64 column and a ~20-byte string column (utf8, one chunk)."""
    return generate(rows).select(["i64", "s"]).combine_chunks()


def as_layout(table: pa.Table, layout: str) -> pa.Table:
    """``table`` with its string column ``s`` in ``layout`` (same values)."""
    s = table.column("s")
    if layout == "dictionary":
        col = pc.dictionary_encode(s)
    else:
        col = s.cast(STRING[layout])
    return table.set_column(table.schema.get_field_index("s"), "s", col)


def check_table(what: str, got: pa.Table, want: pa.Table, sample: np.ndarray | None) -> None:
    """``got`` equals ``want`` (types included); only the ``sample`` rows when one is given."""
    h.check_rows(what, got.num_rows, want.num_rows)
    if got.schema.types != want.schema.types or got.schema.names != want.schema.names:
        raise WrongResult(f"{what}: schema {got.schema}, expected {want.schema}")
    if sample is None:
        if not got.equals(want):
            raise WrongResult(f"{what}: values differ")
        return
    idx = pa.array(sample)
    if not _takeable(got).take(idx).equals(_takeable(want).take(idx)):
        raise WrongResult(f"{what}: sampled values differ")


def _takeable(table: pa.Table) -> pa.Table:
    """``table`` with view columns as large layouts (Arrow has no take kernel for views)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_string_view(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(pa.large_string()))
    return table


def file_layouts(uri: str) -> list[pa.DataType]:
    """The physical type of ``s`` in every data file of a lance-semantic table, in order."""
    ds = ls.dataset(uri)
    out = []
    for frag in ds.manifest.fragments:
        for df in frag.files:
            schema = LanceFileReader(os.path.join(uri, "data", df.path)).metadata().schema
            if "s" in schema.names:
                out.append(schema.field("s").type)
    return out


# ---- 1. append of a layout pylance rejects -------------------------------------------------------
def bench_append(
    rep: Report, source: pa.Table, repeat: int, workdir: str, max_rows_per_file: int
) -> None:
    sec = "1 append"
    rows = source.num_rows
    base = source.slice(0, BASE_ROWS).combine_chunks()
    data = {"utf8": source, "large_utf8": as_layout(source, "large_utf8")}
    want = pa.concat_tables([base, source]).combine_chunks()
    sample = h.sample_rows(want.num_rows, 11)
    n_frags = 1 + math.ceil(rows / max_rows_per_file)

    # pylance refuses the LargeUtf8 append (the reason this contract exists)
    probe = os.path.join(workdir, "append-probe")
    lance.write_dataset(base, probe, data_storage_version=STORAGE_VERSION)
    try:
        lance.write_dataset(data["large_utf8"].slice(0, 10), probe, mode="append")
        rejected = "accepted (unexpected)"
    except Exception as e:  # pylance raises OSError for the schema mismatch
        rejected = f"rejected: {type(e).__name__}: {str(e).splitlines()[0][:90]}"
    shutil.rmtree(probe, ignore_errors=True)
    print(f"  pylance append of large_utf8 into a utf8 column: {rejected}")

    variants = ("ours large_utf8", "ours utf8", "pylance utf8")

    def uri(v: str, r: int) -> str:
        return os.path.join(workdir, f"append-{v.replace(' ', '-')}-{r}")

    def run(v: str, r: int) -> Callable[[], Any]:
        u = uri(v, r)
        if v.startswith("ours"):
            ls.write_dataset(base, u, data_storage_version=STORAGE_VERSION)
            payload = data[v.split()[1]]
            os.sync()
            return lambda: ls.write_dataset(
                payload, u, mode="append", max_rows_per_file=max_rows_per_file
            )
        lance.write_dataset(base, u, data_storage_version=STORAGE_VERSION)
        os.sync()
        return lambda: lance.write_dataset(
            source, u, mode="append", max_rows_per_file=max_rows_per_file
        )

    def check(v: str, ds: Any, full: bool) -> None:
        what = f"append {v}"
        got = (ls.dataset if v.startswith("ours") else lance.dataset)(ds.uri).to_table()
        check_table(what, got, want, None if full else sample)
        if v.startswith("ours"):
            layouts = file_layouts(ds.uri)
            expect = [pa.string()] + [STRING[v.split()[1]]] * (n_frags - 1)
            if layouts != expect:
                raise WrongResult(f"{what}: data file layouts {layouts}, expected {expect}")
            if not ls.dataset(ds.uri).semantic_types:
                raise WrongResult(f"{what}: table is not flagged")

    def drop(v: str, r: int) -> None:
        shutil.rmtree(uri(v, r), ignore_errors=True)

    times = measure(variants, repeat, run, check, drop)
    t = {v: rep.add(Timing(sec, v, times[v])) for v in variants}
    rep.ratio(sec, "append large_utf8 / utf8", t["ours large_utf8"], t["ours utf8"], 1.1)
    rep.ratio(sec, "ours utf8 / pylance utf8", t["ours utf8"], t["pylance utf8"], None)


# ---- 2. writer boundary: O(fields), not O(rows) --------------------------------------------------
def _boundary_batch(t: pa.Table, layout: str) -> pa.RecordBatch:
    """The one batch of ``t`` (i64 + utf8 ``s``) with ``s`` in ``layout``."""
    rows = t.num_rows
    if layout == "dictionary":
        # a dictionary input as it usually comes: few distinct values, int32 keys
        dictionary = t.column("s").chunk(0).slice(0, 1024)
        keys = np.random.default_rng(5).integers(0, len(dictionary), rows, dtype=np.int32)
        col: Any = pa.DictionaryArray.from_arrays(pa.array(keys), dictionary)
        t = t.set_column(1, "s", col)
    elif layout != "utf8":
        t = as_layout(t, layout)
    return t.combine_chunks().to_batches()[0]


class _NullWriter:
    """Stands in for ``DataFileWriter``: takes the batches, writes nothing (section 2's
    "append minus the encoder")."""

    def __init__(self, store: Any, name: str, schema: pa.Schema, version: str) -> None:
        self.name, self.schema, self.num_rows = name, schema, 0

    def write(self, batch: pa.RecordBatch) -> None:
        self.num_rows += batch.num_rows

    def close(self) -> WrittenFile:
        return WrittenFile(self.name, self.num_rows, 0, self.schema)


@contextmanager
def _encoder_stubbed() -> Iterator[None]:
    saved = _fragments_mod.DataFileWriter
    _fragments_mod.DataFileWriter = _NullWriter  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        _fragments_mod.DataFileWriter = saved  # type: ignore[misc]


def bench_boundary(rep: Report, repeat: int, workdir: str, big: int) -> None:
    sec = "2 boundary"
    table_uri = os.path.join(workdir, "boundary-table")
    ds = ls.write_dataset(source_table(10), table_uri, data_storage_version=STORAGE_VERSION)
    table_fields = ds.semantic_schema.fields
    layouts = ("utf8", "large_utf8", "dictionary", "utf8_view")
    sizes = {"10k": SMALL, "10M": big}
    plain = {n: source_table(rows) for n, rows in sizes.items()}
    batches = {(lay, n): _boundary_batch(plain[n], lay) for lay in layouts for n in sizes}
    del plain
    bound = {k: bind_input(table_fields, b.schema) for k, b in batches.items()}

    # outside timing: representation-only inputs pass through without a copy; views convert
    for (lay, n), b in batches.items():
        out = to_physical(b, bound[(lay, n)])
        h.check_rows(f"to_physical {lay} {n}", out.num_rows, b.num_rows)
        if lay == "utf8_view":
            if out.column(1).type != pa.string() or not out.column(1).equals(
                b.column(1).cast(pa.string())
            ):
                raise WrongResult(f"to_physical {lay} {n}: not the utf8 of the same values")
            continue
        for i in range(b.num_columns):
            if out.column(i).type != b.column(i).type:
                raise WrongResult(f"to_physical {lay} {n}: column {i} became {out.column(i).type}")
            got = [x.address if x else 0 for x in out.column(i).buffers()]
            src = [x.address if x else 0 for x in b.column(i).buffers()]
            if got != src:
                raise WrongResult(f"to_physical {lay} {n}: column {i} was copied")

    ops: dict[str, Callable[[str, str], Callable[[], Any]]] = {
        "bind_input": lambda lay, n: lambda: bind_input(table_fields, batches[(lay, n)].schema),
        "to_physical": lambda lay, n: lambda: to_physical(batches[(lay, n)], bound[(lay, n)]),
    }
    for lay in layouts:
        for op, make in ops.items():
            runs = micro({n: make(lay, n) for n in sizes}, repeat)
            t = {n: rep.add(Timing(sec, f"{op} {lay} {n}", runs[n])) for n in sizes}
            target = None if lay == "utf8_view" else 1.5
            rep.ratio(sec, f"{op} {lay} 10M / 10k", t["10M"], t["10k"], target)

    # context: a whole append (coerce, bind, to_physical, file splitting, commit) with the
    # encoder replaced by a writer that writes nothing; one data file for either size
    for lay in ("utf8", "large_utf8"):
        data = {n: pa.Table.from_batches([batches[(lay, n)]]) for n in sizes}
        _bench_stubbed_append(rep, sec, lay, data, repeat, workdir)


def _bench_stubbed_append(
    rep: Report, sec: str, lay: str, data: dict[str, pa.Table], repeat: int, workdir: str
) -> None:
    uris: dict[str, str] = {}
    one_file = max(t.num_rows for t in data.values()) + 1

    def run(n: str, r: int) -> Callable[[], Any]:
        u = uris[n] = os.path.join(workdir, f"boundary-append-{lay}-{n}-{r}")
        ls.write_dataset(source_table(10), u, data_storage_version=STORAGE_VERSION)

        def thunk() -> Any:
            with _encoder_stubbed():
                return ls.write_dataset(data[n], u, mode="append", max_rows_per_file=one_file)

        return thunk

    def check(n: str, ds: Any, full: bool) -> None:
        frags = ds.manifest.fragments
        h.check_rows(f"stubbed append {n}", frags[-1].physical_rows, data[n].num_rows)

    def drop(n: str, r: int) -> None:
        shutil.rmtree(uris[n], ignore_errors=True)

    times = measure(list(data), repeat, run, check, drop)
    t = {n: rep.add(Timing(sec, f"append minus encoder {lay} {n}", times[n])) for n in data}
    rep.ratio(sec, f"append minus encoder {lay} 10M / 10k", t["10M"], t["10k"], None)


# ---- 3. output re-encoding on read ---------------------------------------------------------------
CONVERSIONS = (  # (physical layout of the table, requested output encoding, Arrow target)
    ("utf8", "large_utf8", pa.large_string()),
    ("dictionary", "utf8", pa.string()),
    ("utf8", "utf8_view", pa.string_view()),
    ("large_utf8", "utf8", pa.string()),
)


def bench_output(
    rep: Report, source: pa.Table, repeat: int, workdir: str, max_rows_per_file: int
) -> None:
    sec = "3 output"
    rows = source.num_rows
    sample = h.sample_rows(rows, 13)
    ours: dict[str, str] = {}
    legacy: dict[str, str] = {}
    for lay in {c[0] for c in CONVERSIONS}:
        data = as_layout(source, lay)
        ours[lay] = os.path.join(workdir, f"output-ours-{lay}")
        legacy[lay] = os.path.join(workdir, f"output-pylance-{lay}")
        ls.write_dataset(
            data,
            ours[lay],
            data_storage_version=STORAGE_VERSION,
            max_rows_per_file=max_rows_per_file,
        )
        lance.write_dataset(
            data,
            legacy[lay],
            data_storage_version=STORAGE_VERSION,
            max_rows_per_file=max_rows_per_file,
        )
        if file_layouts(ours[lay]) != [STRING[lay]] * math.ceil(rows / max_rows_per_file):
            raise WrongResult(f"output table {lay}: data files {file_layouts(ours[lay])}")

    for src, enc, dst in CONVERSIONS:
        _bench_conversion(rep, sec, source, src, enc, dst, ours[src], legacy[src], sample, repeat)


def _bench_conversion(
    rep: Report,
    sec: str,
    source: pa.Table,
    src: str,
    enc: str,
    dst: pa.DataType,
    ours: str,
    legacy: str,
    sample: np.ndarray,
    repeat: int,
) -> None:
    pair = f"{src} -> {enc}"
    plain = ls.dataset(ours).to_table()  # the arrays a read of this table returns
    arrays = plain.column("s").chunks
    if plain.schema.field("s").type != STRING[src]:
        raise WrongResult(f"{pair}: plain read returned {plain.schema.field('s').type}")
    src_type = arrays[0].type

    def convert() -> list[pa.Array]:
        conv = resolve_converter(src_type, dst, "s")
        return [conv(a) for a in arrays]

    def cast() -> list[pa.Array]:
        return [a.cast(dst) for a in arrays]

    thunks = {"converter": convert, "pyarrow cast": cast}
    expected = pa.chunked_array(cast(), type=dst)
    want_values = source.column("s").cast(dst)
    if not expected.equals(want_values):
        raise WrongResult(f"{pair}: the Arrow cast differs from the source values")

    def check_conv(v: str, got: list[pa.Array], full: bool) -> None:
        if not pa.chunked_array(got, type=dst).equals(expected):
            raise WrongResult(f"{pair} {v}: converted values differ from the Arrow cast")

    times = micro(thunks, repeat, check_conv)
    t = {v: rep.add(Timing(sec, f"{pair} {v}", times[v])) for v in thunks}
    rep.ratio(sec, f"{pair} converter / cast", t["converter"], t["pyarrow cast"], 1.5)

    # end to end: open + to_table with and without the override; pylance on a legacy copy
    reads: dict[str, Callable[[], pa.Table]] = {
        "to_table override": lambda: ls.dataset(ours).to_table(output_encodings={"s": enc}),
        "to_table plain": lambda: ls.dataset(ours).to_table(),
        "pylance to_table": lambda: lance.dataset(legacy).to_table(),
    }
    want_plain = as_layout(source, src)
    wants = {
        "to_table override": source.set_column(1, "s", want_values.combine_chunks()),
        "to_table plain": want_plain,
        "pylance to_table": want_plain,
    }

    def check_read(v: str, got: pa.Table, full: bool) -> None:
        check_table(f"{pair} {v}", got, wants[v], None if full else sample)

    times = measure(list(reads), repeat, lambda v, r: reads[v], check_read)
    t = {v: rep.add(Timing(sec, f"{pair} {v}", times[v])) for v in reads}
    override, plain_t = t["to_table override"], t["to_table plain"]
    rep.ratio(sec, f"{pair} to_table override / plain", override, plain_t, None)
    rep.ratio(sec, f"{pair} to_table plain / pylance", plain_t, t["pylance to_table"], None)


# ---- 4. scan of mixed-layout fragments -----------------------------------------------------------
MIXED = ("utf8", "large_utf8", "utf8_view", "dictionary")


def bench_mixed(rep: Report, source: pa.Table, repeat: int, workdir: str) -> None:
    sec = "4 mixed"
    rows = source.num_rows
    per = math.ceil(rows / len(MIXED))
    parts = [source.slice(i * per, per).combine_chunks() for i in range(len(MIXED))]
    uris = {
        "mixed": os.path.join(workdir, "mixed-layouts"),
        "uniform": os.path.join(workdir, "mixed-uniform"),
        "pylance uniform": os.path.join(workdir, "mixed-pylance"),
    }
    for i, (lay, part) in enumerate(zip(MIXED, parts, strict=True)):
        mode = "create" if i == 0 else "append"
        ls.write_dataset(
            as_layout(part, lay), uris["mixed"], mode=mode, data_storage_version=STORAGE_VERSION
        )
        ls.write_dataset(part, uris["uniform"], mode=mode, data_storage_version=STORAGE_VERSION)
        lance.write_dataset(
            part, uris["pylance uniform"], mode=mode, data_storage_version=STORAGE_VERSION
        )
    want_files = [pa.string(), pa.large_string(), pa.string(), STRING["dictionary"]]
    if file_layouts(uris["mixed"]) != want_files:
        raise WrongResult(f"mixed table: data files {file_layouts(uris['mixed'])}")
    if file_layouts(uris["uniform"]) != [pa.string()] * len(MIXED):
        raise WrongResult(f"uniform table: data files {file_layouts(uris['uniform'])}")
    sample = h.sample_rows(rows, 17)
    reads = {
        "scan mixed": lambda: ls.dataset(uris["mixed"]).to_table(),
        "scan uniform": lambda: ls.dataset(uris["uniform"]).to_table(),
        "pylance scan uniform": lambda: lance.dataset(uris["pylance uniform"]).to_table(),
    }

    def check(v: str, got: pa.Table, full: bool) -> None:
        check_table(v, got, source, None if full else sample)

    times = measure(list(reads), repeat, lambda v, r: reads[v], check)
    t = {v: rep.add(Timing(sec, v, times[v])) for v in reads}
    rep.ratio(sec, "scan mixed / uniform", t["scan mixed"], t["scan uniform"], 1.2)
    rep.ratio(sec, "scan uniform / pylance", t["scan uniform"], t["pylance scan uniform"], None)


# ---- output -------------------------------------------------------------------------------------
TITLES = {
    "1 append": "1. append of a layout pylance rejects (large_utf8 into string) vs utf8",
    "2 boundary": "2. writer boundary per write: 10k vs 10M rows (per call)",
    "3 output": "3. output re-encoding on read: converter vs bare pyarrow cast",
    "4 mixed": "4. scan of fragments in 4 layouts vs 4 utf8 fragments",
}


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:9.1f} us"
    if s < 1:
        return f"{s * 1e3:9.2f} ms"
    return f"{s:9.3f} s "


def format_section(rep: Report, sec: str) -> str:
    lines = [TITLES[sec]]
    timings = [t for t in rep.timings.values() if t.section == sec]
    width = max(len(t.name) for t in timings)
    lines.append(f"  {'timing':<{width}} {'median':>12} {'best':>12}")
    for t in timings:
        lines.append(f"  {t.name:<{width}} {_fmt_seconds(t.median)} {_fmt_seconds(t.best)}")
    ratios = [r for r in rep.ratios if r.section == sec]
    width = max(len(r.name) for r in ratios)
    lines.append(f"  {'ratio':<{width}} {'median':>7} {'best':>7} {'paired':>7}  target")
    for r in ratios:
        lines.append(
            f"  {r.name:<{width}} {r.ratio:>6.2f}x {r.best_ratio:>6.2f}x "
            f"{r.paired_ratio:>6.2f}x  {r.target_cell('(context)')}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p,
        rows_help="rows of sections 1, 3 and 4 (default 2,000,000)",
        repeat_help="timed repeats per measurement; the median is reported",
        json_help="also write the results as JSON",
    )
    p.add_argument(
        "--big-rows",
        type=int,
        default=BIG,
        help="rows of section 2's big batch (default 10,000,000)",
    )
    p.add_argument(
        "--only",
        action="append",
        choices=["1", "2", "3", "4"],
        help="run only this section (repeatable)",
    )
    args = p.parse_args(argv)
    if args.repeat < 1 or args.rows < 4 or args.big_rows < SMALL:
        p.error("--repeat must be positive, --rows at least 4, --big-rows at least 10,000")
    only = set(args.only or ["1", "2", "3", "4"])

    env = h.environment()
    h.print_banner(env)
    print(
        f"rows {args.rows:,} (int64 + ~20-byte strings), repeat {args.repeat} (median), "
        f"max_rows_per_file {args.max_rows_per_file:,}, data storage version {STORAGE_VERSION}"
    )
    env["loadavg_at_start"] = list(os.getloadavg())
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in env['loadavg_at_start'])}")
    started = time.perf_counter()
    rep = Report()
    with h.workdir("lance-semantic-bench-semantic-", args.tmpdir) as workdir:
        source = source_table(args.rows)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("1", lambda: bench_append(rep, source, args.repeat, workdir, args.max_rows_per_file)),
            ("2", lambda: bench_boundary(rep, args.repeat, workdir, args.big_rows)),
            ("3", lambda: bench_output(rep, source, args.repeat, workdir, args.max_rows_per_file)),
            ("4", lambda: bench_mixed(rep, source, args.repeat, workdir)),
        ]
        for key, step in steps:
            if key in only:
                t0 = time.perf_counter()
                print(f"section {key} ...", flush=True)
                step()
                sec = next(s for s in TITLES if s.startswith(key))
                print(format_section(rep, sec))
                print(f"  ({time.perf_counter() - t0:.1f} s)\n", flush=True)
    env["loadavg_at_end"] = list(os.getloadavg())
    print(
        "median/best: seconds (section 2: per call); ratios: of the medians (target status), "
        "of the fastest runs, and the median of the per-round ratios (paired); every result "
        f"validated outside timing; total {time.perf_counter() - started:.1f} s"
    )
    over = [r.name for r in rep.ratios if r.status == "OVER"]
    if over:
        print("over target: " + "; ".join(over))
    if args.json:
        parameters = {
            "rows": args.rows,
            "big_rows": args.big_rows,
            "repeat": args.repeat,
            "max_rows_per_file": args.max_rows_per_file,
            "storage_version": STORAGE_VERSION,
        }
        h.write_json(
            args.json,
            env,
            parameters,
            timings=[
                asdict(t) | {"median": t.median, "best": t.best} for t in rep.timings.values()
            ],
            ratios=[asdict(r) | {"status": r.status} for r in rep.ratios],
        )
    return h.strict_exit(over)


if __name__ == "__main__":
    raise SystemExit(main())
