"""Issue 12 item 4: a damaged file of a table is a library error that names the file.

For every kind of file (manifest, data file, arrow and bitmap deletion files, transaction
file, blob sidecar), every damage (missing, zero length, truncated at several points,
garbage bytes) and every operation (open, to_table, count_rows, take, filtered scan, and
for the files only some operations read: a concurrent commit, take_blobs): an operation
that reads the file raises a ``LanceSemanticError`` whose ``path`` is the file; an
operation that does not read it returns what the undamaged table returns.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from tests.integrity_support import damage as damage_file
from tests.integrity_support import first_data_file, latest_manifest

import lance_semantic as ls

pytestmark = pytest.mark.interop

DAMAGES = ["missing", "zero", "cut-1", "cut-third", "cut-half", "cut-last", "garbage"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One table per file kind, written once; each case damages a copy."""
    root = tmp_path_factory.mktemp("pristine")
    rows = pa.table({"id": pa.array(range(40), pa.int64()), "s": [f"v{i}" for i in range(40)]})
    lance.write_dataset(rows, str(root / "pylance"), max_rows_per_file=20)
    lance.dataset(str(root / "pylance")).delete("id % 3 = 0")
    ls.write_dataset(rows, str(root / "ours"), max_rows_per_file=20).delete("id % 3 = 0")
    big = pa.table({"id": pa.array(range(12_000), pa.int64())})
    ls.write_dataset(big, str(root / "bitmap")).delete("id % 2 = 0")
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("clip")])
    blobs = pa.table({"id": [0, 1], "clip": blob_array([b"x" * 70_000, b"y"])}, schema=schema)
    ls.write_dataset(blobs, str(root / "blob"), semantic_types=True)
    return {p.name: p for p in root.iterdir()}


def _only(directory: Path, suffix: str = "") -> Path:
    return sorted(p for p in directory.rglob(f"*{suffix}") if p.is_file())[0]


#: file kind -> (table, how to find the file)
KINDS: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "manifest": ("ours", latest_manifest),
    "data file": ("ours", first_data_file),
    "pylance data file": ("pylance", first_data_file),
    "deletion file (arrow)": ("ours", lambda t: _only(t / "_deletions", ".arrow")),
    "pylance deletion file": ("pylance", lambda t: _only(t / "_deletions", ".arrow")),
    "deletion file (bitmap)": ("bitmap", lambda t: _only(t / "_deletions", ".bin")),
    "transaction file": ("ours", lambda t: sorted((t / "_transactions").iterdir())[-1]),
    "blob sidecar": ("blob", lambda t: _only(t / "data", ".blob")),
}


def _concurrent_commit(uri: str) -> Any:
    """A delete read at the previous version: to know whether it may commit on top, it
    must read the newest version's transaction file."""
    ds = ls.dataset(uri)
    return ds.checkout_version(ds.version - 1).delete("id = 1")


OPERATIONS: dict[str, Callable[[str], Any]] = {
    "open": lambda uri: ls.dataset(uri).version,
    "to_table": lambda uri: ls.dataset(uri).to_table(),
    "count_rows": lambda uri: ls.dataset(uri).count_rows(),
    "take": lambda uri: ls.dataset(uri).take([0, 1]),
    "filtered scan": lambda uri: ls.dataset(uri).to_table(filter="id >= 0"),
    "filtered count": lambda uri: ls.dataset(uri).count_rows(filter="id >= 0"),
}

#: the operations that read each kind of file (the others must not notice the damage)
READS = {
    "manifest": set(OPERATIONS),
    "data file": {"to_table", "take", "filtered scan", "filtered count"},
    "deletion file": {"to_table", "take", "filtered scan", "filtered count"},
    "transaction file": {"concurrent commit"},
    "blob sidecar": {"take_blobs"},
}


def _reads(kind: str, operation: str) -> bool:
    family = next(f for f in READS if f in kind)
    return operation in READS[family]


def _operations(kind: str) -> dict[str, Callable[[str], Any]]:
    ops = dict(OPERATIONS)
    if kind == "transaction file":
        ops["concurrent commit"] = _concurrent_commit
    if kind == "blob sidecar":
        ops["take_blobs"] = lambda uri: [b.read() for b in ls.dataset(uri).take_blobs("clip", [0])]
    return ops


CASES = [
    (kind, damage, op)
    for kind in KINDS
    for damage in DAMAGES
    for op in _operations(kind)
    # deleting the newest manifest leaves a valid older table: nothing names the file
    if not (kind == "manifest" and damage == "missing")
    # a sidecar is raw payload bytes without a checksum: garbage of the same length reads
    and not (kind == "blob sidecar" and damage == "garbage")
]


def _answer(value: Any) -> Any:
    return value.to_pylist() if isinstance(value, pa.Table) else value


@pytest.mark.parametrize(("kind", "damage", "operation"), CASES)
def test_a_damaged_file_is_a_library_error_naming_it(
    pristine: dict[str, Path], tmp_path: Path, kind: str, damage: str, operation: str
) -> None:
    table, locate = KINDS[kind]
    op = _operations(kind)[operation]
    expected = None
    if operation != "concurrent commit":
        # on another copy: open data files are cached by path (they are immutable)
        shutil.copytree(pristine[table], tmp_path / "undamaged")
        expected = _answer(op(str(tmp_path / "undamaged")))
    root = tmp_path / table
    shutil.copytree(pristine[table], root)
    target = locate(root)
    damage_file(target, damage)
    if _reads(kind, operation):
        with pytest.raises(ls.LanceSemanticError) as e:
            op(str(root))
        assert getattr(e.value, "path", None) == str(target), e.value
        assert str(target) in str(e.value)
    elif operation != "concurrent commit":
        assert _answer(op(str(root))) == expected
