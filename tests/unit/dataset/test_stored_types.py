"""The layouts ``add_columns`` stores for SQL results (``dataset/evolution_sql``).

A tripwire for DataFusion upgrades: every scalar function that returns a dictionary for a
dictionary argument is either one pylance 14's engine keeps it through as well, or one of
``_DICTIONARY_KEEPING`` (whose dictionaries are decoded). A new DataFusion that teaches
another function to keep dictionaries fails here until the set names it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.query.projection import _DICTIONARY_KEEPING, ColumnExpression, stored_type

#: functions DataFusion 54 (pylance 14's engine) also returns a dictionary from: checked
#: against pylance's add_columns (coalesce, nullif, greatest, least, nvl2 keep ``d``'s
#: dictionary there); with_metadata and union_tag are no value functions, and abs of a
#: dictionary plans a dictionary and then fails to run, in pylance too
_KEPT_BY_PYLANCE_TOO = frozenset(
    {"coalesce", "nullif", "greatest", "least", "nvl2", "with_metadata", "union_tag", "abs"}
)

_ARGUMENTS = ["", ", 'x'", ", 1", ", 'x', 'y'", ", 1, 'x'", ", 1, 1"]


def _scalar_functions() -> list[str]:
    from datafusion import SessionConfig, SessionContext

    ctx = SessionContext(SessionConfig().with_information_schema(True))
    rows = ctx.sql(
        "SELECT DISTINCT routine_name FROM information_schema.routines "
        "WHERE function_type = 'SCALAR'"
    ).to_pylist()
    return sorted(r["routine_name"] for r in rows)


def test_every_function_that_keeps_a_dictionary_is_known() -> None:
    from datafusion import SessionContext

    df = SessionContext().from_arrow(
        pa.table(
            {
                "d": pa.array(["x"]).dictionary_encode(),
                "db": pa.array([b"x"]).dictionary_encode(),
                "di": pa.array([1]).dictionary_encode(),
            }
        )
    )
    keeping = set()
    for name in _scalar_functions():
        for column in ("d", "db", "di"):
            for rest in _ARGUMENTS:
                try:
                    expr = df.parse_sql_expr(f"{name}({column}{rest})")
                    dt = df.select(expr.alias("n")).schema().field(0).type
                except Exception:  # not this signature
                    continue
                if pa.types.is_dictionary(dt):
                    keeping.add(name)
                break
    assert keeping, "no function kept a dictionary: the probe is broken"
    assert keeping <= _DICTIONARY_KEEPING | _KEPT_BY_PYLANCE_TOO, keeping - (
        _DICTIONARY_KEEPING | _KEPT_BY_PYLANCE_TOO
    )


@pytest.mark.parametrize(
    ("dt", "dictionaries", "want"),
    [
        (pa.string_view(), False, pa.string()),
        (pa.binary_view(), False, pa.binary()),
        (pa.large_string(), False, pa.large_string()),
        (pa.list_(pa.string_view()), False, pa.list_(pa.string())),
        (pa.map_(pa.string(), pa.string_view()), False, pa.map_(pa.string(), pa.string())),
        (pa.dictionary(pa.int32(), pa.string()), False, pa.dictionary(pa.int32(), pa.string())),
        (pa.dictionary(pa.int32(), pa.string()), True, pa.string()),
        (pa.dictionary(pa.int32(), pa.string_view()), True, pa.string()),
        (
            pa.struct([("a", pa.dictionary(pa.int8(), pa.int32()))]),
            True,
            pa.struct([("a", pa.int32())]),
        ),
    ],
)
def test_stored_type(dt: pa.DataType, dictionaries: bool, want: pa.DataType) -> None:
    assert stored_type(dt, dictionaries=dictionaries) == want


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("upper(d)", pa.string()),
        ("d", pa.dictionary(pa.int32(), pa.string())),
        ("coalesce(d, 'x')", pa.dictionary(pa.int32(), pa.string())),
        ("coalesce(upper(d), 'x')", pa.string()),
        ("length(d)", pa.int32()),
        ("md5(s)", pa.string()),
        ("((((upper(d)))))", pa.string()),
    ],
)
def test_column_expression_stored_field(sql: str, want: pa.DataType) -> None:
    schema = pa.schema([("d", pa.dictionary(pa.int32(), pa.string())), ("s", pa.string())])
    expr = ColumnExpression("n", sql, schema)
    assert expr.stored_field.type == want
    batch = pa.record_batch(
        [pa.array(["a", "b"]).dictionary_encode(), pa.array(["x", None])], schema=schema
    )
    assert expr.evaluate_stored(batch).type == want
