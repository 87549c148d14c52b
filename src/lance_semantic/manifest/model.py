"""Immutable values mirroring the messages of a Lance manifest and transaction (layer L3).

These dataclasses are what the rest of lance-semantic sees of ``_versions/*.manifest`` and
``_transactions/*.txn`` files; :mod:`lance_semantic.manifest.codec` converts them to and from
bytes (docs/format/lance-format-facts.md §2, §3, §8). Protobuf objects never leave the ``manifest``
package.

Parts of a message that lance-semantic does not interpret (stable row-id sequences, base
paths, branch, index metadata, newer fields) are kept as ``passthrough`` bytes: the serialized
protobuf of just those fields, merged back in when the value is encoded again, so a
decode/modify/encode cycle never drops them.

The values are defined in two private modules, the table's (``_table.py``: manifest, fragments,
files) and the transaction's (``_operations.py``: a transaction and its operations); this
module exports them, and they name it as their module.
"""

from __future__ import annotations

import inspect

# the names the values' annotations use, bound here as before the split: ``get_type_hints``
# resolves a class's annotations in the module it names (this one)
from collections.abc import Iterable as Iterable
from collections.abc import Mapping as Mapping
from typing import Literal as Literal

from ..schema import TableSchema as TableSchema
from ._operations import (
    COMMIT_MESSAGE_KEY,
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
    preserves_nullability,
)
from ._table import (
    _EMPTY_STR as _EMPTY_STR,
)
from ._table import (
    DEFAULT_DATA_FORMAT,
    PYLANCE_14_WRITER_VERSION,
    DataFile,
    DeletionFile,
    Fragment,
    Manifest,
    WriterVersion,
)
from ._table import (
    _frozen_str_map as _frozen_str_map,
)
from ._table import (
    _ints as _ints,
)
from ._table import (
    _set as _set,
)

__all__ = [
    "DataFile",
    "DeletionFile",
    "Fragment",
    "WriterVersion",
    "Manifest",
    "Transaction",
    "Append",
    "Delete",
    "Overwrite",
    "CreateIndex",
    "Rewrite",
    "RewriteGroup",
    "Merge",
    "Restore",
    "ReserveFragments",
    "Update",
    "Project",
    "UpdateMap",
    "UpdateConfig",
    "OpaqueOperation",
    "OPAQUE_OPERATION_NAMES",
    "Operation",
    "preserves_nullability",
    "COMMIT_MESSAGE_KEY",
    "DEFAULT_DATA_FORMAT",
    "PYLANCE_14_WRITER_VERSION",
]


def _home_here() -> None:
    """Name this module as the module of its classes and functions (and of the classes'
    methods), as when they were all defined here: reprs, pickles and doctests see
    ``lance_semantic.manifest.model.X``."""
    for name in __all__:
        value = globals()[name]
        if isinstance(value, type) or inspect.isfunction(value):
            value.__module__ = __name__
        for member in vars(value).values() if isinstance(value, type) else ():
            function = member.fget if isinstance(member, property) else member
            if inspect.isfunction(function):
                function.__module__ = __name__


_home_here()
