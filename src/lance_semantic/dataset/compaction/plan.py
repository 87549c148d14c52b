"""Compaction planning, as pylance 14 plans it (layer L5): which fragments are rewritten
together, and how many rows each new fragment gets. Adjacent fragments are merged only when
the same indices cover them (pylance's planner: a rewrite group is indexed whole or not at
all, so that its indices can be remapped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from ...manifest import Fragment, Manifest, index_entries
from ...read import deleted_rows
from ...storage import ObjectStore
from ...write import MAX_ROWS_PER_GROUP
from ..core import check_bool, check_int, check_optional_int, check_real

__all__ = ["CompactionOptions", "CompactionTask", "plan_compaction", "output_row_counts"]

#: manifest config keys that give defaults to the options (pylance 14: ``lance.compaction.*``)
CONFIG_PREFIX = "lance.compaction."


@dataclass(frozen=True, slots=True)
class CompactionOptions:
    """Resolved options: explicit arguments, then ``lance.compaction.*`` table config, then
    pylance's defaults."""

    target_rows_per_fragment: int = 1024 * 1024
    max_rows_per_group: int = MAX_ROWS_PER_GROUP
    materialize_deletions: bool = True
    materialize_deletions_threshold: float = 0.1
    num_threads: int | None = None
    batch_size: int | None = None

    @classmethod
    def resolve(cls, config: Mapping[str, str], **explicit: object) -> CompactionOptions:
        values: dict[str, object] = {}
        for key, raw in config.items():
            if key.startswith(CONFIG_PREFIX):
                name = key[len(CONFIG_PREFIX) :]
                if name in _PARSERS:
                    values[name] = _PARSERS[name](key, raw)
        values.update({k: v for k, v in explicit.items() if v is not None})
        options = cls(**values)  # type: ignore[arg-type]
        options = options._validate()
        if options.materialize_deletions and options.materialize_deletions_threshold >= 1.0:
            options = replace(options, materialize_deletions=False)
        return options

    def _validate(self) -> CompactionOptions:
        """The options with each value checked (a ``TypeError`` for a value of the wrong
        type, a ``ValueError`` for a count below 1) and numpy numbers made Python ones."""
        return replace(
            self,
            target_rows_per_fragment=check_int(
                "target_rows_per_fragment", self.target_rows_per_fragment, minimum=1
            ),
            max_rows_per_group=check_int("max_rows_per_group", self.max_rows_per_group, minimum=1),
            materialize_deletions=check_bool("materialize_deletions", self.materialize_deletions),
            materialize_deletions_threshold=check_real(
                "materialize_deletions_threshold", self.materialize_deletions_threshold
            ),
            num_threads=check_optional_int("num_threads", self.num_threads, minimum=1),
            batch_size=check_optional_int("batch_size", self.batch_size, minimum=1),
        )


def _parse_int(key: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ValueError(
            f"Invalid value for {key}: {raw!r} (expected a non-negative integer)"
        ) from None


def _parse_bool(key: str, raw: str) -> bool:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    raise ValueError(f"Invalid value for {key}: {raw!r} (expected 'true' or 'false')")


def _parse_float(key: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"Invalid value for {key}: {raw!r} (expected a float)") from None


_PARSERS: dict[str, Callable[[str, str], object]] = {
    "target_rows_per_fragment": _parse_int,
    "max_rows_per_group": _parse_int,
    "materialize_deletions": _parse_bool,
    "materialize_deletions_threshold": _parse_float,
    "batch_size": _parse_int,
}


# ---- planning ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompactionTask:
    """Adjacent fragments rewritten together into new fragments."""

    fragments: tuple[Fragment, ...]
    #: live rows per fragment, as planned (deletion counts from the manifest)
    row_counts: tuple[int, ...]

    @property
    def num_rows(self) -> int:
        return sum(self.row_counts)


def _num_deleted(store: ObjectStore, fragment: Fragment) -> int:
    """pylance's ``count_deletions``: the recorded count, else the deletion file's size."""
    d = fragment.deletion_file
    if d is None:
        return 0
    if d.num_deleted_rows:
        return d.num_deleted_rows
    rows = deleted_rows(store, fragment)
    return 0 if rows is None else len(rows)


def _split_for_size(
    fragments: list[Fragment], counts: list[int], min_rows: int
) -> list[CompactionTask]:
    """pylance's ``CandidateBin::split_for_size``: tasks of at least ``min_rows`` rows, the
    remainder joining the last one."""
    tasks = []
    start = 0
    while True:
        length = rows = 0
        while rows < min_rows and start + length < len(counts):
            rows += counts[start + length]
            length += 1
        if sum(counts[start + length :]) >= min_rows:
            end = start + length
        else:
            end = len(counts)
        tasks.append(CompactionTask(tuple(fragments[start:end]), tuple(counts[start:end])))
        if end == len(counts):
            return tasks
        start = end


def plan_compaction(
    store: ObjectStore, manifest: Manifest, options: CompactionOptions
) -> list[CompactionTask]:
    """The tasks pylance 14 plans for ``manifest`` (see the module doc)."""
    threshold = np.float32(options.materialize_deletions_threshold)
    runs: list[tuple[list[Fragment], list[int], list[bool]]] = []
    current: tuple[list[Fragment], list[int], list[bool]] | None = None
    bitmaps = [frozenset(e.fragment_ids) for e in index_entries(manifest.index_section)]
    indexed_by: tuple[int, ...] | None = None
    for fragment in manifest.fragments:
        # as pylance: fragments covered by other indices are never rewritten together
        covering = tuple(i for i, b in enumerate(bitmaps) if fragment.id in b)
        if current is not None and covering != indexed_by:
            runs.append(current)
            current = None
        indexed_by = covering
        physical = fragment.physical_rows
        deleted = _num_deleted(store, fragment)
        share = np.float32(deleted) / np.float32(physical) if physical else np.float32(0)
        if options.materialize_deletions and share > threshold:
            itself: bool | None = True
        elif physical < options.target_rows_per_fragment:
            itself = False
        else:
            itself = None
        if itself is None:
            if current is not None:
                runs.append(current)
                current = None
            continue
        if current is None:
            current = ([], [], [])
        current[0].append(fragment)
        current[1].append(physical - deleted)
        current[2].append(itself)
    if current is not None:
        runs.append(current)
    tasks: list[CompactionTask] = []
    for frags, counts, itself_flags in runs:
        if len(frags) == 1 and not itself_flags[0]:
            continue  # a lone small fragment has nobody to merge with
        tasks.extend(_split_for_size(frags, counts, options.target_rows_per_fragment))
    return tasks


def output_row_counts(rows: int, target: int) -> list[int]:
    """Rows of each new fragment of a task with ``rows`` live rows (pylance 14 balances them).

    >>> output_row_counts(2101, 1000), output_row_counts(1800, 1000), output_row_counts(7, 2)
    ([1051, 1050], [1800], [3, 2, 2])
    """
    if rows <= 0:
        return []
    n = max(1, rows // target)
    base, extra = divmod(rows, n)
    return [base + 1] * extra + [base] * (n - extra)
