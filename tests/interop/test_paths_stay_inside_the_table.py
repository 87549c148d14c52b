"""Issue 12 item 2: every file a manifest names resolves inside the table directory.

Data files, deletion files and transaction files named with ``..``, as absolute paths, or
reached through a symbolic link that leaves the table raise ``CorruptManifestError`` naming
the manifest and the path, on open and before any row is read. Blob sidecars (derived from
a data file's name, not named in the manifest) that resolve outside raise
``CorruptTableError`` naming the sidecar.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from tests.integrity_support import (
    first_data_file,
    latest_manifest,
    rewrite_manifest,
    with_data_path,
)

import lance_semantic as ls

pytestmark = pytest.mark.interop


def _two_tables(tmp_path: Path) -> tuple[Path, Path]:
    """A table ``t`` and, beside it, a table ``outside`` with other rows."""
    inside, outside = tmp_path / "t", tmp_path / "outside"
    ls.write_dataset(pa.table({"id": [1, 2, 3]}), str(inside))
    ls.write_dataset(pa.table({"id": [666, 667, 668]}), str(outside))
    return inside, outside


def _assert_refused(root: Path, named: str) -> None:
    manifest = str(latest_manifest(root))
    with pytest.raises(ls.CorruptManifestError) as e:
        ls.dataset(str(root))
    assert e.value.path == manifest and e.value.named_path == named
    assert manifest in str(e.value) and repr(named) in str(e.value)


def test_a_dotdot_data_file_path_is_refused_and_its_rows_never_returned(tmp_path: Path) -> None:
    inside, outside = _two_tables(tmp_path)
    name = "../../outside/data/" + first_data_file(outside).name
    assert (inside / "data" / name).resolve().exists()  # the escape would work
    rewrite_manifest(inside, lambda m: with_data_path(m, name))
    _assert_refused(inside, name)


def test_an_absolute_data_file_path_is_refused(tmp_path: Path) -> None:
    inside, outside = _two_tables(tmp_path)
    name = str(first_data_file(outside))
    rewrite_manifest(inside, lambda m: with_data_path(m, name))
    _assert_refused(inside, name)


@pytest.mark.parametrize(
    "name", ["", "./x.lance", "a//x.lance", "sub/../../x.lance", "x\x00.lance"]
)
def test_a_data_file_path_that_is_not_a_plain_relative_path_is_refused(
    tmp_path: Path, name: str
) -> None:
    inside, _ = _two_tables(tmp_path)
    rewrite_manifest(inside, lambda m: with_data_path(m, name))
    _assert_refused(inside, name)


def test_a_data_file_symlinked_outside_the_table_is_refused(tmp_path: Path) -> None:
    inside, outside = _two_tables(tmp_path)
    mine = first_data_file(inside)
    mine.unlink()
    mine.symlink_to(first_data_file(outside))
    _assert_refused(inside, mine.name)


def test_a_data_directory_symlinked_outside_the_table_is_refused(tmp_path: Path) -> None:
    inside, outside = _two_tables(tmp_path)
    name = first_data_file(inside).name
    shutil.rmtree(inside / "data")
    os.symlink(outside / "data", inside / "data")
    shutil.copy(first_data_file(outside), outside / "data" / name)
    _assert_refused(inside, name)


def test_a_symlink_that_stays_inside_the_table_is_read(tmp_path: Path) -> None:
    inside, _ = _two_tables(tmp_path)
    mine = first_data_file(inside)
    keep = inside / "data" / "moved" / mine.name
    keep.parent.mkdir()
    mine.rename(keep)
    mine.symlink_to(keep)
    assert ls.dataset(str(inside)).to_table()["id"].to_pylist() == [1, 2, 3]


def test_a_transaction_file_outside_the_table_is_refused(tmp_path: Path) -> None:
    inside, _ = _two_tables(tmp_path)
    name = "../../outside/_transactions/x.txn"
    rewrite_manifest(inside, lambda m: replace(m, transaction_file=name))
    _assert_refused(inside, name)


def test_a_deletion_directory_symlinked_outside_the_table_is_refused(tmp_path: Path) -> None:
    inside, outside = _two_tables(tmp_path)
    ls.dataset(str(inside)).delete("id = 2")
    (deletion,) = (inside / "_deletions").iterdir()
    away = tmp_path / "elsewhere"
    shutil.move(inside / "_deletions", away)
    os.symlink(away, inside / "_deletions")
    _assert_refused(inside, deletion.name)


def test_pylance_tables_pass_the_path_check(tmp_path: Path) -> None:
    """The check refuses nothing pylance writes (several fragments, deletions)."""
    import lance

    uri = str(tmp_path / "p")
    lance.write_dataset(pa.table({"id": list(range(30))}), uri, max_rows_per_file=10)
    lance.dataset(uri).delete("id % 4 = 0")
    assert ls.dataset(uri).count_rows() == lance.dataset(uri).count_rows() == 22


def test_a_blob_sidecar_directory_symlinked_outside_the_table_is_refused(tmp_path: Path) -> None:
    uri = tmp_path / "b"
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("clip")])
    table = pa.table({"id": [0], "clip": blob_array([b"x" * 70_000])}, schema=schema)
    ds = ls.write_dataset(table, str(uri), semantic_types=True)
    (sidecars,) = [p for p in (uri / "data").iterdir() if p.is_dir()]
    away = tmp_path / "away"
    shutil.move(sidecars, away)
    os.symlink(away, sidecars)
    with pytest.raises(ls.CorruptTableError) as e:
        ds.take_blobs("clip", indices=[0])
    assert str(sidecars) in e.value.path and "outside" in e.value.reason
