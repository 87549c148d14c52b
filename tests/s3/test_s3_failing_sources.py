"""A caller's source that fails mid-stream on S3 while the store refuses every DELETE
(issue 29 item 4; tests/interop/test_failing_sources.py is the local class test over
every path, this is its S3 side, a few paths).

The proxy (tests/s3/faulty_proxy.py) answers every DELETE 403 AccessDenied. The caller
sees the source's own error, the table keeps its version and rows, and the objects left
behind are exactly those logged as not removed (``record.uncommitted_file``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import lance
import pyarrow as pa
import pytest
from tests.s3.faulty_proxy import FaultyProxy, ProxiedRequest
from tests.s3.seaweed import SeaweedServer

import lance_semantic as ls
from lance_semantic.storage.object_store import open_store


class SourceBroke(RuntimeError):
    """The distinctive error of the caller's source."""


def _rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": pa.array([f"s{i}" for i in ids])})


def _failing_rows(error: BaseException, after: int) -> pa.RecordBatchReader:
    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(after):
            yield _rows(1000 + 10 * i, 2).to_batches()[0]
        raise error

    return pa.RecordBatchReader.from_batches(_rows(0, 1).schema, batches())


def _failing_udf(error: BaseException, after: int) -> Callable[[pa.RecordBatch], pa.RecordBatch]:
    calls = 0

    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        nonlocal calls
        calls += 1
        if calls > after + 1:  # (call 1 is the one-row sample)
            raise error
        ids = batch.column("id").to_pylist()
        return pa.record_batch([pa.array([2 * i for i in ids], pa.int64())], names=["d"])

    return udf


#: (uri, storage options, the source's error, flagged) -> the write
Write = Callable[[str, dict[str, str], BaseException, bool], object]

PATHS: dict[str, Write] = {
    "create": lambda uri, o, e, flagged: ls.write_dataset(
        _failing_rows(e, 3), uri, max_rows_per_file=3, semantic_types=flagged, storage_options=o
    ),
    "append": lambda uri, o, e, _: ls.write_dataset(
        _failing_rows(e, 3), uri, mode="append", max_rows_per_file=3, storage_options=o
    ),
    "write_fragments": lambda uri, o, e, _: ls.fragment.write_fragments(
        _failing_rows(e, 1), uri, storage_options=o
    ),
    "add_columns_udf": lambda uri, o, e, _: ls.dataset(uri, storage_options=o).add_columns(
        _failing_udf(e, 2), ["id"]
    ),
}


def _objects(uri: str, options: dict[str, str]) -> set[str]:
    return {f.path for f in open_store(uri, options).walk("")}


def _is_delete(request: ProxiedRequest) -> bool:
    return request.method == "DELETE" or (request.method == "POST" and "delete" in request.query)


@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
@pytest.mark.parametrize("path", list(PATHS))
def test_a_failing_source_on_s3_surfaces_its_own_error(
    s3_server: SeaweedServer,
    s3_proxy: FaultyProxy,
    caplog: pytest.LogCaptureFixture,
    path: str,
    flagged: bool,
) -> None:
    uri = s3_server.uri()
    direct = s3_server.storage_options
    proxied = s3_proxy.storage_options(direct)
    if path != "create":
        ls.write_dataset(
            _rows(0, 8), uri, max_rows_per_file=2, semantic_types=flagged, storage_options=direct
        )
    before = _objects(uri, direct)
    version = ls.dataset(uri, storage_options=direct).version if before else None
    error = SourceBroke(f"{path} broke")
    s3_proxy.reset()
    with caplog.at_level(logging.WARNING, logger="lance_semantic"):
        with s3_proxy.refusing(_is_delete), pytest.raises(SourceBroke) as raised:
            PATHS[path](uri, proxied, error, flagged)
        s3_proxy.settle()
    assert raised.value is error
    refused = [r for r in s3_proxy.requests if _is_delete(r)]
    assert refused and all(r.status == 403 for r in refused)
    after = _objects(uri, direct)
    assert before <= after
    left = after - before
    logged = {r.uncommitted_file for r in caplog.records if hasattr(r, "uncommitted_file")}
    assert left and left == logged
    if version is not None:
        ds = ls.dataset(uri, storage_options=direct)
        assert ds.version == version and ds.count_rows() == 8
        if not flagged:
            assert lance.dataset(uri, storage_options=direct).count_rows() == 8
