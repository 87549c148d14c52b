"""A fragment's deleted row offsets, read and checked against the manifest (layer L4)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..errors import CorruptTableError
from ..manifest import Fragment
from ..storage import ObjectStore, read_deleted_rows

__all__ = ["deleted_rows", "deletion_problems"]


def deleted_rows(store: ObjectStore, fragment: Fragment) -> np.ndarray | None:
    """Sorted deleted row offsets of ``fragment``, or None when it has no deletion file."""
    d = fragment.deletion_file
    if d is None:
        return None
    rows = read_deleted_rows(store, fragment.id, d.read_version, d.id, d.file_type == "bitmap")
    for _code, problem in deletion_problems(rows, fragment):
        raise CorruptTableError(store.uri(d.path(fragment.id)), problem)
    return rows


def deletion_problems(rows: np.ndarray, fragment: Fragment) -> Iterator[tuple[str, str]]:
    """(code, message) of what is wrong with ``fragment``'s deleted row offsets ``rows``
    (sorted, as read): offsets past its end, repeated, or another count than the manifest's
    (a count of 0 is what old manifests record: not compared)."""
    d = fragment.deletion_file
    if len(rows) and int(rows[-1]) >= fragment.physical_rows:
        yield (
            "deletion-offset",
            f"deleted row offset {int(rows[-1])} is past the end of fragment {fragment.id} "
            f"({fragment.physical_rows} rows)",
        )
    if len(rows) > 1 and not (rows[1:] != rows[:-1]).all():
        yield "deletion-count", "a row offset is deleted twice"
    if d is not None and d.num_deleted_rows and len(rows) != d.num_deleted_rows:
        yield (
            "deletion-count",
            f"holds {len(rows)} deleted rows, the manifest says {d.num_deleted_rows} "
            f"(fragment {fragment.id})",
        )
