"""A fragment of one dataset version, with pylance's fragment verbs (layer L5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..errors import ReadError
from ..manifest.model import Fragment
from .arguments import check_row_indices

if TYPE_CHECKING:
    from .dataset import Dataset
    from .scan import Columns

__all__ = ["LanceFragment"]


class LanceFragment:
    """One fragment: ``fragment_id``, ``metadata`` and reads restricted to its rows."""

    def __init__(self, ds: Dataset, fragment: Fragment) -> None:
        self._ds = ds
        self._fragment = fragment

    @property
    def fragment_id(self) -> int:
        return self._fragment.id

    @property
    def metadata(self) -> Fragment:
        return self._fragment

    @property
    def physical_rows(self) -> int:
        return self._fragment.physical_rows

    def count_rows(self, filter: str | None = None) -> int:
        return sum(b.num_rows for b in self.to_batches(columns=[], filter=filter))

    def to_batches(
        self,
        columns: Columns | None = None,
        filter: str | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
    ) -> pa.RecordBatchReader:
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
    ) -> pa.Table:
        batches = list(self.to_batches(columns, filter, output_encodings, batch_size=65536))
        if batches:
            return pa.Table.from_batches(batches)
        return self._ds.to_table(columns=columns, limit=0)

    def take(
        self,
        indices: Sequence[int] | np.ndarray,
        columns: Columns | None = None,
        output_encodings: Mapping[str, str] | None = None,
    ) -> pa.Table:
        """Rows at offsets among this fragment's live rows."""
        from ..read.scan import FragmentReader
        from .scan import take_rows

        ds = self._ds
        plan = ds._plan(columns, None, output_encodings)
        reader = FragmentReader(
            ds._store, ds.semantic_schema, self._fragment, plan.top_fields, plan.read_schema
        )
        idx = check_row_indices("indices", indices)
        if len(idx) and (idx.min() < 0 or idx.max() >= reader.live_rows()):
            raise ReadError(f"take index out of range for fragment {self.fragment_id}")
        return take_rows([reader], [0], idx, plan)

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, physical_rows={self.physical_rows})"
