"""``columns`` as a mapping of output names to SQL expressions (``to_table``,
``to_batches``, ``take``, ``Fragment.to_table`` / ``to_batches``), against stock pylance 14
as the oracle on a legacy table: output names and order, Arrow types (Lance's literal
coercion: ``x * 2`` on int32 stays int32), nullability, field and schema metadata (a bare
field path is that field under the new name), nested paths, filters (over the table's
columns, not the projected names), limit and offset; bad expressions raise
``InvalidExpressionError`` where pylance raises ``ValueError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import InvalidExpressionError

pytestmark = pytest.mark.interop

ST = pa.struct([("a", pa.int32()), ("b", pa.string())])
SCHEMA = pa.schema(
    [
        pa.field("x", pa.int32(), nullable=False, metadata={"unit": "m"}),
        pa.field("n", pa.int64()),
        pa.field("s", pa.string()),
        pa.field("st", ST),
        pa.field("f", pa.float64()),
    ],
    metadata={"owner": "tests"},
)
ROWS = 7


def _data() -> pa.Table:
    r = range(ROWS)
    return pa.Table.from_pydict(
        {
            "x": [i + 1 for i in r],
            "n": [None if i % 3 == 1 else i * 10 for i in r],
            "s": [chr(ord("a") + i) for i in r],
            "st": [{"a": i, "b": f"b{i}"} for i in r],
            "f": [i + 0.5 for i in r],
        },
        schema=SCHEMA,
    )


@pytest.fixture(params=["written_by_pylance", "written_by_us"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A legacy table of three fragments with a deleted row, written by either library."""
    path = str(tmp_path / "t")
    if request.param == "written_by_pylance":
        lance.write_dataset(_data(), path, max_rows_per_file=3).delete("x = 2")
    else:
        ls.write_dataset(_data(), path, max_rows_per_file=3).delete("x = 2")
    assert not ls.dataset(path).semantic_types
    assert len(ls.dataset(path).get_fragments()) == 3
    return path


READS: dict[str, dict[str, Any]] = {
    "expressions_and_paths": {"columns": {"y": "x * 2", "s": "s", "z": "n + 1"}},
    "order_as_given": {"columns": {"s": "s", "y": "x * 2", "x": "x"}},
    "renamed_with_metadata": {"columns": {"length": "x", "c": "x * 0 + 1"}},
    "nested_paths": {"columns": {"a": "st.a", "b2": "concat(st.b, 'z')", "st.a": "st.a"}},
    "whole_struct": {"columns": {"q": "st", "b": "st.b = 'b3'"}},
    "same_name_expression": {"columns": {"x": "x + 1"}},
    "types": {"columns": {"c": "CAST(x AS BIGINT)", "g": "f * 2", "t": "s = 'b'", "u": "x + x"}},
    "filter": {"columns": {"y": "x * 2"}, "filter": "x > 2"},
    "filter_on_other_columns": {"columns": {"y": "s"}, "filter": "st.a > 1 AND n IS NOT NULL"},
    "filter_limit_offset": {"columns": {"y": "x * 2"}, "filter": "x > 1", "limit": 3, "offset": 1},
    "limit_offset": {"columns": {"y": "x * 2", "s": "s"}, "limit": 2, "offset": 3},
    "no_columns": {"columns": {}},
    "no_columns_filtered": {"columns": {}, "filter": "x > 3"},
}


def _same(got: pa.Table, expected: pa.Table, *, schema_metadata: bool = True) -> None:
    if not schema_metadata:
        got = got.replace_schema_metadata(None)
        expected = expected.replace_schema_metadata(None)
    assert got.schema.equals(expected.schema, check_metadata=True), (got.schema, expected.schema)
    assert [f.nullable for f in got.schema] == [f.nullable for f in expected.schema]
    assert got.num_rows == expected.num_rows
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("read", list(READS))
def test_to_table_with_sql_projections_as_pylance(uri: str, read: str) -> None:
    kwargs = READS[read]
    _same(ls.dataset(uri).to_table(**kwargs), lance.dataset(uri).to_table(**kwargs))


@pytest.mark.parametrize("read", ["expressions_and_paths", "nested_paths", "filter"])
def test_to_batches_with_sql_projections_as_pylance(uri: str, read: str) -> None:
    kwargs = READS[read]
    ours = list(ls.dataset(uri).to_batches(**kwargs, batch_size=2))
    theirs = list(lance.dataset(uri).to_batches(**kwargs, batch_size=2))
    assert all(b.num_rows <= 2 for b in ours)
    expected = pa.Table.from_batches(theirs)
    _same(pa.Table.from_batches(ours, schema=expected.schema), expected)
    assert all(b.schema.equals(expected.schema, check_metadata=True) for b in ours)


def test_fragment_reads_with_sql_projections_as_pylance(uri: str) -> None:
    columns = {"y": "x * 2", "a": "st.a"}
    ours, theirs = ls.dataset(uri).get_fragments(), lance.dataset(uri).get_fragments()
    for mine, ref in zip(ours, theirs, strict=True):
        _same(mine.to_table(columns=columns), ref.to_table(columns=columns))
        _same(
            mine.to_table(columns=columns, filter="x % 2 = 1"),
            ref.to_table(columns=columns, filter="x % 2 = 1"),
        )
        got = pa.Table.from_batches(list(mine.to_batches(columns=columns)))
        _same(got, pa.Table.from_batches(list(ref.to_batches(columns=columns))))


@pytest.mark.parametrize(
    "columns",
    [{"a": "st.a", "y": "x*2"}, {"st.a": "st.a"}, {"q": "st"}, {"y": "x * 2", "x": "x"}],
    ids=["path_and_expression", "dotted_name", "struct", "expression_and_column"],
)
def test_take_with_sql_projections_as_pylance(uri: str, columns: dict[str, str]) -> None:
    """Unlike a list of nested paths, a mapping gives flat columns, as pylance's take.
    (pylance drops the schema metadata of a take from several fragments, and keeps it for
    one; lance-semantic keeps it.)"""
    indices = [4, 0, 2, 2]
    got = ls.dataset(uri).take(indices, columns=columns)
    _same(got, lance.dataset(uri).take(indices, columns=columns), schema_metadata=False)
    assert got.schema.metadata == {b"owner": b"tests"}


BAD = {
    "syntax": {"z": "x +"},
    "unknown_column": {"z": "nope + 1"},
    "literal_not_of_the_column_type": {"z": "x + 1.5"},
    "aggregate": {"z": "sum(x)"},
    "only_literals": {"c": "1"},
}


@pytest.mark.parametrize("bad", list(BAD))
def test_bad_sql_projections_raise_invalid_expression_error(uri: str, bad: str) -> None:
    columns = BAD[bad]
    with pytest.raises(ValueError):
        lance.dataset(uri).to_table(columns=columns)
    with pytest.raises(InvalidExpressionError) as e:
        ls.dataset(uri).to_table(columns=columns)
    assert e.value.expression == next(iter(columns.values()))
    # a filter names the table's columns, not the projected ones
    with pytest.raises(ValueError):
        lance.dataset(uri).to_table(columns={"y": "x * 2"}, filter="y > 4")
    with pytest.raises(InvalidExpressionError) as e:
        ls.dataset(uri).to_table(columns={"y": "x * 2"}, filter="y > 4")
    assert e.value.expression == "y > 4"
