"""Simple filters read without DataFusion (``query.simple_filters``) give exactly what the
DataFusion path gives: the same values on every row (nulls included) for every filter the
simple reader takes, never a filter that path refuses (pylance's literal rules), and every
other text is left to DataFusion."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from datafusion import SessionConfig, SessionContext

from lance_semantic.query import check_filter_literals, expressions
from lance_semantic.query.expressions import SqlExpression
from lance_semantic.query.simple_filters import parse_simple, simple_kernel
from lance_semantic.query.sql_parse import parse_expression

INTS = {"i8": pa.int8(), "i64": pa.int64(), "u16": pa.uint16(), "u64": pa.uint64()}
STRS = {"s": pa.string(), "ls": pa.large_string()}
WORDS = ["", "a", "ab", "b", "é", "Z", "a\x00", "s5", "it's"]


def _ints(rng: random.Random, t: pa.DataType, n: int) -> list[int | None]:
    bits = t.bit_width
    if pa.types.is_unsigned_integer(t):
        lo, hi = 0, (1 << bits) - 1
    else:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    edges = [lo, hi, 0, 1, lo + 1, hi - 1]
    out: list[int | None] = []
    for _ in range(n):
        r = rng.random()
        out.append(
            None
            if r < 0.15
            else rng.choice(edges)
            if r < 0.3
            else rng.randint(max(lo, -20), min(hi, 20))
        )
    return out


def _batch(rng: random.Random, n: int) -> pa.RecordBatch:
    cols: dict[str, pa.Array] = {name: pa.array(_ints(rng, t, n), t) for name, t in INTS.items()}
    for name, t in STRS.items():
        cols[name] = pa.array(
            [None if rng.random() < 0.15 else rng.choice(WORDS) for _ in range(n)], t
        )
    cols["Mixed"] = pa.array(_ints(rng, pa.int32(), n), pa.int32())
    cols["f"] = pa.array([rng.random() for _ in range(n)])
    return pa.RecordBatch.from_pydict(cols)


def _literal(rng: random.Random, name: str) -> str:
    """A literal for column ``name``, now and then one its type cannot hold (or of
    another kind): the simple reader must leave those to DataFusion."""
    r = rng.random()
    if r < 0.05:
        return rng.choice(["NULL", "1.5", "-0", "300", "-129", "'3'", "18446744073709551616"])
    if name in STRS:
        return "'" + rng.choice(WORDS).replace("'", "''") + "'"
    t = INTS.get(name, pa.int32())
    vals = [v for v in _ints(rng, t, 4) if v is not None] or [0]
    v = rng.choice(vals)
    return f"- {-v}" if v < 0 and rng.random() < 0.2 else str(v)


def _name(rng: random.Random) -> str:
    name = rng.choice([*INTS, *STRS, "Mixed", "f"])
    if rng.random() < 0.1:
        return name.upper()  # (another case: DataFusion's path resolves it)
    return name


def _filter(rng: random.Random, depth: int = 0) -> str:
    if depth < 3 and rng.random() < 0.45:
        op = rng.choice(["AND", "OR", "and", "or"])
        left, right = _filter(rng, depth + 1), _filter(rng, depth + 1)
        inner = f"({left}) {op} ({right})" if rng.random() < 0.7 else f"{left} {op} {right}"
        return f"NOT ({inner})" if rng.random() < 0.2 else inner
    name = _name(rng)
    base = name if name in INTS or name in STRS or name == "Mixed" else name.lower()
    form = rng.random()
    if form < 0.1:
        return f"{name} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"
    if form < 0.25:
        lo, hi = _literal(rng, base), _literal(rng, base)
        return f"{name} {'NOT ' if rng.random() < 0.3 else ''}BETWEEN {lo} AND {hi}"
    if form < 0.4:
        items = ", ".join(_literal(rng, base) for _ in range(rng.randint(1, 5)))
        return f"{name} {'not ' if rng.random() < 0.3 else ''}IN ({items})"
    op = rng.choice(["=", "!=", "<>", "<", "<=", ">", ">="])
    lit = _literal(rng, base)
    if rng.random() < 0.1:
        return f"NOT {name} {op} {lit}"
    return f"{lit} {op} {name}" if rng.random() < 0.25 else f"{name} {op} {lit}"


def _datafusion(batch: pa.RecordBatch, sql: str) -> pa.Array:
    """What the DataFusion path gives: pylance's literal check, then the values."""
    ctx = SessionContext(SessionConfig().with_target_partitions(1))
    df = ctx.read_batches([batch])
    expr = parse_expression(df, sql)
    check_filter_literals(expr, batch.schema, sql)
    return df.select(expr.alias("v")).to_arrow_table().column(0).combine_chunks()


@pytest.mark.parametrize("seed", range(10))
def test_simple_filters_give_the_datafusion_paths_values(seed: int) -> None:
    rng = random.Random(seed)
    taken = 0
    for _ in range(80):
        batch = _batch(rng, rng.choice([1, 9, 64, 300]))
        sql = _filter(rng)
        node = parse_simple(sql, batch.schema)
        if node is None:
            continue
        taken += 1
        want = _datafusion(batch, sql)  # (never refused: the simple reader took it)
        got = simple_kernel(node)(batch)
        assert got.type == pa.bool_(), sql
        assert got.equals(want), (sql, batch.to_pydict(), got, want)
    assert taken >= 25


@pytest.mark.parametrize(
    "sql",
    [
        "f > 0.5",  # floats: DataFusion orders them totally
        "i64 = 1.0",
        "i64 = NULL",
        "i64 IN (1, NULL)",
        "i64 IN ()",
        "i8 = 300",  # out of the column's range: pylance refuses it, through DataFusion
        "u16 = -1",
        "u64 = 18446744073709551615",  # beyond int64
        "s = 1",
        "i64 = '1'",
        "s = 'a\\b'",  # backslashes: left to the engine's rules
        "length(s) = 1",
        "i64 + 1 > 3",
        "i64 = 1 + 2",
        "i64 % 2 = 0",
        "i8 = i64",
        "i64",
        "I64 = 1",  # another case
        "`i64` = 1",
        "\"s\" = 'a'",
        "i64 = 1 -- a comment",
        "i64 = --1",
        "i64 = 1 /* c */",
        "s LIKE 'a%'",
        "s = 'a' AND",
        "(i64 = 1",
        "i64 = 1)",
        "x = 1",  # no such column
        "i64 = 1; DROP TABLE t",
        " OR ".join(f"i64 = {k}" for k in range(100)),  # more terms than read here
        "(" * 20 + "i64 = 1" + ")" * 20,
    ],
)
def test_other_texts_are_left_to_datafusion(sql: str) -> None:
    schema = pa.schema(
        [
            ("i64", pa.int64()),
            ("i8", pa.int8()),
            ("u16", pa.uint16()),
            ("u64", pa.uint64()),
            ("s", pa.string()),
            ("f", pa.float64()),
        ]
    )
    assert parse_simple(sql, schema) is None


def test_a_name_shared_in_another_case_is_left_to_datafusion() -> None:
    schema = pa.schema([("k", pa.int64()), ("K", pa.int64())])
    assert parse_simple("k = 1", schema) is None
    assert parse_simple("k = 1", pa.schema([("k", pa.int64())])) is not None


def test_a_simple_filter_never_reaches_datafusion() -> None:
    """Its check on no rows and its evaluation both take the kernels: no parse is
    remembered for it."""
    batch = pa.record_batch({"k": pa.array([1, 2, None], pa.int64())})
    sql = "k IN (2, 3) OR k IS NULL"
    expressions._PARSED.clear()
    e = SqlExpression(sql, is_filter=True)
    assert e.evaluate(batch.slice(0, 0)).type == pa.bool_()
    assert e.evaluate(batch).to_pylist() == [False, True, True]
    assert not any(k[0] == sql for k in expressions._PARSED)
    assert e.simple(batch.schema) is not None
