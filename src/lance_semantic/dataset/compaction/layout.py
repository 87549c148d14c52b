"""The one physical layout a compacted data file gives each column (layer L5; spec
"Representation-only types", "Data Files and the Physical Schema").

On a flagged table every data file may hold a different physical layout of a column's
semantic type (utf8 in one fragment, large_utf8 in the next, a dictionary in a third).
Compaction merges fragments into one data file, so each column needs one layout that holds
every source value without loss. The choice, recursively through struct, list, map and
fixed_size_list<struct> children:

* string / binary: the plain layout with 64-bit offsets when any source (plain or a
  dictionary's values) uses 64-bit offsets, else the 32-bit plain layout. A data file is
  written batch by batch and only one batch has to fit 32-bit offsets, so a utf8 file may
  hold more than 2 GiB in total; a batch that would not fit after decoding a dictionary is
  split (never truncated). A single value always fits, because it came from a 32-bit source.
* dictionaries stay dictionaries only when every source is one; the key becomes ``int32``
  (``int64`` when a source key is 64-bit or ``uint32``) and the values take the plain rule
  above. pylance 14's file encoder merges the dictionaries of all batches of a file and
  writes an unreadable file when the merged dictionary outgrows an 8- or 16-bit key
  ("Encountered corrupt file dictionary: dictionary indices use 32 bits but the declared
  Int8 key type uses 8 bits"), so narrow keys are never written by compaction. A mix of
  dictionary and plain sources is decoded to the plain layout.
* decimal: ``decimal256`` when any source is, else ``decimal128`` (same precision, scale).
* list: ``large_list`` when any source is, else ``list``; the item merged recursively.
* struct: the table field's children present in at least one source, in table order, each
  merged recursively (a source without a child reads as nulls; dropped children are left out).
* every other type has exactly one representation: the first source's type is kept
  (including nested Arrow extension types).

The top-level data-file field carries the table field's metadata and extension keys (minus
the read-only ``lance-schema:output-encoding``), as the writer boundary declares it, so
extension metadata, recognized or not, survives compaction unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from ...codecs.convert import Converter, resolve_converter
from ...schema import Field
from ...types.families import is_large, is_list_like, is_string_like, is_string_or_binary
from ...write import declared_field

__all__ = ["MergedColumn", "merge_column", "merged_type", "converter", "DICTIONARY_KEY"]

#: the narrowest dictionary key compaction writes (see module doc)
DICTIONARY_KEY = pa.int32()


@dataclass(frozen=True, slots=True)
class MergedColumn:
    """One column of a compacted data file.

    ``field`` is the table field with its children restricted to the ones written (for
    ``DataFile.fields``); ``arrow`` the data file's declared field.
    """

    field: Field
    arrow: pa.Field


def _storage(dt: pa.DataType) -> pa.DataType:
    return dt.storage_type if isinstance(dt, pa.ExtensionType) else dt


def _merge_variable(types: Sequence[pa.DataType]) -> pa.DataType:
    """String / binary layouts (plain or dictionary) -> one layout holding them all.

    >>> _merge_variable([pa.string(), pa.large_string()])
    DataType(large_string)
    >>> _merge_variable([pa.dictionary(pa.int8(), pa.string()), pa.string()])
    DataType(string)
    >>> _merge_variable([pa.dictionary(pa.int8(), pa.string())] * 2)
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    >>> wide, narrow = pa.dictionary(pa.uint32(), pa.binary()), pa.int8()
    >>> _merge_variable([wide, pa.dictionary(narrow, pa.large_binary())])
    DictionaryType(dictionary<values=large_binary, indices=int64, ordered=0>)
    """
    values = [t.value_type if pa.types.is_dictionary(t) else t for t in types]
    large = any(is_large(v) for v in values)
    if any(is_string_like(v, view=False) for v in values):
        plain = pa.large_string() if large else pa.string()
    else:
        plain = pa.large_binary() if large else pa.binary()
    if all(pa.types.is_dictionary(t) for t in types):
        wide = any(t.index_type.bit_width == 64 or t.index_type == pa.uint32() for t in types)
        return pa.dictionary(pa.int64() if wide else DICTIONARY_KEY, plain)
    return plain


def _merge_decimal(types: Sequence[pa.DataType]) -> pa.DataType:
    """
    >>> _merge_decimal([pa.decimal128(10, 2), pa.decimal256(10, 2)])
    Decimal256Type(decimal256(10, 2))
    """
    first = types[0]
    if any(isinstance(t, pa.Decimal256Type) for t in types):
        return pa.decimal256(first.precision, first.scale)
    return first


def _child(dt: pa.DataType, name: str) -> pa.Field | None:
    i = dt.get_field_index(name)
    return dt.field(i) if i >= 0 else None


def _merge_struct(field: Field, types: Sequence[pa.DataType]) -> tuple[pa.DataType, Field]:
    children: list[pa.Field] = []
    written: list[Field] = []
    for child in field.children:
        found = [c for c in (_child(t, child.name) for t in types) if c is not None]
        if not found:
            continue
        dt, pruned = _merge(child, [f.type for f in found])
        children.append(found[0].with_type(dt))
        written.append(pruned)
    return pa.struct(children), replace(field, children=tuple(written))


def _merge(field: Field, types: Sequence[pa.DataType]) -> tuple[pa.DataType, Field]:
    """The merged layout of ``types`` (the sources' layouts of ``field``) and ``field`` with
    its children restricted to the ones the layout holds."""
    first = types[0]
    if isinstance(first, pa.ExtensionType):  # nested extension: one representation
        return first, field
    if pa.types.is_struct(first):
        return _merge_struct(field, types)
    if is_list_like(first, fixed=False) and field.children:
        item, pruned = _merge(field.children[0], [t.value_type for t in types])
        value_field = first.value_field.with_type(item)
        if any(pa.types.is_large_list(t) for t in types):
            return pa.large_list(value_field), replace(field, children=(pruned,))
        return pa.list_(value_field), replace(field, children=(pruned,))
    if pa.types.is_fixed_size_list(first) and field.children:  # fixed_size_list<struct>
        item, pruned = _merge(field.children[0], [t.value_type for t in types])
        dt = pa.list_(first.value_field.with_type(item), first.list_size)
        return dt, replace(field, children=(pruned,))
    if pa.types.is_map(first) and field.children:
        entries = field.children[0]
        key, value = entries.children
        key_type, key_field = _merge(key, [t.key_type for t in types])
        item_type, item_field = _merge(value, [t.item_type for t in types])
        dt = pa.map_(first.key_field.with_type(key_type), first.item_field.with_type(item_type))
        return dt, replace(field, children=(replace(entries, children=(key_field, item_field)),))
    if is_string_or_binary(first, view=False, dictionary=True):
        return _merge_variable(types), field
    if pa.types.is_decimal(first):
        return _merge_decimal(types), field
    return first, field


def merged_type(field: Field, sources: Sequence[pa.DataType]) -> pa.DataType:
    """The layout of ``field`` that holds the values of every source layout.

    Examples
    --------
    >>> from lance_semantic.schema.arrow import schema_from_arrow
    >>> t = schema_from_arrow(pa.schema([("l", pa.list_(pa.string()))])).fields[0]
    >>> merged_type(t, [pa.list_(pa.string()), pa.large_list(pa.large_string())])
    LargeListType(large_list<item: large_string>)
    """
    if not sources:
        raise ValueError(f"no source layouts for {field.path}")
    return _merge(field, [_storage(t) for t in sources])[0]


def merge_column(field: Field, sources: Sequence[pa.Field]) -> MergedColumn | None:
    """The compacted data file's column for the top-level table ``field``, from the data
    file fields that hold it in the source fragments; None when no source holds it (the
    column then stays absent from the new file and reads as nulls)."""
    if not sources:
        return None
    dt, pruned = _merge(field, [_storage(f.type) for f in sources])
    arrow = declared_field(field, pa.field(field.name, dt), large=False)
    return MergedColumn(pruned, arrow)


def converter(source: pa.DataType, target: pa.DataType, path: str) -> Converter:
    """Arrays of the source layout ``source`` -> the merged layout ``target`` (lossless;
    ``DoesNotFit`` when a batch must be split to fit 32-bit offsets): the read side's
    converter in its ``widen`` meaning (:func:`lance_semantic.codecs.convert.resolve_converter`).

    >>> small = pa.dictionary(pa.int8(), pa.string())
    >>> c = converter(small, pa.large_string(), "s")
    >>> c(pa.array(["a", None, "a"]).dictionary_encode().cast(small))
    <pyarrow.lib.LargeStringArray object at ...>
    [
      "a",
      null,
      "a"
    ]
    """
    return resolve_converter(source, target, path, widen=True)
