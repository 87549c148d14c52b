"""pylance's scalar indices (BTREE, BITMAP, LABEL_LIST), read and used by filters (layer L3).

Below ``read/`` and ``dataset/``: it imports errors, types, schema, codecs, manifest and
storage, and the query engine's parsed filters (``query.simple_filters``), never a layer
above. :func:`open_scalar_index` opens the index of a manifest entry
(kept per index: lookups read once, pages and bitmaps on demand); :func:`select_rows` turns
a parsed filter into the rows the indices select (:class:`RowSelection` per fragment).
"""

# scalar index reads and the filter selection planner (i31/scalar-read)
from .bitmaps import BitmapIndex, LabelListIndex, decode_row_id_tree_map
from .btree import BTreeIndex
from .indices import SCALAR_DETAILS, clear_kept_indices, open_scalar_index, single_field_entries
from .planner import ScalarIndex, Selected, select_rows
from .rowsets import RowSelection, from_addresses, key_value, whole_fragment

__all__ = [
    # scalar index reads and the filter selection planner (i31/scalar-read)
    "BTreeIndex",
    "BitmapIndex",
    "LabelListIndex",
    "RowSelection",
    "SCALAR_DETAILS",
    "ScalarIndex",
    "Selected",
    "clear_kept_indices",
    "decode_row_id_tree_map",
    "from_addresses",
    "key_value",
    "open_scalar_index",
    "select_rows",
    "single_field_entries",
    "whole_fragment",
]
