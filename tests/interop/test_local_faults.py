"""Every committing operation, with a fault at every storage call it makes.

A fault is a full disk (``ENOSPC``) or Ctrl-C (``KeyboardInterrupt``), raised instead of
the call or right after it took effect (the manifest published, then the fault), or a
full disk while the store refuses every delete. Whatever happens:

* the table is as before the call, or as one clean run of the operation leaves it --
  never half applied, never applied twice;
* a call that returns has applied the operation; one that raises a definite error (the
  injected ``OSError``, a library error) has not, and left no file behind (nor a temp
  file); Ctrl-C and ``CommitOutcomeUnknownError`` may leave either state;
* the caller sees the first error, never that of a cleanup delete;
* every version left reads, ``ls.check`` finds nothing, pylance reads legacy tables;
* the same process goes on working (an append afterwards).
"""

from __future__ import annotations

import gc
import os
import random
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from tests.fault_support import Call, Faults, disk_full

import lance_semantic as ls

pytestmark = pytest.mark.interop


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"s{i}" for i in ids]),
            "n": pa.array([i % 3 for i in ids], pa.int32()),
        }
    )


def _blob_rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    # inline, packed (> 64 KiB) and null values: data file and sidecar writes
    values = [bytes([i % 251]) * (70_000 if i % 2 else 10) if i % 5 else None for i in ids]
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("b")])
    return pa.table({"id": pa.array(ids, pa.int64()), "b": blob_array(values)}, schema=schema)


def _prepare(uri: str, kind: str, op: str) -> None:
    if op == "create":
        return
    if op == "append_blobs":
        ls.write_dataset(_blob_rows(0, 4), uri, semantic_types=kind == "flagged")
        return
    ls.write_dataset(_rows(0, 6), uri, max_rows_per_file=3, semantic_types=kind == "flagged")
    ls.write_dataset(_rows(10, 2), uri, mode="append")
    ls.dataset(uri).delete("id = 1")
    if op == "commit_fragments":
        _UNCOMMITTED[:] = ls.fragment.write_fragments(_rows(30, 3), uri)


def _merge(uri: str) -> object:
    builder = ls.dataset(uri).merge_insert("id").when_matched_update_all()
    return builder.when_not_matched_insert_all().execute(_rows(4, 4))


def _restore(uri: str) -> object:
    return ls.dataset(uri, version=2).restore()


#: fragments written by ``_prepare`` for the "commit_fragments" case (paths relative to the
#: table, so they serve every copy of it)
_UNCOMMITTED: list[object] = []


def _commit_fragments(uri: str) -> object:
    """The second phase alone: the fragments are the caller's, a failed commit keeps them."""
    operation = ls.LanceOperation.Append(_UNCOMMITTED)
    return ls.Dataset.commit(uri, operation, read_version=ls.dataset(uri).version)


OPERATIONS: dict[str, Callable[[str], object]] = {
    "create": lambda uri: ls.write_dataset(_rows(0, 5), uri, max_rows_per_file=2),
    "overwrite": lambda uri: ls.write_dataset(_rows(50, 3), uri, mode="overwrite"),
    "append": lambda uri: ls.write_dataset(_rows(100, 4), uri, mode="append", max_rows_per_file=2),
    "insert": lambda uri: ls.dataset(uri).insert(_rows(200, 2)),
    "append_blobs": lambda uri: ls.dataset(uri).insert(_blob_rows(10, 4)),
    "delete": lambda uri: ls.dataset(uri).delete("id >= 4"),
    "update": lambda uri: ls.dataset(uri).update({"s": "'u'"}, where="id < 3"),
    "merge_insert": _merge,
    "add_columns": lambda uri: ls.dataset(uri).add_columns({"d": "id * 2"}),
    "drop_columns": lambda uri: ls.dataset(uri).drop_columns(["s"]),
    "alter_rename": lambda uri: ls.dataset(uri).alter_columns({"path": "s", "name": "t"}),
    "alter_cast": lambda uri: ls.dataset(uri).alter_columns({"path": "n", "data_type": pa.int64()}),
    "compact": lambda uri: ls.dataset(uri).optimize.compact_files(),
    "restore": _restore,
    "set_output_encoding": lambda uri: ls.dataset(uri).set_output_encoding("s", "large_utf8"),
    "upgrade": lambda uri: ls.upgrade(uri),
    "tag_create": lambda uri: ls.dataset(uri).tags.create("t1", 2),
    "cleanup": lambda uri: ls.dataset(uri).cleanup_old_versions(older_than=timedelta(0)),
    "write_fragments": lambda uri: ls.fragment.write_fragments(_rows(30, 3), uri),
    "commit_fragments": _commit_fragments,
}
#: operations that only make sense on one kind of table
_ONLY = {"set_output_encoding": "flagged", "upgrade": "legacy"}
CASES = [(k, op) for op in OPERATIONS for k in ("legacy", "flagged") if _ONLY.get(op, k) == k]


def _state(uri: str, op: str) -> object:
    """What the operation may change: schema, rows, tags (and the versions, for cleanup)."""
    if not os.path.isdir(os.path.join(uri, "_versions")):
        return None
    ds = ls.dataset(uri)
    columns = [n for n in ds.schema.names if n != "b"]  # blob descriptors name files
    rows = sorted(ds.to_table(columns=columns).to_pylist(), key=lambda r: r["id"])
    extra = [v["version"] for v in ds.versions()] if op == "cleanup" else None
    return str(ds.schema), ds.semantic_types, rows, sorted(ds.tags.list()), extra


def _files(uri: str) -> set[str]:
    out = set()
    for here, _, names in os.walk(uri):
        for name in names:
            rel = os.path.relpath(os.path.join(here, name), uri)
            if rel != os.path.join("_versions", "latest_version_hint.json"):
                out.add(rel)
    return out


def _check_every_version(uri: str) -> None:
    if not os.path.isdir(os.path.join(uri, "_versions")):
        return
    ds = ls.dataset(uri)
    for v in ds.versions():
        report = ls.check(uri, version=v["version"])
        assert report.ok, (v["version"], report.problems)
    if not ds.semantic_types:
        assert lance.dataset(uri).count_rows() == ds.count_rows()


def _faults(op: str, calls: int) -> list[tuple[int, str, str]]:
    """(call, before/after, error kind) for every call; kinds: "disk" (ENOSPC), "interrupt"
    (Ctrl-C), "disk+no-delete" (ENOSPC while deletes are refused)."""
    out = []
    for i in range(calls):
        for when in ("before", "after"):
            out.extend((i, when, kind) for kind in ("disk", "interrupt"))
        out.append((i, "before", "disk+no-delete"))
    return out


#: CI runs every fault of the publication and this many others per case (a seeded sample;
#: LANCE_SEMANTIC_LOCAL_FAULTS=100000 runs them all)
SAMPLED = int(os.environ.get("LANCE_SEMANTIC_LOCAL_FAULTS", "0")) or 14


@pytest.mark.parametrize(("kind", "op"), CASES)
def test_a_fault_at_any_storage_call_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, op: str
) -> None:
    template = str(tmp_path / "template")
    _prepare(template, kind, op)
    clean = _copy(template, tmp_path / "clean")
    before = _state(clean, op)
    with Faults().installed(monkeypatch) as dry:
        OPERATIONS[op](clean)
    want = _state(clean, op)
    assert want != before or op in ("compact", "restore", "write_fragments")
    faults = _faults(op, len(dry.calls))
    # every fault around the publication (the manifest, then the version hint) is run
    publishing = {
        c.index
        for c in dry.calls
        if c.kind == "write" and c.path.endswith((".manifest", "latest_version_hint.json"))
    }
    chosen = [f for f in faults if f[0] in publishing]
    rest = [f for f in faults if f[0] not in publishing]
    rng = random.Random(f"{kind}-{op}")
    chosen += rest if len(rest) <= SAMPLED else rng.sample(rest, SAMPLED)
    failures = []
    for n, (at, when, error) in enumerate(chosen):
        uri = _copy(template, tmp_path / f"f{n}")
        try:
            _one_fault(uri, monkeypatch, op, at, when, error, before, want)
        except AssertionError as e:  # every failing fault of the case is reported
            failures.append(str(e).splitlines()[0][:300])
    assert not failures, "\n".join(failures)


def _copy(template: str, where: Path) -> str:
    """A copy of the prepared table (the same files, times included), or a fresh URI."""
    if os.path.isdir(template):
        shutil.copytree(template, where)
    return str(where)


def _one_fault(
    uri: str,
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    at: int,
    when: str,
    error: str,
    before: object,
    want: object,
) -> None:
    files_before = _files(uri)

    def make(call: Call) -> BaseException:
        return KeyboardInterrupt() if error == "interrupt" else disk_full(call.path)

    faults = Faults(at=at, when=when, error=make, refuse_deletes=error == "disk+no-delete")
    raised: BaseException | None = None
    with faults.installed(monkeypatch):
        try:
            OPERATIONS[op](uri)
        except BaseException as e:  # noqa: BLE001 - what was raised is what is checked
            raised = e
    case = f"{op}: {error} {when} {faults.fired}, raised {raised!r}"
    _forget_frames(raised, uri)
    state = _state(uri, op)
    if raised is None:
        assert state == want, case  # returned: applied, once
    elif isinstance(raised, KeyboardInterrupt | ls.CommitOutcomeUnknownError):
        assert faults.fired is not None or isinstance(raised, ls.CommitOutcomeUnknownError), case
        assert state in (before, want) or op == "cleanup", case
    else:
        # the first error reaches the caller: the injected one, or a library error; a
        # refused delete only where deleting is the operation: cleanup, which may stop
        # part way (as pylance's), each version it leaves whole
        refused = op == "cleanup"
        assert faults.fired is not None or refused, case
        assert isinstance(raised, ls.LanceSemanticError) or (
            isinstance(raised, OSError) and "injected" in str(raised)
        ), case
        assert "deletes are refused" not in str(raised) or refused, case
        assert state == before or refused, case  # not applied (cleanup: partly)
        if error != "disk+no-delete":
            left = _files(uri) - files_before
            # compaction's first commit reserves fragment ids (a version of its own)
            if op == "compact":
                left = {f for f in left if not f.startswith(("_versions", "_transactions"))}
            assert not left, (case, sorted(left))
    assert files_before - _files(uri) <= _cleaned(op, files_before), case  # nothing lost
    _check_every_version(uri)
    if state is not None:  # the process goes on: one more append
        ds = ls.dataset(uri)
        ds.insert(_blob_rows(900, 1) if op == "append_blobs" else ds.to_table(limit=1))


def _forget_frames(error: BaseException | None, uri: str) -> None:
    """Drop the frames an exception holds (and those of its causes): a writer that Ctrl-C
    caught between its open and its first use lives in them, and its encoder's temp file
    goes when the writer does (as after any handled exception)."""
    while error is not None:
        error.__traceback__ = None
        error = error.__cause__ or error.__context__
    if any(os.path.basename(f).startswith(".tmp") for f in _files(uri)):
        gc.collect()


def _cleaned(op: str, files: set[str]) -> set[str]:
    """Files an operation may remove: cleanup removes old versions' files."""
    return files if op == "cleanup" else set()


# a source failing mid-stream while deletes are refused, over every write path that takes
# a stream: tests/interop/test_failing_sources.py
