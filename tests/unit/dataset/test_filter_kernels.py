"""Simple filters computed by Arrow kernels (``query.kernels``)
give exactly DataFusion's values, nulls included, on every row: random filters of every
supported form over random batches with nulls and the edge values of each integer type;
forms the kernels do not compute exactly (floats, NULL literals, functions, dictionaries)
are left to DataFusion; and scans take the kernels once a filter is known."""

from __future__ import annotations

import random
from collections.abc import Callable

import pyarrow as pa
import pytest
from datafusion import SessionConfig, SessionContext

import lance_semantic as ls
from lance_semantic.query import expressions
from lance_semantic.query.kernels import compile_filter
from lance_semantic.query.sql_parse import parse_expression

INTS = {"i8": pa.int8(), "i64": pa.int64(), "u16": pa.uint16(), "u64": pa.uint64()}
STRS = {"s": pa.string(), "ls": pa.large_string()}


def _ints(rng: random.Random, t: pa.DataType, n: int) -> list[int | None]:
    bits = t.bit_width
    lo, hi = (
        (0, (1 << bits) - 1)
        if pa.types.is_unsigned_integer(t)
        else (
            -(1 << (bits - 1)),
            (1 << (bits - 1)) - 1,
        )
    )
    edges = [lo, hi, 0, 1, lo + 1, hi - 1]
    return [
        None
        if rng.random() < 0.15
        else rng.choice(edges)
        if rng.random() < 0.2
        else rng.randint(max(lo, -20), min(hi, 20))
        for _ in range(n)
    ]


def _batch(rng: random.Random, n: int) -> pa.RecordBatch:
    cols: dict[str, pa.Array] = {}
    for name, t in INTS.items():
        cols[name] = pa.array(_ints(rng, t, n), t)
    words = ["", "a", "ab", "b", "é", "Z", "a\x00", "s5"]
    for name, t in STRS.items():
        cols[name] = pa.array(
            [None if rng.random() < 0.15 else rng.choice(words) for _ in range(n)], t
        )
    cols["b"] = pa.array([None if rng.random() < 0.15 else rng.random() < 0.5 for _ in range(n)])
    return pa.RecordBatch.from_pydict(cols)


def _literal(rng: random.Random, name: str) -> str:
    if name in STRS:
        word = rng.choice(["", "a", "ab", "b", "é", "Z", "s5", "it's"])
        return "'" + word.replace("'", "''") + "'"
    t = INTS[name]
    vals = [v for v in _ints(rng, t, 4) if v is not None] or [0]
    return str(rng.choice(vals))


def _filter(rng: random.Random, depth: int = 0) -> str:
    if depth < 3 and rng.random() < 0.45:
        op = rng.choice(["AND", "OR"])
        inner = f"({_filter(rng, depth + 1)}) {op} ({_filter(rng, depth + 1)})"
        return f"NOT ({inner})" if rng.random() < 0.2 else inner
    name = rng.choice([*INTS, *STRS, "b"])
    form = rng.random()
    if name == "b":
        return rng.choice(["b", "NOT b", "b = true", "b <> false", "b IS NULL"])
    if form < 0.1:
        return f"{name} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"
    if form < 0.25:
        lo, hi = _literal(rng, name), _literal(rng, name)
        return f"{name} {'NOT ' if rng.random() < 0.3 else ''}BETWEEN {lo} AND {hi}"
    if form < 0.4:
        items = ", ".join(_literal(rng, name) for _ in range(rng.randint(1, 4)))
        return f"{name} {'NOT ' if rng.random() < 0.3 else ''}IN ({items})"
    op = rng.choice(["=", "!=", "<>", "<", "<=", ">", ">="])
    left = name
    if name in INTS and form < 0.55:
        k = rng.choice([1, 2, 3, 7, 100])
        if INTS[name] == pa.int8() and k == 100:
            k = 7
        left = f"{name} % {k}"
        right = str(rng.choice([0, 1, 2, -1, 6]))
        if pa.types.is_unsigned_integer(INTS[name]) and right.startswith("-"):
            right = "1"
    else:
        right = _literal(rng, name)
    return (
        f"{right} {op} {left}"
        if rng.random() < 0.25 and "%" not in left
        else (f"{left} {op} {right}")
    )


def _datafusion(batch: pa.RecordBatch, sql: str) -> tuple[object, pa.Array]:
    ctx = SessionContext(SessionConfig().with_target_partitions(1))
    df = ctx.from_arrow(batch, name="t")
    expr = parse_expression(df, sql)
    want = df.select(expr.alias("v")).to_arrow_table().column(0).combine_chunks()
    return expr, want


def _compared(rng: random.Random, rounds: int, make: Callable[[random.Random], str]) -> int:
    """Compiles ``rounds`` filters ``make(rng)`` over random batches and holds every kernel
    to DataFusion's values (type and nulls included); how many compiled (the others are
    left to DataFusion)."""
    compiled = 0
    for _ in range(rounds):
        batch = _batch(rng, rng.choice([1, 7, 64, 300]))
        sql = make(rng)
        expr, want = _datafusion(batch, sql)
        kernel = compile_filter(expr, batch.schema)
        if kernel is None:
            continue
        compiled += 1
        got = kernel(batch)
        assert got.type == pa.bool_(), sql
        assert got.equals(want), (sql, batch.to_pydict(), got, want)
    return compiled


@pytest.mark.parametrize("seed", range(8))
def test_kernels_give_datafusions_values_nulls_included(seed: int) -> None:
    # nearly every generated form is one the kernels compute
    assert _compared(random.Random(seed), 60, _filter) >= 50


def _or_chain(rng: random.Random) -> str:
    """An ``OR`` of many terms, most of them ``column = literal`` (either way round) of a
    few columns, the others any filter; brackets nest some of them, and the chain may sit
    under ``NOT`` or beside an ``AND``."""
    terms = []
    for _ in range(rng.randint(2, 40)):
        if rng.random() < 0.75:
            name = rng.choice(["i8", "u64", "s", "ls"])
            lit = _literal(rng, name)
            terms.append(f"{lit} = {name}" if rng.random() < 0.3 else f"{name} = {lit}")
        else:
            terms.append(f"({_filter(rng, 2)})")
    while len(terms) > 1 and rng.random() < 0.3:  # some brackets: ((a OR b) OR c), ...
        k = rng.randrange(len(terms) - 1)
        terms[k : k + 2] = [f"({terms[k]} OR {terms[k + 1]})"]
    chain = " OR ".join(terms)
    form = rng.random()
    if form < 0.2:
        return f"NOT ({chain})"
    if form < 0.4:
        return f"({chain}) AND ({_filter(rng, 2)})"
    return chain


@pytest.mark.parametrize("seed", range(6))
def test_or_chains_of_equalities_give_datafusions_values(seed: int) -> None:
    """``OR`` chains are flattened and their ``column = literal`` terms looked up in one set
    per column; the values stay DataFusion's, nulls included (a null tested is null)."""
    # (a term of a form left to DataFusion leaves it the whole chain)
    assert _compared(random.Random(1000 + seed), 40, _or_chain) >= 20


def test_a_long_or_chain_compiles_without_recursion() -> None:
    """10,000 ``id = k`` terms: DataFusion's tree of them is 10,000 deep; flattened, it is
    one set lookup."""
    batch = pa.RecordBatch.from_pydict({"id": pa.array([*range(0, 40_000, 3), None], pa.int64())})
    sql = " OR ".join(f"id = {2 * k}" for k in range(10_000))
    ctx = SessionContext(SessionConfig().with_target_partitions(1))
    expr = parse_expression(ctx.from_arrow(batch, name="t"), sql)
    kernel = compile_filter(expr, batch.schema)
    assert kernel is not None
    got = kernel(batch).to_pylist()
    want = [None if v is None else v % 2 == 0 and v < 20_000 for v in batch["id"].to_pylist()]
    assert got == want


@pytest.mark.parametrize(
    "sql",
    [
        "f > 0.5",  # floats: DataFusion orders them totally (NaN, -0.0)
        "f = 0.0",
        "i64 = NULL",
        "i64 IN (1, NULL)",
        "length(s) = 1",
        "i64 + 1 > 3",  # overflow rules are DataFusion's
        "i64 % 0 = 0",
        "i64 % -3 = 0",
        "d = 'a'",  # dictionary column
        "i8 = i64",  # column against column
        "i64",  # an integer is not a filter
    ],
)
def test_other_forms_are_left_to_datafusion(sql: str) -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "i64": pa.array([1, None, -3], pa.int64()),
            "i8": pa.array([1, 2, None], pa.int8()),
            "f": pa.array([float("nan"), -0.0, 1.0]),
            "s": ["a", None, "bc"],
            "d": pa.array(["a", "b", "a"]).dictionary_encode(),
        }
    )
    ctx = SessionContext()
    expr = parse_expression(ctx.from_arrow(batch, name="t"), sql)
    assert compile_filter(expr, batch.schema) is None


def test_scans_take_the_kernels_with_the_same_rows(tmp_path: object) -> None:
    """A scan's filter is evaluated by the kernels once parsed, with the rows DataFusion
    gives; a filter of another form still goes to DataFusion."""
    rng = random.Random(5)
    table = pa.Table.from_batches([_batch(rng, 500) for _ in range(3)])
    uri = f"{tmp_path}/t.lance"
    ds = ls.write_dataset(table, uri, max_rows_per_file=400)
    expressions._KERNELS.clear()
    for sql in ["i64 % 3 = 1 AND s <> 'a'", "u16 BETWEEN 0 AND 10 OR b", "NOT (ls IN ('a', ''))"]:
        got = ds.to_table(filter=sql)
        ctx = SessionContext()
        ctx.from_arrow(table, name="t")
        want = ctx.sql(f"SELECT * FROM t WHERE {sql}").to_arrow_table()
        assert got.to_pylist() == want.to_pylist(), sql
        assert ds.count_rows(sql) == want.num_rows
    assert any(k is not None for k in expressions._KERNELS.values())
    assert all(k is not None for k in expressions._KERNELS.values())
