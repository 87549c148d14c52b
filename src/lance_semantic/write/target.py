"""The write decision (layer L4): which table schema, data storage version and flag a write
of some rows takes (the spec's enablement rule), and rows written through the writer boundary
into new, uncommitted fragments; both take the write's :class:`~lance_semantic.write.request.
WriteRequest`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from ..errors import NotSupportedYetError
from ..manifest import FLAG_SEMANTIC_TYPES, Fragment, Manifest
from ..schema import (
    TableSchema,
    canonicalize_created,
    check_reserved_names,
    check_storage_version_support,
    extension_names,
    match_input_fields,
    schema_from_arrow,
)
from ..storage import WRITABLE_VERSIONS, ObjectStore
from .blob_values import table_blob_inputs, v1_inputs_as_v2
from .boundary import Boundary
from .fragments import parse_storage_version, write_fragments
from .request import WriteRequest

__all__ = [
    "DEFAULT_STORAGE_VERSION",
    "WriteTarget",
    "write_target",
    "write_rows",
    "storage_version",
]

DEFAULT_STORAGE_VERSION = "2.2"
_ALIASES = {"stable": "2.2", "next": "2.3"}


def storage_version(requested: str | None) -> str:
    v = _ALIASES.get(requested or DEFAULT_STORAGE_VERSION, requested or DEFAULT_STORAGE_VERSION)
    if v not in WRITABLE_VERSIONS:
        raise NotSupportedYetError(
            f"data storage version {v!r} (supported: {', '.join(WRITABLE_VERSIONS)})"
        )
    return v


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
    base: Manifest | None, reader: pa.RecordBatchReader, request: WriteRequest
) -> WriteTarget:
    """Where rows of ``reader`` go, by the spec's enablement rule (see ``write_dataset``):
    the request's ``mode``, ``data_storage_version`` and ``semantic_types``.

    The rows are appended when the request's mode is ``"append"`` and ``base`` exists
    (else they make a new table, or replace ``base``'s rows). Appending keeps ``base``'s
    schema, version and flag. Otherwise (create, overwrite) the schema is made from
    ``reader.schema`` (canonical types and output encodings recorded on a flagged table).
    Either way ``reader`` is returned with blob v1 inputs turned into v2
    on 2.2+ (on an append, those of the table's blob v2 fields).

    Raises
    ------
    NotSupportedYetError, ReservedExtensionNameError, InvalidOutputEncodingError
        An unwritable data storage version, an unknown ``lance.*`` extension name, an
        invalid output-encoding entry in the input's field metadata.
    """
    data_storage_version, semantic_types = request.data_storage_version, request.semantic_types
    was_flagged = base is not None and bool(base.reader_feature_flags & FLAG_SEMANTIC_TYPES)
    if base is not None and request.mode == "append":
        reader = table_blob_inputs(reader, base.schema)
        return WriteTarget(base.schema, base.data_storage_version, was_flagged, True, reader)
    version = storage_version(data_storage_version)
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
    request: WriteRequest,
    *,
    flagged: bool,
    appending: bool,
    version: str,
    written: list[str],
    schemas: list[pa.Schema] | None = None,
) -> list[Fragment]:
    """Write rows of ``input_schema`` into new, uncommitted fragments of ``table``, a new
    data file (and fragment) starting at the request's ``max_rows_per_file`` /
    ``max_bytes_per_file``; blob URIs outside the table are taken when the request allows
    them (``allow_external_blob_outside_bases``).

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
        max_rows_per_file=request.max_rows_per_file,
        max_bytes_per_file=request.max_bytes_per_file,
        on_file=written.append,
        allow_external_blobs=request.allow_external_blob_outside_bases,
        schemas=schemas,
    )
