"""``write_dataset``: create, append to or overwrite a table (layer L5)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

import pyarrow as pa

from ...commit import commit, is_latest, load_latest_or_none
from ...errors import DatasetExistsError
from ...manifest import FLAG_SEMANTIC_TYPES, Append, Manifest, Overwrite
from ...storage import ObjectStore, UncommittedFiles, open_store
from ...write import MAX_BYTES_PER_FILE, MAX_ROWS_PER_FILE, coerce_reader, write_rows, write_target
from ..core import Progress, Snapshot, batches_with_progress, rows_of
from ..core import arguments as args

__all__ = ["write_snapshot", "check_write_arguments"]


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
    max_rows_per_file: int = MAX_ROWS_PER_FILE,
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
