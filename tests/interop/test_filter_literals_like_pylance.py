"""A filter that compares a column with a literal its type cannot hold unchanged is
refused, as pylance 14 refuses it; every other filter gives pylance's rows.
The matrix crosses column types (signed, unsigned and narrow integers, floats,
strings, booleans, dates, timestamps) with literal kinds and positions (either side, IN,
BETWEEN, under AND / OR / NOT, arithmetic)."""

from __future__ import annotations

import datetime

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

CASES = [
    "i > '3'", "i = 2.0", "i > 1.5", "i8 < 300", "i8 = -1", "i8 > -129", "u = -1", "u > 1",
    "u >= 0", "f > 1", "f = 2", "f > '1'", "f32 > 1.5", "s = 1", "s = 'a'", "b = 1",
    "b = true", "b = 'true'", "d > '2019-01-01'", "d > 1", "d > date '2019-01-01'",
    "ts > '2019-01-01'", "ts > timestamp '2019-01-01 00:00:00'", "i IN (1, '2')",
    "i IN (1, 2.5)", "i NOT IN (1, '2')", "i BETWEEN 1 AND 2.5", "i BETWEEN 1 AND 2",
    "'3' < i", "i + 1 > '3'", "i > NULL", "s IS NULL", "i = -1", "i > 1e3",
    "i > 9223372036854775807", "i8 + 300 > 1", "s > 3 - 1", "i = 1 OR s = 2",
    "NOT (i > '2')", "i IS NOT NULL AND s = 2", "(i > 1 AND (s = 'b' OR f = '2'))",
]  # fmt: skip


@pytest.fixture(scope="module")
def uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    day = datetime.date(2020, 1, 1)
    table = pa.table(
        {
            "i": pa.array([1, 2, 3], pa.int64()),
            "i8": pa.array([1, 2, 3], pa.int8()),
            "u": pa.array([1, 2, 3], pa.uint32()),
            "f": [1.0, 2.5, 3.0],
            "f32": pa.array([1.0, 2.0, 3.0], pa.float32()),
            "s": ["a", "b", None],
            "b": [True, False, True],
            "d": pa.array([day, day, None]),
            "ts": pa.array([datetime.datetime(2020, 1, 1)] * 3),
        }
    )
    path = str(tmp_path_factory.mktemp("literals") / "t")
    lance.write_dataset(table, path)
    return path


@pytest.mark.parametrize("flt", CASES)
def test_filter_literals_are_refused_where_pylance_refuses_them(uri: str, flt: str) -> None:
    theirs, ours = lance.dataset(uri), ls.dataset(uri)
    try:
        want = theirs.to_table(filter=flt)
    except ValueError as e:
        assert "could not convert to literal" in str(e)
        for call in (
            lambda: ours.to_table(filter=flt),
            lambda: ours.count_rows(flt),
            lambda: ours.delete(flt),
        ):
            with pytest.raises(ls.InvalidExpressionError, match="cannot be compared with column"):
                call()
        assert ls.dataset(uri).version == 1  # the refused delete committed nothing
        return
    assert ours.to_table(filter=flt).equals(want)
    assert ours.count_rows(flt) == want.num_rows
