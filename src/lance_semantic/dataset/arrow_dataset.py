"""What ``Dataset`` answers as a ``pyarrow.dataset.Dataset`` beyond scans (layer L5).

``Dataset`` subclasses ``pyarrow.dataset.Dataset`` so that engines which recognise pyarrow
datasets (DuckDB's replacement scans, ``polars.scan_pyarrow_dataset``) push their
projections and filters into ``Dataset.scanner()`` / ``to_batches()``. The base class's
own methods would use a C++ dataset that does not exist here, so every one of them is
answered by ``Dataset``: the reads by the scan, ``sort_by`` / ``join`` / ``join_asof``
here, through the scan (the rows are read, as pyarrow itself reads them for these), and
the rest with :class:`NotSupportedYetError`.
"""

from __future__ import annotations

from typing import Any

import pyarrow.dataset as pds

from ..errors import NotSupportedYetError
from .reads import Reads

__all__ = ["join", "join_asof", "not_supported", "sort_by"]


def _in_memory(data: object) -> object:
    """``data`` as pyarrow can join it: a ``pyarrow.dataset.Dataset`` subclass from outside
    pyarrow (ours, pylance's: their C++ side is empty) read into an ``InMemoryDataset``,
    anything else as given."""
    if isinstance(data, pds.Dataset) and not type(data).__module__.startswith("pyarrow"):
        return pds.InMemoryDataset(data.to_table())
    return data


def sort_by(ds: Reads, sorting: str | list[tuple[str, str]], **kwargs: Any) -> pds.Dataset:
    """pyarrow's ``Dataset.sort_by``: the rows sorted, as an ``InMemoryDataset``."""
    return pds.InMemoryDataset(ds.to_table()).sort_by(sorting, **kwargs)


def join(ds: Reads, right_dataset: object, *args: Any, **kwargs: Any) -> pds.Dataset:
    """pyarrow's ``Dataset.join``, over the rows read by the scan."""
    left = pds.InMemoryDataset(ds.to_table())
    return left.join(_in_memory(right_dataset), *args, **kwargs)


def join_asof(ds: Reads, right_dataset: object, *args: Any, **kwargs: Any) -> pds.Dataset:
    """pyarrow's ``Dataset.join_asof``, over the rows read by the scan."""
    left = pds.InMemoryDataset(ds.to_table())
    return left.join_asof(_in_memory(right_dataset), *args, **kwargs)


def not_supported(method: str, instead: str) -> NotSupportedYetError:
    """The error for a ``pyarrow.dataset.Dataset`` method without a meaning here."""
    return NotSupportedYetError(f"Dataset.{method} (a pyarrow.dataset.Dataset method); {instead}")
