"""Ray Data writes and reads: lance-ray vs lance_semantic.ray on the same data (DESIGN §7,
issue 16)::

    python benchmarks/bench_ray.py [--rows N] [--blocks N] [--repeat K] [--json out.json]
                                   [--only OP ...] [--tmpdir DIR]

Data: ``datagen.generate(--rows)`` (1,000,000 rows: ``id``, ``i64``, ``f64``, ``s``) cut into
``--blocks`` 8 equal blocks, put into Ray's object store once (``ray.data.from_arrow``) and
written from there by both engines. Ray runs locally with 2 CPUs
(``ray.init(num_cpus=2, include_dashboard=False)``); its start is not timed.

What is timed (median of ``--repeat`` rounds after an untimed, fully checked warm-up round;
the engine that goes first alternates):

``write``        ``write_lance(blocks, <new dir>, min_rows_per_file=rows // blocks)``: one
                 write task per block, one fragment each, one commit (legacy table, data
                 storage 2.2). ``os.sync()`` runs before each round, untimed.
``read``         ``read_lance(uri).materialize()`` of one table lance-ray wrote (8 fragments),
                 the whole table read into Ray's object store.
``write flagged``  context only: ours writes the same rows as a flagged 2.3 table whose blocks
                 alternate utf8 and large_utf8 for ``s`` (each file keeps its block's layout);
                 lance-ray writes the plain blocks (it cannot write flagged tables).

Checks (outside the timing): a written table has ``--blocks`` fragments and ``--rows`` rows;
after the warm-up it is read back in full by the *other* library (pylance for ours, ours for
lance-ray's) and must equal the source sorted by ``id``; a read's blocks must hold every row
(``id`` sum) and, after the warm-up, equal the source.

Ratio is ours / lance-ray in time; target (DESIGN §7) at most 1.1x.
"""

from __future__ import annotations

import os
import sys
import time

import _harness as h  # first: puts src/ on sys.path, quiets pylance's stderr
import lance
import pyarrow as pa
from datagen import generate

import lance_semantic as ls

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
import lance_ray  # noqa: E402
import ray  # noqa: E402

import lance_semantic.ray as lsray  # noqa: E402

ENGINES = ("lance-ray", "ours")
OPERATIONS = ("write", "read", "write flagged")


def _blocks(table: pa.Table, n: int, *, flagged: bool = False) -> list[pa.Table]:
    size = -(-table.num_rows // n)
    out = []
    for i in range(n):
        part = table.slice(i * size, size)
        if flagged and i % 2:
            s = part.schema.get_field_index("s")
            part = part.set_column(s, "s", part["s"].cast(pa.large_string()))
        out.append(part.combine_chunks())
    return out


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p,
        rows_help="rows of the data (default 1,000,000)",
        repeat_help="timed rounds per operation (default 5)",
        max_rows_per_file=False,
    )
    p.set_defaults(rows=1_000_000, repeat=5)
    p.add_argument("--blocks", type=int, default=8, help="Ray blocks (default 8)")
    p.add_argument("--only", nargs="+", choices=OPERATIONS, help="run only these operations")
    a = p.parse_args(argv)
    env = h.environment() | {"ray": ray.__version__, "lance_ray": lance_ray.__version__}
    h.print_banner(env, versions=("pyarrow", "ray", "lance_ray"))
    print(f"load average before start: {os.getloadavg()}")
    # Ray's workers import lance_semantic from this checkout too (as the driver does)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(h._SRC), os.environ.get("PYTHONPATH", "")) if p
    )
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    source = generate(a.rows)
    expected = source.sort_by("id")
    per_block = -(-a.rows // a.blocks)
    plain = ray.data.from_arrow(_blocks(source, a.blocks)).materialize()
    flagged = ray.data.from_arrow(_blocks(source, a.blocks, flagged=True)).materialize()
    wanted = a.only or OPERATIONS
    results: list[h.Result] = []
    with h.workdir("bench-ray-", a.tmpdir) as tmp:

        def target(engine: str, r: int, op: str) -> str:
            return os.path.join(tmp, f"{op.replace(' ', '-')}-{engine}-{r}")

        def write(op: str) -> h.Result:
            def run(engine: str, r: int) -> object:
                uri = last[engine] = target(engine, r, op)
                os.sync()
                if engine == "ours" and op == "write flagged":
                    return lambda: lsray.write_lance(
                        flagged, uri, data_storage_version="2.3", min_rows_per_file=per_block
                    )
                if engine == "ours":
                    return lambda: lsray.write_lance(plain, uri, min_rows_per_file=per_block)
                return lambda: lance_ray.write_lance(plain, uri, min_rows_per_file=per_block)

            def check(engine: str, _out: object, full: bool) -> None:
                uri = last[engine]
                ours = ls.dataset(uri)
                h.check_rows(f"{op} {engine}", ours.count_rows(), a.rows)
                if len(ours.get_fragments()) != a.blocks:
                    raise h.WrongResult(f"{op} {engine}: {len(ours.get_fragments())} fragments")
                if full:
                    back = (ours.to_table() if engine != "ours" else _pylance(uri, op)).sort_by(
                        "id"
                    )
                    if not back.equals(expected):
                        raise h.WrongResult(f"{op} {engine}: the table read back differs")

            last: dict[str, str] = {}
            times = h.measure(ENGINES, a.repeat, run, check)  # type: ignore[arg-type]
            target_ratio = None if op == "write flagged" else 1.1
            return h.Result.of(op, times["lance-ray"], times["ours"], target_ratio)

        def read() -> h.Result:
            uri = os.path.join(tmp, "read-source")
            lance_ray.write_lance(plain, uri, min_rows_per_file=per_block)

            def run(engine: str, _r: int) -> object:
                if engine == "ours":
                    return lambda: lsray.read_lance(uri).materialize()
                return lambda: lance_ray.read_lance(uri).materialize()

            def check(engine: str, out: object, full: bool) -> None:
                assert isinstance(out, ray.data.Dataset)
                got = pa.concat_tables(ray.get(out.to_arrow_refs()))
                h.check_rows(f"read {engine}", got.num_rows, a.rows)
                if full and not got.sort_by("id").equals(expected):
                    raise h.WrongResult(f"read {engine}: rows differ from the source")

            times = h.measure(ENGINES, a.repeat, run, check)  # type: ignore[arg-type]
            return h.Result.of("read", times["lance-ray"], times["ours"], 1.1)

        started = time.perf_counter()
        for op in wanted:
            results.append(read() if op == "read" else write(op))
        elapsed = time.perf_counter() - started
    ray.shutdown()
    print(f"rows {a.rows}, blocks {a.blocks}, repeat {a.repeat}; {elapsed:.0f} s")
    print(f"load average after: {os.getloadavg()}")
    print(h.format_table(results, columns=("lance-ray s", "lance-semantic s")))
    params = {"rows": a.rows, "blocks": a.blocks, "repeat": a.repeat}
    return h.finish(a.json, env, params, results)


def _pylance(uri: str, op: str) -> pa.Table:
    """Our table read back by the other side: pylance for legacy, ours for flagged (pylance
    refuses flagged tables; the values are compared as utf8)."""
    if op == "write flagged":
        return ls.dataset(uri).to_table()
    return lance.dataset(uri).to_table()


if __name__ == "__main__":
    sys.exit(main())
