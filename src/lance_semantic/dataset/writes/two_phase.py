"""Two-phase writes: write data files now, publish them later in one commit (layer L5;
pylance ``lance.fragment.write_fragments`` + ``LanceDataset.commit``).

:func:`write_fragments` writes rows as uncommitted fragments of a table that exists or does
not exist yet. It runs the same writer boundary as ``write_dataset``, batch by batch, so on
a flagged table each data file keeps the accepted layout its rows came in. Any process can
call it; the fragments it returns pickle.

:func:`commit_operation` (``ls.Dataset.commit``) turns an ``ls.LanceOperation`` into the
manifest operation it is and publishes it through :func:`~lance_semantic.commit.committer.
commit`: put-if-absent, rebase onto what others published since ``read_version``, or
``CommitConflictError``. An ``Overwrite`` decides the data storage version and the feature
flag by the enablement rule of ``write_dataset``, and its schema as ``write_dataset`` makes
it from its input's schema (canonical types and output encodings on a flagged table).
Before anything is published, every data file whose layout the fragment records is checked
against the table: its columns must be the table's (the same field ids) and hold their
fields' types (flagged: an accepted layout of the semantic type; legacy: the Arrow type).
"""

from __future__ import annotations

import os
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pyarrow as pa

from ...commit import commit, latest_version, load_latest_or_none, load_manifest
from ...errors import DatasetExistsError, SchemaMismatchError
from ...manifest import (
    COMMIT_MESSAGE_KEY,
    FLAG_SEMANTIC_TYPES,
    Fragment,
    IndexFile,
    Manifest,
    RewrittenIndex,
    encode_rewritten_index,
    index_entries,
    model,
    with_rewritten_indices,
)
from ...schema import (
    TableSchema,
    assign_new_ids,
    canonicalize_created,
    data_file_field_ids,
    match_input_fields,
    schema_to_arrow,
    upgrade_schema,
)
from ...storage import ObjectStore, UncommittedFiles, open_store
from ...vector import INDEX_DIR
from ...write import (
    MAX_BYTES_PER_FILE,
    MAX_ROWS_PER_FILE,
    WriteRequest,
    bind_input,
    check_file_layout,
    coerce_reader,
    parse_storage_version,
    write_rows,
    write_target,
)
from ..core import arguments as args
from .fragment_metadata import FragmentMetadata, plain
from .index_commit import create_index_operation
from .lance_operation import AnyOperation, LanceOperation
from .write_dataset import write_request

__all__ = ["write_fragments", "write_uncommitted", "commit_operation"]


def write_fragments(
    data: Any,
    uri: str | os.PathLike[str],
    schema: pa.Schema | None = None,
    *,
    mode: Literal["create", "append", "overwrite"] = "append",
    data_storage_version: str | None = None,
    semantic_types: bool | None = None,
    max_rows_per_file: int = MAX_ROWS_PER_FILE,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    storage_options: Mapping[str, str] | None = None,
    allow_external_blob_outside_bases: bool = False,
) -> list[FragmentMetadata]:
    """Write ``data`` as new fragments of the table at ``uri`` without committing them.

    Parameters
    ----------
    data
        Anything ``write_dataset`` takes.
    uri
        The table, which may not exist yet.
    schema
        The schema to write ``data`` as (columns selected and cast), as pylance.
    mode
        ``"append"`` (default): rows of the existing table's schema (checked as an append
        checks them; on a flagged table any accepted layout, each kept in its own data
        files). ``"create"`` / ``"overwrite"``, or no table yet: rows of a new schema made
        from ``data``'s, field ids assigned afresh, for a ``LanceOperation.Overwrite``.
    data_storage_version, semantic_types
        For a new schema, as in ``write_dataset`` (the same values must reach the commit,
        or be left for it to read from the fragments).
    max_rows_per_file, max_bytes_per_file
        When a new data file (and fragment) starts.

    Returns
    -------
    list of FragmentMetadata
        With id 0 (a commit assigns the ids), the written layout of every data file.

    Raises
    ------
    DatasetExistsError
        ``mode="create"`` where a table exists.
    SchemaMismatchError, UnsupportedInputTypeError, InvalidJsonError, InvalidBlobError
        As ``write_dataset`` raises them; the files written so far are removed.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> fragments = ls.fragment.write_fragments(pa.table({"id": [2, 3]}), "t.lance")
    >>> [(f.id, f.physical_rows) for f in fragments], ds.count_rows()  # not committed yet
    ([(0, 2)], 1)
    >>> ls.Dataset.commit("t.lance", ls.LanceOperation.Append(fragments), read_version=1)
    Dataset(uri='t.lance', version=2, rows=3)
    """
    request = write_request(
        schema,
        mode,
        max_rows_per_file,
        max_bytes_per_file,
        data_storage_version,
        semantic_types,
        allow_external_blob_outside_bases,
    )
    return write_uncommitted(data, uri, request, storage_options=storage_options)


def write_uncommitted(
    data: Any,
    uri: str | os.PathLike[str],
    request: WriteRequest,
    *,
    storage_options: Mapping[str, str] | None = None,
) -> list[FragmentMetadata]:
    """:func:`write_fragments` for a checked ``request`` (what Ray's write tasks run)."""
    uri = args.check_uri("uri", uri)
    store = open_store(uri, args.check_storage_options(storage_options))
    reader = coerce_reader(data, request.schema)
    base = load_latest_or_none(store)
    if base is not None and request.mode == "create":
        raise DatasetExistsError(uri)
    target = write_target(base, reader, request)
    schemas: list[pa.Schema] = []
    # on success the files are the caller's, uncommitted fragments to commit later
    with UncommittedFiles(store) as files:
        fragments = write_rows(
            store,
            target.table,
            target.reader.schema,
            target.reader,
            request,
            flagged=target.flagged,
            appending=target.appending,
            version=target.version,
            written=files.data_names,
            schemas=schemas,
        )
    return [
        FragmentMetadata(f.id, f.files, f.physical_rows, file_schemas=(s,))
        for f, s in zip(fragments, schemas, strict=True)
    ]


# ---- commit ----------------------------------------------------------------------------------


def commit_operation(
    uri: str | os.PathLike[str],
    operation: AnyOperation,
    read_version: int | None = None,
    *,
    storage_options: Mapping[str, str] | None = None,
    data_storage_version: str | None = None,
    semantic_types: bool | None = None,
    commit_message: str | None = None,
    max_retries: int = 20,
    create: bool = False,
) -> tuple[ObjectStore, str, Manifest]:
    """Publish ``operation`` read at ``read_version``; the store, URI and new manifest.

    See ``ls.Dataset.commit`` for the parameters and errors. With ``create`` an Overwrite
    only creates: ``DatasetExistsError`` when a table exists or another create wins.
    """
    uri = args.check_uri("uri", uri)
    number = args.check_version(read_version, name="read_version")
    args.check_optional_str("data_storage_version", data_storage_version)
    args.check_optional_bool("semantic_types", semantic_types)
    args.check_optional_str("commit_message", commit_message)
    max_retries = args.check_int("max_retries", max_retries, minimum=1)
    if not isinstance(operation, _OPERATIONS):
        raise TypeError(f"operation must be an ls.LanceOperation, got {type(operation).__name__}")
    store = open_store(uri, args.check_storage_options(storage_options))
    whole = isinstance(operation, LanceOperation.Overwrite | LanceOperation.Restore)
    if number is None and not whole:
        raise ValueError("read_version is required for all operations except Overwrite and Restore")
    # one listing when committing at the latest version (it is the base), two otherwise
    latest = load_latest_or_none(store) if number is None else None
    exists = latest is not None or (number is not None and latest_version(store) is not None)
    if create and (exists or not isinstance(operation, LanceOperation.Overwrite)):
        raise DatasetExistsError(uri) if exists else ValueError("create needs an Overwrite")
    base = load_manifest(store, number) if number is not None else latest
    properties = {COMMIT_MESSAGE_KEY: commit_message} if commit_message is not None else None

    if isinstance(operation, LanceOperation.Overwrite):
        op, version, flagged = _overwrite(operation, base, data_storage_version, semantic_types)
        manifest = commit(
            store,
            base,
            op,
            properties=properties,
            data_format=("lance", version),
            add_flags=FLAG_SEMANTIC_TYPES if flagged else 0,
            max_retries=max_retries,
        )
        return store, uri, manifest
    if base is None:
        raise ValueError(f"{type(operation).__name__} needs an existing table at {uri}")
    manifest = commit(
        store,
        base,
        _operation(operation, base, store),
        properties=properties,
        max_retries=max_retries,
    )
    return store, uri, manifest


_OPERATIONS = (
    LanceOperation.Overwrite,
    LanceOperation.Append,
    LanceOperation.Delete,
    LanceOperation.Update,
    LanceOperation.Merge,
    LanceOperation.Project,
    LanceOperation.Restore,
    LanceOperation.Rewrite,
    LanceOperation.UpdateConfig,
    LanceOperation.CreateIndex,
)


def _frags(fragments: Sequence[Fragment]) -> tuple[Fragment, ...]:
    return tuple(plain(f) for f in fragments)


def _rewritten_indices(
    store: ObjectStore, base: Manifest, given: Sequence[Any]
) -> tuple[bytes, ...]:
    """The ``RewrittenIndex`` messages of a Rewrite's ``rewritten_indices``: each names an
    index of ``base`` and a folder of index files (listed with their sizes, by name, as
    pylance records them)."""
    uuids = {e.uuid for e in index_entries(base.index_section)}
    out = []
    for item in given:
        try:
            old_id, new_id = str(item.old_id), str(item.new_id)
            type_url = str(item.new_details_type_url)
            details = bytes(item.new_details_value)
            version = int(item.new_index_version)
        except (AttributeError, TypeError, ValueError):
            raise TypeError(
                "rewritten_indices must hold LanceOperation.RewrittenIndex values, got "
                f"{type(item).__name__}"
            ) from None
        try:
            old_id, new_id = str(uuidlib.UUID(old_id)), str(uuidlib.UUID(new_id))
        except ValueError:
            raise ValueError(
                f"rewritten_indices: old_id {old_id!r} or new_id {new_id!r} is not a uuid"
            ) from None
        if old_id not in uuids:
            raise ValueError(f"rewritten_indices: the table has no index {old_id}")
        folder = f"{INDEX_DIR}/{new_id}"
        found = [f for f in store.walk(folder) if f.path.count("/") == 2]
        if not found:
            raise ValueError(f"rewritten_indices: no index files under {folder}")
        files = tuple(IndexFile(f.path.rsplit("/", 1)[1], f.size) for f in found)
        rewritten = RewrittenIndex(old_id, new_id, type_url, details, version, files)
        out.append(encode_rewritten_index(rewritten))
    return tuple(out)


def _operation(op: AnyOperation, base: Manifest, store: ObjectStore) -> model.Operation:
    """The manifest operation of ``op`` (all but Overwrite)."""
    if isinstance(op, LanceOperation.Append):
        _check_new(base, op.fragments)
        return model.Append(fragments=_frags(op.fragments))
    if isinstance(op, LanceOperation.Delete):
        return model.Delete(
            updated_fragments=_frags(op.updated_fragments),
            deleted_fragment_ids=tuple(op.deleted_fragment_ids),
            predicate=op.predicate,
        )
    if isinstance(op, LanceOperation.Update):
        _check_new(base, op.new_fragments)
        return model.Update(
            removed_fragment_ids=tuple(op.removed_fragment_ids),
            updated_fragments=_frags(op.updated_fragments),
            new_fragments=_frags(op.new_fragments),
            fields_modified=tuple(op.fields_modified),
            fields_for_preserving_frag_bitmap=tuple(op.fields_for_preserving_frag_bitmap),
            update_mode="rewrite_columns"
            if op.update_mode == "rewrite_columns"
            else "rewrite_rows",
        )
    if isinstance(op, LanceOperation.Merge):
        schema = _merge_schema(op.schema, base)
        return model.Merge(
            fragments=_frags(op.fragments),
            schema=schema,
            preserves_nullability=op.preserves_nullability,
        )
    if isinstance(op, LanceOperation.Project):
        return model.Project(schema=op.schema, preserves_nullability=op.preserves_nullability)
    if isinstance(op, LanceOperation.Restore):
        return model.Restore(version=op.version)
    if isinstance(op, LanceOperation.Rewrite):
        _check_new(base, [f for g in op.groups for f in g.new_fragments])
        groups = tuple(
            model.RewriteGroup(_frags(g.old_fragments), _frags(g.new_fragments)) for g in op.groups
        )
        rewritten = _rewritten_indices(store, base, op.rewritten_indices)
        try:  # each group covered whole or not at all by each remapped index
            olds = [(frozenset(f.id for f in g.old_fragments), ()) for g in groups]
            with_rewritten_indices(base.index_section, olds, rewritten)
        except ValueError as e:
            raise ValueError(f"rewritten_indices: {e}") from None
        return model.Rewrite(groups=groups, rewritten_indices=rewritten)
    if isinstance(op, LanceOperation.UpdateConfig):
        return model.UpdateConfig(
            config_updates=op.config_updates,
            table_metadata_updates=op.table_metadata_updates,
            schema_metadata_updates=op.schema_metadata_updates,
            field_metadata_updates=dict(op.field_metadata_updates or {}),
        )
    if isinstance(op, LanceOperation.CreateIndex):
        return create_index_operation(op.new_indices, op.removed_indices, base)
    raise TypeError(f"cannot commit {type(op).__name__}")


def _is_flagged(manifest: Manifest) -> bool:
    return bool(manifest.reader_feature_flags & FLAG_SEMANTIC_TYPES)


def _check_new(base: Manifest, fragments: Sequence[Fragment]) -> None:
    _check_files(base.schema, _is_flagged(base), base.data_storage_version, fragments)


def _file_version(fragments: Sequence[Fragment]) -> str | None:
    """The one data storage version of the fragments' data files (None: no files)."""
    found = {df.file_version for f in fragments for df in f.files}
    if len(found) > 1:
        raise ValueError(
            "All data files must have the same version; the fragments hold "
            + " and ".join(sorted(found))
        )
    return next(iter(found), None)


def _check_files(
    table: TableSchema, flagged: bool, version: str, fragments: Sequence[Fragment]
) -> None:
    """Every data file of ``fragments`` fits ``table`` (see the module doc)."""
    major_minor = parse_storage_version(version)
    for fragment in fragments:
        schemas = fragment.file_schemas if isinstance(fragment, FragmentMetadata) else ()
        for i, df in enumerate(fragment.files):
            if df.file_version != version:
                raise ValueError(
                    f"data file {df.path} has data storage version {df.file_version}, "
                    f"the table {version}"
                )
            schema = schemas[i] if i < len(schemas) else None
            if schema is None:
                continue  # no recorded layout (pylance's fragments): committed as given
            if flagged:
                fields = bind_input(table.fields, schema)
            else:
                fields = match_input_fields(table, schema, allow_missing_nullable=True)
            ids, _ = data_file_field_ids(fields, major_minor)
            if tuple(ids) != df.fields:
                names = ", ".join(schema.names)
                raise SchemaMismatchError(
                    fields[0].name if fields else "<schema>",
                    f"field ids {list(ids)} for columns ({names})",
                    f"data file {df.path} with field ids {list(df.fields)}",
                    "the fragment was written for another schema",
                )
            check_file_layout(fields, schema, flagged=flagged)


def _overwrite(
    op: LanceOperation.Overwrite,
    base: Manifest | None,
    data_storage_version: str | None,
    semantic_types: bool | None,
) -> tuple[model.Overwrite, str, bool]:
    """The manifest Overwrite, its data storage version and whether the table is flagged."""
    file_version = _file_version(op.fragments)
    explicit = data_storage_version
    if explicit is None and file_version is not None:
        if base is None or file_version != base.data_storage_version:
            explicit = file_version  # the version the workers wrote, as pylance reads it
    given = op.new_schema
    arrow = schema_to_arrow(given) if isinstance(given, TableSchema) else given
    request = WriteRequest(
        mode="overwrite", data_storage_version=explicit, semantic_types=semantic_types
    )
    target = write_target(base, pa.RecordBatchReader.from_batches(arrow, []), request)
    table = target.table
    if isinstance(given, TableSchema):
        table = upgrade_schema(given) if target.flagged else given
    if file_version is not None and file_version != target.version:
        raise ValueError(
            f"the fragments hold data storage version {file_version}, "
            f"the commit asks for {target.version}"
        )
    _check_files(table, target.flagged, target.version, op.fragments)
    return (
        model.Overwrite(fragments=_frags(op.fragments), schema=table),
        target.version,
        target.flagged,
    )


def _merge_schema(schema: TableSchema | pa.Schema, base: Manifest) -> TableSchema:
    """A Merge's schema: as given, or an Arrow schema resolved against the table's (columns
    of the table keep their fields and ids, new columns get new ids; canonical on a flagged
    table)."""
    if isinstance(schema, TableSchema):
        return schema
    known = {f.name: f for f in base.schema.fields}
    new_arrow = [f for f in schema if f.name not in known]
    next_id = max((f.id for f in base.schema), default=-1) + 1
    if base.max_allocated_field_id is not None:
        next_id = max(next_id, base.max_allocated_field_id + 1)
    added = TableSchema.of(assign_new_ids(new_arrow, next_id), base.schema.metadata)
    if _is_flagged(base):
        added = canonicalize_created(added, pa.schema(new_arrow))
    by_name = {f.name: f for f in added.fields}
    fields = tuple(known.get(f.name) or by_name[f.name] for f in schema)
    return TableSchema.of(fields, base.schema.metadata)
