"""One scan's options, fixed (layer L4): what ``Dataset.to_table`` / ``to_batches`` /
``scanner``, ``LanceFragment``'s reads and ``ray.read_lance`` were asked for.

The public entry points keep pylance's flat keywords; the dataset layer checks them once
(``dataset.core.scan_arguments.scan_request``) and hands one :class:`ScanRequest` to
planning (:func:`~lance_semantic.read.table_scan.plan_scan`: ``columns``, ``filter``,
``output_encodings``) and execution (:func:`~lance_semantic.read.table_scan.run_scan`:
``limit``, ``offset``, ``batch_size`` and the row id / row address columns), and a vector
search's :class:`~lance_semantic.vector.NearestQuery` to both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import pyarrow.compute as pc

from ..fts import TextSearch
from ..vector import NearestQuery

__all__ = ["Columns", "Filter", "ScanRequest", "ROW_ID", "ROW_ADDR"]

Columns: TypeAlias = Sequence[str] | Mapping[str, str]
Filter: TypeAlias = str | pc.Expression  # a SQL string or an Arrow compute expression

#: the column ``with_row_id=True`` adds (uint64, ``fragment id << 32 | row offset`` on a
#: table without stable row ids, as pylance numbers them)
ROW_ID = "_rowid"
#: the column ``with_row_address=True`` adds (uint64, the same value)
ROW_ADDR = "_rowaddr"


@dataclass(frozen=True, slots=True)
class ScanRequest:
    """The options of one scan, each with pylance's default (``LanceDataset.scanner``).

    The values are those the caller gave once checked (``limit=True`` is ``1``, as in
    pylance); ``with_row_id`` / ``with_row_address`` are bools (pylance's ``None`` default
    means ``False``). ``fragments`` holds the fragments the caller chose (``LanceFragment``
    handles, as given), resolved against the version scanned by the dataset layer.

    >>> from lance_semantic.read import ScanRequest
    >>> request = ScanRequest(columns=["id"], limit=2, with_row_id=True)
    >>> request.row_columns, request.offset
    (('_rowid',), None)
    """

    columns: Columns | None = None
    filter: Filter | None = None
    limit: int | None = None
    offset: int | None = None
    batch_size: int | None = None
    with_row_id: bool = False
    with_row_address: bool = False
    output_encodings: Mapping[str, str] | None = None
    fragments: tuple[object, ...] | None = None
    #: a vector search (pylance's ``nearest``, with ``prefilter`` / ``fast_search``), checked
    #: against the table's schema: the scan returns the nearest rows, with ``_distance``
    nearest: NearestQuery | None = None
    #: pylance's ``use_scalar_index``: None (default) or True use the scalar indices of the
    #: filter's columns where they select few rows; False always scans
    use_scalar_index: bool | None = None
    #: a full text search (pylance's ``full_text_query``, with ``prefilter`` /
    #: ``fast_search``): the scan returns the matching rows best first, with ``_score``
    full_text_query: TextSearch | None = None

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The uint64 columns appended to every batch: ``_rowid``, then ``_rowaddr``."""
        return (ROW_ID,) * self.with_row_id + (ROW_ADDR,) * self.with_row_address
