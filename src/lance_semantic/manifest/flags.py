"""Reader / writer feature flags of a Lance manifest (layer L3; docs/format/lance-format-facts.md
§6, DESIGN §2.4).

A manifest carries two 64-bit masks. A reader must refuse a table whose
``reader_feature_flags`` has a bit it does not implement, a writer one whose
``writer_feature_flags`` has such a bit. Bit meanings below are those of pylance 14.0.2
as measured (docs/format/lance-format-facts.md §6); :data:`FLAG_SEMANTIC_TYPES` is lance-semantic's
own, provisional bit for the Semantic Type Contract.

>>> flag_names(FLAG_DELETION_FILES | FLAG_SEMANTIC_TYPES)
['deletion_files', 'semantic_types']
>>> flag_names(1 << 12)
['bit12']
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import CorruptManifestError, UnsupportedFeatureError
from .model import Manifest

__all__ = [
    "FLAG_DELETION_FILES",
    "FLAG_STABLE_ROW_IDS",
    "FLAG_USE_V2_FORMAT_DEPRECATED",
    "FLAG_TABLE_CONFIG",
    "FLAG_BASE_PATHS",
    "FLAG_DISABLE_TRANSACTION_FILE",
    "FLAG_DATA_OVERLAY_FILES",
    "FLAG_COVERED_INDEX_METADATA",
    "FLAG_MIXED_FILE_VERSIONS",
    "FLAG_FRAGMENT_REUSE_INDEX",
    "FLAG_MANAGED_BLOBS",
    "FLAG_STABLE_FIELD_IDS",
    "FLAG_ZONE_WRITE_SEED",
    "FLAG_SEMANTIC_TYPES",
    "FLAG_NAMES",
    "KNOWN_READER_FLAGS",
    "KNOWN_WRITER_FLAGS",
    "flag_names",
    "unknown_reader_flags",
    "unknown_writer_flags",
    "check_readable",
    "check_writable",
    "next_flags",
]

#: bit 0, reader+writer: some fragment has a deletion file (recomputed on every commit)
FLAG_DELETION_FILES = 1 << 0
#: bit 1, reader+writer: stable row ids; every fragment carries a row-id sequence
FLAG_STABLE_ROW_IDS = 1 << 1
#: bit 2: deprecated "v2 format" marker; accepted, cleared on the next commit
FLAG_USE_V2_FORMAT_DEPRECATED = 1 << 2
#: bit 3, writer: the table config map is not empty
FLAG_TABLE_CONFIG = 1 << 3
#: bit 4, reader+writer: ``Manifest.base_paths`` is in use
FLAG_BASE_PATHS = 1 << 4
#: bit 5, writer: transaction files are not written (inline transaction only)
FLAG_DISABLE_TRANSACTION_FILE = 1 << 5
#: bit 6, reader+writer: data overlay files (unstable in pylance 14)
FLAG_DATA_OVERLAY_FILES = 1 << 6
#: bit 7: covered index metadata (meaning from newer Lance source; unverified for pylance 14)
FLAG_COVERED_INDEX_METADATA = 1 << 7
#: bit 8, reader+writer (must be paired), sticky: data files of several exact 2.x versions
FLAG_MIXED_FILE_VERSIONS = 1 << 8
#: bit 10, paired, sticky: fragment-reuse index
FLAG_FRAGMENT_REUSE_INDEX = 1 << 10
#: bit 14, paired, sticky: managed blobs
FLAG_MANAGED_BLOBS = 1 << 14
#: bit 15, writer-only, sticky: non-reusable field ids (``Manifest.max_allocated_field_id``)
FLAG_STABLE_FIELD_IDS = 1 << 15
#: bit 16: "zone write seed" (pairing validated by pylance 14, but unsupported there)
FLAG_ZONE_WRITE_SEED = 1 << 16
#: bit 32, reader+writer, sticky: the table follows the Semantic Type Contract.
#: Provisional (DESIGN §2.4): far above every bit Lance uses, so stock pylance refuses it.
FLAG_SEMANTIC_TYPES = 1 << 32

#: name of each bit that has one (``flag_names`` prints others as ``bitN``)
FLAG_NAMES: Mapping[int, str] = MappingProxyType(
    {
        FLAG_DELETION_FILES: "deletion_files",
        FLAG_STABLE_ROW_IDS: "stable_row_ids",
        FLAG_USE_V2_FORMAT_DEPRECATED: "use_v2_format_deprecated",
        FLAG_TABLE_CONFIG: "table_config",
        FLAG_BASE_PATHS: "base_paths",
        FLAG_DISABLE_TRANSACTION_FILE: "disable_transaction_file",
        FLAG_DATA_OVERLAY_FILES: "data_overlay_files",
        FLAG_COVERED_INDEX_METADATA: "covered_index_metadata",
        FLAG_MIXED_FILE_VERSIONS: "mixed_file_versions",
        FLAG_FRAGMENT_REUSE_INDEX: "fragment_reuse_index",
        FLAG_MANAGED_BLOBS: "managed_blobs",
        FLAG_STABLE_FIELD_IDS: "stable_field_ids",
        FLAG_ZONE_WRITE_SEED: "zone_write_seed",
        FLAG_SEMANTIC_TYPES: "semantic_types",
    }
)

#: reader bits lance-semantic implements. Stable row ids are readable (row ids are
#: ignored); table config is harmless to a reader (pylance only ever sets it for writers).
KNOWN_READER_FLAGS = (
    FLAG_DELETION_FILES
    | FLAG_STABLE_ROW_IDS
    | FLAG_USE_V2_FORMAT_DEPRECATED
    | FLAG_TABLE_CONFIG
    | FLAG_MIXED_FILE_VERSIONS
    | FLAG_SEMANTIC_TYPES
)
#: writer bits lance-semantic implements (no row-id maintenance, so no stable row ids)
KNOWN_WRITER_FLAGS = (
    FLAG_DELETION_FILES
    | FLAG_USE_V2_FORMAT_DEPRECATED
    | FLAG_TABLE_CONFIG
    | FLAG_MIXED_FILE_VERSIONS
    | FLAG_SEMANTIC_TYPES
)
#: bits that must be set in both masks or in neither (pylance 14: else "corrupt manifest")
_PAIRED_FLAGS = FLAG_MIXED_FILE_VERSIONS
#: bits ``next_flags`` recomputes from the manifest content
_OWNED_BOTH = FLAG_DELETION_FILES | FLAG_USE_V2_FORMAT_DEPRECATED | FLAG_TABLE_CONFIG


def flag_names(flags: int) -> list[str]:
    """Names of the bits set in ``flags``, lowest first; unnamed bits as ``bitN``."""
    return [FLAG_NAMES.get(1 << i, f"bit{i}") for i in range(64) if flags >> i & 1]


def unknown_reader_flags(flags: int) -> int:
    """The bits of a reader mask that lance-semantic does not implement."""
    return flags & ~KNOWN_READER_FLAGS


def unknown_writer_flags(flags: int) -> int:
    """The bits of a writer mask that lance-semantic does not implement."""
    return flags & ~KNOWN_WRITER_FLAGS


def _check_paired(manifest: Manifest, uri: str) -> None:
    reader = manifest.reader_feature_flags & _PAIRED_FLAGS
    writer = manifest.writer_feature_flags & _PAIRED_FLAGS
    if reader != writer:
        raise CorruptManifestError(
            uri,
            f"feature flags {flag_names(reader ^ writer)} must be set in both the reader "
            f"and the writer flags (reader {manifest.reader_feature_flags}, writer "
            f"{manifest.writer_feature_flags})",
        )


def check_readable(manifest_or_flags: Manifest | int, uri: str = "") -> None:
    """Refuse a table this library cannot read.

    Parameters
    ----------
    manifest_or_flags
        The manifest, or its ``reader_feature_flags``.
    uri
        The table, for the error message.

    Raises
    ------
    UnsupportedFeatureError
        ``kind="reader"``, ``flags`` = the unknown reader bits.
    CorruptManifestError
        If a manifest has a paired bit (mixed file versions) in only one mask.
    """
    if isinstance(manifest_or_flags, Manifest):
        _check_paired(manifest_or_flags, uri)
        flags = manifest_or_flags.reader_feature_flags
    else:
        flags = manifest_or_flags
    unknown = unknown_reader_flags(flags)
    if unknown:
        raise UnsupportedFeatureError(unknown, kind="reader", uri=uri, features=flag_names(unknown))


def check_writable(manifest_or_flags: Manifest | int, uri: str = "") -> None:
    """Refuse to commit on top of a table whose writer flags this library does not implement.

    Raises
    ------
    UnsupportedFeatureError
        ``kind="writer"``, ``flags`` = the unknown writer bits.
    CorruptManifestError
        If a manifest has a paired bit (mixed file versions) in only one mask.
    """
    if isinstance(manifest_or_flags, Manifest):
        _check_paired(manifest_or_flags, uri)
        flags = manifest_or_flags.writer_feature_flags
    else:
        flags = manifest_or_flags
    unknown = unknown_writer_flags(flags)
    if unknown:
        raise UnsupportedFeatureError(unknown, kind="writer", uri=uri, features=flag_names(unknown))


def next_flags(
    previous_reader: int, previous_writer: int, manifest_content: Manifest
) -> tuple[int, int]:
    """The ``(reader, writer)`` flags of a new version with ``manifest_content``.

    Bits lance-semantic owns are recomputed like pylance 14 does: bit 0 (reader and
    writer) iff a fragment has a deletion file, writer bit 3 iff the config is not empty,
    and the deprecated bit 2 is cleared. Every other bit of the previous version is
    carried unchanged, so sticky bits (mixed file versions, semantic types, ...) and bits
    of features this library does not touch are never dropped. The flag fields of
    ``manifest_content`` itself are ignored.

    >>> from lance_semantic.schema.field import TableSchema
    >>> m = Manifest(TableSchema(()), (), 1, config={"k": "v"})
    >>> next_flags(FLAG_SEMANTIC_TYPES | 4, FLAG_SEMANTIC_TYPES | 1, m) == (
    ...     FLAG_SEMANTIC_TYPES, FLAG_SEMANTIC_TYPES | FLAG_TABLE_CONFIG)
    True
    """
    reader = previous_reader & ~_OWNED_BOTH
    writer = previous_writer & ~_OWNED_BOTH
    if manifest_content.has_deletion_files:
        reader |= FLAG_DELETION_FILES
        writer |= FLAG_DELETION_FILES
    if manifest_content.config:
        writer |= FLAG_TABLE_CONFIG
    return reader, writer
