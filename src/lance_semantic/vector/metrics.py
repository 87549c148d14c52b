"""The distance metrics of vector search (layer L3), with pylance's spellings.

pylance 14 takes ``metric`` case-insensitively: ``l2`` (alias ``euclidean``), ``cosine``,
``dot`` and ``hamming`` (binary vectors of ``uint8``). Distances are those pylance returns in
``_distance``: squared L2, ``1 - cos``, ``1 - dot`` (smaller is nearer for every metric) and the
count of differing bits.

>>> canonical_metric("Euclidean")
'l2'
>>> canonical_metric("cosine")
'cosine'
"""

from __future__ import annotations

from typing import Literal

__all__ = ["METRICS", "Metric", "canonical_metric"]

Metric = Literal["l2", "cosine", "dot", "hamming"]

#: every accepted spelling (lower-cased) -> its canonical name
METRICS: dict[str, Metric] = {
    "l2": "l2",
    "euclidean": "l2",
    "cosine": "cosine",
    "dot": "dot",
    "hamming": "hamming",
}


def canonical_metric(metric: object, *, argument: str = "metric") -> Metric:
    """The canonical name of ``metric``; ``ValueError`` naming ``argument`` and the valid
    names when it is none of them."""
    if isinstance(metric, str) and metric.lower() in METRICS:
        return METRICS[metric.lower()]
    raise ValueError(
        f"{argument}: unknown metric {metric!r}; expected one of {', '.join(sorted(METRICS))}"
    )
