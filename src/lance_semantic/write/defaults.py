"""pylance's write defaults, spelled once (layer L4): ``lance.write_dataset`` and
``lance.fragment.write_fragments`` take the same three, and every writer of this package
that takes one of them (``write_dataset``, ``write_fragments``, the write decision, the Ray
sink, compaction's options, ``dataset_stats``) defaults to these values.
"""

from __future__ import annotations

__all__ = ["MAX_ROWS_PER_FILE", "MAX_ROWS_PER_GROUP", "MAX_BYTES_PER_FILE"]

#: pylance's default ``max_rows_per_file`` (1024 * 1024 rows)
MAX_ROWS_PER_FILE = 1024 * 1024

#: pylance's default ``max_rows_per_group`` (1024 rows)
MAX_ROWS_PER_GROUP = 1024

#: pylance's default ``max_bytes_per_file`` (90 GiB)
MAX_BYTES_PER_FILE = 90 * 1024**3
