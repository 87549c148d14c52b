"""Arrow schema <-> Lance field tree under the legacy rules (layer L2;
docs/format/lance-format-facts.md §4, §5).

Legacy rule: each ``logical_type`` string names exactly one Arrow type. This module converts
both ways, assigning Lance field ids in pre-order and filling every ``lance.file.Field``
attribute (encoding, dictionary, extension name, metadata, unenforced keys) the way
pylance 14.0.2 does, and gives back Arrow schemas exactly as pylance's ``ds.schema`` does.

The per-type vocabulary (``logical_type_of``, ``arrow_type_of_logical``, ``encoding_of``) lives
in :mod:`lance_semantic.schema.leaves` and the data-file column mapping
(``data_file_field_ids``) in :mod:`lance_semantic.schema.datafile`; both are re-exported here.

JSON columns (``arrow.json`` / ``lance.json``) are stored as logical ``json`` under the
``lance.json`` extension keys and read back as ``arrow.json`` text
(docs/format/lance-format-facts.md §9); blob columns (``lance-encoding:blob``, ``lance.blob.v2``)
keep pylance's field tree and read back as pylance's descriptors (see
:mod:`lance_semantic.schema.blob`).
"""

from __future__ import annotations

import ctypes
import itertools
import sys
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

import pyarrow as pa
import pyarrow.types as pat

from lance_semantic.errors import UnsupportedTypeError
from lance_semantic.schema.blob import (
    BLOB_V2_EXTENSION,
    check_blob_v2_storage,
    descriptor_field,
    is_blob,
    value_field,
)
from lance_semantic.schema.datafile import data_file_field_ids
from lance_semantic.schema.field import EMPTY_METADATA, Field, TableSchema
from lance_semantic.schema.leaves import (
    BFLOAT16_EXTENSION,
    BLOB_METADATA_KEY,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    JSON_EXTENSIONS,
    LIST_LOGICAL_TYPES,
    arrow_type_of_logical,
    encoding_of,
    json_logical_type,
    logical_type_of,
    parse_int,
    unsupported,
)
from lance_semantic.types.arrow_names import with_child_fields
from lance_semantic.types.families import is_list_like
from lance_semantic.types.metadata_keys import (
    CLUSTERING_KEY_POSITION_KEY,
    PRIMARY_KEY_KEY,
    PRIMARY_KEY_POSITION_KEY,
)

__all__ = [
    "EXTENSION_NAME_KEY",
    "EXTENSION_METADATA_KEY",
    "BFLOAT16_EXTENSION",
    "logical_type_of",
    "arrow_type_of",
    "arrow_type_of_logical",
    "encoding_of",
    "field_from_arrow",
    "fields_from_arrow",
    "assign_new_ids",
    "schema_from_arrow",
    "field_to_arrow",
    "schema_to_arrow",
    "physical_field",
    "data_file_field_ids",
]

_TRUTHY = frozenset({"true", "1", "yes", "y", "on"})
_U32_MAX = 2**32 - 1


# ---- Field -> Arrow ----


def _plain_type(field: Field) -> pa.DataType:
    """Arrow type of ``field`` with extension types left as storage + field metadata."""
    lt, kids = field.logical_type, field.children
    if lt == "struct":
        return pa.struct([_plain_field(c) for c in kids])
    if lt in LIST_LOGICAL_TYPES:
        _expect_children(field, 1)
        return LIST_LOGICAL_TYPES[lt](_plain_field(kids[0]))
    if lt == "map":
        _expect_children(field, 1)
        _expect_children(kids[0], 2)
        key, value = kids[0].children
        # pylance (through pyarrow's importer) always names the map children key/value
        return pa.map_(_plain_field(key).with_name("key"), _plain_field(value).with_name("value"))
    if lt.startswith("fixed_size_list:struct:"):
        _expect_children(field, 1)
        size = parse_int(lt.rpartition(":")[2], field.path, lt)
        return pa.list_(_plain_field(kids[0]), size)
    return arrow_type_of_logical(lt, field.path)


def _expect_children(field: Field, n: int) -> None:
    if len(field.children) != n:
        got = len(field.children)
        raise unsupported(field.path, field.logical_type, f"expected {n} children, got {got}")


def _plain_field(field: Field) -> pa.Field:
    if field.logical_type == "json":  # reads return text (arrow.json), as pylance's do
        return pa.field(
            field.name, pa.json_(pa.string()), field.nullable, metadata=_json_metadata(field)
        )
    if is_blob(field):  # reads return pylance's descriptors, never the bytes
        return descriptor_field(field)
    ext = field.arrow_extension_name
    metadata: dict[str, bytes] = dict(field.metadata)
    if ext is not None:
        metadata.setdefault(EXTENSION_NAME_KEY, ext.encode())
    return pa.field(field.name, _plain_type(field), field.nullable, metadata=metadata or None)


def _json_metadata(field: Field) -> dict[str, bytes] | None:
    md = {
        k: v
        for k, v in field.metadata.items()
        if k not in (EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)
    }
    return md or None


def physical_field(field: Field) -> pa.Field:
    """The Arrow field a data file stores for ``field`` under the legacy rules: its one Arrow
    type, with JSON as ``large_binary`` JSONB carrying the ``lance.json`` extension keys and
    blob columns in their write layout (v1 ``large_binary``; v2 the logical struct, which the
    fragment writer turns into pylance's prepared layout per data file)."""
    if is_blob(field):
        return value_field(field)
    if field.logical_type == "json":
        md = dict(field.metadata)
        md[EXTENSION_NAME_KEY] = b"lance.json"
        md.setdefault(EXTENSION_METADATA_KEY, b"")
        return pa.field(field.name, pa.large_binary(), field.nullable, metadata=md)
    if not any(c.logical_type == "json" for c in field.walk()):
        return field_to_arrow(field)
    out = field_to_arrow(field)
    return out.with_type(_with_children(out.type, [physical_field(c) for c in field.children]))


def _with_children(dt: pa.DataType, children: list[pa.Field]) -> pa.DataType:
    """``dt`` around the Arrow fields of a Field's children (a map's one child is its
    entries struct, whose members pylance names key / value)."""
    if pa.types.is_map(dt):
        key, value = children[0].type.field(0), children[0].type.field(1)
        children = [key.with_name("key"), value.with_name("value")]
    return with_child_fields(dt, children)


def _materialize(schema: pa.Schema) -> pa.Schema:
    """Turn storage + ``ARROW:extension:*`` metadata into registered extension types.

    This is pyarrow's own import path (the one pylance's results go through), so registered
    extensions become extension types with those keys removed from the field metadata, and
    unregistered ones stay as storage + metadata, exactly like ``ds.schema``.
    """
    return pa.ipc.read_schema(pa.py_buffer(schema.serialize()))


def field_to_arrow(field: Field) -> pa.Field:
    """The Arrow field pylance 14 reports for ``field`` (children, metadata, extension)."""
    return _materialize(pa.schema([_plain_field(field)])).field(0)


def arrow_type_of(field: Field) -> pa.DataType:
    """The Arrow type of ``field`` (using its children for struct/list/map/FSL-of-struct).

    Examples
    --------
    >>> ts = schema_from_arrow(pa.schema([("m", pa.map_(pa.string(), pa.int8()))]))
    >>> arrow_type_of(ts.fields[0])
    MapType(map<string, int8>)
    """
    return field_to_arrow(field).type


def schema_to_arrow(schema: TableSchema) -> pa.Schema:
    """The Arrow schema pylance's ``ds.schema`` returns for a table with this field tree.

    Field and schema metadata are returned byte for byte; dictionaries come back unordered,
    fixed-size-list items of primitives as nullable ``item``, view types as plain types.
    """
    plain = pa.schema(
        [_plain_field(f) for f in schema.fields], metadata=dict(schema.metadata) or None
    )
    return _materialize(plain)


# ---- Arrow field -> Field (with ids) ----


class _CArrowSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the Arrow C data interface."""

    _fields_ = [
        (name, ctypes.c_int64 if name in ("flags", "n_children") else ctypes.c_void_p)
        for name in "format name metadata flags n_children children dictionary release data".split()
    ]


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(_CArrowSchema))


def _extension_metadata(dt: pa.BaseExtensionType) -> bytes:
    """The serialized ``ARROW:extension:metadata`` of any extension type (C++ or Python)."""
    if isinstance(dt, pa.ExtensionType):
        return bytes(dt.__arrow_ext_serialize__())
    # C++ canonical types (arrow.uuid, fixed_shape_tensor, ...) expose it only on export
    c_schema = _CArrowSchema()
    pa.field("", dt)._export_to_c(ctypes.addressof(c_schema))
    try:
        exported = _read_c_metadata(c_schema.metadata)
    finally:
        _RELEASE(c_schema.release)(ctypes.byref(c_schema))
    return exported.get(EXTENSION_METADATA_KEY.encode(), b"")


def _read_c_metadata(ptr: int | None) -> dict[bytes, bytes]:
    if not ptr:
        return {}

    def int32(at: int) -> int:
        return int.from_bytes(ctypes.string_at(ptr + at, 4), sys.byteorder, signed=True)

    out: dict[bytes, bytes] = {}
    pos = 4
    for _ in range(int32(0)):
        key_len = int32(pos)
        key = ctypes.string_at(ptr + pos + 4, key_len)
        pos += 4 + key_len
        value_len = int32(pos)
        out[key] = ctypes.string_at(ptr + pos + 4, value_len)
        pos += 4 + value_len
    return out


def _utf8_metadata(raw: Mapping[bytes, bytes] | None, path: str) -> dict[str, bytes]:
    """Metadata as ``str -> bytes``; pylance 14 refuses keys or values that are not UTF-8."""
    out: dict[str, bytes] = {}
    for k, v in (raw or {}).items():
        key = k if isinstance(k, bytes) else str(k).encode()
        value = v if isinstance(v, bytes) else str(v).encode()
        try:
            key.decode(), value.decode()
        except UnicodeDecodeError:
            raise unsupported(
                path, f"metadata {key!r}", "metadata must be UTF-8 (pylance 14 rejects it)"
            ) from None
        out[key.decode()] = value
    return out


def _u32(text: bytes | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text.decode())
    except ValueError:
        return None
    return value if 0 <= value <= _U32_MAX else None


def _child_arrow_fields(storage: pa.DataType) -> list[pa.Field]:
    if pat.is_struct(storage):
        return [storage.field(i) for i in range(storage.num_fields)]
    if is_list_like(storage, fixed=False):
        return [storage.value_field]
    if pat.is_map(storage):
        entries = pa.struct([storage.key_field, storage.item_field])
        return [pa.field("entries", entries, nullable=False)]
    if pat.is_fixed_size_list(storage) and pat.is_struct(storage.value_type):
        return [storage.value_field]
    return []


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def field_from_arrow(
    arrow_field: pa.Field, *, ids: Iterator[int], parent_id: int = -1, parent_path: str = ""
) -> Field:
    """Convert one Arrow field and its children, taking ids from ``ids`` in pre-order.

    ``ids`` is typically ``itertools.count(next_id)``; it is advanced once per Field.

    Raises
    ------
    UnsupportedTypeError
        For types pylance 14 rejects, for metadata that is not UTF-8 and for blob columns
        in a layout the Blob specification does not define.
    """
    path = _join(parent_path, arrow_field.name)
    raw: dict[bytes, bytes] = dict(arrow_field.metadata or {})
    dt = arrow_field.type
    if isinstance(dt, pa.BaseExtensionType):
        raw[EXTENSION_NAME_KEY.encode()] = dt.extension_name.encode()
        raw[EXTENSION_METADATA_KEY.encode()] = _extension_metadata(dt)
        dt = dt.storage_type
    metadata = _utf8_metadata(raw, path)
    ext_raw = metadata.get(EXTENSION_NAME_KEY)
    extension_name = ext_raw.decode() if ext_raw is not None else None
    if extension_name == BLOB_V2_EXTENSION:
        check_blob_v2_storage(dt, path)  # keys kept as given (a v1 input converted on 2.2+
        # storage carries the name only, as pylance writes it)
    elif BLOB_METADATA_KEY in metadata and dt != pa.large_binary():
        # pylance treats the key as a blob marker whatever its value
        raise UnsupportedTypeError(path, str(dt), "blob v1 columns must be large_binary")
    # stored as JSONB under lance.json (docs/format/lance-format-facts.md §9)
    if extension_name in JSON_EXTENSIONS:
        logical = json_logical_type(dt, extension_name, path)
        metadata[EXTENSION_NAME_KEY] = b"lance.json"
        metadata[EXTENSION_METADATA_KEY] = b""
        extension_name = "lance.json"
    else:
        logical = logical_type_of(dt, path)
    field_id = next(ids)
    children = tuple(
        field_from_arrow(c, ids=ids, parent_id=field_id, parent_path=path)
        for c in _child_arrow_fields(dt)
    )
    pk_position = _u32(metadata.get(PRIMARY_KEY_POSITION_KEY))
    pk_flag = metadata.get(PRIMARY_KEY_KEY, b"").decode().lower() in _TRUTHY
    return Field(
        name=arrow_field.name,
        id=field_id,
        parent_id=parent_id,
        logical_type=logical,
        nullable=arrow_field.nullable,
        metadata=MappingProxyType(metadata) if metadata else EMPTY_METADATA,
        extension_name=extension_name,
        encoding=encoding_of(logical),
        dictionary=(0, 0) if logical.startswith("dict:") else None,
        unenforced_primary_key=pk_flag or pk_position is not None,
        unenforced_primary_key_position=pk_position or 0,
        unenforced_clustering_key_position=_u32(metadata.get(CLUSTERING_KEY_POSITION_KEY)) or 0,
        children=children,
        path=path,
    )


def fields_from_arrow(
    arrow_fields: Iterable[pa.Field],
    *,
    first_id: int = 0,
    parent_id: int = -1,
    parent_path: str = "",
) -> tuple[Field, ...]:
    """Convert sibling Arrow fields, numbering them in pre-order from ``first_id``."""
    ids = itertools.count(first_id)
    return tuple(
        field_from_arrow(f, ids=ids, parent_id=parent_id, parent_path=parent_path)
        for f in arrow_fields
    )


def _check_top_level(fields: tuple[Field, ...]) -> None:
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            raise unsupported(f.path, f.logical_type, f"duplicate field name {f.name!r}")
        if "." in f.name:
            raise unsupported(f.path, f.logical_type, "top-level field names cannot contain '.'")
        seen.add(f.name)
    for top in fields:
        _check_primary_keys(top, ancestors=())


def _check_primary_keys(field: Field, ancestors: tuple[Field, ...]) -> None:
    if field.unenforced_primary_key:
        if any(a.nullable for a in (*ancestors, field)):
            reason = "primary key column and all its ancestors must not be nullable"
        elif field.children:
            reason = "primary key column must be a leaf"
        elif any(a.logical_type in LIST_LOGICAL_TYPES for a in ancestors):
            reason = "primary key column must not be in a list type"
        else:
            reason = ""
        if reason:
            raise unsupported(field.path, field.logical_type, reason)
    for child in field.children:
        _check_primary_keys(child, (*ancestors, field))


def assign_new_ids(new_fields: pa.Schema | Iterable[pa.Field], next_id: int) -> tuple[Field, ...]:
    """Top-level Fields for columns added to a table, ids counting up from ``next_id``.

    ``next_id`` is ``max_field_id + 1`` over the schema *and* every DataFile.fields entry
    (docs/format/lance-format-facts.md §4); the caller computes it. Names are validated among the
    new fields only.
    """
    fields = fields_from_arrow(new_fields, first_id=next_id)
    _check_top_level(fields)
    return fields


def schema_from_arrow(schema: pa.Schema, *, first_id: int = 0) -> TableSchema:
    """The Lance field tree of an Arrow schema, ids assigned in pre-order from ``first_id``.

    Field and schema metadata are kept byte for byte (extension fields also record
    ``ARROW:extension:name``/``ARROW:extension:metadata``, as pylance does).

    Raises
    ------
    UnsupportedTypeError
        For unsupported types, duplicate or dotted top-level names, invalid primary-key
        declarations and non-UTF-8 metadata.

    Examples
    --------
    >>> ts = schema_from_arrow(pa.schema([("a", pa.int32()), ("s", pa.struct([("x", pa.int8())]))]))
    >>> [(f.path, f.id, f.parent_id, f.logical_type) for f in ts]
    [('a', 0, -1, 'int32'), ('s', 1, -1, 'struct'), ('s.x', 2, 1, 'int8')]
    """
    fields = assign_new_ids(schema, first_id)
    metadata = _utf8_metadata(schema.metadata, "<schema>")
    return TableSchema(fields, MappingProxyType(metadata) if metadata else EMPTY_METADATA)
