"""Lance tables on Ray Data with the Semantic Type Contract intact (extra ``[ray]``; layer
L6). The names follow lance-ray (``lance_ray.write_lance``, ``read_lance``,
``compact_files``):

* :func:`write_lance`: a Ray Data ``Datasink``; every write task runs
  ``ls.fragment.write_fragments`` on its blocks (the writer boundary, batch by batch: on a
  flagged table each data file keeps the accepted layout its block came in), the driver
  commits all fragments once, with the version it read;
* :func:`read_lance`: a ``Datasource`` pinned to one version, one read task per group of
  fragments, rows in the output encodings;
* :func:`compact_files`: planned on the driver as ``ds.optimize.compact_files`` plans it,
  rewritten by Ray tasks, published in one ``Rewrite`` commit.

No scheduler of our own: Ray Data runs the tasks.
"""

from __future__ import annotations

try:
    import ray.data  # noqa: F401
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        "lance_semantic.ray needs Ray Data: from a clone, pip install -e '.[ray]'"
    ) from e

from .compaction import compact_files
from .datasink import LanceDatasink, write_lance
from .datasource import LanceDatasource, read_lance

__all__ = ["write_lance", "read_lance", "compact_files", "LanceDatasink", "LanceDatasource"]
