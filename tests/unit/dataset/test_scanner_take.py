"""``Scanner.take``: rows of the scan's result by position, held to the scan itself.

The class of inputs: several fragments with deletions, batch sizes from one row up, filters,
limits and offsets, every column layout including views and dictionaries (Arrow has no take
kernel for views; spec "Output Encoding": views are output layouts), indices unsorted, with
duplicates, at the first and last row, and beyond the end."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.dataset.scanner import Scanner
from lance_semantic.errors import ReadError

N = 90
PER_FILE = 13


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> ls.Dataset:
    i = np.arange(N)
    data = pa.table(
        {
            "id": i,
            "s": pa.array([f"s{k}" * (k % 4) if k % 9 else None for k in range(N)]),
            "b": pa.array([bytes([k % 256]) * (k % 5) for k in range(N)], pa.large_binary()),
            "st": pa.array([{"x": int(k), "t": f"t{k}"} for k in range(N)]),
            "l": pa.array([list(range(k % 4)) for k in range(N)], pa.list_(pa.int32())),
            "d": pa.array([f"d{k % 3}" for k in range(N)]).dictionary_encode(),
        }
    )
    path = tmp_path_factory.mktemp("take") / "t.lance"
    ds = ls.write_dataset(
        data, path, max_rows_per_file=PER_FILE, semantic_types=True, data_storage_version="2.2"
    )
    ds.delete("id % 7 = 3")
    ds.delete("id >= 26 AND id < 39")  # a whole fragment
    return ds


SCANS: list[dict[str, Any]] = [
    {},
    {"batch_size": 1},
    {"batch_size": 4},
    {"filter": "id % 3 <> 0", "batch_size": 5},
    {"limit": 20, "offset": 7, "batch_size": 3},
    {"columns": ["st.t", "id"], "batch_size": 2},
    {"output_encodings": {"s": "utf8_view", "b": "binary_view"}, "batch_size": 6},
    {"output_encodings": {"s": "utf8_view"}, "filter": "id > 40", "columns": ["s", "d"]},
]


def _indices(rows: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, rows, size=3 * rows).tolist()
    return [rows - 1, 0, *picks, 0, rows - 1]


@pytest.mark.parametrize("options", SCANS, ids=[str(i) for i in range(len(SCANS))])
def test_take_is_the_scans_rows_at_the_positions(table: ls.Dataset, options: dict) -> None:
    """Output Encoding: the rows taken are the scan's, in its layouts (views included)."""
    full = table.scanner(**options).to_table()
    rows = full.to_pylist()
    for seed in range(3):
        idx = _indices(full.num_rows, seed)
        got = table.scanner(**options).take(idx)
        assert got.schema == full.schema
        assert got.to_pylist() == [rows[i] for i in idx]
    assert table.scanner(**options).take([]).schema == full.schema
    assert table.scanner(**options).take([]).num_rows == 0


@pytest.mark.parametrize("options", SCANS[:5], ids=[str(i) for i in range(5)])
def test_take_beyond_the_scan_raises_read_error(table: ls.Dataset, options: dict) -> None:
    rows = table.scanner(**options).count_rows()
    with pytest.raises(ReadError, match=f"take index {rows} is out of range for {rows} rows"):
        table.scanner(**options).take([0, rows])
    with pytest.raises(ValueError, match="non-negative"):
        table.scanner(**options).take([-1])


def test_take_streams_the_scan(table: ls.Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the rows taken are kept: the scan is not gathered into a table first."""
    want = table.to_table().slice(3, 1).to_pylist()

    def refuse(self: Scanner) -> pa.Table:
        raise AssertionError("take gathered the whole scan")

    monkeypatch.setattr(Scanner, "to_table", refuse)
    assert table.scanner(batch_size=2).take([3]).to_pylist() == want


def test_take_stops_after_the_batch_of_the_last_index(
    table: ls.Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[int] = []
    run = Scanner._run

    def counted(self: Scanner, *a: Any, **k: Any) -> Any:
        for batch in run(self, *a, **k):
            taken.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(Scanner, "_run", counted)
    table.scanner(batch_size=1).take([2, 0])
    assert taken == [1, 1, 1]


def test_view_columns_are_taken_in_their_kernel_layout_and_given_back_as_views() -> None:
    from lance_semantic.dataset.scanner import _take

    field = pa.field("s", pa.string_view())
    chunked = pa.chunked_array(
        [pa.array(["a", None], pa.string_view()), pa.array(["c"], pa.string_view())]
    )
    got = _take(chunked, pa.array([2, 0, 2]), field)
    assert got.type == pa.string_view() and got.to_pylist() == ["c", "a", "c"]
    one = _take(chunked.chunk(0), pa.array([1]), field)
    assert one.type == pa.string_view() and one.to_pylist() == [None]
