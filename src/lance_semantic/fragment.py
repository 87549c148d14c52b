"""``ls.fragment``: the first phase of a two-phase write, with pylance's names
(``lance.fragment``): :func:`write_fragments` writes data files without committing them and
returns :class:`FragmentMetadata`, which ``ls.LanceOperation`` takes and
``ls.Dataset.commit`` publishes. Re-exports only (layer L6).

>>> import pyarrow as pa, lance_semantic as ls
>>> data = pa.table({"id": [1, 2]})
>>> fragments = ls.fragment.write_fragments(data, "t.lance")  # nothing committed yet
>>> [f.physical_rows for f in fragments]
[2]
>>> op = ls.LanceOperation.Overwrite(data.schema, fragments)
>>> ls.Dataset.commit("t.lance", op).to_table().to_pydict()
{'id': [1, 2]}
"""

from __future__ import annotations

from .dataset import LanceFragment
from .dataset.writes import DataFile, DeletionFile, FragmentMetadata, write_fragments

__all__ = ["write_fragments", "FragmentMetadata", "DataFile", "DeletionFile", "LanceFragment"]
