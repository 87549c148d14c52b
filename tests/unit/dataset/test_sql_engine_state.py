"""The SQL evaluators keep nothing of the batches they evaluate.

A batch handed to DataFusion under a name stays registered in its session until it is
deregistered: ``ColumnExpression`` (SQL projections of every scan, ``add_columns``)
registered each batch under a fresh name and never dropped it, so a scan held every batch
it had evaluated; and an interrupt between registering and deregistering left a name that
every later evaluation on that thread clashed with (``tests/interop/test_interrupts.py``).
The class here: every evaluator, evaluated over many batches, leaves the process's memory
where it was.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest

from lance_semantic.query.expressions import MatchCondition, SqlExpression
from lance_semantic.query.projection import ColumnExpression, is_null_cast

ROWS = 500_000  # 4 MB a column
BATCHES = 40


def _batch(i: int) -> pa.RecordBatch:
    ids = np.arange(i, i + ROWS)
    return pa.record_batch({"id": ids, "f": ids.astype(np.float64)})


SCHEMA = _batch(0).schema


def _rss() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _match(batch: pa.RecordBatch) -> pa.Array:
    table = pa.Table.from_batches([batch])
    return MatchCondition("target.id < source.f").mask(table, table)


#: every evaluator of the library, each evaluated over one batch
EVALUATORS: dict[str, Callable[[pa.RecordBatch], object]] = {
    "update value": SqlExpression("id * 2 + f").evaluate,
    "filter": SqlExpression("id % 7 = 3 OR f < 0", is_filter=True).evaluate,
    "new column": ColumnExpression("x", "id * 2", SCHEMA).evaluate,
    "merge condition": _match,
    "null cast": lambda b: is_null_cast("CAST(NULL AS int)", b.schema),
}


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc")
@pytest.mark.parametrize("evaluator", list(EVALUATORS))
def test_an_evaluator_holds_no_batch_once_it_returns(evaluator: str) -> None:
    evaluate = EVALUATORS[evaluator]
    evaluate(_batch(0))  # (the session and the parse made first)
    gc.collect()
    before = _rss()
    for i in range(BATCHES):
        evaluate(_batch(i))
    gc.collect()
    grown = _rss() - before
    held = BATCHES * _batch(0).nbytes
    assert grown < held / 4, f"{evaluator}: {grown >> 20} MiB kept after {held >> 20} MiB"
