"""Vector search (layer L3): metrics, exact (flat) search, and pylance's IVF indices.

Below ``read/`` and ``dataset/``: it imports errors, types, schema, codecs, manifest and
storage, never a layer above.
"""

from .ivf_proto import (
    IvfMessage,
    TensorMessage,
    decode_ivf,
    decode_tensor,
    encode_ivf,
    encode_tensor,
)
from .metrics import METRICS, Metric, canonical_metric

__all__ = [
    "METRICS",
    "Metric",
    "canonical_metric",
    # IVF index files' protobufs (ivf_proto.py)
    "IvfMessage",
    "TensorMessage",
    "decode_ivf",
    "decode_tensor",
    "encode_ivf",
    "encode_tensor",
]
