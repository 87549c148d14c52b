"""Progress bars for long work -- big writes, compaction (layer L5).

Shown on stderr only when asked: ``progress=True`` on :func:`~lance_semantic.write_dataset`
and ``optimize.compact_files``; the command line asks when stderr is a terminal (or with
``--progress``). Drawn by ``tqdm`` (pure Python, no dependencies of its own), imported only
when a bar is shown.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any

import pyarrow as pa

__all__ = ["Progress", "batches_with_progress", "rows_of", "DELAY_SECONDS"]

#: a bar appears only once its work has taken this long (no flicker for quick work)
DELAY_SECONDS = 0.5


class Progress:
    """A bar counting ``unit`` up to ``total`` (None: unknown), or nothing when not
    ``enabled``. Thread-safe; a context manager that closes the bar."""

    def __init__(self, enabled: bool, *, total: int | None, desc: str, unit: str = "rows") -> None:
        self._bar: Any = None
        self._lock = threading.Lock()
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=desc,
                unit=f" {unit}",
                unit_scale=True,
                leave=False,
                delay=DELAY_SECONDS,
            )

    def update(self, n: int) -> None:
        if self._bar is not None and n:
            with self._lock:
                self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def batches_with_progress(
    batches: Iterable[pa.RecordBatch], progress: Progress
) -> Iterator[pa.RecordBatch]:
    """``batches`` unchanged, each counted on ``progress`` as it is handed on."""
    for batch in batches:
        progress.update(batch.num_rows)
        yield batch


def rows_of(data: Any) -> int | None:
    """The number of rows of ``data`` when it is known without reading it."""
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data.num_rows
    if hasattr(data, "shape") and hasattr(data, "columns"):  # pandas / polars DataFrame
        try:
            return int(data.shape[0])
        except (TypeError, ValueError, IndexError):
            return None
    return None
