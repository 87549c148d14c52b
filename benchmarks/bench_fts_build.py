"""Full-text index builds side by side with pylance (issue 31): ``create_scalar_index(text,
"INVERTED")`` over 200k documents of ~50 words in 4 fragments (the corpus of
``bench_fts_tokenize.py``: a Zipf vocabulary of 150k made-up words with capitals,
punctuation, numbers and accented letters), under pylance's defaults and with positions,
on twin legacy tables; then our build on a flagged copy (pylance cannot open it: its ratio
is against pylance's legacy build). Medians of ``--repeat`` rounds, interleaved; the target
is 2x pylance. The first round compiles (or loads) the build kernel and is not timed.

    python benchmarks/bench_fts_build.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("LANCE_LOG", "error")

import _harness as h  # noqa: E402
import lance  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from bench_fts_tokenize import corpus  # noqa: E402

import lance_semantic as ls  # noqa: E402

CASES = {"INVERTED": {}, "INVERTED with positions": {"with_position": True}}
TARGET = 2.0


def main() -> int:
    p = h.parser(__doc__)
    h.add_common_args(
        p, rows_help="documents (default 200,000)", repeat_help="timed rounds per engine"
    )
    args = p.parse_args()
    rows = args.rows if args.rows != h.DEFAULT_ROWS else 200_000
    per_file = args.max_rows_per_file if args.max_rows_per_file != 1_048_576 else rows // 4
    env = h.environment()
    h.print_banner(env, ("pyarrow", "numpy"))
    table = pa.table({"id": np.arange(rows), "text": corpus(rows)})
    results: list[h.Result] = []
    with h.workdir("bench-fts-build-", args.tmpdir) as work:
        base = {lib: os.path.join(work, f"{lib}.lance") for lib in ("pylance", "ours", "flag")}
        lance.write_dataset(table, base["pylance"], max_rows_per_file=per_file)
        lance.write_dataset(table, base["ours"], max_rows_per_file=per_file)
        ls.write_dataset(table, base["flag"], semantic_types=True, max_rows_per_file=per_file)
        for case, options in CASES.items():

            def run(side: str, r: int, options: dict[str, object] = options) -> object:
                uri = base[side]

                def build() -> None:
                    lib = lance if side == "pylance" else ls
                    lib.dataset(uri).create_scalar_index("text", "INVERTED", **options)

                return build

            def check(side: str, out: object, full: bool) -> None:
                lib = lance if side == "pylance" else ls
                (index,) = [i for i in lib.dataset(base[side]).list_indices()]
                h.check_rows(f"{side} index", len(index["fragment_ids"]), 4)

            def after(side: str, r: int) -> None:
                ds = ls.dataset(base[side])
                if ds.list_indices():
                    ds.drop_index("text_idx")
                shutil.rmtree(os.path.join(base[side], "_indices"), ignore_errors=True)

            times = h.measure(["pylance", "ours", "flag"], args.repeat, run, check, after)
            print(f"  {case}: done", flush=True)
            results.append(h.Result.of(case, times["pylance"], times["ours"], TARGET))
            results.append(
                h.Result.of(f"{case} (flagged)", times["pylance"], times["flag"], TARGET)
            )
    print(h.format_table(results, widths=(34, 10, 17)))
    return h.finish(args.json, env, {"rows": rows, "repeat": args.repeat}, results)


if __name__ == "__main__":
    raise SystemExit(main())
