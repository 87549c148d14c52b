"""Run read tasks on a shared thread pool, results in order, with bounded read-ahead (layer L4).

pylance's file reader and pyarrow release the GIL while they open, read and decode, so the
fragments of one scan are read concurrently: at most ``ahead`` tasks are in flight, and the
results come back in the order the tasks were given (a scan's output order).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

__all__ = ["WORKERS", "ordered", "pool"]

T = TypeVar("T")

#: threads that read fragments concurrently: more than cores, as each pylance read of a small
#: fragment waits part of its time (for the GIL, for its runtime's threads)
WORKERS = max(8, min(16, 2 * (os.cpu_count() or 1)))


@lru_cache(maxsize=1)
def pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="lance-semantic-read")


def ordered(tasks: Iterable[Callable[[], T]], ahead: int = 2 * WORKERS) -> Iterator[T]:
    """The results of ``tasks`` in order, at most ``ahead`` of them running or done but not
    yet taken. A task's exception is raised where its result would be. When the consumer
    stops early, tasks not yet started are cancelled."""
    it = iter(tasks)
    pending: deque[Future[T]] = deque()
    try:
        for task in it:
            pending.append(pool().submit(task))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()
