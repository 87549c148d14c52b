"""JSON columns: pylance's own conversion vs lance-semantic's codec, side by side (DESIGN §7).

Follows ``bench_core.py``'s method: the same work through both engines in one process, the
median of ``--repeat`` timings per engine (alternating which goes first), an untimed warm-up
round whose results are checked in full, every timed result checked on a sample::

    python benchmarks/bench_json.py [--rows N] [--large N] [--repeat K] [--json out.json]

Data (deterministic, see ``small_docs`` / ``large_docs``):

``small``  ``--rows`` documents of ~95 bytes: ints, a short string, a 2-decimal and a
           6-decimal float, a bool, a 2-string array, a nested object
``large``  ``--large`` documents of ~1 MB: nested arrays/objects (depth 5), unicode and
           escapes in strings, full-precision and short floats, wide integers

What is timed (data storage version 2.2, one data file):

``write``  pylance: ``lance.write_dataset(pa.table({"j": json_array}), uri)`` -- its JSON
           parse + JSONB encode, the data file write and the manifest commit.
           ours: ``encode_json(json_array)`` then ``LanceFileWriter`` writing the encoded
           large_binary column (with the ``lance.json`` field metadata) and closing the file --
           the codec plus the same file encoder pylance uses; no manifest (a few ms).
``read``   pylance: ``lance.dataset(uri).to_table()`` -- open, read, JSONB -> text.
           ours: ``LanceFileReader(data file).read_all(batch_size=...)`` in batches of 65536
           rows (lance-semantic's scan batch size) or of ~8 MB when rows are large, each
           batch's column handed to ``decode_jsonb`` on a pool of threads (one per core) as
           soon as the reader yields it -- file read plus the codec, overlapped; no manifest
           open (pylance's open is ~1 ms).

Throughput is the JSON text size (input of a write, output of a read) per second. Ratio is
ours / pylance in time (below 1.0 means we are faster); ``best`` the same on the fastest runs.
The codec alone (``encode_json``, ``decode_jsonb``) is timed too, for information.

The codec's kernels are loaded (or, the first time on a machine, compiled: up to a minute) by
``warm_up()`` before anything is timed, so that no timed run falls on the pure-Python
reference a process uses for its first small conversions.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (puts src/ on sys.path, sets LANCE_LOG)
import lance  # noqa: E402
from _harness import WrongResult  # noqa: E402
from lance.file import LanceFileReader, LanceFileWriter  # noqa: E402

from lance_semantic.codecs import decode_jsonb, encode_json  # noqa: E402
from lance_semantic.codecs.json import warm_up  # noqa: E402

STORAGE_VERSION = "2.2"
READ_BATCH = 65_536
READ_BYTES = 8 << 20
#: threads decoding the batches of a read (the machine's usable cores)
DECODERS = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)))
SEED = 20_240_614
#: throughput at least pylance's: ours / pylance time at most 1.0
TARGET = 1.0
JSON_FIELD = pa.field(
    "j",
    pa.large_binary(),
    metadata={"ARROW:extension:name": "lance.json", "ARROW:extension:metadata": ""},
)
JSONB_SCHEMA = pa.schema([JSON_FIELD])


# ---- data -------------------------------------------------------------------------------------
_WORDS = ["red", "blue", "green", "alpha", "beta", "gamma", "delta", "x", "yy", "zzz"]
_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def small_docs(n: int, seed: int = SEED) -> pa.Array:
    """``n`` documents of ~95 bytes as an arrow.json array."""
    r = random.Random(seed)
    docs = []
    for _ in range(n):
        user = "".join(r.choices(_ALNUM, k=r.randrange(5, 10)))
        tags = ",".join(f'"{w}"' for w in r.sample(_WORDS, r.randrange(1, 3)))
        docs.append(
            f'{{"id":{r.randrange(10**7)},"user":"{user}","score":{round(r.uniform(0, 100), 2)},'
            f'"ok":{"true" if r.random() < 0.5 else "false"},"tags":[{tags}],'
            f'"pos":{{"x":{r.randrange(-1000, 1000)},"y":{round(r.uniform(-90, 90), 6)}}}}}'
        )
    return pa.array(docs, pa.json_())


def _large_value(r: random.Random, depth: int) -> Any:
    k = r.random()
    if depth < 5 and k < 0.25:
        return [_large_value(r, depth + 1) for _ in range(r.randrange(2, 9))]
    if depth < 5 and k < 0.5:
        return {
            f"{r.choice(_WORDS)}_{i}": _large_value(r, depth + 1) for i in range(r.randrange(2, 9))
        }
    if k < 0.65:
        return r.uniform(-1e6, 1e6)
    if k < 0.75:
        return round(r.uniform(-100, 100), 3)
    if k < 0.85:
        return r.randrange(-(2**40), 2**40)
    if k < 0.95:
        s = "".join(r.choices(_ALNUM + ' é漢😀\n\t"\\/', k=r.randrange(0, 40)))
        return s
    return r.choice([True, False, None])


def large_docs(n: int, seed: int = SEED + 1, size: int = 1 << 20) -> pa.Array:
    """``n`` nested documents of about ``size`` bytes each as an arrow.json array."""
    r = random.Random(seed)
    docs = []
    for i in range(n):
        parts = []
        total = 0
        while total < size:
            part = json.dumps(_large_value(r, 0), ensure_ascii=r.random() < 0.5)
            parts.append(part)
            total += len(part) + 1
        docs.append(f'{{"doc":{i},"sections":[{",".join(parts)}]}}')
    return pa.array(docs, pa.json_(pa.large_string()))


# ---- engines ----------------------------------------------------------------------------------
def text_bytes(arr: pa.Array) -> int:
    return int(pc.sum(pc.binary_length(arr.storage)).as_py())


def pylance_write(arr: pa.Array, out: str) -> str:
    lance.write_dataset(pa.table({"j": arr}), out, data_storage_version=STORAGE_VERSION)
    return out


def ours_write(arr: pa.Array, out: str) -> str:
    enc = encode_json(arr, path="j")
    writer = LanceFileWriter(out, JSONB_SCHEMA, version=STORAGE_VERSION)
    writer.write_batch(pa.record_batch([enc], schema=JSONB_SCHEMA))
    writer.close()
    return out


def pylance_read(uri: str) -> pa.ChunkedArray:
    return lance.dataset(uri).to_table().column("j")


def ours_read(path: str) -> pa.ChunkedArray:
    reader = LanceFileReader(path)
    rows = reader.metadata().num_rows
    # batches of READ_BATCH rows, fewer when rows are large (about READ_BYTES of JSONB each)
    per_row = os.path.getsize(path) / max(rows, 1)
    batch = max(1, min(READ_BATCH, int(READ_BYTES / per_row)))
    # each batch is decoded as soon as the reader yields it, on DECODERS threads, so decoding
    # overlaps with the reader's own work (as pylance's scan pipeline overlaps its stages)
    pending = [
        DECODERS.submit(decode_jsonb, b.column(0), path="j")
        for b in reader.read_all(batch_size=batch).to_batches()
    ]
    return pa.chunked_array([f.result() for f in pending], type=pa.string())


# ---- checks -----------------------------------------------------------------------------------
def _texts(col: pa.ChunkedArray | pa.Array, rows: np.ndarray | None) -> list[Any]:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if isinstance(col.type, pa.BaseExtensionType):
        col = col.storage
    if rows is not None:
        col = col.take(pa.array(rows))
    return col.to_pylist()


def check(engine: str, op: str, got: Any, want: list[Any], rows: np.ndarray | None) -> None:
    have = _texts(got, rows)
    if have != want:
        bad = next(i for i, (a, b) in enumerate(zip(have, want, strict=False)) if a != b)
        raise WrongResult(f"{engine} {op}: row {bad}: {have[bad]!r:.80} != {want[bad]!r:.80}")


# ---- the suite ----------------------------------------------------------------------------------
ENGINES = ("pylance", "ours")


def run_dataset(name: str, arr: pa.Array, repeat: int, workdir: str) -> list[h.Result]:
    mb = text_bytes(arr) / 1e6
    # pylance's text is the reference output of both reads: JSON text -> JSONB -> text
    ref_uri = os.path.join(workdir, f"{name}-reference")
    pylance_write(arr, ref_uri)
    want = _texts(pylance_read(ref_uri), None)
    sample = h.sample_rows(len(arr), 7)
    want_sample = [want[i] for i in sample.tolist()]

    def out_path(engine: str, r: int) -> str:
        suffix = ".lance" if engine == "ours" else ""
        return os.path.join(workdir, f"{name}-{engine}-{r}{suffix}")

    def verify(op: str) -> Callable[[str, Any, bool], None]:
        def run(engine: str, got: Any, full: bool) -> None:
            if op == "write":  # read what was written back through the same engine
                got = pylance_read(got) if engine == "pylance" else ours_read(got)
            if full:
                check(engine, f"{op} {name}", got, want, None)
            else:
                check(engine, f"{op} {name}", got, want_sample, sample)

        return run

    def drop(engine: str, r: int) -> None:
        p = out_path(engine, r)
        if r and os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif r and os.path.exists(p):
            os.remove(p)

    def write(engine: str, r: int) -> Callable[[], Any]:
        fn = pylance_write if engine == "pylance" else ours_write
        os.sync()  # earlier rounds' dirty pages are written back now, not inside this timing
        return lambda: fn(arr, out_path(engine, r))

    def read(engine: str, r: int) -> Callable[[], Any]:
        src = out_path(engine, 0)  # each engine reads its own warm-up round's output
        return (lambda: pylance_read(src)) if engine == "pylance" else (lambda: ours_read(src))

    results = []
    for op, run, after in (("write", write, drop), ("read", read, None)):
        times = h.measure(ENGINES, repeat, run, verify(op), after)
        res = h.Result.of(f"{op} {name}", times["pylance"], times["ours"], TARGET)
        results.append(res)
    enc = encode_json(arr, path="j")
    codec = h.micro(
        {
            "encode": lambda: encode_json(arr, path="j"),
            "decode": lambda: decode_jsonb(enc, path="j"),
        },
        max(repeat, 1),
    )
    p_w, o_w = (mb / res.pylance_s, mb / res.ours_s) if (res := results[0]) else (0, 0)
    p_r, o_r = mb / results[1].pylance_s, mb / results[1].ours_s
    print(
        f"  {name}: {len(arr):,} docs, {mb:.1f} MB of text, {enc.nbytes / 1e6:.1f} MB of JSONB; "
        f"write MB/s pylance {p_w:.0f} ours {o_w:.0f}; read MB/s pylance {p_r:.0f} ours "
        f"{o_r:.0f}; codec alone: encode_json {mb / min(codec['encode']):.0f} MB/s, "
        f"decode_jsonb {mb / min(codec['decode']):.0f} MB/s"
    )
    return results


def main(argv: list[str] | None = None) -> int:
    p = h.parser(__doc__)
    p.add_argument("--rows", type=int, default=1_000_000, help="small documents (1,000,000)")
    p.add_argument("--large", type=int, default=64, help="large ~1 MB documents (64)")
    p.add_argument("--repeat", type=int, default=5, help="timed repeats; the median is reported")
    p.add_argument("--json", metavar="PATH", help="also write the results and environment")
    p.add_argument("--tmpdir", help="parent of the temporary working directory")
    args = p.parse_args(argv)
    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    print(f"small {args.rows:,} docs, large {args.large} docs, repeat {args.repeat} (median)")
    took = warm_up()
    print("kernels ready: " + ", ".join(f"{k} {s:.1f} s" for k, s in took.items()))
    results: list[h.Result] = []
    with h.workdir("lance-semantic-bench-json-", args.tmpdir) as wd:
        if args.rows:
            results += run_dataset("small", small_docs(args.rows), args.repeat, wd)
        if args.large:
            results += run_dataset("large", large_docs(args.large), args.repeat, wd)
    print()
    print(h.format_table(results))
    print(
        "\nseconds: median of the timed runs; ratio: lance-semantic / pylance time (medians), "
        "best: the same on the fastest runs; target: throughput at least pylance's"
    )
    params = vars(args) | {"storage_version": STORAGE_VERSION, "read_batch": READ_BATCH}
    return h.finish(args.json, env, params, results)


if __name__ == "__main__":
    raise SystemExit(main())
