"""Housekeeping verbs (layer L5): the upgrade to semantic types, output-encoding changes,
restore, ``ls.check`` and the JSON codec's warm-up."""

from .codec_warm_up import warm_up
from .output_encoding import set_output_encoding
from .restore import restore_version
from .table_check import CheckReport, Problem, check
from .upgrade import upgrade_dataset, upgrade_semantic_types

__all__ = [
    "upgrade_dataset",
    "upgrade_semantic_types",
    "set_output_encoding",
    "restore_version",
    "Problem",
    "CheckReport",
    "check",
    "warm_up",
]
