"""Concurrent writers on one table: several processes appending through lance-semantic at
once, and lance-semantic and pylance appending side by side. No commit may be lost or
duplicated, versions stay consecutive and pylance (the oracle) reads the result.

The worker processes come from one ``spawn`` pool shared by the module (each interpreter
pays the pyarrow / lance import once). A barrier makes the workers of a round start their
appends at the same moment, so commits really race for the same version numbers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.manifest.codec import decode_manifest_file, read_inline_transaction
from lance_semantic.storage.paths import parse_manifest_name

pytestmark = pytest.mark.interop

WORKERS = 4
APPENDS = 5
ROWS = 3
BARRIER_TIMEOUT = 60

_barrier: Any = None


def _init_worker(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def _rows(worker: int, j: int) -> pa.Table:
    return pa.table(
        {
            "w": pa.array([worker] * ROWS, pa.int32()),
            "j": pa.array([j] * ROWS, pa.int32()),
            "s": pa.array([f"{worker}-{j}-{k}" for k in range(ROWS)]),
            "st": pa.array([{"x": worker * 100 + j, "tag": "t"}] * ROWS),
        }
    )


def _append_worker(uri: str, worker: int, writer: str) -> list[int]:
    """Append APPENDS small tables to ``uri`` with ``writer``; return the versions committed."""
    _barrier.wait(BARRIER_TIMEOUT)
    versions = []
    for j in range(APPENDS):
        if writer == "ours":
            versions.append(ls.write_dataset(_rows(worker, j), uri, mode="append").version)
        else:
            versions.append(lance.write_dataset(_rows(worker, j), uri, mode="append").version)
    return versions


def _create_worker(uri: str, worker: int) -> str:
    _barrier.wait(BARRIER_TIMEOUT)
    try:
        ls.write_dataset(_rows(worker, 0), uri, mode="create")
    except ls.DatasetExistsError:
        return "exists"
    return "created"


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    # spawned interpreters import this module by name (tests.interop.test_concurrency) with
    # the parent's sys.path, which lacks the project root under a plain ``pytest`` run
    root = str(Path(__file__).resolve().parents[2])
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    try:
        workers = ctx.Pool(WORKERS, initializer=_init_worker, initargs=(barrier,))
    finally:
        if added:
            sys.path.remove(root)
    with workers:
        yield workers


def _run(pool: Any, fn: Any, args: list[tuple]) -> list[Any]:
    assert len(args) == WORKERS  # one task per worker, or the barrier never opens
    pending = [pool.apply_async(fn, a) for a in args]
    return [r.get(timeout=120) for r in pending]


def _check_history(uri: str, expected_rows: int) -> None:
    """Versions 1..N consecutive, each manifest holds its own version number, every fragment
    id unique, pylance and we agree on the content."""
    vdir = os.path.join(uri, "_versions")
    found = {}
    for name in os.listdir(vdir):
        parsed = parse_manifest_name(name)
        if parsed is not None:
            with open(os.path.join(vdir, name), "rb") as f:
                data = f.read()
            found[parsed[0]] = (decode_manifest_file(data), read_inline_transaction(data))
    n = 1 + WORKERS * APPENDS
    assert sorted(found) == list(range(1, n + 1))
    for v, (manifest, txn) in found.items():
        assert manifest.version == v
        assert txn is not None and (v == 1 or txn.read_version < v)

    ours, theirs = ls.dataset(uri), lance.dataset(uri)
    assert ours.version == theirs.version == n
    assert [v["version"] for v in theirs.versions()] == list(range(1, n + 1))
    assert [v["version"] for v in ours.versions()] == list(range(1, n + 1))
    ids = [f.fragment_id for f in theirs.get_fragments()]
    assert ids == sorted(set(ids)) and len(ids) == n
    assert theirs.count_rows() == ours.count_rows() == expected_rows
    table = theirs.to_table()
    assert table.equals(ours.to_table())
    # every append is there exactly once
    counts = Counter(zip(table["w"].to_pylist(), table["j"].to_pylist(), strict=True))
    assert counts == {
        (-1, 0): ROWS,
        **{(w, j): ROWS for w in range(WORKERS) for j in range(APPENDS)},
    }
    assert len(set(table["s"].to_pylist())) == table.num_rows


def _start(uri: str, writer: str) -> None:
    if writer == "ours":
        ls.write_dataset(_rows(-1, 0), uri)
    else:
        lance.write_dataset(_rows(-1, 0), uri)


@pytest.mark.parametrize("creator", ["ours", "pylance"])
def test_concurrent_appends_through_lance_semantic(pool: Any, tmp_path: Path, creator: str) -> None:
    uri = str(tmp_path / "t")
    _start(uri, creator)
    committed = _run(pool, _append_worker, [(uri, w, "ours") for w in range(WORKERS)])
    for versions in committed:  # each writer sees its own commits in increasing order
        assert versions == sorted(versions)
    all_versions = sorted(v for vs in committed for v in vs)
    assert all_versions == list(range(2, 2 + WORKERS * APPENDS))
    _check_history(uri, ROWS * (1 + WORKERS * APPENDS))


def test_concurrent_appends_pylance_and_lance_semantic(pool: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    _start(uri, "ours")
    writers = ["ours", "pylance", "ours", "pylance"]
    committed = _run(pool, _append_worker, [(uri, w, writers[w]) for w in range(WORKERS)])
    assert sorted(v for vs in committed for v in vs) == list(range(2, 2 + WORKERS * APPENDS))
    _check_history(uri, ROWS * (1 + WORKERS * APPENDS))


def test_concurrent_creates_exactly_one_wins(pool: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    outcomes = _run(pool, _create_worker, [(uri, w) for w in range(WORKERS)])
    assert sorted(outcomes) == ["created"] + ["exists"] * (WORKERS - 1)
    theirs = lance.dataset(uri)
    assert theirs.version == 1
    assert theirs.count_rows() == ROWS
    assert len(os.listdir(os.path.join(uri, "data"))) == 1  # the losers left no data file
