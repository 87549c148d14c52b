"""Append compatibility under the legacy rules (layer L2).

Legacy rule: a logical type names exactly one Arrow type, so input data is appendable when,
field by field and recursively, its *stored* Arrow type equals the table's. This mirrors
pylance 14.0.2, measured by experiment:

* types are compared as Lance stores them, so ``string_view`` appends to ``string``, an
  ordered dictionary to an unordered one, and the item name/nullability of a
  fixed-size list of primitives is irrelevant; ``large_string`` vs ``string``, dictionary
  key widths, timezones (``UTC`` vs ``+00:00``) and extension names/metadata must match
  (an input introducing an unknown ``lance.`` extension raises
  :class:`~lance_semantic.errors.ReservedExtensionNameError`, spec "Reserved prefix");
* columns and struct members may come in any order (the data file keeps input order);
* child names must match (``list<element>`` does not append to ``list<item>``; map
  key/value names included);
* nullability is not compared: a nullable input field appends to a non-nullable one as long
  as the data has no nulls, which the writer must check (pylance fails at write time);
* an extra field is a mismatch; a missing field is a mismatch too unless
  ``allow_missing_nullable=True`` (pylance's behaviour: a missing *nullable* field, at any
  depth, is allowed and reads as null; a missing non-nullable one is an error);
  ``allow_missing_members=True`` lets any column or struct member (not inside a list or map)
  be missing: pylance's rule for a merge_insert that inserts no row, whose updated rows keep
  the values the source lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa

from lance_semantic.errors import (
    LanceSemanticError,
    ReservedExtensionNameError,
    SchemaMismatchError,
)
from lance_semantic.schema.arrow import (
    EXTENSION_METADATA_KEY,
    field_to_arrow,
    schema_from_arrow,
)
from lance_semantic.schema.extensions import is_reserved_name
from lance_semantic.schema.field import Field, TableSchema, is_blob_v2

__all__ = ["ABSENT", "check_appendable_legacy", "match_input_fields"]

#: the ``table_type`` / ``input_type`` of a SchemaMismatchError for a field one side lacks
ABSENT = "<absent>"


def _type_text(field: Field) -> str:
    try:
        return str(field_to_arrow(field).type)
    except LanceSemanticError:
        return field.logical_type


def _extension(field: Field) -> tuple[str | None, bytes]:
    # (no extension metadata and empty metadata are the same: pylance writes blob v2
    # fields without the key, Arrow's extension types export it empty)
    return field.extension_name, field.metadata.get(EXTENSION_METADATA_KEY) or b""


def _compare(table_field: Field, input_field: Field) -> None:
    if table_field.logical_type != input_field.logical_type:
        raise SchemaMismatchError(
            table_field.path, _type_text(table_field), _type_text(input_field)
        )
    if _extension(table_field) != _extension(input_field):
        name = input_field.extension_name
        if name is not None and name != table_field.extension_name and is_reserved_name(name):
            raise ReservedExtensionNameError(input_field.path, name)
        raise SchemaMismatchError(
            table_field.path,
            _type_text(table_field),
            _type_text(input_field),
            "extension type differs",
        )


def _match(
    table_fields: Sequence[Field],
    input_fields: Sequence[Field],
    allow_missing: bool,
    allow_members: bool = False,
) -> tuple[Field, ...]:
    by_name = {f.name: f for f in table_fields}
    matched: list[Field] = []
    for inp in input_fields:
        table_field = by_name.get(inp.name)
        if table_field is None:
            raise SchemaMismatchError(inp.path, ABSENT, _type_text(inp), "field not in table")
        _compare(table_field, inp)
        if table_field.children and not is_blob_v2(table_field):
            # (a blob v2 field is one column of descriptors in its data files: its
            # input may be either logical layout, struct<data, uri> or with position
            # and size, whatever members the table recorded; see schema.blob)
            if not inp.children:
                # an input struct without any of the table's members (pylance fails on it)
                raise SchemaMismatchError(
                    table_field.path, _type_text(table_field), _type_text(inp)
                )
            members = allow_members and table_field.logical_type == "struct"
            kids = _match(table_field.children, inp.children, allow_missing, members)
            table_field = replace(table_field, children=kids)
        matched.append(table_field)
    present = {f.name for f in input_fields}
    for table_field in table_fields:
        if allow_members or table_field.name in present:
            continue
        if not (allow_missing and table_field.nullable):
            raise SchemaMismatchError(
                table_field.path, _type_text(table_field), ABSENT, "field missing from input"
            )
    return tuple(matched)


def match_input_fields(
    table: TableSchema,
    input_schema: pa.Schema,
    *,
    allow_missing_nullable: bool = False,
    allow_missing_members: bool = False,
) -> tuple[Field, ...]:
    """Check ``input_schema`` against ``table`` and return the table's fields in input shape.

    The result holds the table's :class:`Field` objects (with the table's ids), ordered like
    the input's columns and struct members and limited to the fields the input carries, so
    ``data_file_field_ids(result, version)`` gives the ``DataFile.fields`` pylance writes.
    ``allow_missing_members``: any top-level column or struct member (not inside a list or
    map) may be missing, nullable or not (a merge that only updates rows keeps them).

    Raises
    ------
    SchemaMismatchError
        Naming the deepest differing field path (see the module docstring for the rules).
    UnsupportedTypeError, NotSupportedYetError
        If the input schema itself has no Lance representation.
    """
    incoming = schema_from_arrow(input_schema)
    return _match(table.fields, incoming.fields, allow_missing_nullable, allow_missing_members)


def check_appendable_legacy(
    table: TableSchema, input_schema: pa.Schema, *, allow_missing_nullable: bool = False
) -> None:
    """Raise :class:`SchemaMismatchError` unless ``input_schema`` can be appended to ``table``.

    Examples
    --------
    >>> table = schema_from_arrow(pa.schema([("s", pa.struct([("x", pa.int8())]))]))
    >>> try:
    ...     check_appendable_legacy(table, pa.schema([("s", pa.struct([("x", pa.int16())]))]))
    ... except SchemaMismatchError as e:
    ...     print(e.field_path, e.table_type, e.input_type)
    s.x int8 int16
    """
    match_input_fields(table, input_schema, allow_missing_nullable=allow_missing_nullable)
