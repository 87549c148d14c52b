"""Requests that change nothing commit nothing, as in pylance 14.

``update({})`` and a ``merge_insert`` with no ``when_*`` clause are refused with a
``ValueError`` by pylance ("No updates provided", "not configured to change the data in any
way") and by us, before anything is written: the version and the table's files stay as
they were.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

ROWS = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([1.0] * 10)})
SOURCE = pa.table({"id": pa.array([1, 20], pa.int64()), "v": pa.array([2.0, 3.0])})


def _files(uri: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), uri) for d, _, fs in os.walk(uri) for f in fs}


NOOPS: dict[str, Callable[[Any], object]] = {
    "update_with_no_columns": lambda ds: ds.update({}),
    "update_with_no_columns_and_a_where": lambda ds: ds.update({}, where="id < 3"),
    "merge_insert_without_a_when_clause": lambda ds: ds.merge_insert("id").execute(SOURCE),
}


@pytest.mark.parametrize("name", list(NOOPS))
def test_a_request_that_changes_nothing_raises_value_error_and_commits_nothing(
    tmp_path: Path, name: str
) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ls.write_dataset(ROWS, str(ours))
    lance.write_dataset(ROWS, str(theirs))
    with pytest.raises(ValueError):
        NOOPS[name](lance.dataset(str(theirs)))
    assert lance.dataset(str(theirs)).version == 1

    before = _files(ours)
    ds = ls.dataset(str(ours))
    with pytest.raises(ValueError, match="update|merge_insert"):
        NOOPS[name](ds)
    assert ds.version == 1
    assert ls.dataset(str(ours)).version == 1
    assert _files(ours) == before
    assert lance.dataset(str(ours)).to_table() == ROWS
