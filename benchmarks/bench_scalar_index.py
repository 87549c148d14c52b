"""Scalar index filters: pylance through its BTREE vs lance-semantic through the same index
vs lance-semantic's unindexed scan, side by side in one process::

    python benchmarks/bench_scalar_index.py [--rows N] [--repeat K]

Data (deterministic, seed 31): ``--rows`` rows (default 1,000,000) in 4 fragments of
``id`` (int64), ``k`` (int64, a random permutation of ``0..rows``: unique keys), ``x``
(float64) and ``s`` (string, 16 chars), written by pylance; pylance builds a BTREE on ``k``.

A flagged twin (the same files and indices, upgraded by ``ls.upgrade``) is timed against
pylance on the legacy table (pylance cannot open a flagged table).

What is timed (``to_table`` of every column, a new key every round, on a handle opened once:
*warm*; on a handle opened fresh, ``lance.dataset(uri)`` / ``ls.dataset(uri)``, ours with
its index caches cleared: *cold*; the open is not timed):

``point``  ``k = v``
``in100``  ``k IN (100 values)``
``range``  ``k BETWEEN v AND v + 999`` (1,000 rows)
``count``  ``count_rows("cat = 'c<v>'")`` over a BITMAP of 100 values (1% of the rows each)
``wide``   ``k < 500000``: half the rows (ours scans: not selective)

(``cat`` is a 100-value string column under a BITMAP.)

Each round's results are checked equal (rows sorted by ``id``). Medians in ms of
``--repeat`` rounds (after one warm-up round), ratios ours / pylance (``ratio``: of the
medians; ``paired``: the median of each round's ratio, the two runs of a round being
back to back, which a machine shared with other work disturbs less); ``vs scan``: ours
through the index / ours scanning without it (a few warm rounds).

Builds (``--part builds``; ``--part both``, the default, runs both): ``create_scalar_index``
through pylance and through lance-semantic on two copies of one table (``--rows`` rows in 4
fragments, written by pylance), alternating who goes first, ``--build-repeat`` rounds each
(``replace=True``); medians in ms and the ratio ours / pylance:

``btree_int``    BTREE on ``k`` (int64, unique)
``btree_str``    BTREE on ``s`` (string, 16 chars, nearly unique)
``bitmap``       BITMAP on ``cat`` (string, 100 values)
``label_list``   LABEL_LIST on ``tags`` (list<string>, 1-3 of 50 labels a row)
``zonemap``      ZONEMAP on ``k``
``bloom_int``    BLOOMFILTER on ``k``
``bloom_str``    BLOOMFILTER on ``s``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("LANCE_LOG", "error")

import lance  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

import lance_semantic as ls  # noqa: E402
from lance_semantic.scalar import clear_kept_indices  # noqa: E402


def _write(uri: str, rows: int) -> None:
    rng = np.random.default_rng(31)
    keys = rng.permutation(rows)
    table = pa.table(
        {
            "id": pa.array(np.arange(rows), pa.int64()),
            "k": pa.array(keys, pa.int64()),
            "x": pa.array(rng.random(rows)),
            "s": pa.array([f"{v:016d}" for v in rng.integers(0, 10**15, rows)]),
            "cat": pa.array([f"c{v}" for v in rng.integers(0, 100, rows)]),
        }
    )
    lance.write_dataset(table, uri, max_rows_per_file=-(-rows // 4))
    lance.dataset(uri).create_scalar_index("k", "BTREE")
    lance.dataset(uri).create_scalar_index("cat", "BITMAP")


def _filter(kind: str, rng: np.random.Generator, rows: int) -> str:
    if kind == "point":
        return f"k = {int(rng.integers(0, rows))}"
    if kind == "in100":
        return f"k IN ({', '.join(str(int(v)) for v in rng.integers(0, rows, 100))})"
    if kind == "count":
        return f"cat = 'c{int(rng.integers(0, 100))}'"
    if kind == "wide":
        return f"k < {rows // 2 + int(rng.integers(0, 1000))}"
    v = int(rng.integers(0, rows - 1000))
    return f"k BETWEEN {v} AND {v + 999}"


def _call(ds: Any, kind: str, f: str, scan: bool = False) -> Any:
    """One query: a count for ``count``, else the rows; ``scan``: ours without the index."""
    if kind == "count":
        return (
            ds.scanner(filter=f, use_scalar_index=False).count_rows() if scan else ds.count_rows(f)
        )
    if scan:
        return ds.to_table(filter=f, use_scalar_index=False)
    return ds.to_table(filter=f)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int):
        return bool(a == b)
    return bool(a.sort_by("id").equals(b.sort_by("id")))


def _time(fn: Any, **kwargs: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn(**kwargs)
    return (time.perf_counter() - t) * 1000, out


BUILDS = {
    "btree_int": ("k", "BTREE"),
    "btree_str": ("s", "BTREE"),
    "bitmap": ("cat", "BITMAP"),
    "label_list": ("tags", "LABEL_LIST"),
    "zonemap": ("k", "ZONEMAP"),
    "bloom_int": ("k", "BLOOMFILTER"),
    "bloom_str": ("s", "BLOOMFILTER"),
}


def _build_table(uri: str, rows: int) -> None:
    rng = np.random.default_rng(31)
    counts = rng.integers(1, 4, rows)
    labels = pa.array([f"t{v}" for v in rng.integers(0, 50, int(counts.sum()))])
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    table = pa.table(
        {
            "id": pa.array(np.arange(rows), pa.int64()),
            "k": pa.array(rng.permutation(rows), pa.int64()),
            "s": pa.array([f"{v:016d}" for v in rng.integers(0, 10**15, rows)]),
            "cat": pa.array([f"c{v}" for v in rng.integers(0, 100, rows)]),
            "tags": pa.ListArray.from_arrays(offsets, labels),
        }
    )
    lance.write_dataset(table, uri, max_rows_per_file=-(-rows // 4))


def builds(rows: int, repeat: int) -> None:
    """``create_scalar_index`` of each type, pylance vs ours, on copies of one table."""
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        theirs, ours = str(Path(tmp) / "theirs.lance"), str(Path(tmp) / "ours.lance")
        _build_table(theirs, rows)
        shutil.copytree(theirs, ours)
        print(f"builds: rows={rows} fragments=4 repeat={repeat} pylance={lance.__version__}")
        print(f"{'index':11} {'pylance':>9} {'ours':>9} {'ratio':>6}")
        for label, (column, kind) in BUILDS.items():
            got: dict[str, list[float]] = {"pylance": [], "ours": []}
            for r in range(repeat):
                order = ["pylance", "ours"] if r % 2 else ["ours", "pylance"]
                for who in order:
                    ds = lance.dataset(theirs) if who == "pylance" else ls.dataset(ours)
                    ms, _ = _time(ds.create_scalar_index, column=column, index_type=kind)
                    got[who].append(ms)
            f = {
                "btree_int": "k = 7",
                "btree_str": "s > '0999'",
                "bitmap": "cat = 'c7'",
                "label_list": "array_has_any(tags, ['t7'])",
                "zonemap": "k < 1000",
                "bloom_int": "k = 7",
                "bloom_str": "s = '0000000000000007'",
            }[label]
            a = lance.dataset(theirs).to_table(filter=f).sort_by("id")
            b = lance.dataset(ours).to_table(filter=f).sort_by("id")
            if not a.equals(b):
                raise SystemExit(f"{label}: pylance's rows through our index differ")
            med = {w: statistics.median(v) for w, v in got.items()}
            print(
                f"{label:11} {med['pylance']:9.1f} {med['ours']:9.1f} "
                f"{med['ours'] / med['pylance']:6.2f}"
            )


# ---- queries through the indices (issue 31 item 5) ---------------------------------------
QUERY_KINDS = ("point", "in100", "range", "count", "wide")


def _flagged_twin(uri: str, flagged: str) -> None:
    """A flagged copy of the legacy table ``uri`` (same files and indices, upgraded by one
    metadata-only commit): pylance cannot open it, so its peer is the legacy twin."""
    shutil.copytree(uri, flagged)
    ls.upgrade(flagged)


def _query_round(
    kind: str, mode: str, f: str, r: int, handles: dict[str, Any], uris: dict[str, str]
) -> dict[str, tuple[float, Any]]:
    """One round of one query: pylance (on the legacy table) and ours (on ``uris["ours"]``),
    in alternating order; ``cold``: both on handles opened fresh (ours with its index
    caches cleared); the unindexed scan of ours on a few warm rounds."""
    if mode == "cold":
        clear_kept_indices()
        handles["ours"] = ls.dataset(uris["ours"])
        handles["pylance"] = lance.dataset(uris["pylance"])
    out: dict[str, tuple[float, Any]] = {}
    for who in ["pylance", "ours"] if r % 2 else ["ours", "pylance"]:
        out[who] = _time(_call, ds=handles[who], kind=kind, f=f)
    if mode == "warm" and r < 4:
        out["scan"] = _time(_call, ds=handles["ours"], kind=kind, f=f, scan=True)
    for who, (_, got) in out.items():
        if not _same(got, out["pylance"][1]):
            raise SystemExit(f"{who} differs from pylance on {f[:60]}")
    return out


def run_queries(
    uri: str,
    flagged: str,
    rows: int,
    repeat: int,
    kinds: Sequence[str] = QUERY_KINDS,
    tables: Sequence[str] = ("legacy", "flagged"),
) -> None:
    """Every query kind, warm and cold, on the legacy table and its flagged twin: medians
    in ms and the ratios ours / pylance (``wide``: also ours / our unindexed scan)."""
    print(
        f"{'query':6} {'table':7} {'mode':4} {'pylance':>8} {'ours':>8} {'ratio':>6} "
        f"{'paired':>6} {'scan':>8} {'vs scan':>7}"
    )
    for kind in kinds:
        for table, ours_uri in (("legacy", uri), ("flagged", flagged)):
            if table not in tables:
                continue
            uris = {"ours": ours_uri, "pylance": uri}
            for mode in ("warm", "cold"):
                rng = np.random.default_rng(hash((kind, mode, table)) % 2**32)
                handles = {"ours": ls.dataset(ours_uri), "pylance": lance.dataset(uri)}
                got: dict[str, list[float]] = {"pylance": [], "ours": [], "scan": []}
                paired: list[float] = []  # (ours / pylance within each round)
                for r in range(repeat + 1):
                    f = _filter(kind, rng, rows)
                    timed = _query_round(kind, mode, f, r, handles, uris)
                    if r:  # (round 0 warms up)
                        for who, (ms, _) in timed.items():
                            got[who].append(ms)
                        paired.append(timed["ours"][0] / timed["pylance"][0])
                med = {w: statistics.median(v) if v else float("nan") for w, v in got.items()}
                vs_scan = med["ours"] / med["scan"] if got["scan"] else float("nan")
                print(
                    f"{kind:6} {table:7} {mode:4} {med['pylance']:8.2f} {med['ours']:8.2f} "
                    f"{med['ours'] / med['pylance']:6.2f} {statistics.median(paired):6.2f} "
                    f"{med['scan']:8.2f} {vs_scan:7.2f}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--build-repeat", type=int, default=3)
    parser.add_argument("--part", choices=("filters", "builds", "both"), default="both")
    parser.add_argument("--kinds", default=",".join(QUERY_KINDS), help="query kinds to time")
    parser.add_argument("--tables", default="legacy,flagged", help="legacy, flagged or both")
    parser.add_argument("--uri", help="an existing table written by this script (kept)")
    opts = parser.parse_args()
    if opts.part in ("builds", "both"):
        builds(opts.rows, opts.build_repeat)
    if opts.part == "builds":
        return
    kinds, tables = opts.kinds.split(","), opts.tables.split(",")
    if opts.uri:  # (the flagged twin is made next to it once)
        flagged = opts.uri.rstrip("/") + ".flagged"
        if not os.path.exists(opts.uri):
            _write(opts.uri, opts.rows)
        if not os.path.exists(flagged):
            _flagged_twin(opts.uri, flagged)
        run_queries(opts.uri, flagged, opts.rows, opts.repeat, kinds, tables)
        return
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "t.lance")
        _write(uri, opts.rows)
        flagged = str(Path(tmp) / "flagged.lance")
        _flagged_twin(uri, flagged)
        print(f"rows={opts.rows} repeat={opts.repeat} pylance={lance.__version__}")
        run_queries(uri, flagged, opts.rows, opts.repeat, kinds, tables)


if __name__ == "__main__":
    main()
