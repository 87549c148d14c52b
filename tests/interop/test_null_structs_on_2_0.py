"""Data storage 2.0 keeps no struct validity: rows whose struct is null (appended without the
struct column) cannot be written again by an update or a merge_insert. pylance refuses with
its codec's OSError; we refuse with UnsupportedTypeError naming the field, commit nothing and
leave no file behind."""

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

STRUCT = pa.struct([("x", pa.int64())])

WRITES: dict[str, Callable[[Any], object]] = {
    "update": lambda ds: ds.update({"id": "id + 10"}),
    "merge_insert": lambda ds: (
        ds.merge_insert("id")
        .when_matched_update_all()
        .execute(pa.table({"id": pa.array([3], pa.int64())}))
    ),
}


def _table(lib: Any, uri: str) -> Any:
    first = pa.table(
        {"id": pa.array([1, 2], pa.int64()), "st": pa.array([{"x": 1}, {"x": 2}], STRUCT)}
    )
    lib.write_dataset(first, uri, data_storage_version="2.0")
    return lib.write_dataset(pa.table({"id": pa.array([3], pa.int64())}), uri, mode="append")


@pytest.mark.parametrize("write", sorted(WRITES))
def test_null_structs_on_2_0_are_refused_naming_the_field(tmp_path: Path, write: str) -> None:
    _table(lance, str(tmp_path / "p"))
    with pytest.raises(OSError, match="struct validity"):
        WRITES[write](lance.dataset(str(tmp_path / "p")))
    uri = str(tmp_path / "o")
    _table(ls, uri)
    before = sorted(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(ls.UnsupportedTypeError, match="2.0") as caught:
        WRITES[write](ls.dataset(uri))
    assert caught.value.field_path == "st"
    assert ls.dataset(uri).version == 2
    assert sorted(os.listdir(os.path.join(uri, "data"))) == before
