"""A fragment of one dataset version, with pylance's fragment verbs (layer L5)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from ..errors import ReadError
from ..manifest import Fragment
from ..read import Columns, Filter, ScanPlan, ScanRequest
from .core import TableHandle, check_row_indices, scan_request
from .writes import FragmentMetadata, as_fragment_metadata

__all__ = ["LanceFragment"]


class _Owner(TableHandle, Protocol):
    """The handle a fragment reads through (a ``Dataset``)."""

    def to_batches(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        *,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        fragments: Sequence[LanceFragment] | None = None,
    ) -> Iterator[pa.RecordBatch]: ...

    def to_table(self, columns: Columns | None = None, *, limit: int | None = None) -> pa.Table: ...

    def scanner(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        *,
        batch_size: int | None = None,
        output_encodings: Mapping[str, str] | None = None,
        fragments: Sequence[LanceFragment] | None = None,
        nearest: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Any: ...

    def _plan(self, request: ScanRequest) -> ScanPlan: ...


class LanceFragment:
    """One fragment: ``fragment_id``, ``metadata`` and reads restricted to its rows.

    Made by ``Dataset.get_fragments()`` and ``Dataset.get_fragment(id)``.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
    >>> ds.get_fragments()
    [LanceFragment(id=0, physical_rows=2), LanceFragment(id=1, physical_rows=1)]
    """

    def __init__(self, ds: _Owner, fragment: Fragment) -> None:
        self._ds = ds
        self._fragment = fragment

    @property
    def fragment_id(self) -> int:
        """The fragment's id, unique within the table (never reused).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> [f.fragment_id for f in ds.get_fragments()]
        [0, 1]
        """
        return self._fragment.id

    @property
    def metadata(self) -> FragmentMetadata:
        """The fragment as the manifest records it: data files, deletion file, row count
        (a :class:`FragmentMetadata`, as pylance's, which ``to_json`` and the operations of
        ``ls.LanceOperation`` take).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> meta = ds.get_fragment(0).metadata
        >>> meta.id, meta.physical_rows, len(meta.files), meta.deletion_file
        (0, 2, 1, None)
        >>> sorted(meta.to_json())[:3]
        ['deletion_file', 'file_schemas', 'files']
        """
        return as_fragment_metadata(self._fragment)

    @property
    def physical_rows(self) -> int:
        """Rows stored in the fragment's data files, deleted ones included.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> _ = ds.delete("id = 1")
        >>> ds.get_fragment(0).physical_rows, ds.get_fragment(0).count_rows()
        (2, 1)
        """
        return self._fragment.physical_rows

    def count_rows(self, filter: str | None = None) -> int:
        """Live rows of the fragment, or those matching ``filter`` (as for
        ``Dataset.to_table``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> frag = ds.get_fragment(0)
        >>> frag.count_rows(), frag.count_rows("id > 1")
        (2, 1)
        """
        return sum(b.num_rows for b in self.to_batches(columns=[], filter=filter))

    def to_batches(
        self,
        columns: Columns | None = None,
        filter: str | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        *,
        nearest: Mapping[str, Any] | None = None,
        prefilter: bool | None = None,
        fast_search: bool | None = None,
    ) -> pa.RecordBatchReader:
        """An iterator of the fragment's rows as record batches (arguments as for
        ``Dataset.to_batches``).

        ``nearest`` (with ``prefilter`` / ``fast_search``, as for ``Dataset.scanner``)
        searches this fragment's rows alone; pylance's fragment reads have no vector
        search.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> [b.to_pydict() for b in ds.get_fragment(0).to_batches(columns=["s"], batch_size=1)]
        [{'s': ['a']}, {'s': ['b']}]
        """
        if nearest is not None:
            return self._search(
                columns, filter, output_encodings, batch_size, nearest, prefilter, fast_search
            ).to_batches()
        it = self._ds.to_batches(
            columns=columns,
            filter=filter,
            output_encodings=output_encodings,
            batch_size=batch_size,
            fragments=[self],
        )
        return it

    def to_table(
        self,
        columns: Columns | None = None,
        filter: str | None = None,
        output_encodings: Mapping[str, str] | None = None,
        *,
        nearest: Mapping[str, Any] | None = None,
        prefilter: bool | None = None,
        fast_search: bool | None = None,
    ) -> pa.Table:
        """The fragment's rows as one table (arguments as for ``Dataset.to_table``;
        ``nearest`` as for :meth:`to_batches`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> ds.get_fragment(1).to_table().to_pydict()
        {'id': [3], 's': ['c']}
        >>> ds.get_fragment(0).to_table(filter="id > 5").num_rows
        0
        """
        if nearest is not None:
            return self._search(
                columns, filter, output_encodings, None, nearest, prefilter, fast_search
            ).to_table()
        batches = list(self.to_batches(columns, filter, output_encodings, batch_size=65536))
        if batches:
            return pa.Table.from_batches(batches)
        return self._ds.to_table(columns=columns, limit=0)

    def _search(
        self,
        columns: Columns | None,
        filter: str | None,
        output_encodings: Mapping[str, str] | None,
        batch_size: int | None,
        nearest: Mapping[str, Any],
        prefilter: bool | None,
        fast_search: bool | None,
    ) -> Any:
        """A scanner of the vector search over this fragment alone."""
        return self._ds.scanner(
            columns,
            filter,
            batch_size=batch_size,
            output_encodings=output_encodings,
            fragments=[self],
            nearest=nearest,
            prefilter=prefilter,
            fast_search=fast_search,
        )

    def take(
        self,
        indices: Sequence[int] | np.ndarray,
        columns: Columns | None = None,
        output_encodings: Mapping[str, str] | None = None,
    ) -> pa.Table:
        """Rows at offsets among this fragment's live rows (``columns`` and
        ``output_encodings`` as for ``Dataset.take``); ``ReadError`` beyond them.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
        >>> ds = ls.write_dataset(data, "t.lance", max_rows_per_file=2)
        >>> ds.get_fragment(0).take([1], columns=["s"]).to_pydict()
        {'s': ['b']}
        """
        from ..read import FragmentReader, take_rows

        ds = self._ds
        plan = ds._plan(scan_request(columns, output_encodings=output_encodings))
        snap = ds._snapshot()
        reader = FragmentReader(
            snap.store, snap.semantic_schema, self._fragment, plan.top_fields, plan.read_schema
        )
        idx = check_row_indices("indices", indices)
        live = reader.live_rows()
        if len(idx) and (idx.min() < 0 or idx.max() >= live):
            bad = int(idx[(idx < 0) | (idx >= live)][0])
            raise ReadError(
                f"take index {bad} is out of range for the {live} rows of fragment "
                f"{self.fragment_id}"
            )
        return take_rows([reader], [0], idx, plan)

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, physical_rows={self.physical_rows})"
