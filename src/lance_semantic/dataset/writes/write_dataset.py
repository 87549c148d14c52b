"""``write_dataset``: create, append to or overwrite a table (layer L5)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, cast

import pyarrow as pa

from ...commit import commit, is_latest, load_latest_or_none
from ...errors import DatasetExistsError
from ...manifest import FLAG_SEMANTIC_TYPES, Append, Manifest, Overwrite
from ...storage import ObjectStore, UncommittedFiles, open_store
from ...write import (
    MAX_BYTES_PER_FILE,
    MAX_ROWS_PER_FILE,
    WriteMode,
    WriteRequest,
    coerce_reader,
    write_rows,
    write_target,
)
from ..core import Progress, Snapshot, batches_with_progress, rows_of
from ..core import arguments as args

__all__ = ["write_snapshot", "write_request"]


def write_request(
    schema: object = None,
    mode: object = "create",
    max_rows_per_file: object = MAX_ROWS_PER_FILE,
    max_bytes_per_file: object = MAX_BYTES_PER_FILE,
    data_storage_version: object = None,
    semantic_types: object = None,
    allow_external_blob_outside_bases: object = False,
) -> WriteRequest:
    """The request of a write given pylance's keywords, checked: the argument checks every
    write shares (``write_dataset``, ``Dataset.insert``, ``write_fragments``).

    >>> from lance_semantic.dataset.writes import write_request
    >>> write_request(mode="append", max_rows_per_file=True).max_rows_per_file
    1
    >>> write_request(mode="upsert")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of 'create', 'append', 'overwrite', got 'upsert'
    """
    checked_mode = args.check_mode("mode", mode, ("create", "append", "overwrite"))
    max_rows = args.check_int("max_rows_per_file", max_rows_per_file, minimum=1)
    max_bytes = args.check_int("max_bytes_per_file", max_bytes_per_file, minimum=1)
    version = args.check_optional_str("data_storage_version", data_storage_version)
    flag = args.check_optional_bool("semantic_types", semantic_types)
    external = args.check_bool(
        "allow_external_blob_outside_bases", allow_external_blob_outside_bases
    )
    if schema is not None and not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    return WriteRequest(
        schema=schema,
        mode=cast(WriteMode, checked_mode),
        max_rows_per_file=max_rows,
        max_bytes_per_file=max_bytes,
        data_storage_version=version,
        semantic_types=flag,
        allow_external_blob_outside_bases=external,
    )


def write_snapshot(
    data: Any,
    uri: str | os.PathLike[str] | ObjectStore,
    request: WriteRequest,
    *,
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
    _uri: str | None = None,
    _base: Manifest | None = None,
) -> Snapshot:
    """``write_dataset`` up to the new version, returned as a snapshot (the facade wraps it
    in a ``Dataset``); ``request`` is built from ``write_dataset``'s keywords by
    :func:`write_request`, the other parameters and the errors are ``write_dataset``'s."""
    args.check_bool("progress", progress)
    if isinstance(uri, str | os.PathLike) or not hasattr(uri, "local_path"):  # not a store
        uri = args.check_uri("uri", uri)
    options = args.check_storage_options(storage_options)
    store = uri if not isinstance(uri, str) else open_store(uri, options)
    display_uri = _uri or (uri if isinstance(uri, str) else store.root)
    reader = coerce_reader(data, request.schema)
    base: Manifest | None
    # a handle's manifest is used as it is when still current; on an object store without
    # asking (two requests): a stale one meets 412 at its next version and is rebased
    if _base is not None and (not store.is_local or is_latest(store, _base)):
        base = _base
    else:
        base = load_latest_or_none(store)
    if base is not None and request.mode == "create":
        raise DatasetExistsError(display_uri)

    target = write_target(base, reader, request)
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
                request,
                flagged=flagged,
                appending=appending,
                version=version,
                written=files.data_names,
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
