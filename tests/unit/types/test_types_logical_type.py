"""Unit tests for lance_semantic.types.logical_type: canonical strings and the spec's upgrade
table ("Compatibility and Migration / Upgrade")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.types.logical_type import (
    DICTIONARY_KEY_NAMES,
    format_logical_type,
    is_legacy_alias,
    parse_any_logical_type,
    parse_logical_type,
)
from lance_semantic.types.semantic import (
    BINARY,
    BLOB,
    JSON,
    LIST,
    MAP,
    PRIMITIVE_NAMES,
    STRING,
    STRUCT,
    Decimal,
    FixedSizeList,
    Primitive,
    SemanticType,
)

CANONICAL: list[tuple[str, SemanticType]] = [
    *((name, Primitive(name)) for name in sorted(PRIMITIVE_NAMES)),
    ("timestamp:s:-", Primitive("timestamp:s:-")),
    ("timestamp:us:UTC", Primitive("timestamp:us:UTC")),
    ("timestamp:ns:America/New_York", Primitive("timestamp:ns:America/New_York")),
    ("timestamp:ms:+05:30", Primitive("timestamp:ms:+05:30")),
    ("fixed_size_binary:16", Primitive("fixed_size_binary:16")),
    ("string", STRING),
    ("binary", BINARY),
    ("list", LIST),
    ("struct", STRUCT),
    ("map", MAP),
    ("json", JSON),
    ("blob", BLOB),
    ("decimal:10:2", Decimal(10, 2)),
    ("decimal:5:-2", Decimal(5, -2)),
    ("decimal:76:0", Decimal(76, 0)),
    ("fixed_size_list:float:4", FixedSizeList("float", 4)),
    ("fixed_size_list:lance.bfloat16:8", FixedSizeList("lance.bfloat16", 8)),
    ("fixed_size_list:fixed_size_list:float:2:3", FixedSizeList("fixed_size_list:float:2", 3)),
    ("fixed_size_list:timestamp:us:UTC:2", FixedSizeList("timestamp:us:UTC", 2)),
    ("fixed_size_list:timestamp:s:+05:30:2", FixedSizeList("timestamp:s:+05:30", 2)),
    ("fixed_size_list:decimal:128:5:2:2", FixedSizeList("decimal:128:5:2", 2)),
    ("fixed_size_list:decimal:256:50:2:2", FixedSizeList("decimal:256:50:2", 2)),
    ("fixed_size_list:fixed_size_binary:3:2", FixedSizeList("fixed_size_binary:3", 2)),
    ("fixed_size_list:bool:3", FixedSizeList("bool", 3)),
    ("fixed_size_list:string:2", FixedSizeList("string", 2)),
    ("fixed_size_list:struct:2", FixedSizeList("struct", 2)),
]


@pytest.mark.parametrize(("text", "expected"), CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_logical_types_parse_and_format(text: str, expected: SemanticType) -> None:
    assert parse_logical_type(text) == expected
    assert parse_any_logical_type(text) == (expected, None)
    assert format_logical_type(expected) == text
    assert not is_legacy_alias(text)


#: the spec's upgrade table, one row per legacy spelling (dictionaries below)
UPGRADE_TABLE: list[tuple[str, SemanticType, str | None]] = [
    ("large_string", STRING, "large_utf8"),
    ("large_binary", BINARY, "large_binary"),
    ("list.struct", LIST, None),
    ("large_list", LIST, "large_list"),
    ("large_list.struct", LIST, "large_list"),
    ("decimal:128:10:2", Decimal(10, 2), None),
    ("decimal:128:38:-3", Decimal(38, -3), None),
    ("decimal:128:1:0", Decimal(1, 0), None),
    ("decimal:256:10:2", Decimal(10, 2), "decimal256"),
    ("decimal:256:38:2", Decimal(38, 2), "decimal256"),
    ("decimal:256:39:2", Decimal(39, 2), None),
    ("decimal:256:76:-5", Decimal(76, -5), None),
]


@pytest.mark.parametrize(("text", "canonical", "encoding"), UPGRADE_TABLE)
def test_upgrade_rewrites_legacy_alias_to_canonical_type_plus_output_encoding(
    text: str, canonical: SemanticType, encoding: str | None
) -> None:
    assert parse_any_logical_type(text) == (canonical, encoding)
    assert is_legacy_alias(text)


@pytest.mark.parametrize("text", ["string", "binary", "list"])
def test_upgrade_keeps_string_binary_list(text: str) -> None:
    assert parse_any_logical_type(text) == (parse_logical_type(text), None)
    assert not is_legacy_alias(text)


DICTIONARY_VALUES = {
    "string": (STRING, "utf8"),
    "large_string": (STRING, "large_utf8"),
    "binary": (BINARY, "binary"),
    "large_binary": (BINARY, "large_binary"),
}


@pytest.mark.parametrize("key", sorted(DICTIONARY_KEY_NAMES))
@pytest.mark.parametrize("value", sorted(DICTIONARY_VALUES))
def test_dictionary_encoding_is_a_layout_of_string_or_binary_values(key: str, value: str) -> None:
    canonical, layout = DICTIONARY_VALUES[value]
    text = f"dict:{value}:{key}:false"
    assert parse_any_logical_type(text) == (canonical, f"dictionary:{key}:{layout}")
    assert is_legacy_alias(text)


def test_dictionary_keys_are_every_integer() -> None:
    assert DICTIONARY_KEY_NAMES == {f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)}


@pytest.mark.parametrize(
    "text",
    [
        "dict:int64:int16:false",
        "dict:double:int32:false",
        "dict:bool:uint8:false",
        "dict:date32:int32:false",
    ],
)
def test_dictionaries_of_other_values_cannot_be_expressed(text: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        parse_any_logical_type(text, path="col")
    assert (info.value.field_path, info.value.type_name) == ("col", text)
    assert not is_legacy_alias(text)


@pytest.mark.parametrize(
    "text",
    [
        "dict:string:float32:false",
        "dict:string:string:false",
        "dict:string:int16:true",
        "dict:string:int16",
        "dict:string",
        "dict:string_view:int16:false",
        "decimal:128:39:2",
        "decimal:128:0:0",
        "decimal:256:77:0",
        "decimal:512:10:2",
        "decimal:64:10:2",
        "decimal:128:10",
    ],
)
def test_malformed_legacy_aliases_are_refused(text: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        parse_any_logical_type(text)
    assert info.value.type_name == text
    assert not is_legacy_alias(text)


@pytest.mark.parametrize("text", [row[0] for row in UPGRADE_TABLE] + ["dict:string:int8:false"])
def test_parse_logical_type_refuses_legacy_aliases(text: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        parse_logical_type(text, path="a.b")
    assert (info.value.field_path, info.value.type_name) == ("a.b", text)


UNKNOWN = [
    "",
    "foo",
    "String",
    "utf8",
    "large_utf8",
    "string_view",
    "binary_view",
    "list_view",
    "large_list_view",
    "map.struct",
    "struct:",
    "string:",
    "timestamp",
    "timestamp:us",
    "timestamp:us:",
    "timestamp:m:UTC",
    "time32:us",
    "fixed_size_binary:x",
    "fixed_size_binary:-3",
    "decimal",
    "decimal:10",
    "decimal:x:2",
    "decimal:010:2",
    "decimal:+10:2",
    "decimal:0:0",
    "decimal:77:0",
    "decimal:10:2:",
    "fixed_size_list",
    "fixed_size_list:float",
    "fixed_size_list:float:x",
    "fixed_size_list:float:-1",
    "fixed_size_list:float:04",
    "fixed_size_list:list:2",
    "fixed_size_list:decimal:10:2:2",
    "fixed_size_list:fixed_size_list:struct:2:2",
    "fixed_size_list::2",
    "lance.bfloat16",
    "interval:month_day_nano",
]


@pytest.mark.parametrize("text", UNKNOWN)
def test_unknown_strings_raise_unsupported_type_naming_the_string(text: str) -> None:
    for parse in (parse_logical_type, parse_any_logical_type):
        with pytest.raises(UnsupportedTypeError) as info:
            parse(text, path="f")
        assert (info.value.field_path, info.value.type_name) == ("f", text)
        assert repr(text) in str(info.value) or text in str(info.value)
    assert not is_legacy_alias(text)


@pytest.mark.parametrize("value", [None, 3, b"string"])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(UnsupportedTypeError):
        parse_logical_type(value)  # type: ignore[arg-type]
    assert not is_legacy_alias(value)  # type: ignore[arg-type]


def test_default_path_is_empty() -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        parse_logical_type("nope")
    assert info.value.field_path == ""


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_logical_type_module_and_its_imports_never_import_pyarrow() -> None:
    pkg = Path(__file__).resolve().parents[3] / "src" / "lance_semantic"
    closure = [
        pkg / "types" / "logical_type.py",
        pkg / "types" / "semantic.py",
        pkg / "types" / "__init__.py",
        *sorted((pkg / "errors").glob("*.py")),
    ]
    for path in closure:
        imported = _imported_modules(path)
        assert not any(m.split(".")[0] == "pyarrow" for m in imported), path
        internal = {m for m in imported if m.startswith("lance_semantic")}
        assert internal <= {
            "lance_semantic.errors",
            "lance_semantic.types.semantic",
            "lance_semantic.types.logical_type",
        }, path
