"""Bytes and files, no table semantics (layer L3): object stores (local and S3), data files
through pylance's file codec, deletion files, blob sidecars, paths, options, and the one owner
of a commit's uncommitted files."""

from .blobs import BlobFile, BlobSidecarWriter, sidecar_path
from .conditional import OutcomeUnknown, create_once
from .datafile import (
    WRITABLE_VERSIONS,
    DataFileReader,
    DataFileWriter,
    WrittenFile,
    data_file_columns,
    file_metadata,
    is_read_error,
    open_reader,
    opened_file,
    read_whole,
    unprojectable_columns,
)
from .deletions import BITMAP_THRESHOLD, read_deleted_rows, write_deleted_rows
from .file_info import FileInfo
from .object_store import LocalObjectStore, ObjectStore, open_store
from .options import StoreSettings, check_values, relevant_environment, store_settings
from .panics import first_line, guarded, is_panic, unstorable_null_structs
from .paths import (
    DATA_DIR,
    DELETIONS_DIR,
    HINT_FILE,
    TRANSACTIONS_DIR,
    V2_NAME_LENGTH,
    VERSIONS_DIR,
    NamingScheme,
    check_directories,
    check_inside,
    deletion_file_name,
    escapes,
    manifest_name,
    new_data_file_name,
    parse_manifest_name,
    transaction_file_name,
    unsafe_reason,
)
from .remote_store import REMOTE_SCHEMES, RemoteObjectStore
from .uncommitted import UncommittedFiles
from .uris import Location, parse_location

__all__ = [
    "BlobSidecarWriter",
    "BlobFile",
    "sidecar_path",
    "OutcomeUnknown",
    "create_once",
    "WrittenFile",
    "DataFileWriter",
    "DataFileReader",
    "data_file_columns",
    "file_metadata",
    "WRITABLE_VERSIONS",
    "is_read_error",
    "open_reader",
    "unprojectable_columns",
    "opened_file",
    "read_whole",
    "BITMAP_THRESHOLD",
    "read_deleted_rows",
    "write_deleted_rows",
    "FileInfo",
    "ObjectStore",
    "LocalObjectStore",
    "open_store",
    "StoreSettings",
    "check_values",
    "store_settings",
    "relevant_environment",
    "is_panic",
    "guarded",
    "first_line",
    "unstorable_null_structs",
    "VERSIONS_DIR",
    "DATA_DIR",
    "TRANSACTIONS_DIR",
    "DELETIONS_DIR",
    "HINT_FILE",
    "NamingScheme",
    "manifest_name",
    "parse_manifest_name",
    "new_data_file_name",
    "transaction_file_name",
    "deletion_file_name",
    "unsafe_reason",
    "check_inside",
    "check_directories",
    "V2_NAME_LENGTH",
    "escapes",
    "RemoteObjectStore",
    "REMOTE_SCHEMES",
    "UncommittedFiles",
    "Location",
    "parse_location",
]
