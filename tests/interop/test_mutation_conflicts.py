"""delete / update / merge_insert racing other writers, in threads and in processes.

The rules (commit/conflicts.py, facts §8): appends commute with everything and all land,
with consecutive versions; a delete or update commutes with commits that touched other
fragments (it is rebased), and conflicts with one that touched the same fragment: it then
either raises :class:`ls.CommitConflictError` having committed nothing, or (mutations.py re-runs
a conflicting operation from the newest version, a bounded number of times) succeeds with
*both* writers' effects visible. Never may a rebased commit silently undo the other's deletion
(a "lost delete"). pylance (the oracle) must read every result, and count the same rows.

Deterministic tests open two handles at the same version and commit one after the other, so
the second always meets the first's commit; racing tests release threads or ``spawn``-ed
processes at a barrier.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.dataset import mutations
from lance_semantic.manifest.codec import decode_manifest_file, read_inline_transaction
from lance_semantic.storage.paths import parse_manifest_name

pytestmark = pytest.mark.interop

PER_FRAGMENT = 100
FRAGMENTS = 4
N = PER_FRAGMENT * FRAGMENTS
WORKERS = 2  # processes: each spawned interpreter spends seconds importing pyarrow and lance
TIMEOUT = 30  # seconds any barrier or worker may wait: keeps a hung race from hanging CI


def table(ids: range | list[int]) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": pa.array([f"s{i}" for i in ids]),
            "f": pa.array([float(i) for i in ids]),
        }
    )


def create(tmp_path: Path, writer: str = "ours") -> str:
    """A table of FRAGMENTS fragments of PER_FRAGMENT rows (ids 0..N-1)."""
    uri = str(tmp_path / "t")
    write = ls.write_dataset if writer == "ours" else lance.write_dataset
    write(table(range(N)), uri, max_rows_per_file=PER_FRAGMENT)
    return uri


def ids_of(uri: str) -> list[int]:
    """Live ids, as we read them; pylance must read the same."""
    ours = sorted(ls.dataset(uri).to_table()["id"].to_pylist())
    theirs = lance.dataset(uri)
    assert sorted(theirs.to_table()["id"].to_pylist()) == ours
    assert theirs.count_rows() == ls.dataset(uri).count_rows() == len(ours)
    return ours


def check_history(uri: str) -> list[str]:
    """Versions 1..N consecutive, each manifest naming its own version, every fragment id
    unique; returns the operation name of each version."""
    vdir = os.path.join(uri, "_versions")
    ops = {}
    for name in os.listdir(vdir):
        parsed = parse_manifest_name(name)
        if parsed is None:
            continue
        with open(os.path.join(vdir, name), "rb") as f:
            data = f.read()
        manifest, txn = decode_manifest_file(data), read_inline_transaction(data)
        assert manifest.version == parsed[0]
        frag_ids = [fr.id for fr in manifest.fragments]
        assert len(frag_ids) == len(set(frag_ids))
        ops[parsed[0]] = type(txn.operation).__name__ if txn else "?"
    assert sorted(ops) == list(range(1, len(ops) + 1))
    return [ops[v] for v in sorted(ops)]


@pytest.fixture
def no_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a conflicting delete / update / merge_insert fail at once (no re-run)."""
    monkeypatch.setattr(mutations, "RETRIES", 1)


# ---- deterministic: two handles on one version --------------------------------------------------

OPS: dict[str, Callable[[ls.Dataset, str], Any]] = {
    "delete": lambda ds, where: ds.delete(where),
    "update": lambda ds, where: ds.update({"f": "f + 0.5"}, where),
}


def _ids(where: tuple[int, int]) -> set[int]:
    return set(range(*where))


def _sql(where: tuple[int, int]) -> str:
    return f"id >= {where[0]} AND id < {where[1]}"


@pytest.mark.parametrize("first", ["delete", "update"])
@pytest.mark.parametrize("second", ["delete", "update"])
def test_same_fragment_conflicts(tmp_path: Path, no_retry: None, first: str, second: str) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    OPS[first](a, _sql((0, 10)))
    files = set(os.listdir(os.path.join(uri, "_versions")))
    with pytest.raises(ls.CommitConflictError):
        OPS[second](b, _sql((50, 60)))  # also fragment 0
    assert set(os.listdir(os.path.join(uri, "_versions"))) == files  # nothing committed
    assert ls.dataset(uri).version == 2
    live = ids_of(uri)
    assert len(live) == (N - 10 if first == "delete" else N)
    f = {r["id"]: r["f"] for r in ls.dataset(uri).to_table().to_pylist()}
    assert all(f[i] == float(i) for i in range(50, 60))  # the loser changed nothing


@pytest.mark.parametrize("first", ["delete", "update"])
@pytest.mark.parametrize("second", ["delete", "update"])
def test_disjoint_fragments_rebase(tmp_path: Path, no_retry: None, first: str, second: str) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    OPS[first](a, _sql((0, 10)))
    OPS[second](b, _sql((250, 260)))  # fragment 2: commutes, rebased without a re-run
    assert b.version == 3
    assert check_history(uri) == ["Overwrite", first.title(), second.title()]
    expected = set(range(N)) - (_ids((0, 10)) if first == "delete" else set())
    expected -= _ids((250, 260)) if second == "delete" else set()
    assert ids_of(uri) == sorted(expected)
    f = {r["id"]: r["f"] for r in ls.dataset(uri).to_table().to_pylist()}
    for op, (lo, hi) in ((first, (0, 10)), (second, (250, 260))):
        if op == "update":
            assert all(f[i] == i + 0.5 for i in range(lo, hi))


@pytest.mark.parametrize("op", ["delete", "update"])
def test_same_fragment_conflict_is_re_run_without_losing_either_change(
    tmp_path: Path, op: str
) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    a.delete(_sql((0, 10)))
    try:
        result = OPS[op](b, _sql((5, 60)))  # overlaps a's rows in the same fragment
    except ls.CommitConflictError:
        assert ids_of(uri) == sorted(set(range(N)) - _ids((0, 10)))
        return
    # re-run on the newest version: only rows still live were hit
    n = result.num_deleted_rows if op == "delete" else result.num_rows_updated
    assert n == 50
    expected = set(range(N)) - _ids((0, 10)) - (_ids((5, 60)) if op == "delete" else set())
    assert ids_of(uri) == sorted(expected)
    assert check_history(uri) == ["Overwrite", "Delete", op.title()]


def test_merge_insert_conflicts_on_the_same_fragment(tmp_path: Path, no_retry: None) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    a.merge_insert("id").when_matched_update_all().execute(table([1, 2]))
    with pytest.raises(ls.CommitConflictError):
        b.merge_insert("id").when_matched_update_all().execute(table([3]))
    assert ls.dataset(uri).version == 2
    # touching another fragment (and inserting) rebases fine
    c = ls.dataset(uri)
    a.merge_insert("id").when_matched_update_all().execute(table([150]))
    r = (
        c.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(table([350, N + 1]))
    )
    assert (r.num_updated_rows, r.num_inserted_rows) == (1, 1)
    assert ids_of(uri) == [*range(N), N + 1]


def test_delete_after_appends_it_did_not_read(tmp_path: Path, no_retry: None) -> None:
    """A delete read at v1 commits after two appends: appended rows stay even when they
    match the predicate (they were not there when it read), as in pylance."""
    uri = create(tmp_path)
    stale = ls.dataset(uri)
    ls.write_dataset(table([N, N + 1]), uri, mode="append")
    lance.write_dataset(table([N + 2]), uri, mode="append")
    assert stale.delete("id % 2 = 0").num_deleted_rows == N // 2
    assert stale.version == 4
    assert check_history(uri) == ["Overwrite", "Append", "Append", "Delete"]
    assert ids_of(uri) == [*range(1, N, 2), N, N + 1, N + 2]


def test_conflicts_with_pylance_on_the_same_fragment(tmp_path: Path, no_retry: None) -> None:
    uri = create(tmp_path, writer="pylance")
    ours = ls.dataset(uri)
    lance.dataset(uri).delete("id = 7")
    with pytest.raises(ls.CommitConflictError):
        ours.delete("id = 8")
    theirs = lance.dataset(uri)
    ls.dataset(uri).delete("id = 9")
    theirs.delete("id = 10")  # pylance re-runs (or fails); it must never lose our delete
    live = set(ids_of(uri))
    assert 7 not in live and 9 not in live and 8 in live
    # disjoint fragments: our stale delete is rebased over pylance's
    ours = ls.dataset(uri)
    lance.dataset(uri).delete("id = 120")
    ours.delete("id = 220")
    assert {120, 220}.isdisjoint(ids_of(uri))


# ---- threads ---------------------------------------------------------------------------------


def test_threads_read_one_table_at_once(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(pa.table({"id": pa.array(range(100_000), pa.int64())}), uri)

    def scan() -> int:
        return sum(ls.dataset(uri).to_table().num_rows for _ in range(10))

    assert _race([scan] * 4) == [1_000_000] * 4


def _race(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run ``jobs`` in threads released together; each outcome is a result or an exception."""
    barrier = threading.Barrier(len(jobs))

    def run(job: Callable[[], Any]) -> Any:
        barrier.wait(TIMEOUT)
        try:
            return job()
        except ls.CommitConflictError as e:
            return e

    with ThreadPoolExecutor(len(jobs)) as pool:
        return [f.result(timeout=TIMEOUT) for f in [pool.submit(run, j) for j in jobs]]


def test_threads_concurrent_appends_all_land(tmp_path: Path) -> None:
    uri = create(tmp_path)

    def appender(w: int) -> Callable[[], list[int]]:
        def go() -> list[int]:
            ids = range(N + 10 * w, N + 10 * w + 3)
            return [
                ls.write_dataset(table(ids[k : k + 1]), uri, mode="append").version
                for k in range(3)
            ]

        return go

    versions = _race([appender(w) for w in range(4)])
    assert sorted(v for vs in versions for v in vs) == list(range(2, 14))
    assert check_history(uri) == ["Overwrite", *["Append"] * 12]
    assert ids_of(uri) == [*range(N), *(N + 10 * w + k for w in range(4) for k in range(3))]


@pytest.mark.parametrize("fragments", ["same", "disjoint"])
def test_threads_two_deletes(tmp_path: Path, fragments: str) -> None:
    uri = create(tmp_path)
    handles = [ls.dataset(uri), ls.dataset(uri)]  # both read version 1
    ranges = [(0, 10), (20, 30) if fragments == "same" else (320, 330)]
    outcomes = _race(
        [lambda h=h, r=r: h.delete(_sql(r)) for h, r in zip(handles, ranges, strict=True)]
    )
    won = [r for r, o in zip(ranges, outcomes, strict=True) if not isinstance(o, Exception)]
    assert won, outcomes  # at least one wins
    if fragments == "disjoint":
        assert len(won) == 2  # rebased, never a conflict
    gone = set().union(*(_ids(r) for r in won))
    assert ids_of(uri) == sorted(set(range(N)) - gone)
    assert check_history(uri) == ["Overwrite", *["Delete"] * len(won)]


def test_threads_delete_and_update_race_appends(tmp_path: Path) -> None:
    uri = create(tmp_path)
    jobs: list[Callable[[], Any]] = [
        lambda: ls.dataset(uri).delete("id < 50"),
        lambda: ls.dataset(uri).update({"f": "-f"}, "id >= 300 AND id < 310"),
        lambda: ls.write_dataset(table([N, N + 1]), uri, mode="append"),
        lambda: ls.write_dataset(table([N + 2]), uri, mode="append"),
    ]
    outcomes = _race(jobs)
    assert not any(isinstance(o, Exception) for o in outcomes), outcomes
    assert outcomes[0].num_deleted_rows == 50 and outcomes[1].num_rows_updated == 10
    assert ids_of(uri) == [*range(50, N), N, N + 1, N + 2]
    f = {r["id"]: r["f"] for r in ls.dataset(uri).to_table().to_pylist()}
    assert [f[i] for i in (300, 309, 310)] == [-300.0, -309.0, 310.0]
    assert sorted(check_history(uri)) == sorted(
        ["Overwrite", "Delete", "Update", "Append", "Append"]
    )


# ---- processes -------------------------------------------------------------------------------

_barrier: Any = None


def _init_worker(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def _worker(uri: str, role: str, arg: Any) -> Any:
    ds = ls.dataset(uri) if role != "append" else None  # read before the barrier
    _barrier.wait(TIMEOUT)
    try:
        if role == "append":
            return [ls.write_dataset(table([i]), uri, mode="append").version for i in arg]
        if role == "delete":
            return ds.delete(_sql(arg)).num_deleted_rows
        if role == "update":
            return ds.update({"f": "f * 2"}, _sql(arg)).num_rows_updated
    except ls.CommitConflictError as e:
        return f"conflict: {e}"
    raise AssertionError(role)


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    with ctx.Pool(WORKERS, initializer=_init_worker, initargs=(barrier,)) as p:
        yield p


def _run(pool: Any, tasks: list[tuple[Any, ...]]) -> list[Any]:
    assert len(tasks) == WORKERS  # one task per worker, or the barrier never opens
    pending = [pool.apply_async(_worker, t) for t in tasks]
    return [r.get(timeout=2 * TIMEOUT) for r in pending]


def test_processes_concurrent_appends_all_land(pool: Any, tmp_path: Path) -> None:
    uri = create(tmp_path)
    batches = [[N + 10 * w + k for k in range(3)] for w in range(WORKERS)]
    versions = _run(pool, [(uri, "append", b) for b in batches])
    assert sorted(v for vs in versions for v in vs) == list(range(2, 2 + 3 * WORKERS))
    assert check_history(uri) == ["Overwrite", *["Append"] * (3 * WORKERS)]
    assert ids_of(uri) == [*range(N), *sorted(i for b in batches for i in b)]


@pytest.mark.parametrize("fragments", ["same", "disjoint"])
def test_processes_two_deletes(pool: Any, tmp_path: Path, fragments: str) -> None:
    uri = create(tmp_path)
    ranges = [(0, 10), (40, 50) if fragments == "same" else (200, 230)]
    outcomes = _run(pool, [(uri, "delete", r) for r in ranges])
    for r, o in zip(ranges, outcomes, strict=True):
        assert o == r[1] - r[0] or str(o).startswith("conflict"), outcomes
    won = [r for r, o in zip(ranges, outcomes, strict=True) if isinstance(o, int)]
    assert won and (fragments == "same" or len(won) == 2), outcomes
    gone = set().union(*(_ids(r) for r in won))
    assert ids_of(uri) == sorted(set(range(N)) - gone)
    assert check_history(uri) == ["Overwrite", *["Delete"] * len(won)]


@pytest.mark.parametrize("op", ["delete", "update"])
def test_processes_mutation_with_an_append(pool: Any, tmp_path: Path, op: str) -> None:
    uri = create(tmp_path)
    outcomes = _run(pool, [(uri, op, (100, 150)), (uri, "append", [N, N + 1])])
    assert outcomes[0] == 50 and len(outcomes[1]) == 2, outcomes
    live = ids_of(uri)
    f = {r["id"]: r["f"] for r in ls.dataset(uri).to_table().to_pylist()}
    if op == "delete":
        assert live == [*range(100), *range(150, N), N, N + 1]
    else:
        assert live == [*range(N), N, N + 1]
        assert f[100] == 200.0 and f[150] == 150.0
    assert f[N] == float(N)
    assert sorted(check_history(uri)) == sorted(["Overwrite", op.title(), "Append", "Append"])
