"""The write defaults are spelled once (``write/defaults.py``) and are pylance's: every
writer of the package that takes one defaults to that value."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import lance
import lance.fragment
import pytest
from lance.dataset import LanceStats as PylanceStats  # (lance.dataset is also a function)

import lance_semantic as ls
from lance_semantic.dataset.compaction import CompactionOptions
from lance_semantic.dataset.versions import LanceStats
from lance_semantic.write import (
    MAX_BYTES_PER_FILE,
    MAX_ROWS_PER_FILE,
    MAX_ROWS_PER_GROUP,
    write_target,
)

OURS = {
    "max_rows_per_file": MAX_ROWS_PER_FILE,
    "max_rows_per_group": MAX_ROWS_PER_GROUP,
    "max_bytes_per_file": MAX_BYTES_PER_FILE,
}


def _default(fn: Callable[..., Any], name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


@pytest.mark.parametrize("name", sorted(OURS))
@pytest.mark.parametrize("pylance", [lance.write_dataset, lance.fragment.write_fragments])
def test_the_defaults_are_pylances(pylance: Callable[..., Any], name: str) -> None:
    assert _default(pylance, name) == OURS[name]


def test_the_values() -> None:
    assert (MAX_ROWS_PER_FILE, MAX_ROWS_PER_GROUP, MAX_BYTES_PER_FILE) == (
        1024 * 1024,
        1024,
        90 * 1024**3,
    )


@pytest.mark.parametrize(
    "writer",
    [ls.write_dataset, ls.fragment.write_fragments, write_target],
    ids=["write_dataset", "write_fragments", "write_target"],
)
def test_every_writer_defaults_to_them(writer: Callable[..., Any]) -> None:
    params = inspect.signature(writer).parameters
    for name, value in OURS.items():
        if name in params:
            assert params[name].default == value, name


def test_rows_per_group_defaults() -> None:
    assert CompactionOptions().max_rows_per_group == MAX_ROWS_PER_GROUP
    assert _default(PylanceStats.dataset_stats, "max_rows_per_group") == MAX_ROWS_PER_GROUP
    assert _default(LanceStats.dataset_stats, "max_rows_per_group") == MAX_ROWS_PER_GROUP


def test_the_ray_sink_defaults_are_lance_rays() -> None:
    lance_ray = pytest.importorskip("lance_ray")
    datasink = pytest.importorskip("lance_semantic.ray.datasink")
    for ours in (datasink.write_lance, datasink.LanceDatasink.__init__):
        for name in ("min_rows_per_file", "max_rows_per_file"):
            assert _default(ours, name) == _default(lance_ray.write_lance, name), name
        assert _default(ours, "max_bytes_per_file") == MAX_BYTES_PER_FILE
