"""Transaction model <-> protobuf conversion (private, layer L3; docs/format/lance-format-facts.md
§3, §8)."""

from __future__ import annotations

from collections.abc import Mapping

from ._convert import (
    DecodeProblem,
    fields_to_pb,
    fragments_from_pb,
    fragments_to_pb,
    metadata_to_pb,
    rest_of,
    schema_from_pb,
    str_map_from_pb,
    str_map_to_pb,
)
from ._pb import lance_transaction_pb2 as xpb
from .model import (
    OPAQUE_OPERATION_NAMES,
    Append,
    CreateIndex,
    Delete,
    Merge,
    OpaqueOperation,
    Operation,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    Update,
    UpdateConfig,
    UpdateMap,
)

__all__ = ["transaction_to_pb", "transaction_from_pb"]

_UPDATE_MODES = {"rewrite_rows": 0, "rewrite_columns": 1}
_UPDATE_MODE_NAMES = {0: "rewrite_rows", 1: "rewrite_columns"}


# ---------------------------------------------------------------------------------------
# encode


def _update_map_to_pb(target: xpb.Transaction.UpdateMap, um: UpdateMap) -> None:
    target.SetInParent()
    for key, value in um.updates.items():
        entry = target.update_entries.add(key=key)
        if value is not None:
            entry.value = value
    target.replace = um.replace


def _operation_to_pb(pb: xpb.Transaction, op: Operation) -> None:
    match op:
        case Append():
            o = pb.append
            o.SetInParent()
            fragments_to_pb(o.fragments, op.fragments)
        case Delete():
            d = pb.delete
            d.SetInParent()
            fragments_to_pb(d.updated_fragments, op.updated_fragments)
            d.deleted_fragment_ids.extend(op.deleted_fragment_ids)
            d.predicate = op.predicate
        case Overwrite():
            w = pb.overwrite
            w.SetInParent()
            fragments_to_pb(w.fragments, op.fragments)
            fields_to_pb(w.schema, op.schema)
            metadata_to_pb(w.schema_metadata, op.schema.metadata)
            str_map_to_pb(w.config_upsert_values, op.config_upsert_values)
            if op.passthrough:
                w.MergeFromString(op.passthrough)
        case CreateIndex():
            c = pb.create_index
            c.SetInParent()
            c.new_indices.extend(op.new_indices)
            c.removed_indices.extend(op.removed_indices)
        case Rewrite():
            r = pb.rewrite
            r.SetInParent()
            for group in op.groups:
                g = r.groups.add()
                fragments_to_pb(g.old_fragments, group.old_fragments)
                fragments_to_pb(g.new_fragments, group.new_fragments)
            r.rewritten_indices.extend(op.rewritten_indices)
            if op.passthrough:
                r.MergeFromString(op.passthrough)
        case Merge():
            m = pb.merge
            m.SetInParent()
            fragments_to_pb(m.fragments, op.fragments)
            fields_to_pb(m.schema, op.schema)
            metadata_to_pb(m.schema_metadata, op.schema.metadata)
            m.preserves_nullability = op.preserves_nullability
        case Restore():
            pb.restore.SetInParent()
            pb.restore.version = op.version
        case ReserveFragments():
            pb.reserve_fragments.SetInParent()
            pb.reserve_fragments.num_fragments = op.num_fragments
        case Update():
            u = pb.update
            u.SetInParent()
            u.removed_fragment_ids.extend(op.removed_fragment_ids)
            fragments_to_pb(u.updated_fragments, op.updated_fragments)
            fragments_to_pb(u.new_fragments, op.new_fragments)
            u.fields_modified.extend(op.fields_modified)
            u.fields_for_preserving_frag_bitmap.extend(op.fields_for_preserving_frag_bitmap)
            u.update_mode = _UPDATE_MODES[op.update_mode]  # type: ignore[assignment]
            if op.passthrough:
                u.MergeFromString(op.passthrough)
        case Project():
            p = pb.project
            p.SetInParent()
            fields_to_pb(p.schema, op.schema)
            p.preserves_nullability = op.preserves_nullability
        case UpdateConfig():
            uc = pb.update_config
            uc.SetInParent()
            if op.config_updates is not None:
                _update_map_to_pb(uc.config_updates, op.config_updates)
            if op.table_metadata_updates is not None:
                _update_map_to_pb(uc.table_metadata_updates, op.table_metadata_updates)
            if op.schema_metadata_updates is not None:
                _update_map_to_pb(uc.schema_metadata_updates, op.schema_metadata_updates)
            for field_id, um in op.field_metadata_updates.items():
                _update_map_to_pb(uc.field_metadata_updates.add(key=field_id).value, um)
            if op.passthrough:
                uc.MergeFromString(op.passthrough)
        case OpaqueOperation():
            setattr(pb, op.name, op.payload)
        case _:
            raise TypeError(f"not a transaction operation: {op!r}")


def transaction_to_pb(txn: Transaction) -> xpb.Transaction:
    pb = xpb.Transaction(read_version=txn.read_version, uuid=txn.uuid, tag=txn.tag or "")
    str_map_to_pb(pb.transaction_properties, txn.properties)
    if txn.operation is not None:
        _operation_to_pb(pb, txn.operation)
    if txn.passthrough:
        pb.MergeFromString(txn.passthrough)
    return pb


# ---------------------------------------------------------------------------------------
# decode


def _update_map_from_pb(pb: xpb.Transaction.UpdateMap) -> UpdateMap:
    updates: Mapping[str, str | None] = {
        e.key: (e.value if e.HasField("value") else None) for e in pb.update_entries
    }
    return UpdateMap(updates, replace=pb.replace)


def _operation_from_pb(pb: xpb.Transaction, kind: str) -> Operation:
    if kind == "append":
        return Append(fragments_from_pb(pb.append.fragments))
    if kind == "delete":
        d = pb.delete
        return Delete(
            updated_fragments=fragments_from_pb(d.updated_fragments),
            deleted_fragment_ids=tuple(d.deleted_fragment_ids),
            predicate=d.predicate,
        )
    if kind == "overwrite":
        w = pb.overwrite
        return Overwrite(
            fragments=fragments_from_pb(w.fragments),
            schema=schema_from_pb(w.schema, w.schema_metadata),
            config_upsert_values=str_map_from_pb(w.config_upsert_values),
            passthrough=rest_of(
                w, ("fragments", "schema", "schema_metadata", "config_upsert_values")
            ),
        )
    if kind == "create_index":
        c = pb.create_index
        return CreateIndex(tuple(c.new_indices), tuple(c.removed_indices))
    if kind == "rewrite":
        r = pb.rewrite
        return Rewrite(
            groups=tuple(
                RewriteGroup(fragments_from_pb(g.old_fragments), fragments_from_pb(g.new_fragments))
                for g in r.groups
            ),
            rewritten_indices=tuple(r.rewritten_indices),
            passthrough=rest_of(r, ("groups", "rewritten_indices")),
        )
    if kind == "merge":
        m = pb.merge
        return Merge(
            fragments=fragments_from_pb(m.fragments),
            schema=schema_from_pb(m.schema, m.schema_metadata),
            preserves_nullability=m.preserves_nullability,
        )
    if kind == "restore":
        return Restore(pb.restore.version)
    if kind == "reserve_fragments":
        return ReserveFragments(pb.reserve_fragments.num_fragments)
    if kind == "update":
        u = pb.update
        mode = _UPDATE_MODE_NAMES.get(u.update_mode)
        if mode is None:
            raise DecodeProblem(f"unknown update mode {u.update_mode}")
        return Update(
            removed_fragment_ids=tuple(u.removed_fragment_ids),
            updated_fragments=fragments_from_pb(u.updated_fragments),
            new_fragments=fragments_from_pb(u.new_fragments),
            fields_modified=tuple(u.fields_modified),
            fields_for_preserving_frag_bitmap=tuple(u.fields_for_preserving_frag_bitmap),
            update_mode=mode,  # type: ignore[arg-type]
            passthrough=rest_of(
                u,
                (
                    "removed_fragment_ids",
                    "updated_fragments",
                    "new_fragments",
                    "fields_modified",
                    "fields_for_preserving_frag_bitmap",
                    "update_mode",
                ),
            ),
        )
    if kind == "project":
        p = pb.project
        return Project(
            schema=schema_from_pb(p.schema), preserves_nullability=p.preserves_nullability
        )
    if kind == "update_config":
        uc = pb.update_config
        return UpdateConfig(
            config_updates=(
                _update_map_from_pb(uc.config_updates) if uc.HasField("config_updates") else None
            ),
            table_metadata_updates=(
                _update_map_from_pb(uc.table_metadata_updates)
                if uc.HasField("table_metadata_updates")
                else None
            ),
            schema_metadata_updates=(
                _update_map_from_pb(uc.schema_metadata_updates)
                if uc.HasField("schema_metadata_updates")
                else None
            ),
            field_metadata_updates={
                e.key: _update_map_from_pb(e.value) for e in uc.field_metadata_updates
            },
            passthrough=rest_of(
                uc,
                (
                    "config_updates",
                    "table_metadata_updates",
                    "schema_metadata_updates",
                    "field_metadata_updates",
                ),
            ),
        )
    number = xpb.Transaction.DESCRIPTOR.fields_by_name[kind].number
    if number in OPAQUE_OPERATION_NAMES:
        return OpaqueOperation(number, getattr(pb, kind))
    raise DecodeProblem(f"unhandled transaction operation {kind}")  # pragma: no cover


_TXN_MODELLED = ("read_version", "uuid", "tag", "transaction_properties")


def transaction_from_pb(pb: xpb.Transaction) -> Transaction:
    kind = pb.WhichOneof("operation")
    operation = _operation_from_pb(pb, kind) if kind is not None else None
    return Transaction(
        read_version=pb.read_version,
        uuid=pb.uuid,
        operation=operation,
        tag=pb.tag or None,
        properties=str_map_from_pb(pb.transaction_properties),
        passthrough=rest_of(pb, (*_TXN_MODELLED, *([kind] if kind else []))),
    )
