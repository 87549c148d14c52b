"""delete / update / merge_insert racing other writers, in threads and in processes.

The rules (commit/conflicts.py, Lance's conflict resolver): appends commute with everything
and all land, with consecutive versions; a delete or update is rebased over commits that
touched other fragments, and over deletes / updates of *other rows* of the same fragment (the
deletion vectors are merged into a new deletion file); only the same rows changed (or a
fragment rewritten or removed) is a true conflict: the operation is re-run from the newest
version (dataset/retry.py, as pylance) and finally raises :class:`ls.CommitConflictError`
having committed nothing. Never may a rebased commit silently undo the other's deletion (a
"lost delete"). pylance (the oracle) must read every result, count the same rows, and end
like our table when it runs the same steps on a twin table.

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
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest

import lance_semantic as ls
from lance_semantic.dataset.core import retry
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
    """Make a conflicting delete / update / merge_insert fail at once (no re-run): what
    succeeds then was rebased by the commit, not re-run."""
    monkeypatch.setattr(retry, "RETRIES", 0)


# ---- deterministic: two handles on one version, ours and pylance's on twin tables ----------

OPS: dict[str, Callable[[Any, tuple[int, int]], Any]] = {
    "delete": lambda ds, r: ds.delete(_sql(r)),
    "update": lambda ds, r: ds.update({"f": "f + 0.5"}, where=_sql(r)),
    "merge": lambda ds, r: (
        ds.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(_merge_rows(r))
    ),
}


def _merge_rows(where: tuple[int, int]) -> pa.Table:
    """Rows ``where`` with f + 0.5, and one new id per range (N + lo)."""
    t = table([*range(*where), N + where[0]])
    return t.set_column(2, "f", pa.compute.add(t.column("f"), 0.5))


def _ids(where: tuple[int, int]) -> set[int]:
    return set(range(*where))


def _sql(where: tuple[int, int]) -> str:
    return f"id >= {where[0]} AND id < {where[1]}"


def _count(result: Any) -> Any:
    """One result, as both libraries spell it."""
    if isinstance(result, dict):
        return tuple(sorted(result.items()))
    return tuple(sorted((k, getattr(result, k)) for k in result.__slots__))


def _rows(uri: str) -> list[tuple[int, float]]:
    return sorted((r["id"], r["f"]) for r in lance.dataset(uri).to_table().to_pylist())


def _twins(tmp_path: Path, run: Callable[[Callable[[str], Any], str], Any]) -> tuple[Any, Any]:
    """``run(open, uri)`` on a table of ours and on a pylance twin; returns both outcomes
    (results or the exception class), having checked both tables hold the same rows."""
    outcomes = []
    for who, opener in (("ours", ls.dataset), ("pylance", lance.dataset)):
        uri = create(tmp_path / who, who)
        try:
            outcomes.append(run(opener, uri))
        except (ls.CommitConflictError, OSError) as e:
            outcomes.append(type(e))
        if who == "ours":
            ids_of(uri)  # we and pylance read it alike
            mine = _rows(uri)
        else:
            assert _rows(uri) == mine
    return outcomes[0], outcomes[1]


@pytest.mark.parametrize("first", list(OPS))
@pytest.mark.parametrize("second", list(OPS))
def test_same_fragment_disjoint_rows_are_rebased(
    tmp_path: Path, no_retry: None, first: str, second: str
) -> None:
    """Two handles at one version change rows 0-9 and 50-59 of fragment 0: the second is
    rebased (deletion vectors merged), never re-run, and ends as pylance's twin ends."""

    def run(opener: Callable[[str], Any], uri: str) -> Any:
        a, b = opener(uri), opener(uri)
        ra = OPS[first](a, (0, 10))
        rb = OPS[second](b, (50, 60))
        return _count(ra), _count(rb), lance.dataset(uri).version

    ours, theirs = _twins(tmp_path, run)
    assert ours == theirs
    uri = str(tmp_path / "ours" / "t")
    assert check_history(uri) == ["Overwrite", *(_OP_NAME[o] for o in (first, second))]
    expected = set(range(N)) - {
        i for op, r in ((first, (0, 10)), (second, (50, 60))) if op == "delete" for i in _ids(r)
    }
    expected |= {N + lo for op, lo in ((first, 0), (second, 50)) if op == "merge"}
    assert ids_of(uri) == sorted(expected)
    f = dict(_rows(uri))
    for op, (lo, hi) in ((first, (0, 10)), (second, (50, 60))):
        if op != "delete":
            assert all(f[i] == i + 0.5 for i in range(lo, hi))
    # the merged deletion file is new, a bitmap named with the version it was rebased onto
    frag0 = next(fr for fr in lance.dataset(uri).get_fragments() if fr.fragment_id == 0)
    theirs_frag0 = next(
        fr
        for fr in lance.dataset(str(tmp_path / "pylance" / "t")).get_fragments()
        if fr.fragment_id == 0
    )
    d, t = frag0.metadata.deletion_file, theirs_frag0.metadata.deletion_file
    assert (d.file_type, d.num_deleted_rows) == (t.file_type, t.num_deleted_rows) == ("bitmap", 20)
    assert d.read_version == t.read_version == 2
    assert os.path.exists(os.path.join(uri, "_deletions", f"0-2-{d.id}.bin"))


_OP_NAME = {"delete": "Delete", "update": "Update", "merge": "Update"}


def test_rebased_transaction_is_recorded_as_committed(tmp_path: Path, no_retry: None) -> None:
    """The rebased delete's transaction reads version 2, names the merged deletion file, and
    is what the manifest and ``_transactions/2-{uuid}.txn`` hold (as pylance records it)."""
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    a.delete("id < 10")
    b.delete("id >= 50 AND id < 60")
    theirs = lance.dataset(uri).read_transaction(3)
    assert theirs.read_version == 2
    (frag,) = theirs.operation.updated_fragments
    assert frag.id == 0 and frag.deletion_file.num_deleted_rows == 20
    assert frag.deletion_file.file_type == "bitmap"
    name = f"2-{theirs.uuid}.txn"
    assert name in os.listdir(os.path.join(uri, "_transactions"))
    assert b.manifest.transaction_file == name
    assert b.manifest.fragments[0].deletion_file.read_version == 2


@pytest.mark.parametrize("first", list(OPS))
@pytest.mark.parametrize("second", list(OPS))
def test_same_rows_conflict_then_re_run_as_pylance(tmp_path: Path, first: str, second: str) -> None:
    """Both change rows 5-14 of fragment 0: a true conflict. The second is re-run from the
    newest version (pylance does the same) and both tables end alike."""

    def run(opener: Callable[[str], Any], uri: str) -> Any:
        a, b = opener(uri), opener(uri)
        ra = OPS[first](a, (5, 15))
        rb = OPS[second](b, (5, 15))
        return _count(ra), _count(rb), lance.dataset(uri).version

    ours, theirs = _twins(tmp_path, run)
    assert ours == theirs


@pytest.mark.parametrize("op", ["delete", "update"])
def test_same_rows_conflict_without_retries_raises(tmp_path: Path, no_retry: None, op: str) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    a.delete(_sql((0, 10)))
    files = set(os.listdir(os.path.join(uri, "_versions")))
    with pytest.raises(ls.CommitConflictError) as e:
        OPS[op](b, (5, 60))  # rows 5-9 were deleted by a
    assert e.value.retryable
    assert set(os.listdir(os.path.join(uri, "_versions"))) == files  # nothing committed
    assert ids_of(uri) == sorted(set(range(N)) - _ids((0, 10)))
    f = dict(_rows(uri))
    assert all(f[i] == float(i) for i in range(10, 60))  # the loser changed nothing


def test_disjoint_rows_covering_a_fragment_drop_it(tmp_path: Path, no_retry: None) -> None:
    """Each deletes half of fragment 1: the merged deletion vector covers every row, so the
    rebased delete drops the fragment, as pylance's twin does."""

    def run(opener: Callable[[str], Any], uri: str) -> Any:
        a, b = opener(uri), opener(uri)
        a.delete(_sql((100, 150)))
        b.delete(_sql((150, 200)))
        frags = lance.dataset(uri).get_fragments()
        return [fr.fragment_id for fr in frags], lance.dataset(uri).version

    ours, theirs = _twins(tmp_path, run)
    assert ours == theirs and ours[0] == [0, 2, 3]


@pytest.mark.parametrize("first", ["delete", "update"])
@pytest.mark.parametrize("second", ["delete", "update"])
def test_disjoint_fragments_rebase(tmp_path: Path, no_retry: None, first: str, second: str) -> None:
    uri = create(tmp_path)
    a, b = ls.dataset(uri), ls.dataset(uri)
    OPS[first](a, (0, 10))
    OPS[second](b, (250, 260))  # fragment 2: commutes, rebased without a re-run
    assert b.version == 3
    assert check_history(uri) == ["Overwrite", first.title(), second.title()]
    expected = set(range(N)) - (_ids((0, 10)) if first == "delete" else set())
    expected -= _ids((250, 260)) if second == "delete" else set()
    assert ids_of(uri) == sorted(expected)
    f = dict(_rows(uri))
    for op, (lo, hi) in ((first, (0, 10)), (second, (250, 260))):
        if op == "update":
            assert all(f[i] == i + 0.5 for i in range(lo, hi))


def test_delete_after_an_overwrite_is_not_re_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An overwrite replaced the table: an incompatible conflict, raised without a re-run,
    as pylance raises it."""
    from lance_semantic.dataset.mutations import delete_update as mutations

    calls: list[str] = []
    real = mutations._delete
    monkeypatch.setattr(mutations, "_delete", lambda *a: calls.append("run") or real(*a))

    def run(opener: Callable[[str], Any], uri: str) -> Any:
        stale = opener(uri)
        write = ls.write_dataset if opener is ls.dataset else lance.write_dataset
        write(table(range(5)), uri, mode="overwrite")
        return stale.delete("id = 1")

    ours, theirs = _twins(tmp_path, run)
    assert ours is ls.CommitConflictError and theirs is OSError
    assert calls == ["run"]
    assert ids_of(str(tmp_path / "ours" / "t")) == list(range(5))


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


def test_rebases_over_pylance_and_pylance_over_ours(tmp_path: Path, no_retry: None) -> None:
    uri = create(tmp_path, writer="pylance")
    ours = ls.dataset(uri)
    lance.dataset(uri).delete("id = 7")
    ours.update({"f": "0.25"}, where="id = 8")  # same fragment, other row: rebased
    theirs = lance.dataset(uri)
    ls.dataset(uri).delete("id = 9")
    theirs.delete("id = 10")  # pylance rebases over our deletion file
    live = set(ids_of(uri))
    assert {7, 9, 10}.isdisjoint(live) and 8 in live
    assert dict(_rows(uri))[8] == 0.25
    # a true conflict with pylance: the same row
    ours = ls.dataset(uri)
    lance.dataset(uri).delete("id = 11")
    with pytest.raises(ls.CommitConflictError):
        ours.delete("id = 11")
    assert 11 not in ids_of(uri)


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
        if role == "mix":
            return _mix(uri, *arg)
    except ls.CommitConflictError as e:
        return f"conflict: {e}"
    raise AssertionError(role)


MIX = ("delete", "update", "merge", "append")


def _mix(uri: str, p: int, iters: int) -> dict[int, float]:
    """Writer ``p`` owns the ids ``id % WORKERS == p`` (so every fragment is shared) and
    cycles through delete, update, merge_insert and append of its own rows; returns what
    its rows must be. Any conflict propagates: with disjoint rows none may happen."""
    live = {i: float(i) for i in range(p, N, WORKERS)}
    new = iter(range(10 * N + p, 20 * N, WORKERS))
    for k in range(iters):
        a, b = sorted(live)[k :: len(live) // 2][:2]
        ds = ls.dataset(uri)
        op = MIX[(k + p) % len(MIX)]
        if op == "delete":
            ds.delete(f"id IN ({a}, {b})")
            del live[a], live[b]
        elif op == "update":
            ds.update({"f": "f + 1"}, where=f"id IN ({a}, {b})")
            live[a] += 1
            live[b] += 1
        elif op == "merge":
            c = next(new)
            src = table([a, c])
            src = src.set_column(2, "f", pa.array([live[a] + 1, float(c)]))
            ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
                src
            )
            live[a] += 1
            live[c] = float(c)
        else:
            c = next(new)
            ls.write_dataset(table([c]), uri, mode="append")
            live[c] = float(c)
    return live


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


def test_processes_mixed_writers_on_disjoint_rows_never_conflict(pool: Any, tmp_path: Path) -> None:
    """Deletes, updates, merge_inserts and appends from racing processes, each on its own
    rows of shared fragments: all rebase (no CommitConflictError), no row is lost or
    duplicated, and every version opens in both libraries with the same rows."""
    uri = create(tmp_path)
    outcomes = _run(pool, [(uri, "mix", (p, 6)) for p in range(WORKERS)])
    assert all(isinstance(o, dict) for o in outcomes), outcomes
    expected = {i: v for o in outcomes for i, v in o.items()}
    assert ids_of(uri) == sorted(expected)
    assert dict(_rows(uri)) == expected
    history = check_history(uri)
    assert len(history) == 1 + 6 * WORKERS
    for v in range(1, len(history) + 1):
        ours = ls.dataset(uri, version=v).to_table(columns=["id"])["id"].to_pylist()
        assert len(ours) == len(set(ours))
        theirs = lance.dataset(uri, version=v)
        assert sorted(theirs.to_table(columns=["id"])["id"].to_pylist()) == sorted(ours)
