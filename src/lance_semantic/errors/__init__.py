"""The whole exception hierarchy of lance-semantic (layer L0).

Every error derives from :class:`LanceSemanticError`. Each class that the spec's
"Failure Semantics" table needs carries the facts of its row as attributes and
builds its message from them, so callers can assert attributes instead of prose.
The errors are re-exported by the package (``ls.SchemaMismatchError``) and grouped in
families by layer (:class:`SchemaError`, :class:`WriteError`, :class:`ReadError`,
:class:`ManifestError`, :class:`CommitError`); builtin bases (``ValueError``,
``TypeError``, ...) keep generic handlers working.

>>> import pyarrow as pa, lance_semantic as ls
>>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
>>> try:
...     ds.insert(pa.table({"id": pa.array([2], pa.int32())}))
... except ls.errors.SchemaError as e:
...     print(type(e).__name__, e.field_path, e.table_type, e.input_type)
SchemaMismatchError id int64 int32
>>> issubclass(ls.SchemaMismatchError, ValueError)
True
"""

from __future__ import annotations

import inspect

# the names the errors' annotations use, bound here as before the split: ``get_type_hints``
# resolves annotations in the module a class names (this one)
from collections.abc import Mapping as Mapping
from collections.abc import Sequence as Sequence

from .base import (
    CommitError,
    InvalidExpressionError,
    LanceSemanticError,
    ManifestError,
    NotSupportedYetError,
    ReadError,
    SchemaError,
    WriteError,
)
from .base import (
    _rebuild as _rebuild,
)
from .commit import (
    CommitConflictError,
    CommitOutcomeUnknownError,
    TaggedVersionsCleanupError,
)
from .manifest import (
    CorruptManifestError,
    DatasetExistsError,
    DatasetNotFoundError,
    InvalidTagNameError,
    TagError,
    TagExistsError,
    TagNotFoundError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)
from .manifest import (
    _bits as _bits,
)
from .read import (
    CorruptTableError,
    OutputEncodingOverflowError,
)
from .read import (
    _overflow_hint as _overflow_hint,
)
from .schema import (
    ColumnNotFoundError,
    InvalidOutputEncodingError,
    ReservedExtensionNameError,
    SchemaEvolutionError,
    SchemaMismatchError,
    UnsupportedTypeError,
)
from .storage import (
    InvalidStorageOptionError,
    InvalidUriError,
    StorageError,
)
from .write import (
    DuplicateKeyError,
    InvalidBlobError,
    InvalidJsonError,
    InvariantViolationError,
    MatchedRowError,
    UnsupportedInputTypeError,
)
from .write import (
    _RowError as _RowError,
)

#: the order of the API reference page (docs/reference/errors.md renders them in it)
__all__ = [
    "LanceSemanticError",
    "SchemaError",
    "WriteError",
    "ReadError",
    "ManifestError",
    "CommitError",
    "InvalidExpressionError",
    "DuplicateKeyError",
    "ColumnNotFoundError",
    "SchemaEvolutionError",
    "MatchedRowError",
    "NotSupportedYetError",
    "DatasetNotFoundError",
    "DatasetExistsError",
    "VersionNotFoundError",
    "TagError",
    "TagNotFoundError",
    "TagExistsError",
    "InvalidTagNameError",
    "CorruptManifestError",
    "CorruptTableError",
    "UnsupportedFeatureError",
    "UnsupportedTypeError",
    "ReservedExtensionNameError",
    "SchemaMismatchError",
    "UnsupportedInputTypeError",
    "InvalidJsonError",
    "InvalidBlobError",
    "InvariantViolationError",
    "OutputEncodingOverflowError",
    "InvalidOutputEncodingError",
    "TaggedVersionsCleanupError",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "StorageError",
    "InvalidUriError",
    "InvalidStorageOptionError",
]


def _home_in_the_package() -> None:
    """Name this package as the module of every error class and of its methods (and of
    :func:`_rebuild`, which pickles name): reprs, tracebacks, pickles and doctests see
    ``lance_semantic.errors.X`` whichever of the package's modules defines ``X``."""
    for value in list(globals().values()):
        if isinstance(value, type) and issubclass(value, LanceSemanticError):
            value.__module__ = __name__
            for member in vars(value).values():
                function = getattr(member, "__func__", member)  # staticmethod, classmethod
                if inspect.isfunction(function):
                    function.__module__ = __name__
    _rebuild.__module__ = __name__


_home_in_the_package()
