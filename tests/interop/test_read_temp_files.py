"""Reads leave no temporary file behind, interrupted or not.

Blob columns are read through a *shadow table* (``read/blob_descriptors.py``): a manifest
written into a temporary directory. Those directories stayed until the process exited (one
per data file and blob field: a long-running process piled them up, and a killed one left
them for good). The class: every read that goes through a shadow -- scans and takes of
descriptors, filters, ``take_blobs``, rewrites of blob v2 values (update), for blob v1 and
v2 columns -- leaves the temporary directory as it was, and so does a ``KeyboardInterrupt``
at any call of pylance's table reader on a shadow, after which the read still gives
pylance's result.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance import LanceDataset
from lance.blob import blob_array, blob_field
from lance.fragment import LanceFragment
from tests.interrupt_support import Interrupt

import lance_semantic as ls
from lance_semantic.read import blob_descriptors

pytestmark = pytest.mark.interop

V1 = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})


def _table(field: pa.Field) -> pa.Table:
    values = [bytes([i % 251]) * (i % 40) if i % 9 else None for i in range(120)]
    data = blob_array(values) if field.name == "b" and field.type != pa.large_binary() else values
    schema = pa.schema([pa.field("id", pa.int64()), field])
    return pa.table({"id": pa.array(range(120)), "b": data}, schema=schema)


@pytest.fixture(scope="module", params=["v1", "v2"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Blob columns by pylance, in three fragments (one with deletions)."""
    root = tmp_path_factory.mktemp(f"blobs-{request.param}") / "t"
    field = V1 if request.param == "v1" else blob_field("b")
    version = "2.1" if request.param == "v1" else "2.2"
    lance.write_dataset(_table(field), root, max_rows_per_file=50, data_storage_version=version)
    lance.dataset(root).delete("id % 7 = 3")
    return root


def _bytes(files: list[Any]) -> list[bytes | None]:
    return [None if f is None else f.readall() for f in files]


#: every read through a shadow, as (ours, pylance's) calls
READS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "scan": (lambda ds: ds.to_table(), lambda ds: ds.to_table()),
    "filter": (lambda ds: ds.to_table(filter="id > 60"), lambda ds: ds.to_table(filter="id > 60")),
    "take": (lambda ds: ds.take([0, 49, 50, 100]), lambda ds: ds.take([0, 49, 50, 100])),
    "take_blobs": (
        lambda ds: _bytes(ds.take_blobs("b", indices=[1, 2, 60, 100])),
        lambda ds: _bytes(ds.take_blobs("b", indices=[1, 2, 60, 100])),
    ),
}


def _same(a: Any, b: Any) -> bool:
    return a.equals(b) if isinstance(a, pa.Table) else a == b


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of the test's own, as every temporary file's place; shadows
    made before the test are forgotten (each read makes its own)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    blob_descriptors._shadow.cache_clear()
    return tmp


@pytest.mark.parametrize("read", list(READS))
def test_a_read_through_a_shadow_leaves_no_temporary_file(
    read: str, table: Path, private_tmp: Path
) -> None:
    ours, theirs = READS[read]
    assert _same(ours(ls.dataset(table)), theirs(lance.dataset(table)))
    assert list(private_tmp.iterdir()) == []


def test_a_rewrite_of_blob_values_leaves_no_temporary_file(
    table: Path, private_tmp: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(table, copy)
    ds = ls.dataset(copy)
    ds.update({"id": "id + 1000"}, where="id < 30")
    assert ds.count_rows("id >= 1000") == lance.dataset(copy).count_rows("id >= 1000")
    assert list(private_tmp.iterdir()) == []


#: pylance's table reader on a shadow: opened, its fragments listed, read, taken
POINTS = [
    (lance, "dataset", "before"),
    (lance, "dataset", "after"),
    (LanceDataset, "get_fragments", "after"),
    (LanceFragment, "to_table", "before"),
    (LanceFragment, "to_table", "after"),
    (LanceDataset, "take", "after"),
]


def _emptied(tmp: Path, timeout: float = 10.0) -> bool:
    """Whether ``tmp`` is empty once the reads still running on other threads are done (an
    interrupt reaches the consumer while the read-ahead of other fragments goes on)."""
    deadline = time.monotonic() + timeout
    while any(tmp.iterdir()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.parametrize(("owner", "name", "mode"), POINTS)
@pytest.mark.parametrize("read", list(READS))
def test_an_interrupt_in_a_shadow_read_leaves_no_file_and_the_read_then_works(
    read: str, owner: Any, name: str, mode: str, table: Path, private_tmp: Path
) -> None:
    ours, theirs = READS[read]
    want = theirs(lance.dataset(table))
    for at in (1, 2):
        blob_descriptors._shadow.cache_clear()
        ds = ls.dataset(table)
        with Interrupt(owner, name, mode, at) as injected:
            try:
                got = ours(ds)
            except KeyboardInterrupt:
                assert injected.fired
            else:
                assert _same(got, want)
        assert _emptied(private_tmp), f"after an interrupt at call {at}"
        assert _same(ours(ds), want)
