"""lance-semantic: read and write Lance tables, implementing the Semantic Type Contract.

>>> import lance_semantic as ls
>>> ls.FLAG_SEMANTIC_TYPES == 1 << 32
True
"""

from __future__ import annotations

import os as _os

# pylance's Rust logger reads LANCE_LOG once, when lance is first imported, and then warns on
# stderr when a 2.3 data file is written ("... never for production data"). lance-semantic
# says that once per process in its own words (storage/datafile.py), so pylance's line is
# filtered out -- that one target only: its other warnings and errors still show. A LANCE_LOG
# the user set is left alone, and so is a lance imported before lance_semantic.
if "LANCE_LOG" not in _os.environ:
    _os.environ["LANCE_LOG"] = "warn,lance_file::versions::v2_3=error"
    try:
        import lance as _lance  # noqa: F401  (initialises the logger)
    finally:
        del _os.environ["LANCE_LOG"]
    import logging as _logging

    _logging.getLogger("pylance").setLevel(_logging.INFO)  # as without LANCE_LOG

from . import errors, fragment
from .dataset.core.index_object import Index, IndexFile
from .dataset.dataset import Dataset, FeatureFlags, dataset, upgrade, write_dataset
from .dataset.fragment import LanceFragment
from .dataset.maintenance.codec_warm_up import warm_up
from .dataset.maintenance.table_check import CheckReport, Problem, check
from .dataset.scanner import Scanner
from .dataset.versions.cleanup import CleanupStats
from .dataset.writes.lance_operation import LanceOperation
from .errors import (
    ColumnNotFoundError,
    CommitConflictError,
    CommitOutcomeUnknownError,
    CorruptManifestError,
    CorruptTableError,
    DatasetExistsError,
    DatasetNotFoundError,
    DuplicateKeyError,
    InvalidBlobError,
    InvalidExpressionError,
    InvalidJsonError,
    InvalidOutputEncodingError,
    InvalidStorageOptionError,
    InvalidTagNameError,
    InvalidUriError,
    InvariantViolationError,
    LanceSemanticError,
    MatchedRowError,
    NotSupportedYetError,
    OutputEncodingOverflowError,
    ReservedExtensionNameError,
    SchemaEvolutionError,
    SchemaMismatchError,
    StorageError,
    TagError,
    TagExistsError,
    TaggedVersionsCleanupError,
    TagNotFoundError,
    UnsupportedFeatureError,
    UnsupportedInputTypeError,
    UnsupportedTypeError,
    VersionNotFoundError,
)
from .manifest.flags import FLAG_SEMANTIC_TYPES
from .schema.field import Field, TableSchema

__version__ = "0.1.0"

__all__ = [
    "Dataset",
    "FeatureFlags",
    "LanceFragment",
    "Scanner",
    "LanceOperation",
    "Index",
    "IndexFile",
    "fragment",
    "Field",
    "TableSchema",
    "FLAG_SEMANTIC_TYPES",
    "dataset",
    "write_dataset",
    "check",
    "CheckReport",
    "Problem",
    "CleanupStats",
    "upgrade",
    "warm_up",
    "errors",
    "LanceSemanticError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "ColumnNotFoundError",
    "MatchedRowError",
    "DuplicateKeyError",
    "SchemaEvolutionError",
    "CorruptManifestError",
    "CorruptTableError",
    "DatasetExistsError",
    "DatasetNotFoundError",
    "InvalidExpressionError",
    "InvalidBlobError",
    "InvalidJsonError",
    "InvalidOutputEncodingError",
    "InvariantViolationError",
    "NotSupportedYetError",
    "OutputEncodingOverflowError",
    "ReservedExtensionNameError",
    "SchemaMismatchError",
    "UnsupportedFeatureError",
    "UnsupportedInputTypeError",
    "UnsupportedTypeError",
    "VersionNotFoundError",
    "TagError",
    "TagNotFoundError",
    "TagExistsError",
    "InvalidTagNameError",
    "TaggedVersionsCleanupError",
    "StorageError",
    "InvalidUriError",
    "InvalidStorageOptionError",
]
