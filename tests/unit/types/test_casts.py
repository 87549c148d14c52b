"""Nested casts come out valid (types/casts.py), found by the property suite: pyarrow 26's
cast of a struct holding ``list<struct<..., null>>`` returned an invalid array, so a flagged
append of such a column in a view layout failed in ``to_physical``. The class: every nesting
of struct / list / large_list / fixed_size_list around a struct with a ``null`` child, with
a view, large or plain string leaf beside it, at several slice offsets, cast to every other
layout of the same shape; and the write/read of the shape the property test found."""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.types.casts import cast

LEAVES = [pa.string(), pa.large_string(), pa.string_view()]
WRAPS = ["struct", "list", "large_list", "fixed_size_list"]


def _inner(leaf: pa.DataType) -> pa.DataType:
    return pa.struct([("a", leaf), ("b", pa.null())])


def _wrap(t: pa.DataType, how: str, leaf: pa.DataType) -> pa.DataType:
    if how == "struct":
        return pa.struct([("s", leaf), ("w", t)])
    if how == "list":
        return pa.list_(t)
    if how == "large_list":
        return pa.large_list(t)
    return pa.list_(t, 2)


def _value(t: pa.DataType, k: int) -> object:
    if pa.types.is_null(t):
        return None
    if pa.types.is_struct(t):
        return (
            None
            if k % 5 == 4
            else {t.field(i).name: _value(t.field(i).type, k + i) for i in range(t.num_fields)}
        )
    if pa.types.is_fixed_size_list(t):
        return [_value(t.value_type, k + j) for j in range(t.list_size)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return None if k % 7 == 6 else [_value(t.value_type, k + j) for j in range(k % 3)]
    return None if k % 4 == 3 else f"v{k}"


SHAPES = [(w1, w2) for w1, w2 in itertools.product(WRAPS, repeat=2)]


@pytest.mark.parametrize("wraps", SHAPES, ids=lambda w: "/".join(w))
@pytest.mark.parametrize("src_leaf", LEAVES, ids=str)
def test_every_nesting_casts_to_a_valid_array(
    wraps: tuple[str, str], src_leaf: pa.DataType
) -> None:
    def shape(leaf: pa.DataType) -> pa.DataType:
        t = _inner(leaf)
        for how in wraps:
            t = _wrap(t, how, leaf)
        return t

    source = shape(src_leaf)
    arr = pa.array([_value(source, k) for k in range(9)], source)
    for dst_leaf in LEAVES:
        target = shape(dst_leaf)
        for start in (0, 1, 4):
            part = arr.slice(start)
            out = cast(part, target)
            out.validate(full=True)
            assert out.type == target and out.to_pylist() == part.to_pylist()


def test_the_shape_the_property_suite_found_writes_and_reads(tmp_path: Path) -> None:
    inner = _inner(pa.string())
    plain = pa.struct([("b", pa.string()), ("x", pa.string()), ("a", pa.list_(inner))])
    view = pa.struct([("b", pa.string()), ("x", pa.string_view()), ("a", pa.list_(inner))])
    rows = [
        {"b": None, "x": None, "a": [None, None]},
        {"b": "q", "x": "r", "a": [{"a": "s", "b": None}]},
    ]
    uri = str(tmp_path / "t")
    ls.write_dataset(pa.table({"c": pa.array([], plain)}), uri, semantic_types=True)
    ls.write_dataset(pa.table({"c": pa.array(rows, view)}), uri, mode="append")
    out = ls.dataset(uri).to_table()
    assert out.column("c").to_pylist() == rows
    got = ls.dataset(uri).to_table(output_encodings={"c.x": "utf8_view"})
    assert got.schema.field("c").type == view and got.column("c").to_pylist() == rows
