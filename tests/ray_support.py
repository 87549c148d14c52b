"""One local Ray for a test module (its start costs 5-9 s and about 1 GiB)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

#: warnings a local Ray gives that are not ours (ray.init forks its node processes after
#: lance is imported, and pylance warns in its at-fork hook; Ray 2.60 warns about its own
#: settings)
RAY_WARNINGS = [
    pytest.mark.filterwarnings("ignore:lance is not fork-safe:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def local_ray() -> Iterator[None]:
    """Start Ray on 2 CPUs on loopback without dashboard or usage stats; stop it after."""
    import ray

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()
