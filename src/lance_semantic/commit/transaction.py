"""Apply a transaction to a manifest: a pure function from (base, operation) to the next
manifest (layer L4; docs/format/lance-format-facts.md §3 "What pylance 14 actually writes per
operation").

Fragment ids of new fragments are assigned here, at commit time, from the base manifest's
``max_fragment_id`` high-water mark, so an operation can be rebased onto a newer version
without rewriting any data file.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import singledispatch

from ..errors import CommitConflictError
from ..manifest import (
    DEFAULT_DATA_FORMAT,
    Append,
    CreateIndex,
    Delete,
    Fragment,
    Manifest,
    Merge,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    Transaction,
    Update,
    UpdateConfig,
    WriterVersion,
    flags,
    with_index_changes,
    with_rewritten_indices,
    without_indices_on_missing_fields,
    without_modified_fragments,
)
from ..schema import TableSchema, freeze_metadata, upgrade_schema

__all__ = ["apply_transaction", "WRITER_VERSION", "next_fragment_id"]

WRITER_VERSION = WriterVersion(library="lance-semantic", version="0.1.0")


def next_fragment_id(base: Manifest | None) -> int:
    if base is None:
        return 0
    if base.max_fragment_id is not None:
        return base.max_fragment_id + 1
    return max((f.id for f in base.fragments), default=-1) + 1


def _assign_ids(fragments: tuple[Fragment, ...], start: int) -> tuple[Fragment, ...]:
    return tuple(replace(f, id=start + i) for i, f in enumerate(fragments))


def apply_transaction(
    base: Manifest | None,
    txn: Transaction,
    *,
    version: int,
    restored: Manifest | None = None,
    data_format: tuple[str, str] | None = None,
    add_flags: int = 0,
) -> Manifest:
    """The manifest of ``version`` obtained by applying ``txn`` on ``base``.

    ``restored`` is the manifest of the version named by a :class:`Restore` operation;
    ``data_format`` the storage format of a table that an :class:`Overwrite` (re)creates;
    ``add_flags`` feature bits to set in both reader and writer flags (they are then carried
    by every later commit, e.g. ``FLAG_SEMANTIC_TYPES``).
    """
    if isinstance(txn.operation, Restore):
        if restored is None or base is None:
            raise ValueError("restore needs the base manifest and the restored manifest")
        schema, fragments = restored.schema, restored.fragments
        flagged = (base.reader_feature_flags | add_flags) & flags.FLAG_SEMANTIC_TYPES
        if flagged and not restored.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES:
            # a pre-upgrade version restored onto a flagged table (the flag is sticky):
            # flagged writers write only canonical names, so its legacy aliases are
            # rewritten as the upgrade commit rewrites them
            schema = upgrade_schema(schema)
        nxt = replace(
            base,
            schema=schema,
            fragments=fragments,
            data_format=restored.data_format,
            config=restored.config,
            # the restored version's whole manifest, as pylance: its indices cover its
            # fragments and rows (the newest version's would answer for other rows)
            index_section=restored.index_section,
            table_metadata=restored.table_metadata,
        )
    elif isinstance(txn.operation, Overwrite):
        nxt = _overwrite(txn.operation, base, data_format)
    else:
        nxt = _apply(txn.operation, base)
    if not isinstance(txn.operation, Restore):  # pylance keeps fragments sorted by id
        nxt = replace(nxt, fragments=tuple(sorted(nxt.fragments, key=lambda f: f.id)))
    high = max((f.id for f in nxt.fragments), default=-1)
    prev_high = -1 if base is None or base.max_fragment_id is None else base.max_fragment_id
    max_fragment_id = max(
        high, prev_high, nxt.max_fragment_id if nxt.max_fragment_id is not None else -1
    )
    reader, writer = flags.next_flags(
        (base.reader_feature_flags if base else 0) | add_flags,
        (base.writer_feature_flags if base else 0) | add_flags,
        nxt,
    )
    return replace(
        nxt,
        version=version,
        timestamp_ns=time.time_ns(),
        max_fragment_id=max_fragment_id if max_fragment_id >= 0 else None,
        reader_feature_flags=reader,
        writer_feature_flags=writer,
        transaction_file=f"{txn.read_version}-{txn.uuid}.txn",
        writer_version=WRITER_VERSION,
    )


@singledispatch
def _apply(op: object, base: Manifest | None) -> Manifest:
    raise TypeError(f"cannot apply operation {type(op).__name__}")


def _require(base: Manifest | None, op: object) -> Manifest:
    if base is None:
        raise ValueError(f"{type(op).__name__} needs an existing table")
    return base


def _overwrite(
    op: Overwrite, base: Manifest | None, data_format: tuple[str, str] | None
) -> Manifest:
    fragments = _assign_ids(op.fragments, next_fragment_id(base))
    if base is None:
        return Manifest(
            schema=op.schema,
            fragments=fragments,
            version=0,
            data_format=data_format or DEFAULT_DATA_FORMAT,
            config=op.config_upsert_values,
        )
    config = dict(base.config)
    config.update(op.config_upsert_values)
    return replace(
        base,
        schema=op.schema,
        fragments=fragments,
        config=config,
        data_format=data_format or base.data_format,
        index_section=None,
    )


@_apply.register
def _(op: Append, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    fragments = _assign_ids(op.fragments, next_fragment_id(base))
    return replace(base, fragments=base.fragments + fragments)


@_apply.register
def _(op: Delete, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    updated = {f.id: f for f in op.updated_fragments}
    gone = set(op.deleted_fragment_ids)
    frags = tuple(updated.get(f.id, f) for f in base.fragments if f.id not in gone)
    return replace(base, fragments=frags)


@_apply.register
def _(op: Update, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    updated = {f.id: f for f in op.updated_fragments}
    gone = set(op.removed_fragment_ids)
    kept = tuple(updated.get(f.id, f) for f in base.fragments if f.id not in gone)
    new = _assign_ids(op.new_fragments, next_fragment_id(base))
    # an index over a rewritten column no longer covers the fragments it was rewritten in
    section = without_modified_fragments(base.index_section, list(updated), op.fields_modified)
    return replace(base, fragments=kept + new, index_section=section)


@_apply.register
def _(op: CreateIndex, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    section = with_index_changes(base.index_section, op.new_indices, op.removed_indices)
    return replace(base, index_section=section)


@_apply.register
def _(op: Merge, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    return replace(base, fragments=tuple(op.fragments), schema=op.schema)


@_apply.register
def _(op: Project, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    live = {f.id for f in op.schema}
    frags = []
    for frag in base.fragments:
        files = tuple(df for df in frag.files if any(i in live for i in df.fields))
        frags.append(replace(frag, files=files))
    # as pylance: an index on a field the new schema no longer has goes with the field
    section = without_indices_on_missing_fields(base.index_section, live)
    return replace(base, schema=op.schema, fragments=tuple(frags), index_section=section)


@_apply.register
def _(op: ReserveFragments, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    return replace(base, max_fragment_id=next_fragment_id(base) - 1 + op.num_fragments)


@_apply.register
def _(op: Rewrite, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    frags = list(base.fragments)
    next_id = next_fragment_id(base)
    numbered: list[tuple[frozenset[int], tuple[int, ...]]] = []
    for group in op.groups:
        old = {f.id for f in group.old_fragments}
        missing = sorted(old - {f.id for f in frags})
        if missing:  # (as pylance: a conflict no retry can resolve)
            raise CommitConflictError(
                base.version,
                base.version + 1,
                f"the table has no fragment {missing[0]} that the rewrite replaces",
                retryable=False,
            )
        pos = min(i for i, f in enumerate(frags) if f.id in old)
        frags = [f for f in frags if f.id not in old]
        new = group.new_fragments
        if new and all(f.id == 0 for f in new):
            # written without ids (a two-phase commit): numbered here, in group order, as
            # pylance does (a table with fragments to rewrite never gives a new one id 0)
            new = _assign_ids(new, next_id)
            next_id += len(new)
        frags[pos:pos] = list(new)
        numbered.append((frozenset(old), tuple(f.id for f in new)))
    if not op.rewritten_indices:
        return replace(base, fragments=tuple(frags))
    try:  # as pylance: the remapped indices replace theirs, bitmaps follow the groups
        section = with_rewritten_indices(base.index_section, numbered, op.rewritten_indices)
    except ValueError as e:
        raise CommitConflictError(base.version, base.version + 1, str(e), retryable=False) from None
    return replace(base, fragments=tuple(frags), index_section=section)


@_apply.register
def _(op: UpdateConfig, base: Manifest | None) -> Manifest:
    base = _require(base, op)
    schema = base.schema
    if op.schema_metadata_updates is not None:
        current = {k: v.decode("utf-8", "surrogateescape") for k, v in schema.metadata.items()}
        md = op.schema_metadata_updates.apply(current)
        schema = TableSchema(schema.fields, freeze_metadata(dict(md.items())))
    if op.field_metadata_updates:
        schema = _update_field_metadata(schema, op)
    return replace(
        base,
        config=op.config_updates.apply(base.config) if op.config_updates else base.config,
        table_metadata=(
            op.table_metadata_updates.apply(base.table_metadata)
            if op.table_metadata_updates
            else base.table_metadata
        ),
        schema=schema,
    )


def _update_field_metadata(schema: TableSchema, op: UpdateConfig) -> TableSchema:
    flat = []
    for f in schema.flatten():
        update = op.field_metadata_updates.get(f.id)
        if update is not None:
            current = {k: v.decode("utf-8", "surrogateescape") for k, v in f.metadata.items()}
            f = replace(f, metadata=freeze_metadata(dict(update.apply(current).items())))
        flat.append(f)
    return TableSchema.from_flat(flat, schema.metadata)
