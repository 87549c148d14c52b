"""A caller's source that fails mid-stream, while the store refuses every delete (issue 29
item 4; the class of issue 28 item 7).

Every write path that takes a caller's stream -- ``write_dataset`` create / append /
overwrite, ``Dataset.insert``, the first phase of a two-phase write
(``ls.fragment.write_fragments``), ``merge_insert``, ``add_columns`` with a batch function
or with a reader of new column values -- on a legacy and a flagged table, with plain rows
and with blob v2 rows (data files and sidecars), the source failing before its first
batch, inside a data file and after several files. The caller sees the SOURCE's error
(the very exception: class and message), never the delete's ``PermissionError``; the table
is as before (same version, schema and rows); the files left behind are exactly those the
library logged as not removed (``record.uncommitted_file``), and with deletes allowed no
file is left. Every version reads, ``ls.check`` is clean and pylance reads a legacy table.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from tests.fault_support import Faults

import lance_semantic as ls

pytestmark = pytest.mark.interop


class SourceBroke(RuntimeError):
    """The distinctive error of the caller's source."""


def _rows(start: int, n: int, blobs: bool) -> pa.Table:
    ids = list(range(start, start + n))
    if blobs:  # an inline, a packed (> 64 KiB) and a null value: data file and sidecars
        values = [bytes([i % 251]) * (70_000 if i % 2 else 10) if i % 5 else None for i in ids]
        schema = pa.schema([pa.field("id", pa.int64()), blob_field("b")])
        return pa.table({"id": pa.array(ids, pa.int64()), "b": blob_array(values)}, schema=schema)
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "s": pa.array([f"s{i}" for i in ids])},
    )


def _source(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(schema, batches)


def _failing_rows(error: BaseException, after: int, blobs: bool) -> pa.RecordBatchReader:
    """Batches of 2 rows; ``error`` instead of batch ``after``."""

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(after):
            yield _rows(1000 + 10 * i, 2, blobs).to_batches()[0]
        raise error

    return _source(_rows(0, 1, blobs).schema, batches())


def _failing_udf(error: BaseException, after: int) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    """A batch function that fails on its call ``after + 1`` (call 0 is pylance's and our
    one-row sample)."""
    calls = 0

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        nonlocal calls
        calls += 1
        if calls > after + 1:
            raise error
        ids = batch.column("id").to_pylist()
        return pa.RecordBatch.from_arrays([pa.array([2 * i for i in ids], pa.int64())], ["d"])

    return udf


def _failing_column(error: BaseException, after: int) -> pa.RecordBatchReader:
    """New column values, one batch per fragment of the prepared table (2 rows each)."""

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(after):
            yield pa.record_batch([pa.array([i, i], pa.int64())], names=["d"])
        raise error

    return _source(pa.schema([pa.field("d", pa.int64())]), batches())


#: (uri, the source's error, batches before it, blob rows, flagged) -> the write
Write = Callable[[str, BaseException, int, bool, bool], object]


def _merge(uri: str, error: BaseException, after: int, blobs: bool, _: bool) -> object:
    builder = ls.dataset(uri).merge_insert("id").when_matched_update_all()
    return builder.when_not_matched_insert_all().execute(_failing_rows(error, after, blobs))


#: path -> (the write, whether it writes files before its source fails)
PATHS: dict[str, tuple[Write, bool]] = {
    "create": (
        lambda uri, e, n, b, flagged: ls.write_dataset(
            _failing_rows(e, n, b), uri, max_rows_per_file=3, semantic_types=flagged
        ),
        True,
    ),
    "append": (
        lambda uri, e, n, b, _: ls.write_dataset(
            _failing_rows(e, n, b), uri, mode="append", max_rows_per_file=3
        ),
        True,
    ),
    "overwrite": (
        lambda uri, e, n, b, _: ls.write_dataset(
            _failing_rows(e, n, b), uri, mode="overwrite", max_rows_per_file=3
        ),
        True,
    ),
    "insert": (
        lambda uri, e, n, b, _: ls.dataset(uri).insert(_failing_rows(e, n, b), max_rows_per_file=3),
        True,
    ),
    "write_fragments": (
        lambda uri, e, n, b, _: ls.fragment.write_fragments(
            _failing_rows(e, n, b), uri, max_rows_per_file=3
        ),
        True,
    ),
    # merge_insert reads its whole source before it writes anything
    "merge_insert": (_merge, False),
    "add_columns_udf": (
        lambda uri, e, n, b, _: ls.dataset(uri).add_columns(_failing_udf(e, n), ["id"]),
        True,
    ),
    "add_columns_reader": (
        lambda uri, e, n, b, _: ls.dataset(uri).add_columns(_failing_column(e, n)),
        True,
    ),
}
#: paths that add a column rather than rows (their source holds no blobs)
_COLUMNS = ("add_columns_udf", "add_columns_reader")

CASES = [
    pytest.param(path, layout, rows, id=f"{path}-{layout}-{rows}")
    for path in PATHS
    for layout in ("legacy", "flagged")
    for rows in ("plain", "blobs")
    if not (rows == "blobs" and path in _COLUMNS)
]


def _prepare(uri: str, path: str, flagged: bool, blobs: bool) -> None:
    if path == "create":
        return
    # 4 fragments of 2 rows (add_columns writes one file per fragment)
    ls.write_dataset(_rows(0, 8, blobs), uri, max_rows_per_file=2, semantic_types=flagged)


def _state(uri: str) -> object:
    if not os.path.isdir(os.path.join(uri, "_versions")):
        return None
    ds = ls.dataset(uri)
    columns = [n for n in ds.schema.names if n != "b"]  # blob descriptors name files
    rows = sorted(ds.to_table(columns=columns).to_pylist(), key=lambda r: r["id"])
    return ds.version, str(ds.schema), ds.semantic_types, rows


def _files(uri: str) -> set[str]:
    out = set()
    for here, _, names in os.walk(uri):
        for name in names:
            out.add(os.path.relpath(os.path.join(here, name), uri).replace(os.sep, "/"))
    return out


def _forget_frames(error: BaseException) -> None:
    """Drop the frames the exception holds: an encoder's temp file goes with its writer."""
    e: BaseException | None = error
    while e is not None:
        e.__traceback__ = None
        e = e.__cause__ or e.__context__
    gc.collect()


def _logged(caplog: pytest.LogCaptureFixture) -> set[str]:
    return {
        r.uncommitted_file  # type: ignore[attr-defined]
        for r in caplog.records
        if hasattr(r, "uncommitted_file")
    }


#: (source error, batches before it): the distinctive error at every position -- before the
#: first batch, inside a data file, after whole files -- and Ctrl-C inside a file
FAILURES = [
    pytest.param(False, 0, id="error-first-batch"),
    pytest.param(False, 1, id="error-inside-a-file"),
    pytest.param(False, 3, id="error-files-later"),
    pytest.param(True, 1, id="ctrl-c-inside-a-file"),
]


#: deletes refused at every failure position; with deletes allowed (the owner's ordinary
#: path, which the local fault generator also covers) at the mid-file positions, unless
#: LANCE_SEMANTIC_FAILING_SOURCES=all
_ALL = os.environ.get("LANCE_SEMANTIC_FAILING_SOURCES") == "all"
FAILURE_MODES = [
    pytest.param(refuse, *f.values, id=f"{f.id}-{'deletes-refused' if refuse else 'deletes-ok'}")
    for refuse in (True, False)
    for f in FAILURES
    if refuse or _ALL or f.id in ("error-inside-a-file", "ctrl-c-inside-a-file")
]


@pytest.mark.parametrize(("refuse_deletes", "interrupt", "after"), FAILURE_MODES)
@pytest.mark.parametrize(("path", "layout", "rows"), CASES)
def test_a_failing_source_surfaces_its_own_error_and_moves_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    path: str,
    layout: str,
    rows: str,
    interrupt: bool,
    after: int,
    refuse_deletes: bool,
) -> None:
    uri = str(tmp_path / "t")
    blobs = rows == "blobs"
    flagged = layout == "flagged"
    _prepare(uri, path, flagged, blobs)
    before, files_before = _state(uri), _files(uri)
    error: BaseException = KeyboardInterrupt() if interrupt else SourceBroke(f"{path} broke")
    write, writes_first = PATHS[path]
    faults = Faults(refuse_deletes=refuse_deletes)
    with caplog.at_level(logging.WARNING, logger="lance_semantic"):
        with faults.installed(monkeypatch), pytest.raises(type(error)) as raised:
            write(uri, error, after, blobs, flagged)
    assert raised.value is error  # the source's own error, not the delete's
    wrote = any(c.kind == "write" for c in faults.calls)
    assert wrote == (writes_first and after > 0), [str(c) for c in faults.calls]
    _forget_frames(raised.value)
    assert _state(uri) == before  # the version did not move
    left = _files(uri) - files_before
    assert files_before <= _files(uri)  # nothing of the table before is lost
    assert left == _logged(caplog)  # what is left is exactly what was logged
    if refuse_deletes:
        assert all(not f.startswith("_versions") for f in left)
        if wrote:
            assert left  # the refusals were met: a data file at least stays
    else:
        assert not left
    if before is not None:
        ds = ls.dataset(uri)
        for v in ds.versions():
            report = ls.check(uri, version=v["version"])
            assert report.ok, (v["version"], report.problems)
        if not ds.semantic_types:
            assert lance.dataset(uri).count_rows() == ds.count_rows()
