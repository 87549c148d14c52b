"""The schema layer against pylance 14.0.2 as the oracle.

For a matrix of Arrow schemas covering every logical type of facts §5 we compare:

* our Field tree with the ``lance.file.Field`` messages pylance writes into the manifest
  (ids, parents, names, logical types, nullability, encoding, dictionary, extension name,
  metadata, unenforced keys) and with ``LanceSchema.from_pyarrow`` (its pickled protos);
* ``schema_to_arrow(schema_from_arrow(s))`` with pylance's ``ds.schema`` after a write;
* ``data_file_field_ids`` with ``DataFile.fields`` / ``column_indices`` for storage versions
  legacy, 2.0, 2.1, 2.2 and 2.3;
* the types we refuse with the types pylance refuses;
* append compatibility (``match_input_fields(..., allow_missing_nullable=True)``) with what
  pylance accepts to append, and the DataFile.fields of the appended fragment.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pyarrow.types as pat
import pytest
from lance.arrow import BFloat16Type
from lance.schema import LanceSchema

from lance_semantic.errors import SchemaMismatchError, UnsupportedTypeError
from lance_semantic.schema.arrow import schema_from_arrow, schema_to_arrow
from lance_semantic.schema.compatibility import match_input_fields
from lance_semantic.schema.datafile import check_storage_version_support, data_file_field_ids
from lance_semantic.schema.field import Field

pytestmark = pytest.mark.interop

S = pa.struct
XY = S([("x", pa.int32()), ("y", pa.float64())])
BF16 = BFloat16Type()
PK = "lance-schema:unenforced-primary-key"
CK = "lance-schema:unenforced-clustering-key:position"


class OracleExt(pa.ExtensionType):
    def __init__(self) -> None:
        super().__init__(pa.int64(), "test.oracle_ext")

    def __arrow_ext_serialize__(self) -> bytes:
        return b"v=1"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> OracleExt:
        return cls()


try:
    pa.register_extension_type(OracleExt())
except pa.ArrowKeyError:
    pass


def _cols(*types: pa.DataType) -> pa.Schema:
    return pa.schema([pa.field(f"c{i}", t) for i, t in enumerate(types)])


# fmt: off
SCHEMAS: dict[str, pa.Schema] = {
    "ints_floats": _cols(
        pa.null(), pa.bool_(), pa.float16(), pa.float32(), pa.float64(),
        *(getattr(pa, f"{s}int{b}")() for s in ("", "u") for b in (8, 16, 32, 64)),
    ),
    "temporal": _cols(
        pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
        pa.time64("ns"), *(pa.duration(u) for u in ("s", "ms", "us", "ns")),
    ),
    "timestamps": _cols(
        *(pa.timestamp(u) for u in ("s", "ms", "us", "ns")), pa.timestamp("us", "UTC"),
        pa.timestamp("ns", "America/New_York"), pa.timestamp("s", "+05:30"),
        pa.timestamp("ms", "-08:00"),
    ),
    "decimals": _cols(
        pa.decimal128(10, 2), pa.decimal128(5, -2), pa.decimal128(38, 38), pa.decimal256(40, 3)
    ),
    "binary_like": _cols(
        pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.string_view(),
        pa.binary_view(), pa.binary(3), pa.binary(1),
    ),
    "fixed_size_lists": _cols(
        pa.list_(pa.float32(), 4), pa.list_(pa.list_(pa.float32(), 2), 3),
        pa.list_(pa.timestamp("us", "UTC"), 2), pa.list_(pa.timestamp("s", "+05:30"), 2),
        pa.list_(pa.decimal128(5, 2), 2), pa.list_(pa.binary(3), 2), pa.list_(pa.bool_(), 3),
        pa.list_(pa.float16(), 2), pa.list_(BF16, 8),
        pa.list_(pa.field("el", pa.int8(), nullable=False, metadata={"a": "b"}), 2),
    ),
    "lists": _cols(
        pa.list_(pa.int8()), pa.large_list(pa.string()), pa.list_(pa.list_(pa.int64())),
        pa.list_(pa.field("element", pa.int32(), nullable=False, metadata={"a": "b"})),
        pa.list_(pa.list_(pa.float32(), 2)), pa.list_(XY), pa.large_list(XY),
        pa.list_(S([("a", pa.list_(pa.int64())), ("b", pa.string())])),
        pa.list_(pa.field("s", XY, nullable=False)),
    ),
    "structs": pa.schema([
        pa.field("st", S([("x", pa.int32()), ("y", pa.string()), ("z", S([("w", pa.float64())]))])),
        pa.field("empty", S([])),
        pa.field("nn", S([pa.field("x", pa.int8(), nullable=False)]), nullable=False),
        pa.field("deep", S([("a", S([("b", S([("c", pa.list_(XY))]))]))])),
        pa.field("dup", S([("x", pa.int8()), ("x", pa.int16())])),
    ]),
    "maps": _cols(
        pa.map_(pa.string(), pa.int64()), pa.map_(pa.int32(), pa.list_(pa.int8())),
        pa.map_(pa.string(), XY),
        pa.map_(pa.string(), pa.field("value", pa.int8(), nullable=False)),
        pa.map_(pa.field("k", pa.string(), nullable=False, metadata={"m": "1"}),
                pa.field("v", pa.int8())),
        pa.list_(pa.map_(pa.string(), pa.int8())),
    ),
    "fsl_of_struct": _cols(
        pa.list_(XY, 2), pa.list_(pa.field("el", XY, nullable=False, metadata={"q": "r"}), 3),
        S([("f", pa.list_(XY, 2)), ("z", pa.int8())]),
    ),
    # pylance 14 panics writing *values* of these at the default 2.2 (schema-only writes work)
    "fsl_of_strings": _cols(pa.list_(pa.string(), 2), pa.list_(pa.string_view(), 2)),
    "list_of_fsl_of_struct": _cols(pa.list_(pa.list_(XY, 2))),
    # ... and refuses values of empty structs inside lists ("not yet supported")
    "fsl_of_empty_struct": _cols(pa.list_(S([]), 2)),
    "dictionaries": _cols(
        pa.dictionary(pa.int32(), pa.string()), pa.dictionary(pa.int8(), pa.large_string()),
        pa.dictionary(pa.int16(), pa.int64()), pa.dictionary(pa.uint16(), pa.string()),
        pa.dictionary(pa.uint64(), pa.binary()), pa.dictionary(pa.int64(), pa.float64()),
        pa.dictionary(pa.uint8(), pa.large_binary()),
        pa.dictionary(pa.int8(), pa.string(), ordered=True),
        S([("d", pa.dictionary(pa.int8(), pa.string()))]),
        pa.list_(pa.dictionary(pa.int8(), pa.string())),
    ),
    "extensions": pa.schema([
        pa.field("uuid", pa.uuid(), metadata={"k": "v"}), pa.field("bf16", BF16),
        pa.field("ext", OracleExt()), pa.field("l_ext", pa.list_(OracleExt())),
        pa.field("s_uuid", S([("u", pa.uuid())])),
        pa.field("tensor", pa.fixed_shape_tensor(pa.float32(), [2, 3])),
        pa.field("unreg", pa.string(), metadata={"ARROW:extension:name": "nobody.registered"}),
        pa.field("unreg2", pa.binary(4),
                 metadata={"ARROW:extension:name": "nobody.else", "ARROW:extension:metadata": "m"}),
    ]),
    "metadata_and_keys": pa.schema(
        [
            pa.field("id", pa.int64(), False, metadata={PK: "true", PK + ":position": "1"}),
            pa.field("a", pa.int32(), metadata={"note": "first", "b": "caf\u00e9", "empty": ""}),
            pa.field("s", S([pa.field("x", pa.int8(), metadata={"in": "1"})]), metadata={"o": "2"}),
            pa.field("ck", pa.int32(), metadata={CK: "2"}),
            pa.field("ps", S([pa.field("k", pa.int32(), nullable=False, metadata={PK: "yes"})]),
                     nullable=False),
        ],
        metadata={"owner": "tests", "json": '{"a": [1, 2]}', "blank": ""},
    ),
}
# fmt: on

# ---- a tiny protobuf reader, independent of any generated code ----


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        value |= (b & 0x7F) << shift
        shift, pos = shift + 7, pos + 1
        if not b & 0x80:
            return value, pos


def _messages(data: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        wire = tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((tag >> 3, value))
        elif wire == 2:
            n, pos = _varint(data, pos)
            out.append((tag >> 3, data[pos : pos + n]))
            pos += n
        else:  # pragma: no cover - not used by Field / Manifest fields we read
            width = 8 if wire == 1 else 4
            out.append((tag >> 3, data[pos : pos + width]))
            pos += width
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _map(entries: list[bytes]) -> dict[str, bytes]:
    out = {}
    for entry in entries:
        kv = dict(_messages(entry))
        out[bytes(kv.get(1, b"")).decode()] = bytes(kv.get(2, b""))  # type: ignore[arg-type]
    return out


def _pb_record(data: bytes) -> dict[str, Any]:
    """A ``lance.file.Field`` message as a record (proto3 defaults for absent fields)."""
    items = _messages(data)
    one = {n: v for n, v in items}
    dictionary = None
    if 8 in one:
        d = dict(_messages(one[8]))  # type: ignore[arg-type]
        dictionary = (d.get(1, 0), d.get(2, 0))
    return {
        "name": bytes(one.get(2, b"")).decode(),  # type: ignore[arg-type]
        "id": _signed(one.get(3, 0)),  # type: ignore[arg-type]
        "parent_id": _signed(one.get(4, 0)),  # type: ignore[arg-type]
        "logical_type": bytes(one.get(5, b"")).decode(),  # type: ignore[arg-type]
        "nullable": bool(one.get(6, 0)),
        "encoding": one.get(7, 0),
        "dictionary": dictionary,
        "extension_name": bytes(one.get(9, b"")).decode(),  # type: ignore[arg-type]
        "metadata": _map([v for n, v in items if n == 10]),  # type: ignore[misc]
        "pk": bool(one.get(12, 0)),
        "pk_position": one.get(13, 0),
        "ck_position": one.get(15, 0),
    }


def _our_record(f: Field) -> dict[str, Any]:
    return {
        "name": f.name,
        "id": f.id,
        "parent_id": f.parent_id,
        "logical_type": f.logical_type,
        "nullable": f.nullable,
        "encoding": f.encoding,
        "dictionary": f.dictionary,
        "extension_name": f.extension_name or "",
        "metadata": dict(f.metadata),
        "pk": f.unenforced_primary_key,
        "pk_position": f.unenforced_primary_key_position,
        "ck_position": f.unenforced_clustering_key_position,
    }


def _manifest(uri: Path) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """The Field records and schema metadata of the (only) manifest pylance wrote."""
    (path,) = (uri / "_versions").glob("*.manifest")
    data = path.read_bytes()
    pos = int.from_bytes(data[-16:-8], "little", signed=True)
    length = int.from_bytes(data[pos : pos + 4], "little")
    items = _messages(data[pos + 4 : pos + 4 + length])
    fields = [_pb_record(v) for n, v in items if n == 1]  # type: ignore[arg-type]
    return fields, _map([v for n, v in items if n == 5])  # type: ignore[misc]


def _describe(t: pa.DataType | pa.Field, path: str = "") -> list[tuple[str, str, bool, dict]]:
    """Every nested field with its type, nullability and metadata (Schema.equals can be lax)."""
    out = []
    if isinstance(t, pa.Field):
        out.append((path + t.name, str(t.type), t.nullable, dict(t.metadata or {})))
        return out + _describe(t.type, path + t.name + ".")
    storage = t.storage_type if isinstance(t, pa.BaseExtensionType) else t
    if pat.is_map(storage):
        return _describe(storage.key_field, path) + _describe(storage.item_field, path)
    for i in range(storage.num_fields):
        out += _describe(storage.field(i), path)
    return out


# ---- field trees and read-back schemas ----

#: schemas pylance 14 can only write without rows (it panics on values; see SCHEMAS)
SCHEMA_ONLY = {"fsl_of_strings", "list_of_fsl_of_struct", "fsl_of_empty_struct"}


def _write(name: str, schema: pa.Schema, uri: Path) -> Any:
    """Write two rows of valid values (or no rows for SCHEMA_ONLY) with pylance."""
    return lance.write_dataset(_table(schema, 0 if name in SCHEMA_ONLY else 2), uri)


@pytest.mark.parametrize("name", SCHEMAS)
def test_field_tree_matches_the_manifest_pylance_writes(name: str, tmp_path: Path) -> None:
    schema = SCHEMAS[name]
    _write(name, schema, tmp_path)
    written, schema_metadata = _manifest(tmp_path)
    ours = schema_from_arrow(schema)
    records = [_our_record(f) for f in ours.flatten()]
    if name in SCHEMA_ONLY:  # without values pylance leaves Field.dictionary out
        for record in records:
            record["dictionary"] = None
    assert records == written
    assert dict(ours.metadata) == schema_metadata


@pytest.mark.parametrize("name", SCHEMAS)
def test_field_tree_matches_lance_schema_from_pyarrow(name: str) -> None:
    schema = SCHEMAS[name]
    metadata_json, *protos = LanceSchema.from_pyarrow(schema).__reduce__()[1]
    theirs = [_pb_record(p) for p in protos]
    ours = [_our_record(f) for f in schema_from_arrow(schema).flatten()]
    for record in ours:
        record["dictionary"] = None  # from_pyarrow has no dictionary values yet
    assert ours == theirs


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_to_arrow_matches_ds_schema(name: str, tmp_path: Path) -> None:
    schema = SCHEMAS[name]
    theirs = _write(name, schema, tmp_path).schema
    ours = schema_to_arrow(schema_from_arrow(schema))
    assert ours.equals(theirs, check_metadata=True)
    assert [_describe(f) for f in ours] == [_describe(f) for f in theirs]
    assert [type(f.type) for f in ours] == [type(f.type) for f in theirs]
    assert ours.metadata == theirs.metadata


@pytest.mark.parametrize("name", SCHEMAS)
def test_read_back_schema_is_a_fixed_point(name: str, tmp_path: Path) -> None:
    """Writing pylance's own ds.schema again gives the field tree we derive from it."""
    first = _write(name, SCHEMAS[name], tmp_path / "a").schema
    _write(name, first, tmp_path / "b")
    written, _ = _manifest(tmp_path / "b")
    assert [_our_record(f) for f in schema_from_arrow(first).flatten()] == written


# ---- refused types ----

REJECTED: list[pa.DataType] = [
    pa.decimal32(5, 2),
    pa.decimal64(12, 2),
    pa.month_day_nano_interval(),
    pa.list_view(pa.int8()),
    pa.large_list_view(pa.int8()),
    pa.run_end_encoded(pa.int32(), pa.int8()),
    pa.dense_union([pa.field("a", pa.int8())]),
    pa.map_(pa.string(), pa.int64(), keys_sorted=True),
    pa.list_(pa.list_(pa.int8()), 2),
    pa.list_(pa.map_(pa.string(), pa.int8()), 2),
    pa.list_(pa.list_(XY, 2), 3),
    pa.list_(pa.dictionary(pa.int8(), pa.string()), 2),
    pa.list_(pa.uuid(), 2),
    pa.list_(OracleExt(), 2),
    pa.dictionary(pa.int8(), pa.binary(4)),
    pa.dictionary(pa.int8(), pa.timestamp("us")),
    pa.dictionary(pa.int8(), pa.decimal128(5, 2)),
    pa.dictionary(pa.int8(), pa.date32()),
    pa.dictionary(pa.int8(), pa.uuid()),
    pa.dictionary(pa.int8(), XY),
    pa.list_(pa.decimal64(5, 2)),
    S([("x", pa.month_day_nano_interval())]),
]


def _scalar(t: pa.DataType) -> Any:
    table: list[tuple[Any, Any]] = [
        (pat.is_boolean, lambda: True),
        (pat.is_integer, lambda: 1),
        (pat.is_floating, lambda: 1.0),
        (pat.is_date, lambda: dt.date(2020, 1, 2)),
        (pat.is_time, lambda: dt.time(1, 2, 3)),
        (pat.is_timestamp, lambda: dt.datetime(2020, 1, 2, 3, 4, 5)),
        (pat.is_duration, lambda: dt.timedelta(seconds=5)),
        (pat.is_decimal, lambda: Decimal(0)),
        (pat.is_fixed_size_binary, lambda: b"a" * t.byte_width),
        (
            lambda x: pat.is_string(x) or pat.is_large_string(x) or pat.is_string_view(x),
            lambda: "a",
        ),
        (
            lambda x: pat.is_binary(x) or pat.is_large_binary(x) or pat.is_binary_view(x),
            lambda: b"a",
        ),
        (pat.is_interval, lambda: (1, 1, 1)),
    ]
    for matches, value in table:
        if matches(t):
            return value()
    raise AssertionError(f"no sample value for {t}")


def _array(t: pa.DataType, n: int) -> pa.Array:
    """``n`` valid non-null values of any type (nested and extension types included)."""
    offsets = pa.array(range(n + 1), pa.int32())
    if isinstance(t, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(t, _array(t.storage_type, n))
    if pat.is_struct(t):
        if t.num_fields == 0:
            return pa.array([{}] * n, t)
        return pa.StructArray.from_arrays([_array(f.type, n) for f in t], fields=list(t))
    if pat.is_map(t):
        return pa.MapArray.from_arrays(
            offsets, _array(t.key_type, n), _array(t.item_type, n), type=t
        )
    if pat.is_list(t):
        return pa.ListArray.from_arrays(offsets, _array(t.value_type, n), type=t)
    if pat.is_large_list(t):
        return pa.LargeListArray.from_arrays(
            offsets.cast(pa.int64()), _array(t.value_type, n), type=t
        )
    if pat.is_list_view(t) or pat.is_large_list_view(t):
        return pa.array([[1]] * n, t)
    if pat.is_fixed_size_list(t):
        return pa.FixedSizeListArray.from_arrays(_array(t.value_type, n * t.list_size), type=t)
    if pat.is_dictionary(t):
        return pa.DictionaryArray.from_arrays(
            pa.array([0] * n, t.index_type), _array(t.value_type, 1), ordered=t.ordered
        )
    if pat.is_null(t):
        return pa.nulls(n)
    if pat.is_float16(t):
        return pa.array(np.ones(n, np.float16))
    if pat.is_run_end_encoded(t):
        return pa.RunEndEncodedArray.from_arrays([n], _array(t.value_type, 1), type=t)
    if pat.is_union(t):
        return pa.UnionArray.from_dense(
            pa.array([0] * n, pa.int8()),
            pa.array(range(n), pa.int32()),
            [_array(t.field(0).type, n)],
        )
    return pa.array([_scalar(t)] * n, t)


def _table(schema: pa.Schema, n: int) -> pa.Table:
    return pa.Table.from_arrays([_array(f.type, n) for f in schema], schema=schema)


@pytest.mark.parametrize("arrow_type", REJECTED, ids=str)
def test_refused_types_are_refused_by_pylance(arrow_type: pa.DataType, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedTypeError):
        schema_from_arrow(pa.schema([("c", arrow_type)]))
    table = pa.table({"c": _array(arrow_type, 2)})
    with pytest.raises((OSError, ValueError, pa.ArrowException)):
        lance.write_dataset(table, tmp_path)


# ---- data-file field ids ----

#: schemas whose data files we compare; each column holds valid non-null values
DATA_SCHEMAS: dict[str, pa.Schema] = {
    **{k: v for k, v in SCHEMAS.items() if k not in SCHEMA_ONLY},
    "empty_struct": pa.schema([("a", pa.int8()), ("e", S([])), ("b", pa.int8())]),
    "nested_empty_struct": pa.schema([("s", S([("e", S([])), ("x", pa.int8())]))]),
    "fsl_struct": pa.schema([("f", pa.list_(XY, 2))]),
    "fsl_struct_in_struct": pa.schema([("s", S([("f", pa.list_(XY, 2)), ("z", pa.int8())]))]),
    "list_fsl_struct": pa.schema([("l", pa.list_(pa.list_(S([("x", pa.int8())]), 2)))]),
    "mix": pa.schema(
        [
            ("a", pa.int64()),
            ("s", XY),
            ("l", pa.list_(pa.int64())),
            ("ls", pa.list_(S([("a", pa.list_(pa.int64())), ("b", pa.string())]))),
            ("d", pa.dictionary(pa.int8(), pa.string())),
        ]
    ),
}
VERSIONS = {"legacy": (0, 2), "2.0": (2, 0), "2.1": (2, 1), "2.2": (2, 2), "2.3": (2, 3)}
#: pylance 14 bugs that are not format rules (it panics or refuses valid data)
PYLANCE_BUGS = {
    ("list_fsl_struct", "2.2"),  # panics in repdef.rs (2.0 and 2.3 write it)
}


@pytest.mark.parametrize(
    "name, version",
    [(n, v) for n in DATA_SCHEMAS for v in VERSIONS if (n, v) not in PYLANCE_BUGS],
)
def test_data_file_field_ids_match_pylance(name: str, version: str, tmp_path: Path) -> None:
    schema = DATA_SCHEMAS[name]
    table = _table(schema, 2)
    fields = schema_from_arrow(schema).fields
    try:
        ds = lance.write_dataset(table, tmp_path, data_storage_version=version)
    except BaseException as e:  # pylance raises OSError or panics (PanicException)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        # pylance refuses the version: we must predict it
        with pytest.raises(UnsupportedTypeError):
            check_storage_version_support(fields, VERSIONS[version])
        return
    check_storage_version_support(fields, VERSIONS[version])
    data_file = ds.get_fragments()[0].metadata.files[0]
    assert (data_file.file_major_version, data_file.file_minor_version) == VERSIONS[version]
    expected = (list(data_file.fields), list(data_file.column_indices))
    assert data_file_field_ids(fields, VERSIONS[version]) == expected


# ---- append compatibility ----

BASE = pa.schema(
    [
        pa.field("a", pa.int32(), nullable=False),
        pa.field("b", pa.string()),
        pa.field("s", S([("x", pa.int8()), ("y", pa.int8())])),
        pa.field("l", pa.list_(pa.int8())),
    ]
)
MAP = pa.map_(pa.string(), pa.int8())
APPENDS: dict[str, tuple[pa.Schema, pa.Schema]] = {
    "same": (BASE, BASE),
    "all_nullable": (BASE, pa.schema([f.with_nullable(True) for f in BASE])),
    "b_non_nullable": (BASE, BASE.set(1, pa.field("b", pa.string(), nullable=False))),
    "reordered": (BASE, pa.schema([BASE.field(n) for n in ("b", "a", "l", "s")])),
    "members_reordered": (
        BASE,
        BASE.set(2, pa.field("s", S([("y", pa.int8()), ("x", pa.int8())]))),
    ),
    "subset": (BASE, pa.schema([BASE.field("a"), BASE.field("b")])),
    "subset_without_non_nullable": (BASE, pa.schema([BASE.field("b"), BASE.field("l")])),
    "member_subset": (BASE, BASE.set(2, pa.field("s", S([("x", pa.int8())])))),
    "no_members": (BASE, BASE.set(2, pa.field("s", S([])))),
    "extra": (BASE, BASE.append(pa.field("z", pa.int8()))),
    "extra_member": (
        BASE,
        BASE.set(2, pa.field("s", S([("x", pa.int8()), ("y", pa.int8()), ("z", pa.int8())]))),
    ),
    "int64": (BASE, BASE.set(0, pa.field("a", pa.int64(), nullable=False))),
    "large_string": (BASE, BASE.set(1, pa.field("b", pa.large_string()))),
    "string_view": (BASE, BASE.set(1, pa.field("b", pa.string_view()))),
    "dictionary": (BASE, BASE.set(1, pa.field("b", pa.dictionary(pa.int32(), pa.string())))),
    "member_type": (BASE, BASE.set(2, pa.field("s", S([("x", pa.int16()), ("y", pa.int8())])))),
    "list_element": (BASE, BASE.set(3, pa.field("l", pa.list_(pa.field("element", pa.int8()))))),
    "list_item_non_nullable": (
        BASE,
        BASE.set(3, pa.field("l", pa.list_(pa.field("item", pa.int8(), nullable=False)))),
    ),
    "large_list": (BASE, BASE.set(3, pa.field("l", pa.large_list(pa.int8())))),
    "metadata": (BASE, pa.schema([f.with_metadata({"q": "r"}) for f in BASE], metadata={"x": "y"})),
    "uuid_from_binary": (_cols(pa.uuid()), _cols(pa.binary(16))),
    "binary_from_uuid": (_cols(pa.binary(16)), _cols(pa.uuid())),
    "ext_from_storage": (_cols(OracleExt()), _cols(pa.int64())),
    "timezone": (_cols(pa.timestamp("s", "UTC")), _cols(pa.timestamp("s", "+00:00"))),
    "dict_keys": (
        _cols(pa.dictionary(pa.int32(), pa.string())),
        _cols(pa.dictionary(pa.int8(), pa.string())),
    ),
    "dict_ordered": (
        _cols(pa.dictionary(pa.int32(), pa.string())),
        _cols(pa.dictionary(pa.int32(), pa.string(), ordered=True)),
    ),
    "fsl_item_name": (
        _cols(pa.list_(pa.int8(), 2)),
        _cols(pa.list_(pa.field("el", pa.int8(), nullable=False), 2)),
    ),
    "fsl_struct_item_name": (_cols(pa.list_(XY, 2)), _cols(pa.list_(pa.field("el", XY), 2))),
    "map_names": (
        _cols(MAP),
        _cols(pa.map_(pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int8()))),
    ),
    "map_value_nullability": (
        _cols(MAP),
        _cols(pa.map_(pa.string(), pa.field("value", pa.int8(), nullable=False))),
    ),
    "list_struct_members": (
        _cols(pa.list_(XY)),
        _cols(pa.list_(S([("y", pa.float64()), ("x", pa.int32())]))),
    ),
    "deep_member_type": (
        _cols(S([("s", S([("x", pa.int8()), ("y", pa.string())]))])),
        _cols(S([("s", S([("x", pa.int8()), ("y", pa.int64())]))])),
    ),
}


@pytest.mark.parametrize("name", APPENDS)
def test_append_compatibility_matches_pylance(name: str, tmp_path: Path) -> None:
    table_schema, input_schema = APPENDS[name]
    lance.write_dataset(_table(table_schema, 2), tmp_path)
    table = schema_from_arrow(table_schema)
    try:
        ds = lance.write_dataset(_table(input_schema, 2), tmp_path, mode="append")
    except OSError:
        with pytest.raises(SchemaMismatchError):
            match_input_fields(table, input_schema, allow_missing_nullable=True)
        return
    matched = match_input_fields(table, input_schema, allow_missing_nullable=True)
    data_file = ds.get_fragments()[-1].metadata.files[0]
    expected = (list(data_file.fields), list(data_file.column_indices))
    assert data_file_field_ids(matched, (2, 2)) == expected
