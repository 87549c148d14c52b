"""``write_dataset``: create, append to or overwrite a table (layer L5)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from ..commit.committer import commit, is_latest, load_latest_or_none
from ..errors import DatasetExistsError, NotSupportedYetError
from ..manifest.flags import FLAG_SEMANTIC_TYPES
from ..manifest.model import Append, Fragment, Manifest, Overwrite
from ..schema.arrow import schema_from_arrow
from ..schema.compatibility import match_input_fields
from ..schema.datafile import check_storage_version_support
from ..schema.extensions import check_reserved_names, extension_names
from ..schema.field import TableSchema
from ..schema.semantic import canonicalize_created
from ..storage.datafile import WRITABLE_VERSIONS
from ..storage.object_store import ObjectStore, open_store
from ..storage.uncommitted import UncommittedFiles
from ..write.blob_values import table_blob_inputs, v1_inputs_as_v2
from ..write.boundary import Boundary
from ..write.fragments import (
    MAX_BYTES_PER_FILE,
    coerce_reader,
    parse_storage_version,
    write_fragments,
)
from . import arguments as args
from .progress import Progress, batches_with_progress, rows_of
from .snapshot import Snapshot

__all__ = ["write_snapshot", "write_rows", "write_target", "WriteTarget", "DEFAULT_STORAGE_VERSION"]

DEFAULT_STORAGE_VERSION = "2.2"
_ALIASES = {"stable": "2.2", "next": "2.3"}


def _storage_version(requested: str | None) -> str:
    v = _ALIASES.get(requested or DEFAULT_STORAGE_VERSION, requested or DEFAULT_STORAGE_VERSION)
    if v not in WRITABLE_VERSIONS:
        raise NotSupportedYetError(
            f"data storage version {v!r} (supported: {', '.join(WRITABLE_VERSIONS)})"
        )
    return v


def check_write_arguments(
    schema: object,
    mode: object,
    max_rows_per_file: object,
    max_bytes_per_file: object,
    data_storage_version: object,
    semantic_types: object,
    allow_external_blob_outside_bases: object,
) -> tuple[int, int]:
    """The argument checks every write shares (``write_dataset``, ``write_fragments``);
    the file limits as ints."""
    args.check_mode("mode", mode, ("create", "append", "overwrite"))
    max_rows = args.check_int("max_rows_per_file", max_rows_per_file, minimum=1)
    max_bytes = args.check_int("max_bytes_per_file", max_bytes_per_file, minimum=1)
    args.check_optional_str("data_storage_version", data_storage_version)
    args.check_optional_bool("semantic_types", semantic_types)
    args.check_bool("allow_external_blob_outside_bases", allow_external_blob_outside_bases)
    if schema is not None and not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    return max_rows, max_bytes


def write_snapshot(
    data: Any,
    uri: str | os.PathLike[str] | ObjectStore,
    schema: pa.Schema | None = None,
    mode: Literal["create", "append", "overwrite"] = "create",
    *,
    data_storage_version: str | None = None,
    semantic_types: bool | None = None,
    max_rows_per_file: int = 1_048_576,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    storage_options: Mapping[str, str] | None = None,
    allow_external_blob_outside_bases: bool = False,
    progress: bool = False,
    _uri: str | None = None,
    _base: Manifest | None = None,
) -> Snapshot:
    """``write_dataset`` up to the new version, returned as a snapshot (the facade wraps it
    in a ``Dataset``); the parameters and errors are ``write_dataset``'s."""
    max_rows_per_file, max_bytes_per_file = check_write_arguments(
        schema,
        mode,
        max_rows_per_file,
        max_bytes_per_file,
        data_storage_version,
        semantic_types,
        allow_external_blob_outside_bases,
    )
    args.check_bool("progress", progress)
    if isinstance(uri, str | os.PathLike) or not hasattr(uri, "local_path"):  # not a store
        uri = args.check_uri("uri", uri)
    options = args.check_storage_options(storage_options)
    store = uri if not isinstance(uri, str) else open_store(uri, options)
    display_uri = _uri or (uri if isinstance(uri, str) else store.root)
    reader = coerce_reader(data, schema)
    base: Manifest | None
    # a handle's manifest is used as it is when still current; on an object store without
    # asking (two requests): a stale one meets 412 at its next version and is rebased
    if _base is not None and (not store.is_local or is_latest(store, _base)):
        base = _base
    else:
        base = load_latest_or_none(store)
    if base is not None and mode == "create":
        raise DatasetExistsError(display_uri)

    target = write_target(
        base,
        reader,
        appending=base is not None and mode == "append",
        data_storage_version=data_storage_version,
        semantic_types=semantic_types,
    )
    table, version, flagged, appending = (
        target.table,
        target.version,
        target.flagged,
        target.appending,
    )
    reader = target.reader

    bar = Progress(progress, total=rows_of(data), desc="writing")
    try:
        with UncommittedFiles(store) as files:
            fragments = write_rows(
                store,
                table,
                reader.schema,
                batches_with_progress(reader, bar) if progress else reader,
                flagged=flagged,
                appending=appending,
                version=version,
                max_rows_per_file=max_rows_per_file,
                max_bytes_per_file=max_bytes_per_file,
                written=files.data_names,
                allow_external_blobs=allow_external_blob_outside_bases,
            )
            if appending:
                op: Append | Overwrite = Append(fragments=tuple(fragments))
            else:
                op = Overwrite(fragments=tuple(fragments), schema=table)
            manifest = commit(
                store,
                base,
                op,
                data_format=("lance", version),
                add_flags=FLAG_SEMANTIC_TYPES if flagged else 0,
                files=files,
            )
    finally:
        bar.close()
    return Snapshot(store, display_uri, manifest)


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """What a write of ``reader`` writes into: the table schema its rows take, the data
    storage version, whether the table is flagged, and whether the rows are appended to an
    existing table (else they make a new one, or replace the old one's)."""

    table: TableSchema
    version: str
    flagged: bool
    appending: bool
    reader: pa.RecordBatchReader


def write_target(
    base: Manifest | None,
    reader: pa.RecordBatchReader,
    *,
    appending: bool,
    data_storage_version: str | None,
    semantic_types: bool | None,
) -> WriteTarget:
    """Where rows of ``reader`` go, by the spec's enablement rule (see ``write_dataset``).

    Appending keeps ``base``'s schema, version and flag. Otherwise (create, overwrite) the
    schema is made from ``reader.schema`` (canonical types and output encodings recorded on
    a flagged table). Either way ``reader`` is returned with blob v1 inputs turned into v2
    on 2.2+ (on an append, those of the table's blob v2 fields).

    Raises
    ------
    NotSupportedYetError, ReservedExtensionNameError, InvalidOutputEncodingError
        An unwritable data storage version, an unknown ``lance.*`` extension name, an
        invalid output-encoding entry in the input's field metadata.
    """
    was_flagged = base is not None and bool(base.reader_feature_flags & FLAG_SEMANTIC_TYPES)
    if appending:
        assert base is not None
        reader = table_blob_inputs(reader, base.schema)
        return WriteTarget(base.schema, base.data_storage_version, was_flagged, True, reader)
    version = _storage_version(data_storage_version)
    if base is not None and data_storage_version is None:
        version = base.data_storage_version
    # enablement: a new table on 2.3+ sets the flag unless opted out; True opts in on any
    # version; an existing table gets it only on explicit request (semantic_types=True or
    # an explicit 2.3+ data_storage_version); a flagged table stays flagged (sticky)
    wants = parse_storage_version(version) >= (2, 3)
    if base is not None and data_storage_version is None:
        wants = False
    flagged = was_flagged or (semantic_types if semantic_types is not None else wants)
    if parse_storage_version(version) >= (2, 2):  # as pylance: v1 blobs become v2
        reader = v1_inputs_as_v2(reader)
    legacy = schema_from_arrow(reader.schema)
    # an overwrite may keep names its table already records (spec "Reserved prefix")
    kept = {n for f in base.schema for n in extension_names(f)} if base is not None else ()
    check_reserved_names(legacy.fields, allowed=kept)
    check_storage_version_support(legacy.fields, parse_storage_version(version))
    table = canonicalize_created(legacy, reader.schema) if flagged else legacy
    return WriteTarget(table, version, flagged, False, reader)


def write_rows(
    store: ObjectStore,
    table: TableSchema,
    input_schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    *,
    flagged: bool,
    appending: bool,
    version: str,
    max_rows_per_file: int = 1_048_576,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    written: list[str],
    allow_external_blobs: bool = False,
    schemas: list[pa.Schema] | None = None,
) -> list[Fragment]:
    """Write rows of ``input_schema`` into new, uncommitted fragments of ``table``.

    Every batch goes through the writer boundary: on flagged tables any accepted layout,
    stored unchanged (batches may differ; each layout gets its own data files); legacy tables
    keep the legacy rule (the table's Arrow types exactly). Each data file name
    is appended to ``written`` as soon as it exists, so a caller can remove them on failure.
    ``schemas``, when given, receives each new fragment's data file schema (its exact
    layout, before blob values become descriptors).
    """
    first = None
    if not flagged:
        first = (
            match_input_fields(table, input_schema, allow_missing_nullable=True)
            if appending
            else table.fields
        )
    boundary = Boundary(table, flagged=flagged, first=first)
    fields = boundary.bind(input_schema)
    return write_fragments(
        store,
        boundary.batches(batches),
        fields,
        flagged=flagged,
        version=version,
        max_rows_per_file=max_rows_per_file,
        max_bytes_per_file=max_bytes_per_file,
        on_file=written.append,
        allow_external_blobs=allow_external_blobs,
        schemas=schemas,
    )
