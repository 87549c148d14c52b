"""``Dataset.describe_indices`` and ``Dataset.index_statistics``, as pylance 14 reports them
(layer L5).

``describe_indices`` gives one :class:`IndexDescription` per index name (pylance's
``lance.indices.IndexDescription``: ``name``, ``type_url``, ``index_type``,
``num_rows_indexed``, ``fields``, ``field_names``, ``segments``, ``details``,
``total_size_bytes``), with one :class:`IndexSegmentDescription` per segment. ``details``
decodes a vector index's ``VectorIndexDetails`` as pylance does (``metric_type``,
``compression``, ``runtime_hints``); scalar indices give ``{}`` (INVERTED: not decoded here).

``index_statistics`` is pylance's dictionary (the JSON it parses): the index's totals over its
segments (indexed / unindexed fragments and live rows, rows per delta) and per segment, for an
IVF index, what its files hold (partitions' sizes, centroids unless
``LANCE_INCLUDE_VECTOR_CENTROIDS=false``, the k-means loss, the sub-index's parameters); for
BTREE the min / max keys and pages, for BITMAP / LABEL_LIST the number of bitmaps.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Set
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from ...errors import NotSupportedYetError
from ...manifest import IndexEntry, Manifest, index_entries
from ...manifest._wire import message_fields
from ...storage import ObjectStore, open_reader
from ...vector import INDEX_DIR, decode_ivf, open_ivf_index
from .listing import _bitmap

__all__ = [
    "IndexDescription",
    "IndexSegmentDescription",
    "describe_indices",
    "index_statistics",
    "index_statistics_of",
    "check_index_name",
]

_METRIC_NAMES = {0: "L2", 1: "COSINE", 2: "DOT", 3: "HAMMING"}
_COMPRESSION = {4: "pq", 5: "sq", 6: "rq"}
_CENTROIDS_ENV = "LANCE_INCLUDE_VECTOR_CENTROIDS"


@dataclass(frozen=True, slots=True)
class IndexSegmentDescription:
    """One segment of an index (pylance's ``lance.indices.IndexSegmentDescription``)."""

    uuid: str
    dataset_version_at_last_update: int
    fragment_ids: Set[int]
    index_version: int
    created_at: datetime | None
    size_bytes: int | None
    base_id: int | None
    covering_fields: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class IndexDescription:
    """One index, all its segments (pylance's ``lance.indices.IndexDescription``).

    >>> import numpy as np, pyarrow as pa, lance_semantic as ls
    >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
    >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
    >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance")
    >>> d = ds.create_index("vec", "IVF_FLAT", num_partitions=2).describe_indices()[0]
    >>> d.name, d.index_type, d.num_rows_indexed, d.field_names, len(d.segments)
    ('vec_idx', 'IVF_FLAT', 600, ['vec'], 1)
    >>> d.details["metric_type"]
    'L2'
    """

    name: str
    type_url: str
    index_type: str
    num_rows_indexed: int
    fields: list[int]
    field_names: list[str]
    segments: list[IndexSegmentDescription]
    details: dict[str, Any]
    total_size_bytes: int | None

    def __repr__(self) -> str:
        names = ", ".join(f'"{n}"' for n in self.field_names)
        return (
            f"IndexDescription(name={self.name!r}, type_url={self.type_url!r}, "
            f"num_rows_indexed={self.num_rows_indexed}, fields={self.fields}, "
            f"field_names=[{names}], num_segments={len(self.segments)}, "
            f"total_size_bytes={self.total_size_bytes})"
        )


def _vector_details(details: bytes) -> dict[str, Any]:
    """``VectorIndexDetails`` as pylance 14's ``details`` dict."""
    out: dict[str, Any] = {"metric_type": "L2"}
    hints: dict[str, str] = {}
    for number, _wire, value in message_fields(details):
        if number == 1 and isinstance(value, int):
            out["metric_type"] = _METRIC_NAMES.get(value, str(value))
        elif number == 3 and isinstance(value, bytes):
            sub = {n: v for n, _, v in message_fields(value)}
            out["hnsw"] = {
                "max_connections": sub.get(1, 0),
                "construction_ef": sub.get(2, 0),
                "max_level": sub.get(3, 0),
            }
        elif number in _COMPRESSION and isinstance(value, bytes):
            sub = {n: v for n, _, v in message_fields(value)}
            compression: dict[str, Any] = {"type": _COMPRESSION[number]}
            if 1 in sub:
                compression["num_bits"] = sub[1]
            if number == 4:
                compression["num_sub_vectors"] = sub.get(2, 0)
            if number == 6:  # RQ: field 2 the rotation (0, the default, is "fast")
                rotation = sub.get(2, 0)
                compression["rotation_type"] = "fast" if rotation == 0 else str(rotation)
            out["compression"] = compression
        elif number == 9 and isinstance(value, bytes):
            pair = {n: v for n, _, v in message_fields(value)}
            key, val = pair.get(1, b""), pair.get(2, b"")
            if isinstance(key, bytes) and isinstance(val, bytes):
                hints[key.decode()] = val.decode()
    out["runtime_hints"] = hints
    return out


def _details(entry: IndexEntry) -> dict[str, Any]:
    if entry.type_url.endswith("VectorIndexDetails"):
        return _vector_details(entry.details)
    return {}


def _live_rows(manifest: Manifest, fragment_ids: Set[int] | tuple[int, ...]) -> int:
    wanted = set(fragment_ids)
    return sum(f.num_rows for f in manifest.fragments if f.id in wanted)


def _groups(manifest: Manifest) -> dict[str, list[IndexEntry]]:
    """The segments of each index name, in manifest order."""
    out: dict[str, list[IndexEntry]] = {}
    for e in index_entries(manifest.index_section):
        out.setdefault(e.name, []).append(e)
    return out


def _segment(entry: IndexEntry) -> IndexSegmentDescription:
    created = (
        None
        if entry.created_at_ms is None
        else datetime.fromtimestamp(entry.created_at_ms / 1000, tz=UTC)
    )
    size = sum(f.size_bytes for f in entry.files) if entry.files else None
    return IndexSegmentDescription(
        uuid=entry.uuid,
        dataset_version_at_last_update=entry.dataset_version,
        fragment_ids=_bitmap(entry.fragment_ids),
        index_version=entry.index_version,
        created_at=created,
        size_bytes=size,
        base_id=entry.base_id,
    )


def describe_indices(manifest: Manifest) -> list[IndexDescription]:
    """One description per index name (sorted by name), as pylance 14's
    ``describe_indices``."""
    by_id = {f.id: f.path for f in manifest.schema}
    out = []
    for name, entries in sorted(_groups(manifest).items()):
        first = entries[0]
        segments = [_segment(e) for e in entries]
        sizes = [s.size_bytes for s in segments]
        out.append(
            IndexDescription(
                name=name,
                type_url=first.type_url,
                index_type=first.index_type,
                num_rows_indexed=sum(_live_rows(manifest, e.fragment_ids) for e in entries),
                fields=list(first.fields),
                field_names=[by_id.get(i, str(i)) for i in first.fields],
                segments=segments,
                details=_details(first),
                total_size_bytes=None if None in sizes else sum(s or 0 for s in sizes),
            )
        )
    return out


def check_index_name(name: object, *, argument: str = "name") -> str:
    if not isinstance(name, str):
        raise TypeError(
            f"argument '{argument}': '{type(name).__name__}' object is not an instance of 'str'"
        )
    return name


# ---- index_statistics --------------------------------------------------------------------------


def _ivf_segment(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    index = open_ivf_index(store, entry)
    if index is None:
        raise NotSupportedYetError(
            f"index_statistics: index {entry.name!r} of type {entry.index_type} "
            "(only IVF_FLAT, IVF_PQ, IVF_SQ vector indices are read here)"
        )
    folder = f"{INDEX_DIR}/{entry.uuid}"
    index_rel = f"{folder}/index.idx"
    index_file = open_reader(store, index_rel, what="index file")
    loss = decode_ivf(bytes(index_file.read_global_buffer(1))).loss
    aux_meta = open_reader(store, f"{folder}/auxiliary.idx", what="index file").metadata()
    raw = (aux_meta.schema.metadata or {})[b"storage_metadata"]
    storage: dict[str, Any] = json.loads(json.loads(raw)[0])
    metric = index.metric
    if index.kind == "IVF_PQ":
        sub: dict[str, Any] = {
            "metric_type": "l2" if metric == "cosine" else metric,
            "nbits": storage["nbits"],
            "num_sub_vectors": storage["num_sub_vectors"],
            "dimension": storage["dimension"],
            "index_type": "PQ",
            "transposed": storage.get("transposed", True),
        }
    else:
        sub = {**storage, "index_type": index.kind[4:], "metric_type": metric}
    out: dict[str, Any] = {
        "index_type": index.kind,
        "uuid": entry.uuid,
        "uri": store.uri(index_rel),
        "metric_type": metric,
        "num_partitions": index.num_partitions,
        "sub_index": sub,
        "partitions": [{"size": int(n)} for n in index.lengths.tolist()],
    }
    if os.environ.get(_CENTROIDS_ENV, "").lower() != "false":
        out["centroids"] = index.centroids.astype("float64").tolist()
    out["loss"] = loss
    out["index_file_version"] = "V3"
    return out


def _key_text(scalar: pa.Scalar) -> str:
    """A BTREE key as pylance prints it (DataFusion's ``ScalarValue`` ``Display``: floats
    positional and shortest, ``3`` for 3.0; timestamps, times and durations as their
    integer; dates ISO; binaries as upper-case hex; decimals as ``Some(300),10,2``; a null
    as ``NULL``, a null decimal as ``None,10,2``)."""
    t = scalar.type
    if pa.types.is_decimal(t):
        if not scalar.is_valid:
            return f"None,{t.precision},{t.scale}"
        unscaled = int(scalar.as_py().scaleb(t.scale))
        return f"Some({unscaled}),{t.precision},{t.scale}"
    if not scalar.is_valid:
        return "NULL"
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return str(scalar.cast(pa.int64()).as_py())
    value = scalar.as_py()
    if pa.types.is_boolean(t):
        return "true" if value else "false"
    if pa.types.is_floating(t):
        width: dict[int, type[np.floating[Any]]] = {
            16: np.float16,
            32: np.float32,
            64: np.float64,
        }
        number = width[t.bit_width](float(value))
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return np.format_float_positional(number, unique=True, trim="-")
    if pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return str(value)
    if pa.types.is_date(t):
        return str(value)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(value).hex().upper()
    raise NotSupportedYetError(f"index_statistics: BTREE keys of type {t}")


def _btree_segment(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    """pylance's BTREE statistics: the first page's ``min`` and the last page's ``max``
    (``NULL`` when the first page holds nulls); nothing for an empty index."""
    lookup = open_reader(
        store, f"{INDEX_DIR}/{entry.uuid}/page_lookup.lance", ["min", "max"], what="index file"
    )
    table = lookup.read_all().to_table()
    if not table.num_rows:
        return {}
    return {
        "min": _key_text(table.column("min")[0]),
        "max": _key_text(table.column("max")[table.num_rows - 1]),
        "num_pages": table.num_rows,
    }


def _zonemap_segment(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    reader = open_reader(store, f"{INDEX_DIR}/{entry.uuid}/zonemap.lance", what="index file")
    if not reader.num_rows():
        return {}
    meta = reader.metadata().schema.metadata or {}
    return {
        "num_zones": int(reader.num_rows()),
        "rows_per_zone": int(meta.get(b"rows_per_zone", b"8192")),
    }


def _bitmap_segment(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    reader = open_reader(
        store, f"{INDEX_DIR}/{entry.uuid}/bitmap_page_lookup.lance", what="index file"
    )
    meta = reader.metadata().schema.metadata or {}
    stats = meta.get(b"lance:index_stats")
    if stats is not None:
        return {"num_bitmaps": int(json.loads(stats)["num_bitmaps"])}
    return {"num_bitmaps": int(reader.num_rows())}


def _bloom_segment(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    reader = open_reader(store, f"{INDEX_DIR}/{entry.uuid}/bloomfilter.lance", what="index file")
    if not reader.num_rows():
        return {}
    meta = reader.metadata().schema.metadata or {}
    return {
        "type": "BloomFilter",
        "num_blocks": int(reader.num_rows()),
        "number_of_items": int(meta.get(b"bloomfilter_item", b"8192")),
        "probability": float(meta.get(b"bloomfilter_probability", b"0.00057")),
    }


def _segment_statistics(store: ObjectStore, entry: IndexEntry) -> dict[str, Any]:
    kind = entry.index_type
    if entry.type_url.endswith("VectorIndexDetails"):
        return _ivf_segment(store, entry)
    if kind == "BTree":
        return _btree_segment(store, entry)
    if kind in ("Bitmap", "LabelList"):
        return _bitmap_segment(store, entry)
    if kind == "ZoneMap":
        return _zonemap_segment(store, entry)
    if kind == "BloomFilter":
        return _bloom_segment(store, entry)
    raise NotSupportedYetError(
        f"index_statistics: index {entry.name!r} of type {kind} (vector IVF, BTREE, BITMAP, "
        "LABEL_LIST, ZONEMAP and BLOOMFILTER statistics are read here)"
    )


def index_statistics(store: ObjectStore, manifest: Manifest, index_name: object) -> dict[str, Any]:
    """pylance 14's ``index_statistics(index_name)``: :func:`index_statistics_of` with its
    ``DeprecationWarning``."""
    warnings.warn(
        "LanceDataset.index_statistics() is deprecated, "
        "use LanceDataset.stats.index_stats() instead",
        DeprecationWarning,
        stacklevel=3,
    )
    return index_statistics_of(store, manifest, index_name)


def index_statistics_of(
    store: ObjectStore, manifest: Manifest, index_name: object
) -> dict[str, Any]:
    """pylance 14's statistics dictionary of index ``index_name``; a ``KeyError`` as
    pylance's for a name the version has no index of."""
    name = check_index_name(index_name, argument="index_name")
    entries = _groups(manifest).get(name)
    if not entries:
        raise KeyError(f'Index "{name}" not found')
    per_segment = [_segment_statistics(store, e) for e in entries]
    indexed = set().union(*(set(e.fragment_ids) for e in entries))
    live = {f.id for f in manifest.fragments}
    unindexed = [f for f in manifest.fragments if f.id not in indexed]
    created = [e.created_at_ms for e in entries if e.created_at_ms is not None]
    return {
        "index_type": entries[0].index_type,
        "name": name,
        "num_indices": len(entries),
        "num_segments": len(entries),
        "indices": per_segment,
        "segments": per_segment,
        "num_indexed_fragments": len(indexed & live),
        "num_indexed_rows": _live_rows(manifest, indexed),
        "num_unindexed_fragments": len(unindexed),
        "num_unindexed_rows": sum(f.num_rows for f in unindexed),
        "num_indexed_rows_per_delta": [_live_rows(manifest, e.fragment_ids) for e in entries],
        "updated_at_timestamp_ms": max(created) if created else None,
    }
