"""Scalar index filters: pylance through its BTREE vs lance-semantic through the same index
vs lance-semantic's unindexed scan, side by side in one process::

    python benchmarks/bench_scalar_index.py [--rows N] [--repeat K]

Data (deterministic, seed 31): ``--rows`` rows (default 1,000,000) in 4 fragments of
``id`` (int64), ``k`` (int64, a random permutation of ``0..rows``: unique keys), ``x``
(float64) and ``s`` (string, 16 chars), written by pylance; pylance builds a BTREE on ``k``.

What is timed (``to_table`` of every column, a new key every round, on a handle opened once:
*warm*; on a new handle with the index caches cleared: *cold*, ours only clears ours):

``point``  ``k = v``
``in100``  ``k IN (100 values)``
``range``  ``k BETWEEN v AND v + 999`` (1,000 rows)
``count``  ``count_rows("cat = 'c<v>'")`` over a BITMAP of 100 values (1% of the rows each)
``wide``   ``k < 500000``: half the rows (ours scans: not selective)

(``cat`` is a 100-value string column under a BITMAP.)

Each round's three results are checked equal (rows sorted by ``id``). Medians in ms.

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
import statistics
import sys
import tempfile
import time
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--build-repeat", type=int, default=3)
    parser.add_argument("--part", choices=("filters", "builds", "both"), default="both")
    opts = parser.parse_args()
    if opts.part in ("builds", "both"):
        builds(opts.rows, opts.build_repeat)
    if opts.part == "builds":
        return
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "t.lance")
        _write(uri, opts.rows)
        theirs_ds, ours_ds = lance.dataset(uri), ls.dataset(uri)
        print(f"rows={opts.rows} repeat={opts.repeat} pylance={lance.__version__}")
        print(f"{'query':8} {'mode':5} {'pylance':>9} {'ours':>9} {'ratio':>6} {'scan':>9}")
        for kind in ("point", "in100", "range", "count", "wide"):
            for mode in ("warm", "cold"):
                rng = np.random.default_rng(hash((kind, mode)) % 2**32)
                got: dict[str, list[float]] = {"pylance": [], "ours": [], "scan": []}
                for r in range(opts.repeat + 1):
                    f = _filter(kind, rng, opts.rows)
                    if mode == "cold":
                        clear_kept_indices()
                        ours_ds, theirs_ds = ls.dataset(uri), lance.dataset(uri)
                    order = ["pylance", "ours"] if r % 2 else ["ours", "pylance"]
                    results = {}
                    for who in order:
                        if who == "pylance":
                            ms, results[who] = _time(_call, ds=theirs_ds, kind=kind, f=f)
                        else:
                            ms, results[who] = _time(_call, ds=ours_ds, kind=kind, f=f)
                        if r:
                            got[who].append(ms)
                    if mode == "warm" and r < 4:  # the unindexed scan: a few rounds
                        ms, results["scan"] = _time(_call, ds=ours_ds, kind=kind, f=f, scan=True)
                        if r:
                            got["scan"].append(ms)
                    for who, t in results.items():
                        if not _same(t, results["pylance"]):
                            raise SystemExit(f"{who} differs from pylance on {f[:60]}")
                med = {w: statistics.median(v) if v else float("nan") for w, v in got.items()}
                print(
                    f"{kind:8} {mode:5} {med['pylance']:9.2f} {med['ours']:9.2f} "
                    f"{med['ours'] / med['pylance']:6.2f} {med['scan']:9.2f}"
                )


if __name__ == "__main__":
    main()
