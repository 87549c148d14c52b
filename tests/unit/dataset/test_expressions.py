"""SQL expressions line up with their batch row for row (a DataFusion plan with several
partitions returned the rows of batches over 8,192 rows out of order)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lance_semantic.errors import InvalidExpressionError
from lance_semantic.query.expressions import SqlExpression, referenced_columns


def test_results_keep_row_order_for_large_batches() -> None:
    n = 200_000
    batch = pa.record_batch({"a": pa.array(np.arange(n))})
    got = SqlExpression("a * 2").evaluate(batch)
    assert np.array_equal(got.to_numpy(), np.arange(n) * 2)
    mask = SqlExpression("a % 7 = 3").evaluate(batch)
    assert np.array_equal(np.flatnonzero(mask.to_numpy(zero_copy_only=False)), np.arange(3, n, 7))


def test_invalid_expression_names_the_expression() -> None:
    batch = pa.record_batch({"a": [1]})
    with pytest.raises(InvalidExpressionError) as err:
        SqlExpression("nosuch > 1").evaluate(batch)
    assert err.value.expression == "nosuch > 1"


def test_referenced_columns_skips_string_literals() -> None:
    assert referenced_columns("a > 1 AND b = 'c d'", ["a", "b", "c", "d"]) == ["a", "b"]
    assert referenced_columns('"c" IS NULL', ["a", "c"]) == []  # a string literal
    assert referenced_columns("`c` IS NULL AND A > 1", ["a", "c"]) == ["a", "c"]


def test_match_condition_sees_target_and_source_columns() -> None:
    from lance_semantic.query.expressions import MatchCondition

    target = pa.table({"v": [1, 5, None], "k": ["a", "b", "c"]})
    source = pa.table({"v": [2, 4, 9], "k": ["a", "b", "c"]})
    mask = MatchCondition("target.v < source.v").mask(target, source)
    assert mask.to_pylist() == [True, False, False]  # null compares as not satisfied
