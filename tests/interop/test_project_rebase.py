"""A schema-only change (drop_columns, alter_columns: a Project) through a handle another
writer has moved past: Lance's check_project_txn rebases it over every operation that keeps
the schema (append, delete, update, compaction) and refuses it over a Merge / Project /
Overwrite / Restore; pylance 14 also refuses one that makes a field non-nullable over an
append or update (new rows may hold nulls). The same steps through pylance and through us
end in the same table: the same rows, schema, field ids and version."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop


def _data(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"s{i}" for i in ids]),
            "f": pa.array([i / 2 for i in ids]),
        }
    )


#: what the other writer commits after the stale handle was opened (the same call on a
#: pylance and on a lance-semantic handle)
THEIRS: dict[str, Callable[[Any], object]] = {
    "append": lambda ds: ds.insert(_data(100, 150)),
    "delete": lambda ds: ds.delete("id < 10"),
    "update": lambda ds: ds.update({"f": "f + 1"}, where="id >= 90"),
    "compact": lambda ds: ds.optimize.compact_files(target_rows_per_fragment=1000),
}

#: the schema-only change the stale handle commits
OURS: dict[str, Callable[[Any], object]] = {
    "drop": lambda ds: ds.drop_columns(["s"]),
    "rename": lambda ds: ds.alter_columns({"path": "s", "name": "label"}),
    "nullable": lambda ds: ds.alter_columns({"path": "f", "nullable": True}),
    "not_null": lambda ds: ds.alter_columns({"path": "f", "nullable": False}),
}

#: pylance 14 refuses a Project that makes a field non-nullable over rows written after its
#: read version (an append or an update); it rebases it over a delete or a compaction
REFUSED = {("append", "not_null"), ("update", "not_null")}


def _run(lib: Any, uri: str, theirs: str, ours: str) -> str:
    """The steps through ``lib``; the class name of the error the last one raised, if any."""
    lib.write_dataset(_data(0, 50), uri, max_rows_per_file=25)
    lib.write_dataset(_data(50, 100), uri, mode="append", max_rows_per_file=25)
    stale = lib.dataset(uri)
    THEIRS[theirs](lib.dataset(uri))
    try:
        OURS[ours](stale)
    except Exception as e:  # compared below: pylance's OSError, our CommitConflictError
        return type(e).__name__
    return ""


@pytest.mark.parametrize("ours", sorted(OURS))
@pytest.mark.parametrize("theirs", sorted(THEIRS))
def test_a_project_rebases_over_an_operation_that_keeps_the_schema_as_pylance(
    tmp_path: Path, theirs: str, ours: str
) -> None:
    refused = (theirs, ours) in REFUSED
    assert _run(lance, str(tmp_path / "p"), theirs, ours) == ("OSError" if refused else "")
    assert _run(ls, str(tmp_path / "o"), theirs, ours) == ("CommitConflictError" if refused else "")
    p, o = lance.dataset(str(tmp_path / "p")), lance.dataset(str(tmp_path / "o"))
    assert o.version == p.version
    assert o.schema == p.schema
    assert o.lance_schema.to_pyarrow() == p.lance_schema.to_pyarrow()
    assert [f.id() for f in o.lance_schema.fields()] == [f.id() for f in p.lance_schema.fields()]
    assert o.to_table().sort_by("id") == p.to_table().sort_by("id")
    ours_read = ls.dataset(str(tmp_path / "o")).to_table().sort_by("id")
    assert ours_read == p.to_table().sort_by("id")


@pytest.mark.parametrize("ours", sorted(OURS))
def test_a_project_over_another_project_is_a_conflict(tmp_path: Path, ours: str) -> None:
    uri = str(tmp_path / "o")
    ls.write_dataset(_data(0, 50), uri)
    stale = ls.dataset(uri)
    ls.dataset(uri).drop_columns(["f"])
    with pytest.raises(ls.CommitConflictError):
        OURS[ours](stale)
    assert ls.dataset(uri).version == 2
