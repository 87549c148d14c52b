"""Support for the flagged machine of ``test_stateful_flagged.py``: the column kinds of a
flagged table, every accepted input layout of each (spec "Semantic Types": representation-
only and value-transforming types, extension semantic types), the output encodings and
the Arrow type a read returns for each (override > field entry > default), deterministic
values, and the in-memory model the table is checked against.

Written from the spec and the README's contract table, not from the library's layout
tables, so the library is not checked against itself.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa
from lance.blob import blob_array, blob_field

from lance_semantic.codecs import decode_jsonb, encode_json

__all__ = [
    "KEYS",
    "DICT_KEYS",
    "INPUT_LAYOUTS",
    "VIEW_LAYOUTS",
    "VIEW_ENCODINGS",
    "Column",
    "Model",
    "EXT_MD",
    "BLOB_DESCRIPTOR",
    "created_entry",
    "encodings_of",
    "input_table",
    "output_type",
    "value_of",
    "read_value",
]

#: the dictionary key types a string / binary input or output may use
KEYS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DICT_KEYS = {k: getattr(pa, k)() for k in KEYS}

#: accepted input layouts per column kind (the first is the kind's default layout)
INPUT_LAYOUTS: dict[str, tuple[str, ...]] = {
    "string": (
        "utf8",
        "large_utf8",
        "utf8_view",
        "dictionary:int8:utf8",
        "dictionary:int16:utf8",
        "dictionary:int32:utf8",
        "dictionary:int64:utf8",
        "dictionary:int16:large_utf8",
    ),
    "binary": (
        "binary",
        "large_binary",
        "binary_view",
        "dictionary:int8:binary",
        "dictionary:int32:binary",
        "dictionary:int16:large_binary",
    ),
    "list": ("list", "large_list"),
    "decimal": ("decimal128", "decimal256"),
    "json": ("json_utf8", "json_large_utf8", "json_utf8_view", "jsonb"),
    "ext": ("ext", "storage"),
    "blob": ("blob", "large_binary"),
    "int64": ("int64",),
    "bool": ("bool",),
}
VIEW_LAYOUTS = {"utf8_view", "binary_view", "json_utf8_view"}
VIEW_ENCODINGS = {"utf8_view", "binary_view"}

EXT_MD = {b"ARROW:extension:name": b"example.tag", b"ARROW:extension:metadata": b"\x00v1"}
JSONB_MD = {b"ARROW:extension:name": b"lance.json"}

#: what a read of a blob v2 column returns (pylance's descriptor)
BLOB_DESCRIPTOR = pa.struct(
    [
        pa.field("kind", pa.uint8(), nullable=False),
        pa.field("position", pa.uint64(), nullable=False),
        pa.field("size", pa.uint64(), nullable=False),
        pa.field("blob_id", pa.uint32(), nullable=False),
        pa.field("blob_uri", pa.string(), nullable=False),
    ]
)

_TEXT = {"utf8": pa.string(), "large_utf8": pa.large_string(), "utf8_view": pa.string_view()}
_BYTES = {"binary": pa.binary(), "large_binary": pa.large_binary(), "binary_view": pa.binary_view()}


def _layout_type(kind: str, layout: str) -> pa.DataType:
    """The Arrow type of an input ``layout`` (also of an output encoding) of ``kind``."""
    if layout.startswith("dictionary:"):
        _, key, value = layout.split(":")
        return pa.dictionary(DICT_KEYS[key], {**_TEXT, **_BYTES}[value])
    if kind == "string":
        return _TEXT[layout]
    if kind == "binary":
        return _BYTES[layout]
    if kind == "list":
        return pa.large_list(pa.int64()) if layout == "large_list" else pa.list_(pa.int64())
    if kind == "decimal":
        return pa.decimal256(10, 2) if layout == "decimal256" else pa.decimal128(10, 2)
    if kind == "json":
        if layout in ("jsonb", "lance.json"):
            return pa.large_binary()
        storage = pa.string() if layout == "arrow.json" else _TEXT[layout.removeprefix("json_")]
        return pa.json_(storage)
    if kind == "ext":
        return pa.int32()
    if kind == "int64":
        return pa.int64()
    if kind == "bool":
        return pa.bool_()
    raise AssertionError((kind, layout))


def encodings_of(kind: str) -> list[str]:
    """The output encodings valid for ``kind`` (spec tables), default first."""
    if kind == "string":
        return ["utf8", "large_utf8", "utf8_view"] + [
            f"dictionary:{k}:{v}" for k in KEYS for v in ("utf8", "large_utf8")
        ]
    if kind == "binary":
        return ["binary", "large_binary", "binary_view"] + [
            f"dictionary:{k}:{v}" for k in KEYS for v in ("binary", "large_binary")
        ]
    if kind == "list":
        return ["list", "large_list"]
    if kind == "decimal":
        return ["decimal128", "decimal256"]
    if kind == "json":
        return ["arrow.json", "lance.json"]
    return []


def created_entry(kind: str, layout: str) -> str | None:
    """The output encoding a column created from ``layout`` records (none: the default)."""
    if kind == "json":
        return "lance.json" if layout == "jsonb" else None
    if kind in ("string", "binary", "list", "decimal"):
        return None if layout == INPUT_LAYOUTS[kind][0] else layout
    return None


def output_type(kind: str, encoding: str | None) -> pa.DataType:
    """The Arrow type a read returns for ``kind`` under ``encoding`` (None: the default)."""
    if kind == "blob":
        return BLOB_DESCRIPTOR
    options = encodings_of(kind)
    if not options:
        return _layout_type(kind, INPUT_LAYOUTS[kind][0])
    return _layout_type(kind, encoding if encoding in options else options[0])


# ---- values ------------------------------------------------------------------------------------


def value_of(kind: str, name: str, i: int, tag: int, nullable: bool = True) -> Any:
    """The Python value of row ``i`` written by write ``tag`` (None on every fifth row of a
    nullable column)."""
    if nullable and (i + tag) % 5 == 0 and kind not in ("int64", "bool"):
        return None
    if kind == "string":
        return f"{name}{tag}:{i}"
    if kind in ("binary", "blob"):
        return f"{name}{tag}:{i}".encode()
    if kind == "list":
        return [i + k for k in range((i + tag) % 3)]
    if kind == "decimal":
        return Decimal(i * 25 + tag) / 100
    if kind == "json":
        if (i + tag) % 4 == 1:
            return [i, "x", None, {"t": tag}]
        return {"k": i, "t": tag, "s": f"doc{i}", "n": None, "a": [True, 1]}
    if kind == "ext":
        return i * 3 + tag
    if kind == "int64":
        return i * 2
    if kind == "bool":
        return i % 2 == 0
    raise AssertionError(kind)


def _array(kind: str, layout: str, values: list[Any]) -> tuple[pa.Array, dict[bytes, bytes]]:
    """An input array of ``values`` in ``layout`` and the field metadata it needs."""
    if kind == "json":
        docs = [None if v is None else json.dumps(v) for v in values]
        if layout == "jsonb":
            return encode_json(pa.array(docs, pa.string()), path="json"), JSONB_MD
        storage = _TEXT[layout.removeprefix("json_")]
        return pa.ExtensionArray.from_storage(pa.json_(storage), pa.array(docs, storage)), {}
    if kind == "blob":
        if layout == "blob":
            return blob_array(values), {}
        return pa.array(values, pa.large_binary()), {}
    if kind == "ext":
        return pa.array(values, pa.int32()), (EXT_MD if layout == "ext" else {})
    t = _layout_type(kind, layout)
    if pa.types.is_dictionary(t):
        plain = pa.array(values, t.value_type)
        return plain.dictionary_encode().cast(t), {}
    return pa.array(values, t), {}


@dataclass
class Column:
    """A column of the model: its kind, recorded output encoding (``entry``) and, for the
    struct, its children (``x`` int32, ``y`` a string with its own entry)."""

    name: str
    kind: str
    entry: str | None = None
    children: list[str] = field(default_factory=list)
    child_entry: str | None = None
    #: some fragment has no data for it (added as an all-null field, or a struct child an
    #: append left out)
    sparse: bool = False
    nullable: bool = True


def _struct_type(col: Column, y_type: pa.DataType) -> pa.StructType:
    fields = []
    for child in col.children:
        t = pa.int32() if child == "x" else y_type
        fields.append(pa.field(child, t))
    return pa.struct(fields)


def _struct_values(col: Column, i: int, tag: int, children: list[str]) -> Any:
    if (i + tag) % 7 == 3:
        return None
    out: dict[str, Any] = {}
    for child in children:
        out[child] = i if child == "x" else value_of("string", "y", i, tag)
    return out


def input_table(
    columns: list[Column],
    ids: Iterable[int],
    tag: int,
    layouts: dict[str, str],
    *,
    struct_children: list[str] | None = None,
) -> tuple[pa.Table, dict[int, dict[str, Any]]]:
    """An input table of ``columns`` for ``ids`` in ``layouts`` (the struct's key is the
    layout of its ``y`` child) and the model rows it holds; ``struct_children`` names the
    struct children the input has, in its order."""
    ids = list(ids)
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    rows: dict[int, dict[str, Any]] = {i: {} for i in ids}
    for col in columns:
        if col.kind == "key":
            arrays.append(pa.array(ids, pa.int64()))
            fields.append(pa.field(col.name, pa.int64(), nullable=col.nullable))
            for i in ids:
                rows[i][col.name] = i
            continue
        if col.kind == "struct":
            children = (
                col.children
                if struct_children is None
                else [c for c in struct_children if c in col.children]
            )
            y_layout = layouts[col.name]
            values = [_struct_values(col, i, tag, children) for i in ids]
            y, _ = _array("string", y_layout, [None if v is None else v.get("y") for v in values])
            kids = [
                pa.array([None if v is None else v["x"] for v in values], pa.int32())
                if c == "x"
                else y
                for c in children
            ]
            t = _struct_type(Column(col.name, "struct", children=children), y.type)
            mask = pa.array([v is None for v in values], pa.bool_())
            arrays.append(pa.StructArray.from_arrays(kids, fields=list(t), mask=mask))
            fields.append(pa.field(col.name, t))
            for i, v in zip(ids, values, strict=True):
                full = None if v is None else {c: v.get(c) for c in col.children}
                rows[i][col.name] = full
            continue
        values = [value_of(col.kind, col.name, i, tag, col.nullable) for i in ids]
        arr, md = _array(col.kind, layouts[col.name], values)
        arrays.append(arr)
        if col.kind == "blob" and layouts[col.name] == "blob":
            fields.append(blob_field(col.name))
        else:
            fields.append(pa.field(col.name, arr.type, metadata=md or None))
        for i, v in zip(ids, values, strict=True):
            rows[i][col.name] = v
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), rows


def read_value(kind: str, encoding: str | None, arr: pa.ChunkedArray | pa.Array) -> list[Any]:
    """Python values of a read column, comparable with the model's."""
    if kind == "json":
        if output_type(kind, encoding) == pa.large_binary():
            arr = decode_jsonb(arr, path="json")
        return [None if v is None else json.loads(v) for v in arr.to_pylist()]
    return arr.to_pylist()


# ---- the model ---------------------------------------------------------------------------------


@dataclass
class Model:
    """What a flagged table holds: columns in order and rows by key."""

    columns: list[Column]
    rows: dict[int, dict[str, Any]]

    def copy(self) -> Model:
        return copy.deepcopy(self)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def names(self, accept: Callable[[Column], bool] = lambda c: True) -> list[str]:
        return [c.name for c in self.columns if c.kind != "key" and accept(c)]

    def encoding(self, path: str, overrides: dict[str, str]) -> str | None:
        """The output encoding a read of ``path`` uses: override > entry > default."""
        if path in overrides:
            return overrides[path]
        top, _, child = path.partition(".")
        col = self.column(top)
        return col.child_entry if child else col.entry

    def read_type(self, col: Column, overrides: dict[str, str]) -> pa.DataType:
        if col.kind == "key":
            return pa.int64()
        if col.kind == "struct":
            y = output_type("string", self.encoding(col.name + ".y", overrides))
            return _struct_type(col, y)
        return output_type(col.kind, self.encoding(col.name, overrides))

    def insert(self, rows: dict[int, dict[str, Any]]) -> None:
        for i, row in rows.items():
            self.rows[i] = {c.name: self._missing(c, row) for c in self.columns}

    def _missing(self, col: Column, row: dict[str, Any]) -> Any:
        return row.get(col.name)

    def expected_rows(self, names: list[str]) -> list[tuple[Any, ...]]:
        """The model's rows (the given columns), sorted by key."""
        return [tuple(self.rows[i][n] for n in names) for i in sorted(self.rows)]
