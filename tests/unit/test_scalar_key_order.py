"""scalar/key_order.py: index keys sorted as pylance orders them (nulls first, stable,
floats in total order, strings byte-wise), checked against Arrow's stable sort."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from lance_semantic.scalar.key_order import run_starts, sort_order


def _arrow_order(values: pa.Array) -> np.ndarray:
    options = pc.SortOptions(sort_keys=[("", "ascending", "at_start")])
    return pc.sort_indices(values, options=options).to_numpy()


def _strings(rng: np.random.Generator, n: int, longest: int) -> list[bytes | None]:
    alphabet = [b"a", b"b", b"\x00", b"\xc3\xa9", b"z"]
    out: list[bytes | None] = []
    for _ in range(n):
        if rng.random() < 0.05:
            out.append(None)
        else:
            k = int(rng.integers(0, longest + 1))
            out.append(b"".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), k)))
    return out


@pytest.mark.parametrize("longest", [0, 3, 7, 9, 20, 70])
@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary(), pa.string(), pa.large_string()])
def test_strings_and_binaries_sort_as_arrow_does(longest: int, kind: pa.DataType) -> None:
    rng = np.random.default_rng(longest)
    raw = _strings(rng, 3000, max(longest // 2, 1) if longest else 0)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        raw = [None if v is None else v.decode("utf-8", "replace").encode() for v in raw]
    values = pa.array(raw, pa.binary()).cast(kind).slice(7)  # a sliced array too
    order, keys = sort_order(values)
    assert order.tolist() == _arrow_order(values).tolist()
    starts = run_starts(values.take(pa.array(order)), keys)
    sorted_values = values.take(pa.array(order)).to_pylist()
    expected = [
        i for i in range(len(sorted_values)) if i == 0 or sorted_values[i] != sorted_values[i - 1]
    ]
    assert starts.tolist() == expected


def test_floats_in_total_order() -> None:
    values = pa.array([1.0, -0.0, float("nan"), None, 0.0, -1.0, float("-inf"), 0.0])
    order, keys = sort_order(values)
    got = [repr(v) for v in values.take(pa.array(order)).to_pylist()]
    assert got == ["None", "-inf", "-1.0", "-0.0", "0.0", "0.0", "1.0", "nan"]
    assert run_starts(values.take(pa.array(order)), keys).tolist() == [0, 1, 2, 3, 4, 6, 7]
