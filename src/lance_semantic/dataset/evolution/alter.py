"""Schema evolution: add, drop and alter columns (layer L5; docs/format/lance-format-facts.md §3
"What pylance 14 actually writes per operation", §4 field ids; spec "Output Encoding", "Extension
Semantic Types").

* ``drop_columns`` commits a ``Project`` with the smaller schema; data files whose field ids
  are all dropped leave their fragments, the others keep the dropped ids.
* ``alter_columns``: renames and nullability changes are a metadata-only ``Project``. A new
  data type rewrites the column, as pylance does: the values are cast into one new data
  file per fragment under a **new field id** (``Merge``), and data files left without a
  live field id are dropped. On a table with semantic types, a new type of the *same*
  semantic type (``string`` -> ``large_string``, ``decimal128`` -> ``decimal256`` at the
  same precision and scale, ``list`` -> ``large_list``, a dictionary of strings) only changes
  the field's output encoding: no data file is written and the field keeps its id.
* Extension name and extension metadata (``ARROW:extension:*``, and the layered
  ``lance-schema:extension-*``) survive every alteration, also a type change (pylance 14
  drops them there; the contract keeps them). Other field metadata survives renames and
  nullability changes; a type change on a legacy table drops it, as pylance 14 does (on a
  table with semantic types it stays).

``add_columns`` lives in :mod:`.add`, ``drop_columns`` in :mod:`.drop`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ...codecs.kernel_layout import has_view
from ...commit import commit
from ...errors import NotSupportedYetError
from ...manifest import (
    DataFile,
    Fragment,
    Manifest,
    Merge,
    Project,
    index_field_ids,
    preserves_nullability,
)
from ...read import DEFAULT_BATCH_SIZE, ScanRequest, output_field, plan_scan
from ...schema import (
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    LAYERED_METADATA_KEY,
    LAYERED_NAME_KEY,
    OUTPUT_ENCODING_KEY,
    Field,
    TableSchema,
    canonicalize_created,
    check_reserved_names,
    check_storage_version_support,
    extension_names,
    field_from_arrow,
    field_to_arrow,
    freeze_metadata,
    semantic_type_of,
)
from ...storage import UncommittedFiles
from ...types.families import (
    is_binary_like,
    is_list_like,
    is_string_like,
    is_temporal,
)
from ...write import parse_storage_version
from ..core import Snapshot, check_optional_bool, check_optional_str
from .add import add_columns
from .common import (
    TOMBSTONE_FIELD_ID,
    ColumnNotFoundError,
    ColumnSource,
    SchemaEvolutionError,
    field_at,
    next_field_id,
    scan_columns,
    with_files,
    write_column_files,
)

__all__ = [
    "add_columns",
    "alter_columns",
    "ColumnNotFoundError",
    "SchemaEvolutionError",
]

_ALTERATION_KEYS = frozenset({"path", "name", "nullable", "data_type"})

#: the field metadata that names an extension semantic type (both slots, open decision 2)
_EXTENSION_KEYS = frozenset(
    {EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY, LAYERED_NAME_KEY, LAYERED_METADATA_KEY}
)


# ---- alter: validation ----------------------------------------------------------------------


def _unwrap(dt: pa.DataType) -> pa.DataType:
    return dt.storage_type if isinstance(dt, pa.BaseExtensionType) else dt


def castable(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether pylance 14 lets ``alter_columns`` cast ``source`` to ``target``: within one
    family only (integers, floats, temporal types, booleans, strings, binaries, decimals,
    lists of castable items; dictionaries by their values), only where Arrow has a cast,
    and never to a view layout (``string_view``, ``binary_view``, also as a list item or a
    dictionary's values)."""
    source, target = _unwrap(source), _unwrap(target)
    if has_view(target):  # pylance 14 casts to no view layout, at any depth
        return False
    t = pa.types
    if t.is_dictionary(source):
        return castable(source.value_type, target)
    if t.is_dictionary(target):
        return castable(source, target.value_type)
    if t.is_integer(source):
        ok = t.is_integer(target)
    elif t.is_floating(source):
        ok = t.is_floating(target)
    elif is_temporal(source):
        ok = is_temporal(target)
    elif t.is_boolean(source):
        ok = t.is_boolean(target)
    elif is_string_like(source):
        ok = is_string_like(target)
    elif is_binary_like(source):
        ok = is_binary_like(target)
    elif t.is_decimal(source):
        ok = t.is_decimal(target)
    elif is_list_like(source, fixed=True):
        return is_list_like(target, fixed=True) and castable(source.value_type, target.value_type)
    else:
        ok = False
    if not ok:
        return False
    try:
        pa.nulls(0, source).cast(target)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return False
    return True


def _check_no_nulls(snap: Snapshot, field: Field) -> None:
    schema = snap.semantic_schema
    parts = field.path.split(".")
    if any(
        schema.field(".".join(parts[:i])).logical_type != "struct" for i in range(1, len(parts))
    ):
        raise NotSupportedYetError(
            f"making '{field.path}' non-nullable (only top-level columns and struct members)"
        )
    for batch in scan_columns(snap, [field.path]):
        if batch.column(0).null_count:
            raise SchemaEvolutionError(
                field.path, "the column contains nulls and cannot be made non-nullable"
            )


def _check_names(fields: Sequence[Field], top: bool) -> None:
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            raise SchemaEvolutionError(f.path or f.name, f"duplicate field name {f.name!r}")
        if top and "." in f.name:
            raise SchemaEvolutionError(f.path or f.name, "top-level field names cannot contain '.'")
        seen.add(f.name)
        _check_names(f.children, top=False)


# ---- alter: flagged tables, one semantic type ------------------------------------------------


def _signature(field: Field) -> tuple[Any, ...]:
    return (str(semantic_type_of(field)), tuple(_signature(c) for c in field.children))


def _with_encodings(old: Field, new: Field, out: dict[int, Field]) -> None:
    """Record in ``out`` ``old`` (and its descendants) carrying ``new``'s canonical type and
    output encodings: same ids, names, nullability and other metadata."""
    metadata = dict(old.metadata)
    encoding = new.metadata.get(OUTPUT_ENCODING_KEY)
    if encoding is None:
        metadata.pop(OUTPUT_ENCODING_KEY, None)
    else:
        metadata[OUTPUT_ENCODING_KEY] = encoding
    base = out.get(old.id, old)
    out[old.id] = replace(
        base,
        logical_type=new.logical_type,
        encoding=new.encoding,
        dictionary=new.dictionary,
        metadata=freeze_metadata(metadata),
    )
    for o, n in zip(old.children, new.children, strict=True):
        _with_encodings(o, n, out)


# ---- alter: the plan -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cast:
    old: Field  # the field in the table before the change
    new: Field  # its replacement (new ids), parent_id of the old field
    target: pa.DataType


class _Alteration:
    """The schema after a sequence of alterations, built field by field."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.schema = snap.semantic_schema
        self.flagged = snap.semantic_types
        self.current: dict[int, Field] = {}  # old id -> field as altered (not retyped)
        self.casts: dict[int, _Cast] = {}  # old id -> retyped field
        self.ids = itertools.count(next_field_id(snap.manifest))
        self.tightens = False

    def _dest(self, src: Field) -> Field:
        if src.id in self.casts:
            return self.casts[src.id].new
        return self.current.get(src.id, src)

    def _set(self, src: Field, dest: Field) -> None:
        if src.id in self.casts:
            cast = self.casts[src.id]
            self.casts[src.id] = replace(cast, new=dest)
        else:
            self.current[src.id] = dest

    def apply(self, alteration: Mapping[str, Any]) -> None:
        if not isinstance(alteration, Mapping):
            raise TypeError(f"an alteration must be a dict, not {type(alteration).__name__}")
        unknown = set(alteration) - _ALTERATION_KEYS
        if unknown:
            raise TypeError(f"unknown alteration keys: {', '.join(sorted(map(str, unknown)))}")
        if "path" not in alteration:
            raise TypeError("an alteration needs a 'path'")
        src = field_at(self.schema, alteration["path"])
        name = alteration.get("name")
        nullable = check_optional_bool("nullable", alteration.get("nullable"))
        check_optional_str("name", name, empty=True)
        data_type = alteration.get("data_type")
        if name is None and nullable is None and data_type is None:
            raise SchemaEvolutionError(
                src.path, "at least one of name, nullable or data_type must be given"
            )
        if nullable is False and src.nullable:
            _check_no_nulls(self.snap, src)
            self.tightens = True
        dest = self._dest(src)
        if name is not None:
            if not isinstance(name, str) or not name:
                raise SchemaEvolutionError(src.path, f"invalid new name {name!r}")
            dest = replace(dest, name=name)
        if nullable is not None:
            dest = replace(dest, nullable=bool(nullable))
        self._set(src, dest)
        if data_type is not None:
            if not isinstance(data_type, pa.DataType):
                raise TypeError(f"data_type must be a pyarrow DataType, not {data_type!r}")
            self._retype(src, dest, data_type)

    def _current_type(self, src: Field) -> pa.DataType:
        if self.flagged:
            return output_field(src, {}).type
        return field_to_arrow(src).type

    def _retype(self, src: Field, dest: Field, data_type: pa.DataType) -> None:
        metadata = dict(dest.metadata)
        if self.flagged:  # the old layout's output encoding goes; the new layout decides
            metadata.pop(OUTPUT_ENCODING_KEY, None)
        else:  # legacy = pylance, which drops the field's metadata on a type change; the
            # extension keys stay (the contract keeps extension metadata through evolution)
            metadata = {k: v for k, v in metadata.items() if k in _EXTENSION_KEYS}
        arrow = pa.field(dest.name, data_type, dest.nullable, metadata=metadata or None)
        parent_path = src.path.rpartition(".")[0]  # errors name the field where it is
        check_reserved_names(
            [field_from_arrow(arrow, ids=itertools.count(), parent_id=src.parent_id)],
            allowed={n for f in src.walk() for n in extension_names(f)},
        )
        if self.flagged and src.id not in self.casts:
            probe = field_from_arrow(
                arrow, ids=itertools.count(), parent_id=src.parent_id, parent_path=parent_path
            )
            probe = canonicalize_created(TableSchema((probe,)), pa.schema([arrow])).fields[0]
            if _signature(probe) == _signature(src):
                # one semantic type: only the output encoding changes
                _with_encodings(src, probe, self.current)
                return
        source_type = self._current_type(src)
        if not castable(source_type, data_type):
            raise SchemaEvolutionError(src.path, f"cannot cast from {source_type} to {data_type}")
        new = field_from_arrow(
            arrow, ids=self.ids, parent_id=src.parent_id, parent_path=parent_path
        )
        if self.flagged:
            new = canonicalize_created(TableSchema((new,)), pa.schema([arrow])).fields[0]
        self.casts[src.id] = _Cast(src, new, data_type)
        self.current.pop(src.id, None)

    def new_schema(self) -> TableSchema:
        def rebuild(f: Field) -> Field:
            if f.id in self.casts:
                return self.casts[f.id].new
            r = self.current.get(f.id, f)
            return replace(r, children=tuple(rebuild(c) for c in f.children))

        fields = [rebuild(f) for f in self.schema.fields]
        _check_names(fields, top=True)
        new = TableSchema.of(fields, self.schema.metadata)
        version = parse_storage_version(self.snap.data_storage_version)
        check_storage_version_support(new.fields, version)
        return new


# ---- alter: rewriting cast columns -----------------------------------------------------------


def _prune(field: Field, keep: set[int]) -> Field | None:
    """``field`` restricted to the paths leading to the fields in ``keep`` (whole)."""
    if field.id in keep:
        return field
    kids = [p for c in field.children if (p := _prune(c, keep)) is not None]
    return replace(field, children=tuple(kids)) if kids else None


class _Rewriter:
    """Builds a top-level column of the new data file from the old column's values."""

    def __init__(self, casts: Sequence[_Cast], new_top: Field) -> None:
        self.by_new = {c.new.id: c for c in casts}
        self.new_top = new_top

    def __call__(self, arr: pa.Array, old: Field) -> pa.Array:
        return self._build(arr, old, self.new_top)

    def _build(self, arr: pa.Array | pa.ChunkedArray, old: Field, new: Field) -> pa.Array:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        cast = self.by_new.get(new.id)
        if cast is not None:
            return self._cast(arr, cast)
        if isinstance(arr, pa.ExtensionArray):
            arr = arr.storage
        dt = arr.type
        if pa.types.is_struct(dt):
            kids, fields = [], []
            for nc in new.children:
                old_id = self.by_new[nc.id].old.id if nc.id in self.by_new else nc.id
                index = next(i for i, oc in enumerate(old.children) if oc.id == old_id)
                child = self._build(arr.field(index), old.children[index], nc)
                kids.append(child)
                fields.append(pa.field(nc.name, child.type, nc.nullable))
            mask = arr.is_null() if arr.null_count else None
            return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)
        if is_list_like(dt, fixed=False):
            nc = new.children[0]
            values = self._build(arr.values, old.children[0], nc)
            item = pa.field(nc.name, values.type, nc.nullable)
            list_type = pa.list_(item) if pa.types.is_list(dt) else pa.large_list(item)
            offsets = pa.concat_arrays([arr.offsets])
            mask = arr.is_null() if arr.null_count else None
            cls = pa.ListArray if pa.types.is_list(dt) else pa.LargeListArray
            return cls.from_arrays(offsets, values, type=list_type, mask=mask)
        if pa.types.is_fixed_size_list(dt):
            nc = new.children[0]
            size = dt.list_size
            inner = arr.values.slice(arr.offset * size, len(arr) * size)
            values = self._build(inner, old.children[0], nc)
            item = pa.field(nc.name, values.type, nc.nullable)
            mask = arr.is_null() if arr.null_count else None
            return pa.FixedSizeListArray.from_arrays(values, type=pa.list_(item, size), mask=mask)
        raise NotSupportedYetError(f"changing the type of a field inside {old.logical_type}")

    def _cast(self, arr: pa.Array, cast: _Cast) -> pa.Array:
        if isinstance(arr, pa.ExtensionArray):
            arr = arr.storage
        try:
            return pc.cast(arr, _unwrap(cast.target), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaEvolutionError(
                cast.old.path, f"cannot cast the values to {cast.target}: {e}"
            ) from e


def _rewrite(snap: Snapshot, plan: _Alteration, new_schema: TableSchema) -> Manifest:
    old_schema = plan.schema
    casts = list(plan.casts.values())
    for c in casts:
        for other in casts:
            if other is not c and c.old.path.startswith(other.old.path + "."):
                raise SchemaEvolutionError(
                    c.old.path, f"cannot change its type together with that of {other.old.path}"
                )
    if snap.data_storage_version == "2.0" and any(c.old.parent_id != -1 for c in casts):
        # pylance 14 commits the same fields, tombstones and files, but then cannot read
        # the table ("projection supplied fewer column indices than its fields require")
        raise NotSupportedYetError(
            "changing the type of a nested field on data storage version 2.0 (pylance 14 "
            "cannot read the result)"
        )
    keep = {c.new.id for c in casts}
    groups: list[tuple[Field, Field]] = []  # (old top-level, pruned new top-level)
    for old_top, new_top in zip(old_schema.fields, new_schema.fields, strict=True):
        pruned = _prune(new_top, keep)
        if pruned is not None:
            groups.append((old_top, pruned))
    out_fields = TableSchema.of([p for _, p in groups]).fields
    rewriters = [_Rewriter(casts, p) for _, p in groups]
    wanted = ScanRequest(columns=[o.name for o, _ in groups])
    scan = plan_scan(old_schema, wanted, flagged=plan.flagged)

    def transform(batch: pa.RecordBatch) -> pa.RecordBatch:
        columns = [
            rw(batch.column(i), old)
            for i, (rw, (old, _)) in enumerate(zip(rewriters, groups, strict=True))
        ]
        return pa.RecordBatch.from_arrays(columns, names=[f.name for f in out_fields])

    source = ColumnSource(scan.top_fields, scan.read_schema, transform)
    with UncommittedFiles(snap.store) as owner:
        files = write_column_files(
            snap.store,
            snap.manifest,
            source,
            out_fields,
            flagged=plan.flagged,
            batch_size=DEFAULT_BATCH_SIZE,
            written=owner.data_names,
        )
        fragments = _retire_superseded(with_files(snap.manifest.fragments, files), new_schema)
        touches_required = any(
            not c.new.nullable or not _top(new_schema, c.new.id).nullable for c in casts
        )
        op = Merge(
            fragments=tuple(fragments),
            schema=new_schema,
            preserves_nullability=not touches_required
            and preserves_nullability(old_schema, new_schema),
        )
        return commit(snap.store, snap.manifest, op, files=owner)


def _top(schema: TableSchema, field_id: int) -> Field:
    top = schema.top_level_of(field_id)
    assert top is not None
    return top


def _retire_superseded(fragments: Sequence[Fragment], schema: TableSchema) -> list[Fragment]:
    """Ids the new (last) data file stores are tombstoned in the older files (2.0 files list
    struct parents too), and files left without a live field id are dropped."""
    live = {f.id for f in schema}
    out = []
    for frag in fragments:
        *old, new = frag.files
        rewritten = set(new.fields)
        kept: list[DataFile] = []
        for df in old:
            if rewritten.intersection(df.fields):
                df = replace(
                    df,
                    fields=tuple(TOMBSTONE_FIELD_ID if i in rewritten else i for i in df.fields),
                )
            if any(i in live for i in df.fields):
                kept.append(df)
        out.append(replace(frag, files=(*kept, new)))
    return out


def alter_columns(snap: Snapshot, alterations: Sequence[Mapping[str, Any]]) -> Manifest:
    """Rename columns, change their nullability or their data type, in one commit.

    Each alteration is a dict with ``"path"`` (dotted for nested fields) and any of
    ``"name"``, ``"nullable"``, ``"data_type"`` (a ``pa.DataType``). See the module
    docstring for what each change writes.

    Raises
    ------
    ColumnNotFoundError
        A path names no field of the table.
    SchemaEvolutionError
        A duplicate or dotted name, a cast pylance refuses (across type families) or one
        that fails on a value, nulls in a column made non-nullable, or making a column
        non-nullable and casting in the same call. Nothing is committed.
    """
    if not alterations:
        raise SchemaEvolutionError("", "no alteration given")
    plan = _Alteration(snap)
    for alteration in alterations:
        plan.apply(alteration)
    new_schema = plan.new_schema()
    if plan.tightens and plan.casts:
        raise SchemaEvolutionError(
            ", ".join(c.old.path for c in plan.casts.values()),
            "cannot make a column non-nullable and cast columns in the same call: apply the "
            "cast first, then the nullability change",
        )
    if not plan.casts:
        op = Project(
            schema=new_schema,
            preserves_nullability=preserves_nullability(plan.schema, new_schema),
        )
        return commit(snap.store, snap.manifest, op)
    _refuse_indexed_casts(snap, plan)
    return _rewrite(snap, plan, new_schema)


def _refuse_indexed_casts(snap: Snapshot, plan: _Alteration) -> None:
    """pylance 14 refuses to cast a column an index covers (the cast rewrites the data the
    index points into); so do we, before anything is written."""
    indexed = index_field_ids(snap.manifest.index_section)
    hit = [c.old.path for c in plan.casts.values() if indexed & {f.id for f in c.old.walk()}]
    if hit:
        raise SchemaEvolutionError(
            ", ".join(hit),
            "an index covers it and a cast rewrites its data: drop the index with pylance's "
            "drop_index() first, cast, then build the index again",
        )
