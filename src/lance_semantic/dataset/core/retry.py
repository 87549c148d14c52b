"""Re-run a delete / update / merge_insert after a conflicting concurrent commit (layer L5).

The commit itself rebases what commutes (commit/conflicts.py); what reaches here is a true
conflict: the same rows changed, or a fragment rewritten or removed by the other commit.
As Lance (``dataset/write/retry.rs``): up to :data:`RETRIES` re-runs from the newest version,
each after a random slotted backoff (the first attempt's duration x 1.1 per slot, 4, 8, 16,
... slots), within :data:`TIMEOUT` seconds; an incompatible conflict (an overwrite or a
restore) is raised at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from ...commit import load_manifest
from ...errors import CommitConflictError
from .snapshot import Snapshot

__all__ = ["RETRIES", "TIMEOUT", "retrying"]

#: re-runs after the first attempt (Lance's ``conflict_retries`` default)
RETRIES = 10
#: seconds after which no further re-run starts (Lance's ``retry_timeout`` default)
TIMEOUT = 30.0
R = TypeVar("R")


def retrying(
    snapshot: Snapshot,
    attempt: Callable[[Snapshot], R],
    *,
    reloaded: Callable[[Snapshot], None] | None = None,
) -> R:
    """Run ``attempt``; on a retryable ``CommitConflictError`` re-run it from the newest
    version (bounded), then let the last one propagate."""
    start = time.monotonic()
    unit = 0.0
    for i in range(RETRIES + 1):
        try:
            return attempt(snapshot)
        except CommitConflictError as e:
            if not e.retryable or i == RETRIES or time.monotonic() - start > TIMEOUT:
                raise
            if i == 0:
                unit = (time.monotonic() - start) * 1.1
            time.sleep(random.randrange(2 ** (i + 2)) * unit)
            snapshot = replace(snapshot, manifest=load_manifest(snapshot.store))
            if reloaded is not None:  # a handle follows each re-run's version
                reloaded(snapshot)
    raise AssertionError("unreachable")
