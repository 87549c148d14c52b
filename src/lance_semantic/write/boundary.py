"""The writer boundary of a flagged table: the one place where input data meets the table's
semantic types (layer L4; spec "Data Files and the Physical Schema", "Contract and
Invariants", "Failure Semantics").

1. :func:`bind_input` checks, once per input schema and recursively through struct, list,
   large_list, map and fixed_size_list children, that every input field's Arrow layout is an
   accepted input for its field's semantic type. Cost: O(fields), independent of rows.
2. :func:`to_physical` hands each batch to the encoder in its physical layout:
   representation-only inputs pass through unchanged; a view input becomes a non-view
   layout that holds every value (32-bit offsets when they fit, else 64-bit).
3. :func:`check_invariant` compares every array with the data file's declared layout and
   extension metadata just before the encoder.

:class:`Boundary` runs the three on *every* batch of a write (a later batch may bring another
schema; it is bound afresh), flagged and legacy alike, and reports rows of the caller's
input. :func:`check_file_layout` is the last guard, run by the data file writers on each new
file's schema: whatever path produced the batches, no file is written in a layout its
field's type does not have.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import pyarrow as pa

from ..errors import (
    InvariantViolationError,
    SchemaMismatchError,
    UnsupportedInputTypeError,
    _RowError,
)
from ..schema import (
    Field,
    TableSchema,
    check_append_extensions,
    input_arrow_extension,
    is_blob,
    is_blob_v1,
    is_blob_v2,
    match_input_fields,
    physical_field,
    schema_from_arrow,
    semantic_type_of,
    strip_output_metadata,
)
from ..types import MAP, STRUCT, Decimal
from ..types.arrow_names import child_fields, has_view, kernel_type, with_child_fields
from ..types.casts import cast as safe_cast
from ..types.layouts import OFFSET_LIMIT, accepts_input, is_physical_layout, layout_name
from ..types.metadata_keys import EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY
from .blob_values import logical_blob_array, logical_blob_type
from .json_values import JSONB_TYPE, encode_json_values, has_json

__all__ = [
    "Boundary",
    "bind_input",
    "check_file_layout",
    "declared_field",
    "legacy_physical",
    "to_physical",
    "check_invariant",
    "OFFSET_LIMIT",
]


def _bind_blob(tf: Field, af: pa.Field, path: str) -> Field:
    """Blob v1 takes ``large_binary``; blob v2 its logical struct under ``lance.blob.v2`` or
    v1-style bytes (the Blob specification's inputs)."""
    dt = af.type
    ext = dt.extension_name if isinstance(dt, pa.BaseExtensionType) else None
    ext = ext or ((af.metadata or {}).get(EXTENSION_NAME_KEY.encode(), b"").decode() or None)
    storage = dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt
    ok = accepts_input(semantic_type_of(tf), storage, extension_name=ext)
    if not ok or (is_blob_v1(tf) and storage != pa.large_binary()):
        kind = "blob v2" if is_blob_v2(tf) else "blob v1"
        raise UnsupportedInputTypeError(path, kind, layout_name(dt))
    check_append_extensions(tf, af, path, arrow_slot=False)  # a layered extension (open
    # decision 2) must be the table's or absent
    return tf


def _bind(tf: Field, af: pa.Field, path: str, members_optional: bool = False) -> Field:
    dt = af.type
    if is_blob(tf):
        return _bind_blob(tf, af, path)
    if tf.logical_type == "json":  # arrow.json text or lance.json JSONB (type or metadata)
        md = af.metadata or {}
        ext = md.get(EXTENSION_NAME_KEY.encode(), b"").decode() or None
        if not accepts_input(semantic_type_of(tf), dt, extension_name=ext):
            raise UnsupportedInputTypeError(path, "json", layout_name(dt))
        check_append_extensions(tf, af, path, arrow_slot=False)
        return tf
    # the table's extension, or none (plain storage values); never another one
    check_append_extensions(tf, af, path)
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    st = semantic_type_of(tf)
    if not accepts_input(st, dt):
        if isinstance(st, Decimal) and pa.types.is_decimal(dt):
            raise SchemaMismatchError(
                path, str(st), f"decimal:{dt.precision}:{dt.scale}", "a different value domain"
            )
        raise UnsupportedInputTypeError(path, str(st), layout_name(dt))
    kids = child_fields(dt)
    if st is STRUCT:
        by_name = {c.name: c for c in tf.children}
        bound = []
        for child in kids:
            target = by_name.get(child.name)
            if target is None:
                raise SchemaMismatchError(f"{path}.{child.name}", "<absent>", str(child.type))
            bound.append(_bind(target, child, f"{path}.{child.name}", members_optional))
        if not members_optional:
            _check_missing(tf.children, {c.name for c in kids}, path)
        return replace(tf, children=tuple(bound))
    if st is MAP:
        entries = tf.children[0]
        key, value = entries.children
        bound_entries = replace(
            entries,
            children=(
                _bind(key, kids[0], f"{entries.path}.{key.name}"),
                _bind(value, kids[1], f"{entries.path}.{value.name}"),
            ),
        )
        return replace(tf, children=(bound_entries,))
    if tf.children and kids:  # list / large_list item, fixed_size_list<struct> item
        item = tf.children[0]
        return replace(tf, children=(_bind(item, kids[0], item.path),))
    return tf


def _check_missing(children: Sequence[Field], present: set[str], path: str) -> None:
    for c in children:
        if c.name not in present and not c.nullable:
            raise SchemaMismatchError(
                f"{path}.{c.name}" if path else c.name,
                c.logical_type,
                "<absent>",
                "a non-nullable field is missing from the input",
            )


def bind_input(
    table_fields: Sequence[Field], input_schema: pa.Schema, *, allow_missing_members: bool = False
) -> tuple[Field, ...]:
    """The table's fields in the input's shape, after checking every input layout.

    Columns may come in any order; missing nullable columns read as null. With
    ``allow_missing_members`` any column or struct member (not inside a list or map) may be
    missing, nullable or not (a merge that only updates rows keeps them).

    Raises
    ------
    UnsupportedInputTypeError
        An input layout is not accepted for its field's semantic type (before any file is
        written).
    SchemaMismatchError
        Different semantic parameters (``decimal:12:2`` into ``decimal:10:2``), an extra
        column, a missing non-nullable column, or another extension name.
    """
    by_name = {f.name: f for f in table_fields}
    bound = []
    for af in input_schema:
        tf = by_name.get(af.name)
        if tf is None:
            raise SchemaMismatchError(af.name, "<absent>", str(af.type), "no such column")
        bound.append(_bind(tf, af, af.name, allow_missing_members))
    if not allow_missing_members:
        _check_missing(table_fields, set(input_schema.names), "")
    return tuple(bound)


# ---- per batch -----------------------------------------------------------------------------


def _has_extension_type(dt: pa.DataType) -> bool:
    if isinstance(dt, pa.BaseExtensionType):
        return True
    return any(_has_extension_type(c.type) for c in child_fields(dt))


def _storage_field(f: pa.Field) -> pa.Field:
    dt = f.type
    if not isinstance(dt, pa.BaseExtensionType):
        return f.with_type(_storage_only(dt))
    ext = input_arrow_extension(f)
    assert ext is not None  # f's type is an extension type
    md = dict(f.metadata or {})
    md[EXTENSION_NAME_KEY.encode()] = ext.name.encode()
    md[EXTENSION_METADATA_KEY.encode()] = ext.metadata
    return pa.field(f.name, _storage_only(dt.storage_type), f.nullable, metadata=md)


def _storage_only(dt: pa.DataType) -> pa.DataType:
    """``dt`` with every nested extension type as its storage plus ``ARROW:extension:*``
    field metadata (the form a data file records)."""
    if not _has_extension_type(dt) or isinstance(dt, pa.BaseExtensionType):
        return dt
    return with_child_fields(dt, [_storage_field(c) for c in child_fields(dt)])


def _file_metadata(tf: Field) -> dict[str, bytes] | None:
    md = strip_output_metadata(tf.metadata)
    ext = tf.arrow_extension_name
    if ext is not None:
        md.setdefault(EXTENSION_NAME_KEY, ext.encode())
        md.setdefault(EXTENSION_METADATA_KEY, b"")
    return md or None


def _check_no_nulls(tf: Field, arr: pa.Array) -> None:
    if not tf.nullable and arr.null_count:
        raise SchemaMismatchError(
            tf.path,
            f"{tf.logical_type} not null",
            f"{tf.logical_type} with nulls",
            "nulls in a non-nullable field",
        )


def _declared_type(tf: Field, dt: pa.DataType, large: bool) -> pa.DataType:
    """The input layout unchanged, views as non-view layouts, json as JSONB."""
    if is_blob_v2(tf):  # the logical struct; prepared per data file by the fragment writer
        return logical_blob_type(dt)
    if tf.logical_type == "json":
        return JSONB_TYPE
    if isinstance(dt, pa.BaseExtensionType):
        dt = dt.storage_type
    if not tf.children:
        return kernel_type(_storage_only(dt), large=large)
    kids = {c.name: c for c in tf.children}

    def child(f: pa.Field, table_child: Field | None) -> pa.Field:
        # nested fields carry the table field's metadata and extension, like top-level ones
        if table_child is None:
            return f
        inner = _declared_type(table_child, f.type, large)
        return pa.field(f.name, inner, f.nullable, metadata=_file_metadata(table_child))

    if pa.types.is_struct(dt):
        return pa.struct([child(f, kids.get(f.name)) for f in child_fields(dt)])
    if pa.types.is_list(dt):
        return pa.list_(child(dt.value_field, tf.children[0]))
    if pa.types.is_large_list(dt):
        return pa.large_list(child(dt.value_field, tf.children[0]))
    if pa.types.is_fixed_size_list(dt):
        return pa.list_(child(dt.value_field, tf.children[0]), dt.list_size)
    if pa.types.is_map(dt):
        key, value = tf.children[0].children
        return pa.map_(child(dt.key_field, key), child(dt.item_field, value))
    return kernel_type(dt, large=large)


def declared_field(tf: Field, input_field: pa.Field, *, large: bool) -> pa.Field:
    """The data file's declared layout for one input column: the input layout unchanged
    (extension types as their storage), views as their non-view equivalents, json values as
    JSONB, plus the table field's metadata and extension."""
    dt = _declared_type(tf, input_field.type, large)
    return pa.field(input_field.name, dt, tf.nullable, metadata=_file_metadata(tf))


def _convert(arr: pa.Array, tf: Field) -> tuple[pa.Array, bool]:
    """The array in a non-view layout with json values as JSONB, and whether 64-bit offsets
    were needed (the two value conversions of the boundary)."""
    if is_blob_v2(tf):
        return logical_blob_array(arr), False
    if has_json(tf):
        arr = encode_json_values(arr, tf)
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    if _has_extension_type(arr.type):  # nested extension arrays: storage (+ metadata)
        arr = safe_cast(arr, _storage_only(arr.type))
    if not has_view(arr.type):
        return arr, False
    # the array's buffer bytes bound its value bytes from above: when they fit in 32-bit
    # offsets, so does every value (and every list of them)
    large = arr.nbytes > OFFSET_LIMIT
    return safe_cast(arr, kernel_type(arr.type, large=large)), large


def to_physical(batch: pa.RecordBatch, bound: Sequence[Field]) -> pa.RecordBatch:
    """``batch`` in the physical layout its data file declares, checked by
    :func:`check_invariant` before it is returned."""
    fields, arrays = [], []
    for tf, arr, af in zip(bound, batch.columns, batch.schema, strict=True):
        _check_no_nulls(tf, arr)
        converted, large = _convert(arr, tf)
        fields.append(declared_field(tf, af, large=large))
        arrays.append(converted)
    declared = pa.schema(fields, metadata=batch.schema.metadata)
    check_invariant(arrays, declared, bound)
    return pa.RecordBatch.from_arrays(arrays, schema=declared)


def _describe(f: pa.Field) -> tuple[str, str | None]:
    md = f.metadata or {}
    ext = md.get(EXTENSION_NAME_KEY.encode())
    return layout_name(f.type), ext.decode() if ext is not None else None


def check_invariant(
    arrays: Sequence[pa.Array], declared: pa.Schema, bound: Sequence[Field]
) -> None:
    """Every array has exactly its declared layout, and the declared extension is the
    table field's; otherwise :class:`InvariantViolationError` naming the field path."""
    for arr, f, tf in zip(arrays, declared, bound, strict=True):
        expected_ext = tf.arrow_extension_name
        layout, ext = _describe(f)
        if arr.type != f.type or ext != expected_ext:
            raise InvariantViolationError(tf.path, layout, expected_ext, layout_name(arr.type), ext)


def legacy_physical(
    batch: pa.RecordBatch, fields: Sequence[Field], physical: pa.Schema
) -> pa.RecordBatch:
    """A batch of a legacy table in its one physical schema (legacy rule: the input's types
    already equal the table's, which the caller checked, except views, which Lance stores as
    their plain layouts)."""
    for f in fields:
        if not f.nullable:
            _check_no_nulls(f, batch.column(f.name))
    if batch.schema.equals(physical, check_metadata=True):
        return batch
    arrays = [
        encode_json_values(col, tf)
        if has_json(tf)
        else logical_blob_array(col)
        if is_blob_v2(tf)
        else (col if col.type == f.type else safe_cast(col, f.type))
        for col, f, tf in zip(batch.columns, physical, fields, strict=True)
    ]
    # blob v2 keeps its input's logical struct: the data file stores descriptors
    schema = pa.schema(
        [
            f.with_type(a.type) if is_blob_v2(tf) else f
            for f, a, tf in zip(physical, arrays, fields, strict=True)
        ],
        metadata=physical.metadata,
    )
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# ---- every batch of a write ----------------------------------------------------------------


def _shape(fields: Sequence[Field]) -> tuple[int, ...]:
    """The field ids a batch bound to ``fields`` stores, in order (its data file's fields)."""
    return tuple(f.id for top in fields for f in top.walk())


class Boundary:
    """The writer boundary of one write, applied to every batch (spec "Contract and
    Invariants": *every* array handed to the encoder has its declared layout).

    Each distinct input schema is bound once: on a flagged table by :func:`bind_input` (so a
    later batch may bring another accepted layout of a column's semantic type; its rows go
    to a new data file), on a legacy table by the legacy rule (the table's Arrow types; views
    as their plain layouts). A batch whose types are not accepted raises
    :class:`UnsupportedInputTypeError` / :class:`SchemaMismatchError` before it is written
    (files written for earlier batches of the same write are never committed). Every batch
    must carry the first batch's columns and struct members, which fix the write's field
    ids. Errors about a row (:class:`InvalidJsonError`, :class:`InvalidBlobError`) give the
    row of the whole input, counted across batches.

    Parameters
    ----------
    table
        The table schema the rows are written into.
    flagged
        Whether the table carries ``FLAG_SEMANTIC_TYPES``.
    first
        The table's fields in the shape of the first batch when the caller has matched them
        already (a legacy create: the table was made from that schema); else the first
        batch is bound like any other.
    legacy_schema
        The physical schema of a legacy write (default: each field's one Arrow type).
    """

    def __init__(
        self,
        table: TableSchema,
        *,
        flagged: bool,
        first: Sequence[Field] | None = None,
        legacy_schema: pa.Schema | None = None,
    ) -> None:
        self._table = table
        self._flagged = flagged
        self._first = tuple(first) if first is not None else None
        self._legacy_schema = legacy_schema
        self._bindings: list[tuple[pa.Schema, tuple[Field, ...], pa.Schema | None]] = []
        self._rows = 0
        self._batches = 0

    def bind(self, schema: pa.Schema) -> tuple[Field, ...]:
        """The table's fields in the shape of ``schema``, checked (cached per schema)."""
        return self._binding(schema)[0]

    def _binding(self, schema: pa.Schema) -> tuple[tuple[Field, ...], pa.Schema | None]:
        for known, fields, physical in self._bindings:
            if known.equals(schema, check_metadata=True):
                return fields, physical
        if self._flagged:
            fields = bind_input(self._table.fields, schema)
        elif not self._bindings and self._first is not None:
            fields = self._first
        else:
            fields = match_input_fields(self._table, schema, allow_missing_nullable=True)
        if self._bindings and _shape(fields) != _shape(self._bindings[0][1]):
            first_schema, first_fields = self._bindings[0][:2]
            pairs = zip(fields, first_fields, strict=False)
            path = next((f.name for f, g in pairs if _shape([f]) != _shape([g])), fields[-1].name)
            raise SchemaMismatchError(
                path,
                f"the first batch's columns ({', '.join(first_schema.names)})",
                f"batch {self._batches}'s columns ({', '.join(schema.names)})",
                "every batch of one write must carry the same columns and struct members",
            )
        physical = None
        if not self._flagged:
            physical = self._legacy_schema or pa.schema(
                [physical_field(f) for f in fields], metadata=dict(self._table.metadata) or None
            )
        if len(self._bindings) >= 16:  # many alternating layouts: keep the first, forget others
            del self._bindings[1:]
        self._bindings.append((schema, fields, physical))
        return fields, physical

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` in its data file's physical layout."""
        fields, physical = self._binding(batch.schema)
        try:
            if physical is None:
                out = to_physical(batch, fields)
            else:
                out = legacy_physical(batch, fields, physical)
        except _RowError as err:
            err.at_offset(self._rows)
            raise
        self._rows += batch.num_rows
        self._batches += 1
        return out

    def batches(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield self(batch)


# ---- the last guard before the encoder -----------------------------------------------------


def _check_layout(tf: Field, df: Field, dt: pa.DataType, flagged: bool) -> None:
    if is_blob(tf):  # its layouts are the blob writer's (prepared per data file)
        return
    if flagged:
        st = semantic_type_of(tf)
        # (a bfloat16 item may be stored in its field-metadata form: ask the layout table)
        ok = not has_view(dt) and (
            str(semantic_type_of(df)) == str(st) or is_physical_layout(st, dt)
        )
        expected = f"a physical layout of {semantic_type_of(tf)}"
    else:
        ok = df.logical_type == tf.logical_type
        expected = tf.logical_type
    if ok and tf.children:
        if pa.types.is_struct(dt):
            by_name = {c.name: c for c in tf.children}
            pairs = [(by_name.get(c.name), c, dt.field(i).type) for i, c in enumerate(df.children)]
        elif pa.types.is_map(dt):
            pairs = list(
                zip(
                    tf.children[0].children,
                    df.children[0].children,
                    (dt.key_type, dt.item_type),
                    strict=True,
                )
            )
        else:  # list, large_list, fixed_size_list<struct>
            pairs = [(tf.children[0], df.children[0], dt.value_type)]
        for t, d, child_type in pairs:
            if t is None:
                ok = False
                break
            _check_layout(t, d, child_type, flagged)
    if not ok:
        raise InvariantViolationError(
            tf.path, expected, tf.arrow_extension_name, layout_name(dt), df.arrow_extension_name
        )


def check_file_layout(fields: Sequence[Field], schema: pa.Schema, *, flagged: bool) -> None:
    """Every column of a data file's ``schema`` holds its field's type at every depth: on a
    flagged table a physical layout of the field's semantic type (never a view), on a legacy
    table the field's one Arrow type. ``fields`` are the table fields in the file's column
    order. Otherwise :class:`InvariantViolationError` naming the field path.

    Cost: O(fields); the writers run it once per data file.
    """
    derived = schema_from_arrow(schema).fields
    for tf, df, af in zip(fields, derived, schema, strict=True):
        if df.name != tf.name:
            raise InvariantViolationError(tf.path, tf.logical_type, None, f"column {df.name}", None)
        _check_layout(tf, df, af.type, flagged)
