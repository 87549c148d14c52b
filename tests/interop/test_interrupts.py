"""A Ctrl-C anywhere in a read or a mutation leaves the process usable.

The class: a ``KeyboardInterrupt`` at any call of any function that takes or releases a
shared resource -- DataFusion frames and registered tables, pylance file readers, the pool
of kept readers, reads started on pylance's threads, the prefetch threads and their
futures, the SQL evaluators -- raised before the call, right after it returns (where a
signal lands between taking a resource and guarding it) or between two batches of a
stream, during every read path and every mutation that evaluates SQL. After each one the
same process must still give every read and every SQL evaluation their results (on this
thread and on every pool thread, each guarded by a timeout: a hang fails), and the table
must be as pylance reads it either before the mutation or after it (never in between).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datafusion
import lance
import lance.file
import numpy as np
import pyarrow as pa
import pytest
from tests.interrupt_support import Interrupt, in_main_thread, in_thread, on_every_thread

import lance_semantic as ls
from lance_semantic.dataset.mutations import rows_to_change as mutation_scan
from lance_semantic.query.expressions import MatchCondition, SqlExpression
from lance_semantic.query.projection import ColumnExpression
from lance_semantic.read import fragment_reader as read_scan
from lance_semantic.read import prefetch, readers
from lance_semantic.storage import datafile

pytestmark = pytest.mark.interop

#: seconds a guarded call may take before it counts as hung
TIMEOUT = 20.0
#: at most this many calls of a function are interrupted per operation (spread over it)
CALLS = 4


def _rows(ids: np.ndarray) -> pa.Table:
    return pa.table({"id": ids, "s": [f"s{i}" for i in ids], "f": ids.astype(np.float64) / 2})


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four small fragments and a large one (read as a stream), with deletions, by pylance."""
    root = tmp_path_factory.mktemp("interrupts") / "t"
    lance.write_dataset(_rows(np.arange(40)), root, max_rows_per_file=10)
    lance.write_dataset(_rows(np.arange(40, 3040)), root, mode="append")
    lance.dataset(root).delete("id % 10 = 9")
    return root


SOURCE = _rows(np.array([3, 50, 2000, 5000]))
SOURCE = SOURCE.set_column(2, "f", pa.array([9.0, 0.0, 2000.5, 1.0]))


def _stopped_stream(ds: Any) -> pa.Table:
    it = ds.to_batches(batch_size=256)
    got = [next(it), next(it)]
    it.close()
    return pa.Table.from_batches(got)


def _cold(ds: Any) -> pa.Table:
    """A filtered scan that opens every data file afresh (no reader kept from before)."""
    datafile._POOL.clear()
    datafile._metadata.cache_clear()
    datafile._opened_file.cache_clear()
    readers.clear()
    return ds.to_table(filter="id % 7 = 3", batch_size=512)


#: every read path, as (ours, pylance's) calls
READS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any] | None]] = {
    "scan": (lambda ds: ds.to_table(batch_size=512), lambda ds: ds.to_table()),
    "sql filter": (
        lambda ds: ds.to_table(filter="id % 7 = 3 OR s LIKE 's2%'", batch_size=512),
        lambda ds: ds.to_table(filter="id % 7 = 3 OR s LIKE 's2%'"),
    ),
    "kernel filter": (
        lambda ds: ds.to_table(columns=["id", "s"], filter="id > 20"),
        lambda ds: ds.to_table(columns=["id", "s"], filter="id > 20"),
    ),
    "count": (lambda ds: ds.count_rows("id % 3 = 0"), lambda ds: ds.count_rows("id % 3 = 0")),
    "sql projection": (
        lambda ds: ds.to_table(columns={"x": "id * 2", "s": "s"}, batch_size=512),
        lambda ds: ds.to_table(columns={"x": "id * 2", "s": "s"}),
    ),
    "take": (
        lambda ds: ds.take([0, 5, 33, 1000, 2700]),
        lambda ds: ds.take([0, 5, 33, 1000, 2700]),
    ),
    "stopped stream": (_stopped_stream, None),
    "cold": (_cold, lambda ds: ds.to_table(filter="id % 7 = 3")),
}

#: every mutation that evaluates SQL
MUTATIONS: dict[str, Callable[[Any], Any]] = {
    "delete": lambda ds: ds.delete("id % 5 = 1"),
    "update": lambda ds: ds.update({"f": "f + 1"}, where="id % 4 = 0"),
    "add_columns": lambda ds: ds.add_columns({"g": "id * 2"}),
    "merge_insert condition": lambda ds: (
        ds.merge_insert("id")
        .when_matched_update_all("target.f < source.f")
        .when_not_matched_insert_all()
        .execute(SOURCE)
    ),
    "merge_insert by-source delete": lambda ds: (
        ds.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_by_source_delete("id >= 3000")
        .execute(SOURCE)
    ),
}

#: where the interrupt lands
POINTS: list[tuple[Any, str, str]] = [
    # the SQL engine: frames, registered tables, evaluation
    (datafusion.SessionContext, "from_arrow", "after"),
    (datafusion.SessionContext, "read_batches", "after"),
    (datafusion.SessionContext, "register_record_batches", "after"),
    (datafusion.DataFrame, "__init__", "after"),
    (datafusion.DataFrame, "parse_sql_expr", "before"),
    (datafusion.DataFrame, "to_arrow_table", "before"),
    (SqlExpression, "evaluate", "before"),
    (ColumnExpression, "evaluate", "before"),
    (MatchCondition, "mask", "before"),
    # pylance's file reader, and the pool of kept readers
    (lance.file.LanceFileReader, "__init__", "after"),
    (lance.file.LanceFileReader, "read_range", "after"),
    (lance.file.LanceFileReader, "take_rows", "after"),
    (datafile, "_reader_for", "after"),
    (datafile, "_started", "after"),
    (datafile, "_first_rows", "before"),
    (datafile._ReaderPool, "idle_of", "after"),
    (datafile._ReaderPool, "take", "after"),
    (datafile._ReaderPool, "give", "before"),
    (datafile.DataFileReader, "read", "next"),
    # fragment reads and the threads that run them
    (read_scan.FragmentReader, "batches", "next"),
    (read_scan.FragmentReader, "take", "before"),
    (read_scan, "deleted_rows", "before"),
    (cf.ThreadPoolExecutor, "submit", "after"),
    (cf.Future, "result", "before"),
]

_POINT_IDS = [f"{getattr(o, '__name__', o)}.{n}-{m}" for o, n, m in POINTS]


def _value(x: Any) -> Any:
    return x.to_pydict() if isinstance(x, pa.Table) else x


@pytest.fixture(scope="module")
def baseline(pristine: Path) -> dict[str, Any]:
    """Each read's result, checked against pylance's."""
    ours, theirs = ls.dataset(pristine), lance.dataset(pristine)
    out = {}
    for name, (read, oracle) in READS.items():
        got = read(ours)
        if oracle is not None:
            want = oracle(theirs)
            assert got.equals(want) if isinstance(got, pa.Table) else got == want, name
        out[name] = got
    return out


def _copy(pristine: Path, to: Path) -> Path:
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(pristine, to)
    return to


def _content(root: Path) -> tuple[int, dict[str, list[Any]]]:
    """The latest version of the table and its rows by id, as pylance reads them."""
    ds = lance.dataset(root)
    return ds.version, ds.to_table().sort_by("id").to_pydict()


@pytest.fixture(scope="module")
def outcomes(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each mutation's table afterwards (run without interrupts)."""
    root = tmp_path_factory.mktemp("outcomes")
    out = {}
    for name, mutate in MUTATIONS.items():
        copy = _copy(pristine, root / "t")
        mutate(ls.dataset(copy))
        out[name] = _content(copy)
    return out


def _engine_works() -> None:
    """Every SQL evaluator of the library, on the calling thread."""
    batch = pa.record_batch({"id": pa.array([1, 2, 3, 4]), "f": pa.array([0.5, 1.0, 1.5, 2.0])})
    got = SqlExpression("id % 2 = 0 AND f > 0", is_filter=True).evaluate(batch)
    assert got.to_pylist() == [False, True, False, True]
    got = ColumnExpression("x", "id * 3", batch.schema).evaluate(batch)
    assert got.to_pylist() == [3, 6, 9, 12]
    table = pa.Table.from_batches([batch])
    got = MatchCondition("target.id < source.f").mask(table, table)
    assert got.to_pylist() == [False, False, False, False]


def _usable(
    pristine: Path, baseline: dict[str, Any], tmp: Path, where: str, mutation: bool = True
) -> None:
    """Every read gives its result (on a new thread), every SQL evaluator works (on this
    thread and on every thread of the read pools), and a mutation still commits."""

    def reads() -> None:
        ds = ls.dataset(pristine)
        for name, (read, _) in READS.items():
            got = read(ds)
            want = baseline[name]
            assert _value(got) == _value(want), f"{name} after {where}"
        _engine_works()

    in_thread(reads, TIMEOUT, f"the reads after {where}")
    _engine_works()
    on_every_thread(prefetch.pool().submit, prefetch.WORKERS, _engine_works, TIMEOUT)
    on_every_thread(mutation_scan._POOL.submit, mutation_scan._WINDOW, _engine_works, TIMEOUT)
    if not mutation:
        return
    copy = _copy(pristine, tmp / "after")
    in_thread(lambda: MUTATIONS["update"](ls.dataset(copy)), TIMEOUT, f"update after {where}")


def _calls(run: Callable[[], Any]) -> list[int]:
    """How many times ``run`` calls each point's function (or takes an item of what it
    returns), all counted in one run."""
    with contextlib.ExitStack() as stack:
        counting = [stack.enter_context(Interrupt(*point)) for point in POINTS]
        run()
    return [c.calls for c in counting]


def _spread(calls: int) -> list[int]:
    """Which calls to interrupt: every one, or :data:`CALLS` of them spread over the run."""
    if calls <= CALLS:
        return list(range(1, calls + 1))
    return sorted({1, 2, (calls + 1) // 2, calls})


def _interrupted(point: tuple[Any, str, str], at: int, run: Callable[[], Any], what: str) -> None:
    """Runs ``run`` with the interrupt at call ``at``. (An interrupt on a thread whose
    result nobody waits for, a read-ahead abandoned, is not seen: ``run`` then finishes.)"""
    owner, name, mode = point
    with Interrupt(owner, name, mode, at) as injected:
        try:
            in_main_thread(run, TIMEOUT, what)
        except KeyboardInterrupt:
            assert injected.fired, f"{what}: a KeyboardInterrupt nobody injected"


@pytest.mark.parametrize("read", list(READS))
def test_an_interrupted_read_leaves_the_process_usable(
    read: str, pristine: Path, baseline: dict[str, Any], tmp_path: Path
) -> None:
    run = READS[read][0]
    counts = _calls(lambda: run(ls.dataset(pristine)))
    for point, pid, calls in zip(POINTS, _POINT_IDS, counts, strict=True):
        for at in _spread(calls):
            where = f"{read} interrupted at {pid} call {at}/{calls}"
            _interrupted(point, at, lambda: run(ls.dataset(pristine)), where)
            got = in_main_thread(
                lambda: run(ls.dataset(pristine)), TIMEOUT, f"{read} after {where}"
            )
            assert _value(got) == _value(baseline[read]), where
        _engine_works()
    _usable(pristine, baseline, tmp_path, f"{read} interrupted everywhere")


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_an_interrupted_mutation_commits_all_or_nothing_and_leaves_the_process_usable(
    mutation: str,
    pristine: Path,
    baseline: dict[str, Any],
    outcomes: dict[str, Any],
    tmp_path: Path,
) -> None:
    mutate = MUTATIONS[mutation]
    before = _content(pristine)
    after = outcomes[mutation]
    counts = _calls(lambda: mutate(ls.dataset(_copy(pristine, tmp_path / "count"))))
    for point, pid, calls in zip(POINTS, _POINT_IDS, counts, strict=True):
        for at in _spread(calls):
            where = f"{mutation} interrupted at {pid} call {at}/{calls}"
            copy = _copy(pristine, tmp_path / "t")
            ds = ls.dataset(copy)
            _interrupted(point, at, lambda ds=ds: mutate(ds), where)
            state = _content(copy)
            assert state in (before, after), f"{where}: the table is half changed"
        if calls and state == before:  # untouched: the same handle still commits
            in_main_thread(lambda ds=ds: mutate(ds), TIMEOUT, f"{mutation} after {where}")
            assert _content(copy) == after, where
        _engine_works()
    _usable(pristine, baseline, tmp_path, f"{mutation} interrupted everywhere")


# ---- a Ctrl-C while a to_batches() generator is suspended ----

#: streams of every read path, each suspended after its first batch
STREAMS: dict[str, Callable[[Any], Any]] = {
    "scan": lambda ds: ds.to_batches(batch_size=256),
    "small fragments": lambda ds: ds.to_batches(batch_size=4096),
    "sql filter": lambda ds: ds.to_batches(filter="id % 7 = 3 OR s LIKE 's2%'", batch_size=64),
    "kernel filter": lambda ds: ds.to_batches(filter="id > 20", batch_size=64),
    "sql projection": lambda ds: ds.to_batches(columns={"x": "id * 2"}, batch_size=256),
    "window": lambda ds: ds.to_batches(offset=15, limit=2000, batch_size=256),
    "scanner": lambda ds: ds.scanner(
        filter="id > 5", with_row_id=True, batch_size=128
    ).to_batches(),
}


def _drop(it: Any) -> None:
    del it
    gc.collect()


#: what becomes of the suspended stream after the interrupt
ENDINGS: dict[str, Callable[[Any], None]] = {
    "closed": lambda it: it.close(),
    "dropped": _drop,
    "interrupt thrown in": lambda it: pytest.raises(KeyboardInterrupt, it.throw, KeyboardInterrupt),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("stream", list(STREAMS))
def test_a_stream_suspended_by_a_ctrl_c_and_then_ended_leaves_the_process_usable(
    stream: str, ending: str, pristine: Path, baseline: dict[str, Any], tmp_path: Path
) -> None:
    it = STREAMS[stream](ls.dataset(pristine))
    first = next(it)
    assert first.num_rows
    try:
        raise KeyboardInterrupt  # (the consumer's own code, with the stream suspended)
    except KeyboardInterrupt:
        pass
    # while it is suspended, nothing it holds keeps other reads waiting
    in_thread(lambda: READS["sql filter"][0](ls.dataset(pristine)), TIMEOUT, "a read meanwhile")
    ENDINGS[ending](it)
    _usable(pristine, baseline, tmp_path, f"{stream} suspended, then {ending}", mutation=False)
