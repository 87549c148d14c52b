"""One table of legacy type names (types.arrow_names.LEGACY_LEAF_TYPES and
LEGACY_PARAMETRIC_LEAVES): every vocabulary that names a leaf type -- the data-file schema
(schema.leaves), the layout names of messages (types.arrow_names.layout_name) and the
logical_type grammar (types.logical_type) -- agrees with it, both ways."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.schema.leaves import arrow_type_of_logical, logical_type_of
from lance_semantic.types.arrow_names import (
    INTEGER_TYPES,
    LEGACY_LEAF_TYPES,
    layout_name,
)
from lance_semantic.types.layouts import DICTIONARY_KEYS
from lance_semantic.types.logical_type import DICTIONARY_KEY_NAMES, parse_any_logical_type
from lance_semantic.types.semantic import INTEGER_NAMES, PRIMITIVE_NAMES

PARAMETRIC = [
    pa.timestamp("ms"),
    pa.timestamp("ns", "Europe/Paris"),
    pa.decimal128(10, 2),
    pa.decimal256(10, 2),
    pa.decimal256(60, 4),
    pa.binary(16),
]


@pytest.mark.parametrize("name", sorted(LEGACY_LEAF_TYPES))
def test_a_leaf_name_means_one_arrow_type_everywhere(name: str) -> None:
    dt = LEGACY_LEAF_TYPES[name]
    assert arrow_type_of_logical(name) == dt
    assert logical_type_of(dt, "c") == name
    assert layout_name(dt) == name
    parse_any_logical_type(name)  # a name of the grammar, canonical or legacy


@pytest.mark.parametrize("dt", PARAMETRIC, ids=str)
def test_a_parametric_leaf_is_named_alike_everywhere(dt: pa.DataType) -> None:
    name = logical_type_of(dt, "c")
    assert layout_name(dt) == name
    assert arrow_type_of_logical(name) == dt
    parse_any_logical_type(name)


@pytest.mark.parametrize("key", sorted(INTEGER_TYPES))
def test_every_integer_is_a_dictionary_key_everywhere(key: str) -> None:
    dt = pa.dictionary(INTEGER_TYPES[key], pa.string())
    name = logical_type_of(dt, "c")
    assert name == layout_name(dt) == f"dict:string:{key}:false"
    assert arrow_type_of_logical(name) == dt
    assert parse_any_logical_type(name)[1] == f"dictionary:{key}:utf8"


def test_the_integer_names_are_one_list() -> None:
    assert tuple(INTEGER_TYPES) == INTEGER_NAMES == tuple(DICTIONARY_KEYS)
    assert frozenset(INTEGER_NAMES) == DICTIONARY_KEY_NAMES
    assert set(INTEGER_NAMES) <= PRIMITIVE_NAMES
    assert set(LEGACY_LEAF_TYPES) - PRIMITIVE_NAMES == {
        "string",
        "large_string",
        "binary",
        "large_binary",
    }
