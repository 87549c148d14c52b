"""``storage.datafile.read_whole``: the reads of many small fragments, borrowed first and run
back to back. Every request gets its own rows exactly; a damaged file at
any position of the requests, found when its reader is opened or when its rows are read,
is a ``CorruptTableError`` naming that file and no other; and the readers borrowed are
given back, so the undamaged files read on afterwards, on this thread and on others."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from tests.integrity_support import damage

from lance_semantic.errors import CorruptTableError
from lance_semantic.storage import datafile
from lance_semantic.storage.datafile import DataFileReader, opened_file
from lance_semantic.storage.object_store import LocalObjectStore, ObjectStore

pytestmark = pytest.mark.interop

FILES = 7
ROWS = [1, 5, 64, 3, 100, 2, 9]  # a different row count per file


def _table(root: Path) -> tuple[ObjectStore, list[DataFileReader], list[pa.Table]]:
    """A pylance table of one fragment per file, each file opened (its metadata known)."""
    uri = str(root / "t.lance")
    parts = []
    for k, n in enumerate(ROWS):
        part = pa.table(
            {
                "id": pa.array(range(k * 1000, k * 1000 + n), pa.int64()),
                "s": [f"v{k}-{i}" * (i % 4) for i in range(n)],
                "f": pa.array([float(i) / 3 for i in range(n)], pa.float64()),
            }
        )
        lance.write_dataset(part, uri, mode="append" if k else "create")
        parts.append(part)
    store: ObjectStore = LocalObjectStore(uri)
    names = [f.data_files()[0].path for f in lance.dataset(uri).get_fragments()]
    return store, [opened_file(store, name) for name in names], parts


@pytest.mark.parametrize("columns", [None, ["id"], ["s", "f"], ["f", "id"]])
def test_every_request_gets_its_own_rows(tmp_path: Path, columns: list[str] | None) -> None:
    _, files, parts = _table(tmp_path)
    # every order, and a file asked for twice in one call
    order = [4, 0, 6, 1, 1, 3, 5, 2]
    got = datafile.read_whole([(files[k], columns, ROWS[k]) for k in order])
    for k, batch in zip(order, got, strict=True):
        want = parts[k] if columns is None else parts[k].select(columns)
        assert pa.Table.from_batches([batch]).equals(want)
    assert datafile.read_whole([]) == []


@pytest.mark.parametrize("how", ["missing", "zero", "cut-half", "garbage-body"])
@pytest.mark.parametrize("at", [0, 3, FILES - 1])
@pytest.mark.parametrize("warm", [False, True])
def test_a_damaged_file_anywhere_names_that_file(
    tmp_path: Path, how: str, at: int, warm: bool
) -> None:
    """``warm``: the file's readers were opened before the damage (found by the read, not
    by the open), else they are opened by this call."""
    _, files, parts = _table(tmp_path)
    columns = ["s", "id"]
    requests = [(f, columns, n) for f, n in zip(files, ROWS, strict=True)]
    if warm:
        datafile.read_whole(requests)
    target = Path(files[at].path)
    damage(target, how)
    if warm:
        # an open reader of a small file holds all of its bytes (pylance reads a file's
        # tail, here the whole file, when it opens it): either the rows read are the
        # file's own rows, or the read fails naming the file
        try:
            got = datafile.read_whole(requests)
        except CorruptTableError as e:
            assert e.path == str(target), e
        else:
            assert pa.Table.from_batches([got[at]]).equals(parts[at].select(columns))
    else:
        with pytest.raises(CorruptTableError) as e:
            datafile.read_whole(requests)
        assert e.value.path == str(target), e.value
        assert str(target) in str(e.value)
    # the undamaged files still read, here and on other threads (their readers given back)
    others = [r for k, r in enumerate(requests) if k != at]

    def read() -> list[pa.RecordBatch]:
        return datafile.read_whole(others)

    with ThreadPoolExecutor(4) as pool:
        results = [pool.submit(read) for _ in range(8)]
        results.append(pool.submit(read))
        for result in results:
            got = result.result()
            want = [p.select(columns) for k, p in enumerate(parts) if k != at]
            for batch, table in zip(got, want, strict=True):
                assert pa.Table.from_batches([batch]).equals(table)


BIG = 30_000  # rows of a file larger than the tail an open reader holds (about 650 kB)


@pytest.mark.parametrize("how", ["zero", "cut-half", "garbage-body"])
@pytest.mark.parametrize("at", [0, 2, 4])
def test_a_damaged_file_found_by_its_read_names_that_file(
    tmp_path: Path, how: str, at: int
) -> None:
    """Files whose open readers do not hold their bytes, damaged after the readers are
    open: the read itself fails (as it is started or as its batch is taken, all reads of
    the call being started before any batch is taken), and the error names that file
    whichever position it has among small and large files; the others read on."""
    uri = str(tmp_path / "t.lance")
    sizes = [BIG, 7, BIG, 3, BIG]
    parts = []
    for k, n in enumerate(sizes):
        part = pa.table(
            {
                "id": pa.array(range(k * BIG, k * BIG + n), pa.int64()),
                "s": [f"value-{k}-{i}" * 3 for i in range(n)],
            }
        )
        lance.write_dataset(part, uri, mode="append" if k else "create")
        parts.append(part)
    store: ObjectStore = LocalObjectStore(uri)
    names = [f.data_files()[0].path for f in lance.dataset(uri).get_fragments()]
    files = [opened_file(store, name) for name in names]
    requests = [(f, ["s", "id"], n) for f, n in zip(files, sizes, strict=True)]
    datafile.read_whole(requests)  # every reader open and warm
    target = Path(files[at].path)
    damage(target, how)
    with pytest.raises(CorruptTableError) as e:
        datafile.read_whole(requests)
    assert e.value.path == str(target), e.value
    others = [r for k, r in enumerate(requests) if k != at]
    got = datafile.read_whole(others)
    want = [p.select(["s", "id"]) for k, p in enumerate(parts) if k != at]
    for batch, table in zip(got, want, strict=True):
        assert pa.Table.from_batches([batch]).equals(table)
