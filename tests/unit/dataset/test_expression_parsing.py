"""Every user SQL expression is parsed as exactly one expression, never pasted into SQL
text: injection strings are an ``InvalidExpressionError`` at every
expression entry point, and the table's version does not move."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import InvalidExpressionError

ROWS = pa.table({"id": pa.array(range(10), pa.int64()), "v": pa.array([1.0] * 10)})
SOURCE = pa.table({"id": pa.array([1, 2, 20], pa.int64()), "v": pa.array([5.0, 6.0, 7.0])})

INJECTIONS = {
    "union": "1=0 UNION SELECT 3",
    "second_statement": "1=0; DELETE FROM t",
    "line_comment_after_closing_the_wrapper": "1=0) OR 1=1 --",
    "block_comment_hiding_a_union": "1=0 /* x */ UNION /* y */ SELECT 3",
    "unbalanced_paren_closing_the_wrapper": "1=0) OR (1=1",
    "scalar_subquery": "(SELECT 1) = 1",
    "in_subquery": "id IN (SELECT 1)",
    "exists_subquery": "EXISTS (SELECT 1)",
    "order_by_tail": "1=0 ORDER BY 1",
}

ENTRY_POINTS: dict[str, Callable[[Any, str], object]] = {
    "to_table_filter": lambda ds, e: ds.to_table(filter=e),
    "count_rows_filter": lambda ds, e: ds.count_rows(filter=e),
    "delete_predicate": lambda ds, e: ds.delete(e),
    "update_where": lambda ds, e: ds.update({"v": "v + 1"}, where=e),
    "update_value": lambda ds, e: ds.update({"v": e}),
    "merge_insert_condition": lambda ds, e: (
        ds.merge_insert("id").when_matched_update_all(e.replace("id", "target.id")).execute(SOURCE)
    ),
    "merge_insert_by_source_delete": lambda ds, e: (
        ds.merge_insert("id").when_not_matched_by_source_delete(e).execute(SOURCE)
    ),
    "add_columns_sql": lambda ds, e: ds.add_columns({"w": e}),
    "sql_projection": lambda ds, e: ds.to_table(columns={"w": e}),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("name", list(INJECTIONS))
def test_an_injection_string_is_an_invalid_expression_and_moves_no_version(
    tmp_path: Path, entry: str, name: str
) -> None:
    ds = ls.write_dataset(ROWS, str(tmp_path / "t"))
    with pytest.raises(InvalidExpressionError):
        ENTRY_POINTS[entry](ds, INJECTIONS[name])
    assert ds.version == 1
    assert ls.dataset(str(tmp_path / "t")).version == 1
    assert ls.dataset(str(tmp_path / "t")).to_table() == ROWS


def test_a_false_merge_condition_updates_nothing(tmp_path: Path) -> None:
    """The condition is evaluated over the matched pairs: false pairs stay as they were."""
    ds = ls.write_dataset(ROWS, str(tmp_path / "t"))
    b = ds.merge_insert("id").when_matched_update_all("target.v > source.v")
    assert b.execute(SOURCE).num_updated_rows == 0
    b = ds.merge_insert("id").when_matched_update_all("source.v > 5.5 AND target.id = 2")
    assert b.execute(SOURCE).num_updated_rows == 1
    assert ds.to_table(filter="id = 2").column("v").to_pylist() == [6.0]
    assert ds.to_table(filter="id = 1").column("v").to_pylist() == [1.0]


@pytest.mark.parametrize(
    "sql, ids",
    [
        ("id < 3 -- ) OR (1=1", [0, 1, 2]),  # a comment is only a comment
        ("id < 3 /* ) OR (1=1 */", [0, 1, 2]),
        ("id = 1 OR id BETWEEN 3 AND 4 OR id = 9", [1, 3, 4, 9]),
        ("CASE WHEN id = 1 OR id = 2 THEN true ELSE false END", [1, 2]),
        ("'a OR b' = 'a OR b' AND id = 5", [5]),
    ],
)
def test_an_expression_with_comments_strings_and_between_keeps_its_meaning(
    tmp_path: Path, sql: str, ids: list[int]
) -> None:
    ds = ls.write_dataset(ROWS, str(tmp_path / "t"))
    assert ds.to_table(filter=sql).column("id").to_pylist() == ids
