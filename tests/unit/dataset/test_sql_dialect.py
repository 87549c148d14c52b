"""Lance's SQL dialect re-spelled for DataFusion, token by token (``sql_dialect``)."""

from __future__ import annotations

import pytest

from lance_semantic.query.sql_dialect import referenced_names, to_datafusion

_NAMES = ["userId", "a", "A", "St", "has space", "count", "x"]


@pytest.mark.parametrize(
    ("sql", "spelled"),
    [
        ("userId > 1", '"userId" > 1'),
        ("USERID > 1", '"userId" > 1'),  # the only column equal but for case
        ("a > 1 AND A < 2", '"a" > 1 AND "A" < 2'),  # each exactly
        ("`has space` = 1", '"has space" = 1'),
        ("St.InN = 1", '"St"."InN" = 1'),  # a member is named as written
        ('x = "it\'s"', "\"x\" = 'it''s'"),  # double quotes: a string literal
        ("x = 'userId'", "\"x\" = 'userId'"),  # single-quoted strings untouched
        ("count > 1 AND count(x) > 0", '"count" > 1 AND count("x") > 0'),  # a function
        ("CAST(x AS A) IS NULL", 'CAST("x" AS A) IS NULL'),  # a type name
        ("x > DATE '2024-01-01'", "\"x\" > DATE '2024-01-01'"),  # a typed literal
        ("x > INTERVAL '1' DAY AND 'a' < A", "\"x\" > INTERVAL '1' DAY AND 'a' < \"A\""),
        ("nosuch > 1 -- userId", "nosuch > 1 -- userId"),  # no column; comments untouched
        ("aa > 1", "aa > 1"),
    ],
)
def test_to_datafusion(sql: str, spelled: str) -> None:
    assert to_datafusion(sql, _NAMES) == spelled


def test_a_name_equal_to_several_columns_but_for_case_is_left_as_written() -> None:
    assert to_datafusion("USERID > 1", ["userid", "UserId"]) == "USERID > 1"


def test_referenced_names() -> None:
    assert referenced_names("USERID > 1 AND St.a = 'A' AND \"x\" = 1", _NAMES) == {"userId", "St"}
