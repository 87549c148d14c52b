"""Full-text analysis and token-map lookups (issue 31): ``Analyzer.tokenize_array`` over a
corpus of 200k documents of ~50 words (a Zipf vocabulary of 150k made-up words with
capitals, punctuation, numbers and some accented letters), next to pylance's whole INVERTED
build of the same column (tokenizing, posting lists, files) for scale; then opening the
index's token map and looking up tokens. Medians of ``--repeat`` rounds; no thresholds.

    python benchmarks/bench_fts_tokenize.py [--docs N] [--repeat K]
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("LANCE_LOG", "error")

import lance  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
from lance.file import LanceFileReader  # noqa: E402

from lance_semantic.fts import Analyzer, AnalyzerParams, TokenMap  # noqa: E402


def corpus(docs: int, words: int = 50, seed: int = 0) -> pa.Array:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzéèüñ"))
    weights = np.r_[np.full(26, 1.0), np.full(4, 0.05)]
    weights /= weights.sum()
    vocab = ["".join(rng.choice(letters, rng.integers(2, 12), p=weights)) for _ in range(150_000)]
    vocab[:40] = "the of and a to in is was he for it with as his on be at by i".split() * 2
    vocab = [w.capitalize() if i % 7 == 0 else w for i, w in enumerate(vocab)]
    vocab = [w + "," if i % 11 == 0 else w for i, w in enumerate(vocab)]
    vocab[100:200] = [str(i * 37) for i in range(100)]
    p = 1 / np.arange(1, len(vocab) + 1) ** 1.05
    p /= p.sum()
    ids = rng.choice(len(vocab), size=(docs, words), p=p)
    v = np.array(vocab, dtype=object)
    return pa.array([" ".join(v[r]) for r in ids], pa.string())


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    texts = corpus(args.docs)
    print(f"{args.docs} documents, {pc.sum(pc.utf8_length(texts)).as_py() / 1e6:.1f}M chars")
    cases = {
        "defaults": AnalyzerParams(),
        "defaults, positions": AnalyzerParams(with_position=True),
        "no stem, stop words kept": AnalyzerParams(stem=False, remove_stop_words=False),
        "whitespace, no filter": AnalyzerParams(
            base_tokenizer="whitespace",
            stem=False,
            remove_stop_words=False,
            lower_case=False,
            ascii_folding=False,
        ),
    }
    for name, params in cases.items():
        a = Analyzer(params)
        t = median_time(lambda a=a, p=params: a.tokenize_array(texts, p.with_position), args.repeat)
        print(f"ours   tokenize_array  {name:28s} {t:7.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"{tmp}/t.lance"
        ds = lance.write_dataset(pa.table({"text": texts}), uri)

        def build() -> None:
            ds.create_scalar_index("text", "INVERTED", replace=True)

        print(
            f"pylance create_scalar_index INVERTED (whole build)    {median_time(build, 1):7.2f} s"
        )
        (path,) = glob.glob(f"{uri}/_indices/*/part_0_tokens.lance")
        t0 = time.perf_counter()
        table = LanceFileReader(path).read_all().to_table()
        t1 = time.perf_counter()
        tokens = TokenMap.from_table(table)
        t2 = time.perf_counter()
        keys = list(tokens.keys())
        t3 = time.perf_counter()
        sample = keys[:: max(1, len(keys) // 10_000)]
        t4 = time.perf_counter()
        assert all(tokens.get(k) is not None for k in sample)
        t5 = time.perf_counter()
        print(
            f"token map: {len(tokens)} tokens, {len(table.column(0)[0].as_py()) / 1e6:.2f} MB; "
            f"read file {1e3 * (t1 - t0):.2f} ms, open {1e3 * (t2 - t1):.3f} ms, "
            f"iterate all {t3 - t2:.2f} s, get {1e6 * (t5 - t4) / len(sample):.1f} us/token"
        )


if __name__ == "__main__":
    main()
