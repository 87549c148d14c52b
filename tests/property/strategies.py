"""Hypothesis strategies for semantic-type writes (STYLE.md §(c) Tests).

Draws, independently of the code under test:

* a semantic tree (:class:`Sem`): ``string``, ``binary``, ``decimal:p:s`` (p ≤ 76, negative
  scales included), unchanged primitives, ``list<…>`` and ``struct<…>`` nesting them;
* python values for a tree: nulls at every level, empty strings and lists, unicode text,
  decimal extremes;
* an accepted Arrow layout for a tree and its values (spec "Representation-only types"):
  utf8 / large_utf8 / utf8_view / dictionary<int8…uint64, utf8 | large_utf8> (the key always
  holds the dictionary), the binary equivalents, list / large_list with any item name,
  decimal128 (p ≤ 38) / decimal256, and each primitive's one Arrow type;
* an Arrow layout of another semantic type (not accepted), to put at one node of a tree.

:func:`build_array` turns values and a layout into an Arrow array without casts, so a
dictionary's key width and a decimal's width are exactly the drawn ones.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from lance_semantic.types.semantic import (
    BINARY,
    LIST,
    STRING,
    STRUCT,
    Decimal,
    Primitive,
    SemanticType,
)

__all__ = [
    "Sem",
    "TableSpec",
    "DICTIONARY_KEYS",
    "PRIMITIVES",
    "decimals",
    "primitives",
    "leaf_trees",
    "semantic_trees",
    "table_specs",
    "values_of",
    "rows_of",
    "layout_of",
    "table_layouts",
    "other_type_than",
    "dictionary_columns",
    "build_array",
    "build_table",
    "tables_of",
    "to_physical_layout",
    "nodes",
    "replace_at",
    "layout_path",
    "expected_output_type",
    "same_type",
]

Kind = Literal["string", "binary", "decimal", "primitive", "list", "struct"]

#: dictionary key spellings of ``dictionary:<key>:<value>`` -> index type (int8 … uint64)
DICTIONARY_KEYS: dict[str, pa.DataType] = {
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
}
_KEY_CAPACITY = {
    name: (2 ** (t.bit_width - 1) - 1 if name.startswith("int") else 2**t.bit_width - 1) + 1
    for name, t in DICTIONARY_KEYS.items()
}

#: unchanged primitives: Arrow type -> canonical logical_type (spec "Unchanged types")
PRIMITIVES: dict[pa.DataType, str] = {
    pa.null(): "null",
    pa.bool_(): "bool",
    pa.int8(): "int8",
    pa.int16(): "int16",
    pa.int32(): "int32",
    pa.int64(): "int64",
    pa.uint8(): "uint8",
    pa.uint16(): "uint16",
    pa.uint32(): "uint32",
    pa.uint64(): "uint64",
    pa.float16(): "halffloat",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.date32(): "date32:day",
    pa.time64("us"): "time64:us",
    pa.duration("ms"): "duration:ms",
    pa.timestamp("us"): "timestamp:us:-",
    pa.timestamp("ns", tz="UTC"): "timestamp:ns:UTC",
    pa.binary(3): "fixed_size_binary:3",
}
_PRIMITIVE_ORDER = list(PRIMITIVES)

_VARIABLE = {
    "string": {"utf8": pa.string(), "large_utf8": pa.large_string()},
    "binary": {"binary": pa.binary(), "large_binary": pa.large_binary()},
}
_VIEWS = {"string": ("utf8_view", pa.string_view()), "binary": ("binary_view", pa.binary_view())}
ITEM_NAMES = ("item", "element", "el", "value")
FIELD_NAMES = ("a", "b", "x", "y", "value", "item")


# ---- semantic trees ----


@dataclass(frozen=True)
class Sem:
    """A semantic type tree: the table's view of a column, without layouts."""

    kind: Kind
    precision: int = 0
    scale: int = 0
    arrow: pa.DataType | None = None  # primitives: their one Arrow type
    children: tuple[tuple[str, Sem], ...] = ()  # struct members; a list's one element

    @property
    def semantic_type(self) -> SemanticType:
        match self.kind:
            case "string":
                return STRING
            case "binary":
                return BINARY
            case "decimal":
                return Decimal(self.precision, self.scale)
            case "primitive":
                assert self.arrow is not None
                return Primitive(PRIMITIVES[self.arrow])
            case "list":
                return LIST
            case "struct":
                return STRUCT

    @property
    def category(self) -> tuple[object, ...]:
        """Two trees' top levels accept the same layouts exactly when these are equal."""
        if self.kind == "decimal":
            return ("decimal", self.precision, self.scale)
        if self.kind == "primitive":
            return ("primitive", str(self.arrow))
        return (self.kind,)

    def __repr__(self) -> str:
        match self.kind:
            case "decimal":
                return f"decimal:{self.precision}:{self.scale}"
            case "primitive":
                return f"prim({self.arrow})"
            case "list":
                return f"list<{self.children[0][1]!r}>"
            case "struct":
                return "struct<" + ", ".join(f"{n}: {c!r}" for n, c in self.children) + ">"
            case _:
                return self.kind


STRING_SEM = Sem("string")
BINARY_SEM = Sem("binary")


def decimals(max_precision: int = 76) -> st.SearchStrategy[Sem]:
    """decimal:p:s with 1 ≤ p ≤ 76 and negative scales, within what pyarrow can turn into
    python values: |s| ≤ 38 when p ≤ 38 (a decimal128 layout may hold it), else |s| ≤ 76."""
    precision = st.one_of(
        st.sampled_from([1, 9, 18, 19, 38, 39, 76]).filter(lambda p: p <= max_precision),
        st.integers(1, max_precision),
    )

    def with_scale(p: int) -> st.SearchStrategy[Sem]:
        bound = 38 if p <= 38 else 76
        scale = st.one_of(st.sampled_from([0, 2, -2, bound, -bound]), st.integers(-bound, bound))
        return scale.map(lambda s: Sem("decimal", precision=p, scale=s))

    return precision.flatmap(with_scale)


def primitives() -> st.SearchStrategy[Sem]:
    return st.sampled_from(_PRIMITIVE_ORDER).map(lambda t: Sem("primitive", arrow=t))


def leaf_trees() -> st.SearchStrategy[Sem]:
    return st.one_of(st.just(STRING_SEM), st.just(BINARY_SEM), decimals(), primitives())


def _lists(inner: st.SearchStrategy[Sem]) -> st.SearchStrategy[Sem]:
    return inner.map(lambda c: Sem("list", children=(("item", c),)))


def _structs(inner: st.SearchStrategy[Sem]) -> st.SearchStrategy[Sem]:
    members = st.lists(
        st.tuples(st.sampled_from(FIELD_NAMES), inner),
        min_size=1,
        max_size=3,
        unique_by=lambda m: m[0],
    )
    return members.map(lambda ms: Sem("struct", children=tuple(ms)))


def semantic_trees(max_leaves: int = 4) -> st.SearchStrategy[Sem]:
    """Leaves, lists of them, structs nesting them (and lists of structs, structs of lists)."""
    return st.recursive(
        leaf_trees(), lambda inner: st.one_of(_lists(inner), _structs(inner)), max_leaves=max_leaves
    )


@dataclass(frozen=True)
class TableSpec:
    """Top-level columns of a table, by name."""

    columns: tuple[tuple[str, Sem], ...]

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.columns]


def table_specs(max_columns: int = 3, max_leaves: int = 4) -> st.SearchStrategy[TableSpec]:
    cols = st.lists(
        st.tuples(st.sampled_from(["c", "s", "d", "n", "v"]), semantic_trees(max_leaves)),
        min_size=1,
        max_size=max_columns,
        unique_by=lambda c: c[0],
    )
    return cols.map(lambda cs: TableSpec(tuple(cs)))


# ---- values ----

_TEXT = st.one_of(
    st.just(""),
    st.text(max_size=6),  # any unicode scalar (no surrogates)
    st.sampled_from(["é", "日本語", "\U0001f600", "a\x00b", "ß" * 3]),
)


def _decimal_value(precision: int, scale: int) -> st.SearchStrategy[decimal.Decimal]:
    top = 10**precision - 1
    unscaled = st.one_of(st.sampled_from([0, top, -top, 1, -1]), st.integers(-top, top))

    def to_decimal(u: int) -> decimal.Decimal:
        digits = tuple(int(c) for c in str(abs(u)))
        return decimal.Decimal((1 if u < 0 else 0, digits, -scale))

    return unscaled.map(to_decimal)


def _primitive_value(t: pa.DataType) -> st.SearchStrategy[Any]:
    if t == pa.null():
        return st.none()
    if t == pa.bool_():
        return st.booleans()
    if pa.types.is_integer(t):
        if pa.types.is_signed_integer(t):
            lo, hi = -(2 ** (t.bit_width - 1)), 2 ** (t.bit_width - 1) - 1
        else:
            lo, hi = 0, 2**t.bit_width - 1
        return st.one_of(st.sampled_from([lo, hi, 0]), st.integers(lo, hi))
    if pa.types.is_floating(t):
        return st.floats(width=t.bit_width, allow_nan=False)
    if pa.types.is_fixed_size_binary(t):
        return st.binary(min_size=t.byte_width, max_size=t.byte_width)
    # integers in the type's unit, within what python's datetime / timedelta hold
    return st.integers(*_TEMPORAL_RANGE[t])


_TEMPORAL_RANGE: dict[pa.DataType, tuple[int, int]] = {
    pa.date32(): (-719_162, 2_932_896),  # date: years 1 … 9999
    pa.time64("us"): (0, 86_400 * 10**6 - 1),
    pa.duration("ms"): (-(8 * 10**16), 8 * 10**16),  # timedelta: |days| < 10**9
    pa.timestamp("us"): (-(6 * 10**16), 2 * 10**17),  # datetime: years 1 … 9999
    pa.timestamp("ns", tz="UTC"): (-(2**62), 2**62),
}


def values_of(sem: Sem, *, nullable: bool = True) -> st.SearchStrategy[Any]:
    """One python value of ``sem`` (None among them at every level)."""
    match sem.kind:
        case "string":
            inner: st.SearchStrategy[Any] = _TEXT
        case "binary":
            inner = st.one_of(st.just(b""), st.binary(max_size=6))
        case "decimal":
            inner = _decimal_value(sem.precision, sem.scale)
        case "primitive":
            assert sem.arrow is not None
            inner = _primitive_value(sem.arrow)
        case "list":
            inner = st.lists(values_of(sem.children[0][1]), max_size=3)
        case "struct":
            inner = st.fixed_dictionaries({n: values_of(c) for n, c in sem.children})
    return st.one_of(st.none(), inner) if nullable else inner


def column_values(sem: Sem, n: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(values_of(sem), min_size=n, max_size=n)


@st.composite
def rows_of(draw: st.DrawFn, spec: TableSpec, min_rows: int = 0, max_rows: int = 5) -> dict:
    """Column name -> list of values, every column with the same number of rows."""
    n = draw(st.integers(min_rows, max_rows))
    return {name: draw(column_values(sem, n)) for name, sem in spec.columns}


# ---- layouts ----


def _distinct(values: Sequence[Any]) -> list[Any]:
    seen: dict[Any, None] = {}
    for v in values:
        if v is not None:
            seen.setdefault(v, None)
    return list(seen)


def _child_values(sem: Sem, values: Sequence[Any], index: int) -> list[Any]:
    """The values of child ``index`` of ``sem`` across ``values`` (flattened for lists)."""
    if sem.kind == "list":
        return [x for v in values if v is not None for x in v]
    name = sem.children[index][0]
    return [None if v is None else v[name] for v in values]


def _keys_holding(n: int) -> list[str]:
    """Dictionary key types whose non-negative range indexes ``n`` dictionary entries."""
    return [k for k, capacity in _KEY_CAPACITY.items() if n <= capacity]


@st.composite
def layout_of(draw: st.DrawFn, sem: Sem, values: Sequence[Any]) -> pa.DataType:
    """An accepted input layout for ``sem`` that can hold ``values``."""
    match sem.kind:
        case "string" | "binary":
            plain = _VARIABLE[sem.kind]
            choice = draw(st.sampled_from(["plain", "view", "dictionary"]))
            if choice == "plain":
                return draw(st.sampled_from(list(plain.values())))
            if choice == "view":
                return _VIEWS[sem.kind][1]
            key = draw(st.sampled_from(_keys_holding(len(_distinct(values)))))
            return pa.dictionary(DICTIONARY_KEYS[key], draw(st.sampled_from(list(plain.values()))))
        case "decimal":
            widths = [pa.decimal256] if sem.precision > 38 else [pa.decimal128, pa.decimal256]
            return draw(st.sampled_from(widths))(sem.precision, sem.scale)
        case "primitive":
            assert sem.arrow is not None
            return sem.arrow
        case "list":
            child = draw(layout_of(sem.children[0][1], _child_values(sem, values, 0)))
            item = pa.field(draw(st.sampled_from(ITEM_NAMES)), child)
            return draw(st.sampled_from([pa.list_, pa.large_list]))(item)
        case "struct":
            return pa.struct(
                [
                    pa.field(name, draw(layout_of(c, _child_values(sem, values, i))))
                    for i, (name, c) in enumerate(sem.children)
                ]
            )


@st.composite
def table_layouts(draw: st.DrawFn, spec: TableSpec, rows: dict) -> pa.Schema:
    return pa.schema(
        [pa.field(name, draw(layout_of(sem, rows[name]))) for name, sem in spec.columns]
    )


def other_type_than(sem: Sem) -> st.SearchStrategy[Sem]:
    """A tree whose top level is another semantic type than ``sem``'s (never a decimal for a
    decimal: a decimal of other precision or scale is a schema mismatch, not a layout)."""
    candidates = st.one_of(leaf_trees(), _lists(leaf_trees()), _structs(leaf_trees())).filter(
        lambda o: o.kind != sem.kind if sem.kind == "decimal" else o.category != sem.category
    )
    return candidates


@st.composite
def dictionary_columns(draw: st.DrawFn) -> tuple[Sem, list[Any], pa.DataType]:
    """A string or binary column with many distinct values (around the capacity of int8 and
    uint8 keys), and a dictionary layout whose key is the narrowest or any wider that holds
    them (int8 for 128 values, uint8 for 256, ...)."""
    sem = draw(st.sampled_from([STRING_SEM, BINARY_SEM]))
    n = draw(st.one_of(st.sampled_from([127, 128, 129, 255, 256, 257]), st.integers(1, 300)))
    distinct: list[Any] = [f"é{i}" for i in range(n)]
    if sem.kind == "binary":
        distinct = [v.encode() for v in distinct]
    extra = draw(st.lists(st.sampled_from([None, *distinct[:3]]), max_size=5))
    values = draw(st.permutations(distinct + extra))
    key = draw(st.sampled_from(_keys_holding(n)))
    value_type = draw(st.sampled_from(list(_VARIABLE[sem.kind].values())))
    return sem, values, pa.dictionary(DICTIONARY_KEYS[key], value_type)


# ---- tree edits ----


def nodes(sem: Sem, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Sem]]:
    """Every node of a tree with its path (list elements under the name ``item``)."""
    yield path, sem
    for name, child in sem.children:
        yield from nodes(child, (*path, name))


def replace_at(sem: Sem, path: tuple[str, ...], new: Sem) -> Sem:
    if not path:
        return new
    head, rest = path[0], path[1:]
    children = tuple((n, replace_at(c, rest, new) if n == head else c) for n, c in sem.children)
    return Sem(sem.kind, sem.precision, sem.scale, sem.arrow, children)


def layout_path(layout: pa.DataType, path: tuple[str, ...]) -> tuple[str, ...]:
    """``path`` (list elements as ``item``) spelled with the layout's own item names."""
    out = []
    for name in path:
        if pa.types.is_list(layout) or pa.types.is_large_list(layout):
            out.append(layout.value_field.name)
            layout = layout.value_type
        else:
            out.append(name)
            layout = layout.field(name).type
    return tuple(out)


# ---- arrays ----


def _decimal_array(t: pa.DataType, values: Sequence[Any]) -> pa.Array:
    width = t.byte_width
    raw = bytearray()
    for v in values:
        unscaled = 0 if v is None else int(v.scaleb(t.scale, decimal.Context(prec=200)))
        raw += unscaled.to_bytes(width, "little", signed=True)
    validity = pa.array([v is not None for v in values], pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(t, len(values), [validity, pa.py_buffer(bytes(raw))])


def _mask(values: Sequence[Any]) -> pa.Array | None:
    if all(v is not None for v in values):
        return None
    return pa.array([v is None for v in values], pa.bool_())


def build_array(t: pa.DataType, values: Sequence[Any]) -> pa.Array:
    """``values`` as an array of exactly type ``t`` (no casts, no inferred widths)."""
    if pa.types.is_dictionary(t):
        dictionary = _distinct(values)
        index = {v: i for i, v in enumerate(dictionary)}
        indices = pa.array([None if v is None else index[v] for v in values], t.index_type)
        return pa.DictionaryArray.from_arrays(indices, build_array(t.value_type, dictionary))
    if pa.types.is_decimal(t):
        return _decimal_array(t, values)
    if t == pa.float16():
        data = np.array([0.0 if v is None else v for v in values], dtype=np.float16)
        return pa.array(data, pa.float16(), mask=np.array([v is None for v in values], dtype=bool))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = [0]
        for v in values:
            offsets.append(offsets[-1] + (0 if v is None else len(v)))
        flat = [x for v in values if v is not None for x in v]
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        offset_type = pa.int32() if pa.types.is_list(t) else pa.int64()
        return cls.from_arrays(
            pa.array(offsets, offset_type),
            build_array(t.value_type, flat),
            type=t,
            mask=_mask(values),
        )
    if pa.types.is_struct(t):
        children = [
            build_array(f.type, [None if v is None else v[f.name] for v in values]) for f in t
        ]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=_mask(values))
    return pa.array(values, t)


def build_table(schema: pa.Schema, rows: dict) -> pa.Table:
    return pa.Table.from_arrays([build_array(f.type, rows[f.name]) for f in schema], schema=schema)


@st.composite
def tables_of(draw: st.DrawFn, schema: pa.Schema, rows: dict) -> pa.Table:
    """``rows`` as a table of ``schema`` in one to three record batches (empty ones too), each
    built on its own (so each dictionary array has its own dictionary), some sliced out of a
    null-padded array (non-zero offsets at every nesting level)."""
    n = len(next(iter(rows.values()))) if rows else 0
    bounds = [0, *sorted(draw(st.lists(st.integers(0, n), max_size=2))), n]
    batches = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        pad = draw(st.integers(0, 2))
        arrays = [
            build_array(f.type, [None] * pad + rows[f.name][lo:hi] + [None] * pad).slice(
                pad, hi - lo
            )
            for f in schema
        ]
        batches.append(pa.RecordBatch.from_arrays(arrays, schema=schema))
    return pa.Table.from_batches(batches, schema=schema)


def to_physical_layout(t: pa.DataType) -> pa.DataType:
    """The layout a data file holds for input layout ``t``: views as their non-view
    equivalents (small test values always fit 32-bit offsets), everything else unchanged."""
    if t == pa.string_view():
        return pa.string()
    if t == pa.binary_view():
        return pa.binary()
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(to_physical_layout(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(to_physical_layout(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(to_physical_layout(f.type)) for f in t])
    return t


# ---- output encodings ----

_OUTPUT_PLAIN = {
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string_view(),
    "binary": pa.binary(),
    "large_binary": pa.large_binary(),
    "binary_view": pa.binary_view(),
}


def expected_output_type(sem: Sem, encoding: str, item: pa.Field | None = None) -> pa.DataType:
    """The Arrow type a read returns for ``sem`` in ``encoding`` (spec "Output Encoding")."""
    if encoding in _OUTPUT_PLAIN:
        return _OUTPUT_PLAIN[encoding]
    if encoding.startswith("dictionary:"):
        _, key, value = encoding.split(":")
        return pa.dictionary(DICTIONARY_KEYS[key], _OUTPUT_PLAIN[value])
    if encoding in ("decimal128", "decimal256"):
        make = pa.decimal128 if encoding == "decimal128" else pa.decimal256
        return make(sem.precision, sem.scale)
    assert item is not None, encoding
    return pa.list_(item) if encoding == "list" else pa.large_list(item)


def same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Type equality that also compares list item names (pyarrow's ``==`` ignores them)."""
    return a == b and str(a) == str(b)
