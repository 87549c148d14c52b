"""Resolve, once per data file, which file column holds which table field (layer L4).

Semantics come from the table schema only: a data file's columns are matched to table
fields through ``DataFile.fields`` (field ids in file column order,
docs/format/lance-format-facts.md §4), never by name, so renamed and dropped columns resolve
correctly. Nested struct members are matched the same way: a file column whose members were renamed
or dropped since it was written gets a :class:`Retag`, which :func:`retag_array` applies to its
arrays before conversion. A struct whose members live in several data files of a fragment (a nested
type change writes the new member to a new file) is put together by :func:`merge_parts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptTableError
from ..manifest import DataFile
from ..schema import TableSchema
from ..types.families import is_list_like
from ..types.metadata_keys import BLOB_KEY, BLOB_V2_EXTENSION, EXTENSION_NAME_KEY

__all__ = ["FilePlan", "Retag", "plan_data_file", "id_entries", "retag_array", "merge_parts"]


def _is_blob_v2(f: pa.Field) -> bool:
    md = f.metadata or {}
    return md.get(EXTENSION_NAME_KEY.encode()) == BLOB_V2_EXTENSION.encode() or (
        md.get(BLOB_KEY.encode()) == b"true" and pa.types.is_struct(f.type)
    )


def id_entries(f: pa.Field, major: int, minor: int) -> int:
    """How many ``DataFile.fields`` entries the file column ``f`` takes
    (docs/format/lance-format-facts.md §4)."""
    t = f.type
    if isinstance(t, pa.ExtensionType):
        t = t.storage_type
    every = (major, minor) < (2, 1)
    if pa.types.is_fixed_size_list(t) and pa.types.is_struct(t.value_type):
        if every:
            return 1
        return id_entries(t.value_field, major, minor)
    if _is_blob_v2(f):
        return 1
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            return 1
        inner = sum(id_entries(t.field(i), major, minor) for i in range(t.num_fields))
        return inner + (1 if every else 0)
    if is_list_like(t, fixed=False):
        return id_entries(t.value_field, major, minor) + (1 if every else 0)
    if pa.types.is_map(t):
        entries = id_entries(t.key_field, major, minor) + id_entries(t.item_field, major, minor)
        return entries + (2 if every else 0)
    return 1


@dataclass(frozen=True, slots=True)
class Retag:
    """How to rebuild one file column's arrays so that every struct member carries the
    table's current name for its field id, and members no longer in the table are gone.

    ``type`` is the rebuilt Arrow type. For a struct, ``keep`` holds the original positions
    of the members kept (in order) and ``inner`` how to rebuild each of them; for a list or
    fixed-size list ``inner`` is ``(values,)``, for a map ``(keys, items)``. ``None`` in
    ``inner``: that child is used as read.
    """

    type: pa.DataType
    keep: tuple[int, ...] = ()
    inner: tuple[Retag | None, ...] = ()


@dataclass(frozen=True, slots=True)
class FilePlan:
    """For one data file: table top-level field id -> name of the file column holding it,
    and, for the columns whose nested members differ from the table, how to retag them."""

    data_file: DataFile
    columns: dict[int, str]
    retag: dict[int, Retag] = field(default_factory=dict)


class _Walk:
    """Walks file columns in order, consuming their ``DataFile.fields`` ids like
    :func:`id_entries`: 2.0 takes one id per node (an FSL<struct> is one node), 2.1+ only
    leaves, empty structs and blob-v2 structs; there a parent's id is that of its first
    child's table field's parent."""

    def __init__(self, table: TableSchema, ids: list[int], major: int, minor: int) -> None:
        self.table = table
        self.ids = ids
        self.pos = 0
        self.major, self.minor = major, minor
        self.every = (major, minor) < (2, 1)

    def _take(self) -> int | None:
        fid = self.ids[self.pos] if self.pos < len(self.ids) else None
        self.pos += 1
        return fid

    def _parent(self, fid: int | None) -> int | None:
        if fid is None or not self.table.has_id(fid):
            return None
        parent = self.table.field_by_id(fid).parent_id
        return None if parent < 0 else parent

    def column(self, f: pa.Field) -> tuple[list[int], Retag | None]:
        """The ids ``f`` owns and its retag (None when it already matches the table)."""
        start = self.pos
        _, retag = self.field(f)
        self.pos = start + id_entries(f, self.major, self.minor)  # exactly what plans use
        return self.ids[start : self.pos], retag

    def field(self, f: pa.Field) -> tuple[int | None, Retag | None]:
        """Consume the ids of ``f``; its table field id (None if unknown) and retag."""
        t = f.type
        if isinstance(t, pa.ExtensionType):  # ids of its storage; rebuilt as read
            fid, _ = self.field(pa.field(f.name, t.storage_type, f.nullable, f.metadata))
            return fid, None
        fsl_struct = pa.types.is_fixed_size_list(t) and pa.types.is_struct(t.value_type)
        nested = (
            (pa.types.is_struct(t) and t.num_fields > 0)
            or pa.types.is_list(t)
            or pa.types.is_large_list(t)
            or pa.types.is_map(t)
            or fsl_struct
        )
        if not nested or _is_blob_v2(f) or (fsl_struct and self.every):
            return self._take(), None
        own = self._take() if self.every else None
        if pa.types.is_struct(t):
            return self._struct(t, own)
        if pa.types.is_map(t):
            if self.every:
                self._take()  # entries
            kid, kr = self.field(t.key_field)
            _, vr = self.field(t.item_field)
            if own is None:
                own = self._parent(self._parent(kid))
            if kr is None and vr is None:
                return own, None
            key = t.key_field.with_type(kr.type) if kr else t.key_field
            item = t.item_field.with_type(vr.type) if vr else t.item_field
            return own, Retag(pa.map_(key, item, t.keys_sorted), (0, 1), (kr, vr))
        vid, vr = self.field(t.value_field)
        if own is None:
            own = self._parent(vid)
        if vr is None:
            return own, None
        value = t.value_field.with_type(vr.type)
        if pa.types.is_fixed_size_list(t):
            dt: pa.DataType = pa.list_(value, t.list_size)
        else:
            dt = pa.list_(value) if pa.types.is_list(t) else pa.large_list(value)
        return own, Retag(dt, (0,), (vr,))

    def _struct(self, t: pa.StructType, own: int | None) -> tuple[int | None, Retag | None]:
        keep: list[int] = []
        inner: list[Retag | None] = []
        members: list[pa.Field] = []
        changed = False
        for i in range(t.num_fields):
            c = t.field(i)
            cid, cr = self.field(c)
            if cid is None or not self.table.has_id(cid):
                changed = True  # dropped from the table (or not resolvable): not read
                continue
            if own is None:
                own = self._parent(cid)
            name = self.table.field_by_id(cid).name
            changed = changed or cr is not None or name != c.name
            keep.append(i)
            inner.append(cr)
            members.append(c.with_name(name).with_type(cr.type if cr else c.type))
        if not changed:
            return own, None
        return own, Retag(pa.struct(members), tuple(keep), tuple(inner))


def retag_array(arr: pa.Array, retag: Retag) -> pa.Array:
    """``arr`` (of its file column's type) rebuilt as ``retag.type``; buffers are shared."""
    t = arr.type
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        fields = list(retag.type)
        if not fields:
            return pa.Array.from_buffers(
                retag.type, len(arr), [arr.buffers()[0]], arr.null_count, arr.offset, []
            )
        children = [
            arr.field(i) if r is None else retag_array(arr.field(i), r)
            for i, r in zip(retag.keep, retag.inner, strict=True)
        ]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        values = arr.values.slice(arr.offset * size, len(arr) * size)
        inner = retag.inner[0]
        values = values if inner is None else retag_array(values, inner)
        return pa.FixedSizeListArray.from_arrays(values, type=retag.type, mask=mask)
    offsets = arr.offsets
    base = offsets[0].as_py() if len(arr) else 0
    span = (offsets[-1].as_py() - base) if len(arr) else 0
    if base:
        offsets = pc.subtract(offsets, pa.scalar(base, offsets.type))
    if pa.types.is_map(t):
        kr, ir = retag.inner
        keys = arr.keys.slice(base, span)
        items = arr.items.slice(base, span)
        keys = keys if kr is None else retag_array(keys, kr)
        items = items if ir is None else retag_array(items, ir)
        return pa.MapArray.from_arrays(offsets, keys, items, type=retag.type, mask=mask)
    values = arr.values.slice(base, span)
    inner = retag.inner[0]
    values = values if inner is None else retag_array(values, inner)
    cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
    return cls.from_arrays(offsets, values, type=retag.type, mask=mask)


def merge_parts(parts: list[pa.Array]) -> pa.Array:
    """One field's arrays from several data files of a fragment (in file order, already
    retagged so members carry table names) as one array, like Lance's batch merge: struct
    members are united (recursively; a member in several files is taken from the first), a
    row is valid when it is valid in any file, and a member is null where the struct of
    the file it comes from is null. ``list<struct>`` items are united row by row (see
    :func:`_merge_lists`). Anything else: the first file's."""
    first = parts[0]
    if len(parts) == 1:
        return first
    t = first.type
    if pa.types.is_struct(t) and all(pa.types.is_struct(p.type) for p in parts):
        return _merge_structs(parts)
    lists = [is_list_like(p.type, fixed=False) for p in parts]
    if all(lists) and all(pa.types.is_struct(p.type.value_type) for p in parts):
        return _merge_lists(parts)
    return first


def _merge_structs(parts: list[pa.Array]) -> pa.Array:
    members: dict[str, list[pa.Array]] = {}
    fields: dict[str, pa.Field] = {}
    for p in parts:
        children = p.flatten() if p.null_count else [p.field(i) for i in range(p.type.num_fields)]
        for f, child in zip(p.type, children, strict=True):
            members.setdefault(f.name, []).append(child)
            fields.setdefault(f.name, f)
    valid: pa.Array | None = None
    for p in parts:
        if not p.null_count:
            valid = None
            break
        v = p.is_valid()
        valid = v if valid is None else pc.or_(valid, v)
    if not fields:  # only empty structs
        return parts[0]
    arrays = [merge_parts(members[name]) for name in fields]
    out = [f.with_type(a.type) for f, a in zip(fields.values(), arrays, strict=True)]
    mask = None if valid is None else pc.invert(valid)
    return pa.StructArray.from_arrays(arrays, fields=out, mask=mask)


def _rebased(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(offsets from 0, the values they span) of a list array."""
    offsets = arr.offsets
    base = offsets[0].as_py() if len(arr) else 0
    span = (offsets[-1].as_py() - base) if len(arr) else 0
    if base:
        offsets = pc.subtract(offsets, pa.scalar(base, offsets.type))
    return offsets, arr.values.slice(base, span)


def _merge_lists(parts: list[pa.Array]) -> pa.Array:
    """``list<struct>`` arrays of the same rows as one: the items of the first list that is
    not all null, with the members of the others' items where a row has as many items in
    both (elsewhere -- rows a later file wrote as null, e.g. deleted rows -- those members
    are null)."""
    ref = next((p for p in parts if p.null_count < len(p)), parts[0])
    offsets, values = _rebased(ref)
    bounds = offsets.to_numpy()
    lengths = np.diff(bounds)
    rows = np.repeat(np.arange(len(ref)), lengths)
    within = np.arange(len(values)) - np.repeat(bounds[:-1], lengths)
    items = []
    for p in parts:
        if p is ref:
            items.append(values)
            continue
        other, vals = _rebased(p)
        o = other.to_numpy()
        same = np.diff(o) == lengths
        if same.all() and (o == bounds).all():
            items.append(vals)
            continue
        differ = ~same[rows]
        idx = np.where(differ, 0, o[:-1][rows] + within)
        items.append(vals.take(pa.array(idx, mask=differ)))
    merged = _merge_structs(items)
    item = ref.type.value_field.with_type(merged.type)
    large = pa.types.is_large_list(ref.type)
    cls = pa.LargeListArray if large else pa.ListArray
    mask = ref.is_null() if ref.null_count else None
    return cls.from_arrays(
        offsets, merged, type=pa.large_list(item) if large else pa.list_(item), mask=mask
    )


def plan_data_file(
    table: TableSchema, data_file: DataFile, file_schema: pa.Schema, *, where: str = ""
) -> FilePlan:
    """Which file column holds which table field; ``file_schema`` is the file's columns (as
    ``storage.datafile.data_file_columns`` gives them). ``where`` names the file in errors.

    Raises
    ------
    CorruptTableError
        When the file's columns take more or fewer field ids than ``DataFile.fields`` has.
    """
    columns: dict[int, str] = {}
    retags: dict[int, Retag] = {}
    walk = _Walk(
        table, list(data_file.fields), data_file.file_major_version, data_file.file_minor_version
    )
    for f in file_schema:
        owned, retag = walk.column(f)
        for fid in owned:
            top = table.top_level_of(fid)
            if top is not None:
                if top.id not in columns:
                    columns[top.id] = f.name
                    if retag is not None:
                        retags[top.id] = retag
                break
    if walk.pos != len(data_file.fields):
        raise CorruptTableError(
            where or data_file.path,
            f"its {len(file_schema)} columns take {walk.pos} field ids, the manifest lists "
            f"{len(data_file.fields)} ({list(data_file.fields)})",
        )
    return FilePlan(data_file, columns, retags)
