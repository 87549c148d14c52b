"""The user-facing table (layer L5): the ``Dataset`` facade and its parts, ``Scanner``,
``LanceFragment``, blob files and the pyarrow face; the verbs live in the wings
(``core``, ``writes``, ``mutations``, ``evolution``, ``compaction``, ``maintenance``,
``versions``, ``indices``)."""

from .arrow_dataset import join, join_asof, not_supported, sort_by
from .blobs import take_blobs
from .changes import Changes
from .dataset import Dataset, FeatureFlags, upgrade, write_dataset
from .fragment import LanceFragment
from .handle import Handle
from .history import History
from .reads import Reads
from .scanner import ROW_ADDR, ROW_ID, TABLE_BATCH, Scanner, make_scanner

__all__ = [
    "Dataset",
    "write_dataset",
    "upgrade",
    "FeatureFlags",
    "Changes",
    "History",
    "Reads",
    "Handle",
    "Scanner",
    "make_scanner",
    "TABLE_BATCH",
    "ROW_ID",
    "ROW_ADDR",
    "LanceFragment",
    "take_blobs",
    "join",
    "join_asof",
    "not_supported",
    "sort_by",
]
