"""Unit tests for lance_semantic.types.families: every Arrow layout against every family
predicate, with each keyword (views in or out, fixed-size lists in or out, dictionaries seen
through their values or not)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest

from lance_semantic.types.families import (
    is_binary_like,
    is_large,
    is_list_like,
    is_string_like,
    is_string_or_binary,
    is_temporal,
    is_view,
)


class _Ext(pa.ExtensionType):
    def __init__(self) -> None:
        super().__init__(pa.string(), "test.families")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> _Ext:
        return cls()


_ITEM = pa.int32()

#: every Arrow layout, by a name the memberships below refer to
LAYOUTS: dict[str, pa.DataType] = {
    "null": pa.null(),
    "bool": pa.bool_(),
    **{str(t): t for t in (pa.int8(), pa.uint64(), pa.float16(), pa.float32(), pa.float64())},
    "decimal128": pa.decimal128(10, 2),
    "decimal256": pa.decimal256(40, 2),
    "date32": pa.date32(),
    "date64": pa.date64(),
    "time32": pa.time32("ms"),
    "time64": pa.time64("ns"),
    "timestamp": pa.timestamp("us", "UTC"),
    "duration": pa.duration("s"),
    "interval": pa.month_day_nano_interval(),
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string_view(),
    "binary": pa.binary(),
    "large_binary": pa.large_binary(),
    "binary_view": pa.binary_view(),
    "fixed_size_binary": pa.binary(16),
    "dict_utf8": pa.dictionary(pa.int8(), pa.string()),
    "dict_large_binary": pa.dictionary(pa.int32(), pa.large_binary()),
    "dict_utf8_view": pa.dictionary(pa.int16(), pa.string_view()),
    "dict_int": pa.dictionary(pa.int8(), pa.int64()),
    "list": pa.list_(_ITEM),
    "large_list": pa.large_list(_ITEM),
    "fixed_size_list": pa.list_(_ITEM, 3),
    "list_view": pa.list_view(_ITEM),
    "large_list_view": pa.large_list_view(_ITEM),
    "map": pa.map_(pa.string(), _ITEM),
    "struct": pa.struct([("a", pa.string())]),
    "sparse_union": pa.union([pa.field("a", _ITEM)], "sparse"),
    "run_end_encoded": pa.run_end_encoded(pa.int32(), pa.string()),
    "extension": _Ext(),
    "json": pa.json_(),
}

STRINGS = {"utf8", "large_utf8", "utf8_view"}
BINARIES = {"binary", "large_binary", "binary_view"}
VIEWS = {"utf8_view", "binary_view"}
DICTIONARIES = {"dict_utf8", "dict_large_binary", "dict_utf8_view"}

#: predicate (with its keywords) -> the layouts it holds; every other layout it refuses
MEMBERS: dict[str, tuple[Callable[[pa.DataType], bool], set[str]]] = {
    "string_like": (is_string_like, STRINGS),
    "string_like(view=False)": (lambda t: is_string_like(t, view=False), STRINGS - VIEWS),
    "binary_like": (is_binary_like, BINARIES),
    "binary_like(view=False)": (lambda t: is_binary_like(t, view=False), BINARIES - VIEWS),
    "string_or_binary": (is_string_or_binary, STRINGS | BINARIES),
    "string_or_binary(view=False)": (
        lambda t: is_string_or_binary(t, view=False),
        (STRINGS | BINARIES) - VIEWS,
    ),
    "string_or_binary(dictionary=True)": (
        lambda t: is_string_or_binary(t, dictionary=True),
        STRINGS | BINARIES | DICTIONARIES,
    ),
    "string_or_binary(view=False, dictionary=True)": (
        lambda t: is_string_or_binary(t, view=False, dictionary=True),
        ((STRINGS | BINARIES) - VIEWS) | {"dict_utf8", "dict_large_binary"},
    ),
    "list_like(fixed=False)": (lambda t: is_list_like(t, fixed=False), {"list", "large_list"}),
    "list_like(fixed=True)": (
        lambda t: is_list_like(t, fixed=True),
        {"list", "large_list", "fixed_size_list"},
    ),
    "large": (is_large, {"large_utf8", "large_binary", "large_list"}),
    "view": (is_view, VIEWS),
    "temporal": (
        is_temporal,
        {"date32", "date64", "time32", "time64", "timestamp", "duration", "interval"},
    ),
}


def test_the_membership_names_are_layouts() -> None:
    for _, members in MEMBERS.values():
        assert members <= set(LAYOUTS)


@pytest.mark.parametrize("predicate", sorted(MEMBERS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_family_membership(predicate: str, layout: str) -> None:
    check, members = MEMBERS[predicate]
    assert check(LAYOUTS[layout]) is (layout in members)


WRAPPERS = sorted(
    name
    for name, dt in LAYOUTS.items()
    if pa.types.is_dictionary(dt) or isinstance(dt, pa.BaseExtensionType)
)


@pytest.mark.parametrize("layout", WRAPPERS)
def test_a_dictionary_or_extension_is_only_its_own_family(layout: str) -> None:
    """Without ``dictionary=True`` no predicate looks inside a dictionary, and none looks at
    an extension type's storage."""
    dt = LAYOUTS[layout]
    checks = (is_string_like, is_binary_like, is_string_or_binary, is_large, is_view)
    assert not any(c(dt) for c in checks)
    assert not is_list_like(dt, fixed=True)


def test_fixed_is_a_required_keyword() -> None:
    with pytest.raises(TypeError):
        is_list_like(pa.list_(_ITEM))  # type: ignore[call-arg]
