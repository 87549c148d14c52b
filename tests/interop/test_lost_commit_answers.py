"""A manifest PUT whose answer is lost.

An object store client retries a PUT whose answer it did not get; when the first attempt
had stored the manifest, the retry gets 412. Treating that 412 as a rival writer rebased
an append onto itself (its rows twice) and made a create delete the data files of the
version it had just published. The class, for every committing operation: the answer to
the manifest PUT is lost after storing it (then 412, or an error), lost before storing it,
or lost with the read-back failing too. The table must end exactly as one clean commit
leaves it, or unchanged, or -- when nobody can tell -- with the files kept, readable.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.storage.object_store import LocalObjectStore


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"s{i}" for i in ids]})


OPERATIONS: dict[str, Callable[[str], object]] = {
    "create": lambda uri: ls.write_dataset(_rows(0, 5), uri, mode="overwrite"),
    "append": lambda uri: ls.write_dataset(_rows(100, 3), uri, mode="append"),
    "insert": lambda uri: ls.dataset(uri).insert(_rows(200, 2)),
    "delete": lambda uri: ls.dataset(uri).delete("id = 1"),
    "update": lambda uri: ls.dataset(uri).update({"s": "'u'"}, where="id = 2"),
    "merge_insert": lambda uri: (
        ls.dataset(uri)
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(_rows(3, 4))
    ),
    "add_columns": lambda uri: ls.dataset(uri).add_columns({"d": "id * 2"}),
    "alter_columns": lambda uri: ls.dataset(uri).alter_columns({"path": "s", "name": "t"}),
    "compact": lambda uri: ls.dataset(uri).optimize.compact_files(),
    "set_output_encoding": lambda uri: ls.dataset(uri).set_output_encoding("s", "large_utf8"),
}


def _table(tmp: Path, op: str) -> str:
    uri = str(tmp / "t")
    if op == "create":
        return uri
    ls.write_dataset(_rows(0, 5), uri, max_rows_per_file=2, semantic_types=True)
    ls.write_dataset(_rows(10, 2), uri, mode="append")
    return uri


def _clean_result(tmp: Path, op: str) -> tuple[int, list[dict]]:
    uri = _table(tmp / "clean", op)
    OPERATIONS[op](uri)
    ds = ls.dataset(uri)
    return ds.version, sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])


def _state(uri: str) -> tuple[int, list[dict]]:
    ds = ls.dataset(uri)
    return ds.version, sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])


def _faulty(monkeypatch: pytest.MonkeyPatch, fault: str) -> list[str]:
    """Make the next manifest put_if_absent lose its answer as ``fault`` says."""
    real_put, real_get = LocalObjectStore.put_if_absent, LocalObjectStore.get
    hit: list[str] = []

    def put_if_absent(self: LocalObjectStore, path: str, data: bytes) -> bool:
        if hit or not path.endswith(".manifest"):
            return real_put(self, path, data)
        hit.append(path)
        if fault == "lost before storing":
            raise OSError("connection reset")
        assert real_put(self, path, data)
        if fault == "stored, then 412":
            return False
        raise OSError("connection reset after the body was sent")

    def get(self: LocalObjectStore, path: str) -> bytes:
        if fault == "stored, read-back fails" and hit and path == hit[0]:
            raise OSError("timeout")
        return real_get(self, path)

    monkeypatch.setattr(LocalObjectStore, "put_if_absent", put_if_absent)
    monkeypatch.setattr(LocalObjectStore, "get", get)
    return hit


FAULTS = [
    "stored, then 412",
    "stored, then error",
    "lost before storing",
    "stored, read-back fails",
]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("op", list(OPERATIONS))
def test_a_lost_answer_to_the_manifest_put(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, fault: str
) -> None:
    want = _clean_result(tmp_path, op)
    uri = _table(tmp_path / "faulty", op)
    before = _state(uri) if op != "create" else None
    data_before = set(os.listdir(os.path.join(uri, "data"))) if before else set()
    hit = _faulty(monkeypatch, fault)
    if fault in ("stored, then 412", "stored, then error"):
        OPERATIONS[op](uri)  # the stored manifest is recognised as ours
        monkeypatch.undo()
        assert hit and _state(uri) == want
    elif fault == "lost before storing":
        with pytest.raises(OSError, match="connection reset"):
            OPERATIONS[op](uri)
        monkeypatch.undo()
        if before is None:
            with pytest.raises(ls.DatasetNotFoundError):
                ls.dataset(uri)
        else:
            assert _state(uri) == before
        left = set(os.listdir(os.path.join(uri, "data"))) if os.path.isdir(uri + "/data") else set()
        assert left == data_before  # the new data files were removed
    else:
        with pytest.raises(ls.CommitOutcomeUnknownError) as raised:
            OPERATIONS[op](uri)
        monkeypatch.undo()
        # it was published (compaction's first commit reserves ids: the rows are as
        # before, which is also what the whole compaction gives); its files are there
        assert _state(uri) == (raised.value.attempted_version, want[1])
    assert ls.check(uri).ok if os.path.isdir(os.path.join(uri, "_versions")) else True
    if os.path.isdir(os.path.join(uri, "_versions")) and not ls.dataset(uri).semantic_types:
        assert lance.dataset(uri).count_rows() == ls.dataset(uri).count_rows()
