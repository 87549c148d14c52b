"""Deterministic benchmark data (like Lance's ``ci_benchmarks/datagen``).

One table shape, generated with numpy from a fixed seed so every run (and every engine in a
run) sees byte-identical input:

========  =========  ===============================================================
column    type       values
========  =========  ===============================================================
``id``    int64      0 .. n-1 (the row's position; makes checks of reads trivial)
``i64``   int64      uniform in [-2**40, 2**40)
``f64``   float64    standard normal
``s``     string     10–30 ASCII letters/digits, lengths uniform (mean 20 bytes)
========  =========  ===============================================================

>>> t = generate(1000)
>>> t.num_rows, t.schema.names
(1000, ['id', 'i64', 'f64', 's'])
>>> t.equals(generate(1000))
True
>>> lengths = [len(x) for x in t.column("s").to_pylist()]
>>> 10 <= min(lengths) <= max(lengths) <= 30
True
"""

from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa

__all__ = ["DEFAULT_ROWS", "SEED", "SCHEMA", "generate", "take_indices"]

DEFAULT_ROWS = 2_000_000
SEED = 20_240_614
STRING_MIN, STRING_MAX = 10, 30
_ALPHABET = np.frombuffer(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", dtype=np.uint8
)

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("i64", pa.int64()),
        pa.field("f64", pa.float64()),
        pa.field("s", pa.string()),
    ]
)


def _strings(rng: np.random.Generator, n: int) -> pa.StringArray:
    """``n`` random strings built straight from offset and data buffers (no Python objects)."""
    lengths = rng.integers(STRING_MIN, STRING_MAX + 1, size=n, dtype=np.int32)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = _ALPHABET[rng.integers(0, len(_ALPHABET), size=int(offsets[-1]), dtype=np.uint8)]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def generate(rows: int = DEFAULT_ROWS, seed: int = SEED, chunk_rows: int | None = None) -> pa.Table:
    """The benchmark table with ``rows`` rows (one chunk, or chunks of ``chunk_rows``)."""
    rng = np.random.default_rng(seed)
    table = pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "i64": pa.array(rng.integers(-(2**40), 2**40, size=rows, dtype=np.int64)),
            "f64": pa.array(rng.standard_normal(rows)),
            "s": _strings(rng, rows),
        },
        schema=SCHEMA,
    )
    if chunk_rows:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=chunk_rows), schema=SCHEMA)
    return table


def take_indices(rows: int, count: int = 1_000, seed: int = SEED + 1) -> np.ndarray:
    """``count`` distinct row offsets in ``[0, rows)``, in random (unsorted) order."""
    rng = np.random.default_rng(seed)
    return rng.choice(rows, size=min(count, rows), replace=False).astype(np.int64)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    p.add_argument("--seed", type=int, default=SEED)
    args = p.parse_args(argv)
    t = generate(args.rows, args.seed)
    print(t.schema)
    print(f"{t.num_rows} rows, {t.nbytes / 2**20:.1f} MiB in memory")
    print(t.slice(0, 5).to_pandas() if _has_pandas() else t.slice(0, 5))


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
