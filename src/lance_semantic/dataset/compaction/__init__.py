"""Compaction (layer L5): ``ds.optimize.compact_files``, planned as pylance 14 plans it."""

from .compact import (
    CompactionMetrics,
    CompactionOptions,
    CompactionTask,
    DatasetOptimizer,
    check_compactable,
    commit_rewrite,
    compaction_metrics,
    output_row_counts,
    plan_compaction,
    rewrite_task,
)
from .layout import DICTIONARY_KEY, MergedColumn, converter, merge_column, merged_type

__all__ = [
    "DatasetOptimizer",
    "CompactionMetrics",
    "CompactionOptions",
    "CompactionTask",
    "plan_compaction",
    "output_row_counts",
    "rewrite_task",
    "commit_rewrite",
    "compaction_metrics",
    "check_compactable",
    "MergedColumn",
    "merge_column",
    "merged_type",
    "converter",
    "DICTIONARY_KEY",
]
