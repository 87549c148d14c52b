"""Full text search: pylance through its INVERTED index vs lance-semantic through the same
index, side by side in one process::

    python benchmarks/bench_fts.py [--rows N] [--repeat K]

Data (deterministic, seed 31): ``--rows`` documents (default 200,000) in 4 fragments, each
5 to 40 words drawn Zipf-like from 20,000 words ``t0 ... t19999``, written by pylance;
pylance builds an INVERTED index with positions (``stem=False, remove_stop_words=False,
ascii_folding=False``); lance-semantic's query text goes through pylance's analyzer
(``fts.tokenize``).

What is timed (``to_table(full_text_query=..., columns=["id"], limit=10)``, a new query
every round, on a handle opened once: *warm*; on a new handle with the index caches cleared:
*cold*, ours only clears ours):

``one``     one word (of the 2,000 most frequent)
``two``     two words
``phrase``  a two-word phrase taken from a document (``PhraseQuery``)

Each round's results are checked equal (the same ids up to ties at the 10th score, scores to
1e-5). Medians in ms and the ratio ours / pylance.
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
from lance_semantic.fts import PhraseQuery, clear_kept_inverted  # noqa: E402

VOCAB = 20_000


def _write(uri: str, rows: int) -> list[str]:
    rng = np.random.default_rng(31)
    p = 1.0 / np.arange(1, VOCAB + 1) ** 0.9
    p /= p.sum()
    words = np.array([f"t{i}" for i in range(VOCAB)])
    lengths = rng.integers(5, 41, rows)
    drawn = words[rng.choice(VOCAB, size=int(lengths.sum()), p=p)]
    cuts = np.cumsum(lengths)[:-1]
    docs = [" ".join(d) for d in np.split(drawn, cuts)]
    table = pa.table({"id": pa.array(np.arange(rows), pa.int64()), "text": docs})
    lance.write_dataset(table, uri, max_rows_per_file=-(-rows // 4))
    lance.dataset(uri).create_scalar_index(
        "text",
        "INVERTED",
        with_position=True,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
    )
    return docs


def _query(kind: str, rng: np.random.Generator, docs: list[str]) -> Any:
    if kind == "one":
        return f"t{int(rng.integers(0, 2000))}"
    if kind == "two":
        return f"t{int(rng.integers(0, 2000))} t{int(rng.integers(0, 2000))}"
    words = docs[int(rng.integers(0, len(docs)))].split()
    at = int(rng.integers(0, len(words) - 1))
    return PhraseQuery(" ".join(words[at : at + 2]), "text")


def _run(ds: Any, query: Any, theirs: bool) -> pa.Table:
    if theirs and isinstance(query, PhraseQuery):
        query = query.to_pylance()
    return ds.to_table(full_text_query=query, columns=["id"], limit=10)


def _same(a: pa.Table, b: pa.Table) -> bool:
    sa, sb = a["_score"].to_numpy(), b["_score"].to_numpy()
    if len(sa) != len(sb) or not np.allclose(sa, sb, rtol=1e-5, atol=0):
        return False
    ia, ib = a["id"].to_pylist(), b["id"].to_pylist()
    kth = sa[-1] if len(sa) else 0.0
    sure = {i for i, s in zip(ia, sa, strict=True) if s > kth * (1 + 1e-5)}
    return sure <= set(ib)


def _time(fn: Any, *args: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn(*args)
    return (time.perf_counter() - t) * 1000, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=21)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "t.lance")
        docs = _write(uri, opts.rows)
        theirs_ds, ours_ds = lance.dataset(uri), ls.dataset(uri)
        print(f"rows={opts.rows} repeat={opts.repeat} pylance={lance.__version__}")
        print(f"{'query':7} {'mode':5} {'pylance':>9} {'ours':>9} {'ratio':>6}")
        for kind in ("one", "two", "phrase"):
            for mode in ("warm", "cold"):
                rng = np.random.default_rng(abs(hash((kind, mode))) % 2**32)
                got: dict[str, list[float]] = {"pylance": [], "ours": []}
                for r in range(opts.repeat + 1):
                    query = _query(kind, rng, docs)
                    if mode == "cold":
                        clear_kept_inverted()
                        ours_ds, theirs_ds = ls.dataset(uri), lance.dataset(uri)
                    order = ["pylance", "ours"] if r % 2 else ["ours", "pylance"]
                    results = {}
                    for who in order:
                        ds = theirs_ds if who == "pylance" else ours_ds
                        ms, results[who] = _time(_run, ds, query, who == "pylance")
                        if r:
                            got[who].append(ms)
                    if not _same(results["pylance"], results["ours"]):
                        raise SystemExit(f"ours differs from pylance on {query!r}")
                med = {w: statistics.median(v) for w, v in got.items()}
                print(
                    f"{kind:7} {mode:5} {med['pylance']:9.2f} {med['ours']:9.2f} "
                    f"{med['ours'] / med['pylance']:6.2f}"
                )


if __name__ == "__main__":
    main()
