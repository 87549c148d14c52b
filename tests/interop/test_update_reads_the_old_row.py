"""An update of several columns evaluates every expression on the row as it was, as SQL's
``UPDATE ... SET`` does, whatever the order of the mapping. pylance 14 applies them one
after another in a hash map's order, which changes from call to call (its results are one
of the orders; see docs/reliability.md): this test holds ours to the SQL meaning and
shows that it is one of pylance's outcomes."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop


@pytest.mark.parametrize(
    "updates",
    [
        {"f": "f * 2", "ls": "f * 2"},
        {"ls": "f * 2", "f": "f * 2"},
        {"n": "n + 1", "m": "n * 10"},
        {"m": "n * 10", "n": "n + 1"},
    ],
    ids=str,
)
def test_update_reads_the_old_row_for_every_expression(tmp_path: Path, updates: dict) -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "f": [6.5, 1.0],
            "ls": pa.array(["x", "y"], pa.large_string()),
            "n": pa.array([1, 2], pa.int64()),
            "m": pa.array([0, 0], pa.int64()),
        }
    )
    ls.write_dataset(table, tmp_path / "o.lance")
    ls.dataset(tmp_path / "o.lance").update(updates)
    got = ls.dataset(tmp_path / "o.lance").to_table().to_pylist()
    old = {"f": [6.5, 1.0], "n": [1, 2]}
    want = {
        "f": [13.0, 2.0] if "f" in updates else old["f"],
        "ls": ["13.0", "2.0"] if "ls" in updates else ["x", "y"],
        "n": [2, 3] if "n" in updates else old["n"],
        "m": [10, 20] if "m" in updates else [0, 0],
    }
    for name, values in want.items():
        assert [row[name] for row in got] == values, name
    # the same rows are one of pylance's outcomes: the one where no expression sees an
    # update of another (its first try in that order, or a later one)
    outcomes = set()
    for i in range(30):  # each try is one of the two orders, about half the time each
        uri = tmp_path / f"p{i}.lance"
        lance.write_dataset(table, uri)
        lance.dataset(uri).update(updates)
        outcomes.add(repr(lance.dataset(uri).to_table().to_pylist()))
        if repr(got) in outcomes:
            break
    assert repr(got) in outcomes, outcomes
