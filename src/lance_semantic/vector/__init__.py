"""Vector search (layer L3): metrics, exact (flat) search, and pylance's IVF indices.

Below ``read/`` and ``dataset/``: it imports errors, types, schema, codecs, manifest and
storage, never a layer above.
"""

# exact (flat) search and the nearest query (i30/flat)
from .flat import Candidates, TopK, batch_candidates, distances
from .ivf_files import (
    INDEX_DIR,
    IVF_TYPES,
    IvfIndex,
    Partition,
    PartitionCache,
    default_partition_cache,
    open_ivf_index,
)
from .ivf_proto import (
    IvfMessage,
    TensorMessage,
    decode_ivf,
    decode_tensor,
    encode_ivf,
    encode_tensor,
)
from .ivf_remap import REMOVED_ROW, RowAddressMap, remap_ivf_index, row_address_map
from .ivf_search import (
    IvfSearchResult,
    exact_distances,
    probe_count,
    search_ivf,
    search_ivf_segments,
)
from .ivf_search import warm_up as warm_up_search_kernels  # (i30/speed)
from .ivf_train import warm_up as warm_up_ivf_kernels
from .ivf_write import IVF_INDEX_TYPES, IvfBuilder, IvfIndexType, IvfParams, vector_index_details
from .metrics import METRICS, Metric, canonical_metric
from .nearest import DISTANCE, NEAREST_KEYS, QUERY_INDEX, NearestQuery, nearest_query

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
    # pylance's IVF indices: open and search (ivf_files.py, ivf_search.py)
    "INDEX_DIR",
    "IVF_TYPES",
    "IvfIndex",
    "IvfSearchResult",
    "Partition",
    "PartitionCache",
    "default_partition_cache",
    "exact_distances",
    "open_ivf_index",
    "probe_count",
    "search_ivf",
    "search_ivf_segments",
    # ---- IVF search kernels (i30/speed) ----
    "warm_up_search_kernels",
    # ---- end of IVF search kernels ----
    # ---- IVF index building (ivf_train, ivf_write) ----
    "IVF_INDEX_TYPES",
    "IvfBuilder",
    "IvfIndexType",
    "IvfParams",
    "vector_index_details",
    "warm_up_ivf_kernels",
    # ---- end of IVF index building ----
    # ---- IVF index remapping after a compaction (ivf_remap, i30/compact) ----
    "REMOVED_ROW",
    "RowAddressMap",
    "remap_ivf_index",
    "row_address_map",
    # ---- end of IVF index remapping ----
    # exact (flat) search and the nearest query (i30/flat)
    "TopK",
    "Candidates",
    "batch_candidates",
    "distances",
    "DISTANCE",
    "NEAREST_KEYS",
    "QUERY_INDEX",
    "NearestQuery",
    "nearest_query",
]
