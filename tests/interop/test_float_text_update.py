"""A float expression stored in a string column reads as pylance writes it: the shortest
digits that read back as the same float, laid out as pylance's engine lays them out
(``1.0``, ``1e20``, ``0.00001``, ``1e-7``; float16 never with an exponent), on twin tables
updated through pylance and through us."""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

EDGES = [0.0, -0.0, 1.0, -3.0, 2.5, 0.1, 1 / 3, 1e15, 1e16, 1e13, 1e14, 1e-4, 1e-5, 1e-6, 1e-7]
EDGES += [5e-324, 1.7976931348623157e308, 12345678.0, 123456789.0, 2.0**-20, 2.92578125]
EDGES += [float("nan"), float("inf"), float("-inf")]


def _values() -> np.ndarray:
    rng = np.random.default_rng(29)
    spread = 10.0 ** rng.uniform(-30, 30, 300) * rng.choice([-1.0, 1.0], 300)
    return np.concatenate([EDGES, spread, rng.integers(-(10**6), 10**6, 50).astype(float)])


def _table() -> pa.Table:
    v = _values()
    with np.errstate(over="ignore"):  # float32 holds +-inf beyond its range
        half, single = np.clip(v, -6e4, 6e4).astype(np.float16), v.astype(np.float32)
    n = len(v)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "d": pa.array(v),
            "g": pa.array(single),
            "h": pa.array(half),
            "s": pa.array(["x"] * n),
            "l": pa.array(["x"] * n, pa.large_string()),
            "t": pa.array(["x"] * n),
            "n": pa.array([None, *([1.5] * (n - 1))]),
        }
    )


@pytest.mark.parametrize(
    "updates",
    [
        {"s": "d", "l": "g", "t": "h"},
        {"s": "d * 2", "l": "g + 1", "t": "n"},
        {"s": "1.0", "l": "CAST(0.00001 AS FLOAT)", "t": "1e20"},
    ],
    ids=["columns", "expressions", "constants"],
)
def test_float_values_in_a_string_column_read_as_pylance_writes_them(
    tmp_path: Path, updates: dict[str, str]
) -> None:
    data = _table()
    theirs = lance.write_dataset(data, str(tmp_path / "p"))
    theirs.update(updates, where="id >= 0")
    ls.write_dataset(data, str(tmp_path / "o")).update(updates, where="id >= 0")
    expected = lance.dataset(str(tmp_path / "p")).to_table().sort_by("id")
    for got in (
        lance.dataset(str(tmp_path / "o")).to_table().sort_by("id"),
        ls.dataset(str(tmp_path / "o")).to_table().sort_by("id"),
    ):
        assert got.schema == expected.schema
        for column in updates:  # (the float columns hold NaN, which equals nothing)
            assert got[column].to_pylist() == expected[column].to_pylist(), column
