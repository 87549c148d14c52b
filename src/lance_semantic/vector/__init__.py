"""Vector search (layer L3): metrics, exact (flat) search, and pylance's IVF indices.

Below ``read/`` and ``dataset/``: it imports errors, types, schema, codecs, manifest and
storage, never a layer above.
"""

from .metrics import METRICS, Metric, canonical_metric

__all__ = ["METRICS", "Metric", "canonical_metric"]
