"""A signal during pylance's reads interrupts them and never shortens them.

pylance 14's file reader ends a read early, with no error, when a signal handler raises
while the read waits for its data (a Ctrl-C: ``_thread.interrupt_main`` below is what the
terminal's SIGINT does); the ``KeyboardInterrupt`` is dropped. A scan then returned fewer
rows than the table has, silently, and a take a raw ``ArrowIndexError``. The class: every
way the storage layer reads a data file, and the table reads whose pylance calls run on the
calling thread, each with the signal sent at moments spread over the read: every attempt
is interrupted or gives every row, and the same process reads on afterwards.
"""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from tests.interrupt_support import in_main_thread

import lance_semantic as ls
from lance_semantic.storage import datafile
from lance_semantic.storage.object_store import open_store

pytestmark = pytest.mark.interop

#: seconds a guarded call may take before it counts as hung
TIMEOUT = 20.0


def _rows(ids: np.ndarray) -> pa.Table:
    return pa.table({"id": ids, "s": [f"s{i}" for i in ids], "f": ids.astype(np.float64) / 2})


#: attempts per read, the signal sent at moments spread over the read
ATTEMPTS = 10
#: rows of the large fragment (a read of it takes a while)
LARGE = 600_000


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fragment large enough that reading it takes a while, by pylance."""
    root = tmp_path_factory.mktemp("large") / "t"
    lance.write_dataset(_rows(np.arange(LARGE)), root, max_rows_per_file=1 << 20)
    return root


def _data_file(root: Path) -> datafile.DataFileReader:
    name = lance.dataset(root).get_fragments()[0].metadata.files[0].path
    return datafile.DataFileReader(open_store(str(root)), name)


#: every way the storage layer reads a data file, each on the calling thread
FILE_READS: dict[str, Callable[[datafile.DataFileReader], pa.Table]] = {
    "stream": lambda f: pa.Table.from_batches(list(f.read(None, 0, LARGE, 8192))),
    "take": lambda f: f.take(None, range(0, LARGE, 7)),
    "one read": lambda f: pa.Table.from_batches([f.read_all(None, 0, LARGE)]),
    "read_whole": lambda f: pa.Table.from_batches(datafile.read_whole([(f, None, LARGE)])),
}

#: reads of the table whose pylance calls run on the calling (main) thread
TABLE_READS: dict[str, Callable[[Any], pa.Table]] = {
    "stream": lambda ds: ds.to_table(batch_size=8192),
    "take": lambda ds: ds.take(np.arange(0, LARGE, 7)),
    "one read": lambda ds: ds.to_table(columns=["id", "f"], batch_size=1 << 20),
}


def _attempt(run: Callable[[], Any], after: float) -> tuple[str, Any]:
    """Runs ``run`` with SIGINT's handler raising ``KeyboardInterrupt`` ``after`` seconds
    into it (``_thread.interrupt_main``: what a Ctrl-C does); ("result", value) or
    ("interrupted", None). A signal arriving once ``run`` has returned is absorbed."""
    outcome: tuple[str, Any] = ("interrupted", None)
    timer = threading.Timer(after, _thread.interrupt_main)
    try:
        timer.start()
        try:
            outcome = ("result", run())
        except KeyboardInterrupt:
            pass
        timer.join()
        time.sleep(0.01)  # (a signal sent after ``run`` returned is raised here)
    except KeyboardInterrupt:
        pass
    return outcome


def _signalled(run: Callable[[], pa.Table], what: str) -> None:
    """``run`` with a signal at moments spread over it: each attempt is interrupted or
    gives every row; and then it still works."""
    want = run()
    started = time.perf_counter()
    run()
    took = time.perf_counter() - started
    interrupted = 0
    for i in range(ATTEMPTS):
        kind, got = _attempt(run, took * (i + 0.5) / ATTEMPTS)
        interrupted += kind == "interrupted"
        if kind == "result":
            assert got.num_rows == want.num_rows and got.equals(want), (
                f"{what}: a signal {i + 0.5}/{ATTEMPTS} into the read cut it to "
                f"{got.num_rows} of {want.num_rows} rows"
            )
    assert interrupted, f"{what}: no attempt was interrupted (the signals came too late)"
    assert in_main_thread(run, TIMEOUT, f"{what} after the signals").equals(want)


@pytest.mark.parametrize("read", list(FILE_READS))
def test_a_signal_during_a_data_file_read_interrupts_it_and_never_shortens_it(
    read: str, large: Path
) -> None:
    """pylance's file reader ends a read early, silently, when a signal handler raises
    while it waits: each of our reads is then a ``KeyboardInterrupt``, never fewer rows."""
    file = _data_file(large)
    _signalled(lambda: FILE_READS[read](file), read)


@pytest.mark.parametrize("read", list(TABLE_READS))
def test_a_signal_during_a_table_read_interrupts_it_and_never_shortens_it(
    read: str, large: Path
) -> None:
    ds = ls.dataset(large)
    _signalled(lambda: TABLE_READS[read](ds), read)


@pytest.fixture(scope="module")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One large fragment with a blob v2 column (read through pylance's table reader)."""
    from lance.blob import blob_array, blob_field

    root = tmp_path_factory.mktemp("blobs") / "t"
    n = LARGE // 2
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("b")])
    values = blob_array([b"x" * (i % 50) for i in range(n)])
    table = pa.table({"id": pa.array(range(n)), "b": values}, schema=schema)
    lance.write_dataset(table, root, max_rows_per_file=1 << 20)
    return root


#: reads of blob descriptors (pylance's table reader, which reports a signal as an error)
BLOB_READS: dict[str, Callable[[Any], pa.Table]] = {
    "stream": lambda ds: ds.to_table(batch_size=8192),
    "take": lambda ds: ds.take(np.arange(0, LARGE // 2, 5)),
}


@pytest.mark.parametrize("read", list(BLOB_READS))
def test_a_signal_during_a_read_of_blob_descriptors_is_an_interrupt(read: str, blobs: Path) -> None:
    """Never pylance's ``ArrowInvalid: External error: KeyboardInterrupt``, nor fewer rows."""
    ds = ls.dataset(blobs)
    _signalled(lambda: BLOB_READS[read](ds), f"blob {read}")
