"""pylance 14's ZONEMAP scalar index, written (layer L3).

One Lance 2.2 file, ``zonemap.lance`` (measured on pylance 14.0.3): one row per zone of
8192 *live* rows of one fragment (deleted rows are skipped; the last zone of a fragment
holds the rest): ``min`` / ``max`` (the key type; over the zone's non-null values, NaN left
out of ``min`` and making ``max`` NaN, as the total order puts NaN last; null when every
value is null), ``null_count: uint32``, ``nan_count: uint32``, ``fragment_id: uint64``,
``zone_start: uint64`` (the offset of the zone's first live row) and ``zone_length: uint64``
(from it to its last live row, deleted rows between included), all ``not null``. Schema
metadata ``rows_per_zone`` = ``"8192"`` and ``null_bitmap`` = ``"1"``: global buffer 1
holds the null rows as a RowIdTreeMap. The entry's details (``ZoneMapIndexDetails``) are
``08 80 40 10 00 18 01`` (field 1 = 8192, field 2 = 0, field 3 = 1, as pylance writes
them; pylance ignores a ``rows_per_zone`` option).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..manifest import IndexFile
from ..storage import DataFileWriter, ObjectStore
from .bitmap_write import encode_row_id_tree_map
from .btree_write import INDEX_FILE_VERSION

__all__ = ["ZONE_ROWS", "ZONEMAP_DETAILS", "ZONEMAP_FILE", "live_zones", "write_zonemap"]

#: live rows per zone (pylance 14's ``rows_per_zone``)
ZONE_ROWS = 8192
ZONEMAP_FILE = "zonemap.lance"
#: the ``ZoneMapIndexDetails`` pylance 14 commits, byte for byte
ZONEMAP_DETAILS = bytes.fromhex("08804010001801")


def _schema(value_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [
            pa.field("min", value_type),
            pa.field("max", value_type),
            pa.field("null_count", pa.uint32(), False),
            pa.field("nan_count", pa.uint32(), False),
            pa.field("fragment_id", pa.uint64(), False),
            pa.field("zone_start", pa.uint64(), False),
            pa.field("zone_length", pa.uint64(), False),
        ]
    )


Zone = tuple[int, int, int, int, int]


def live_zones(addresses: npt.NDArray[np.uint64]) -> list[Zone]:
    """The zones of the live rows at ``addresses`` (ascending): (first and past-the-last
    position in ``addresses``, fragment id, zone start offset, zone length)."""
    frags = addresses >> np.uint64(32)
    offsets = addresses & np.uint64(0xFFFF_FFFF)
    cuts = np.flatnonzero(frags[1:] != frags[:-1]) + 1
    bounds: list[int] = [0, *cuts.tolist(), len(frags)] if len(frags) else []
    out = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        for z in range(a, b, ZONE_ROWS):
            e = min(b, z + ZONE_ROWS)
            start = int(offsets[z])
            out.append((z, e, int(frags[z]), start, int(offsets[e - 1]) - start + 1))
    return out


def write_zonemap(
    store: ObjectStore,
    folder: str,
    values: pa.Array,
    addresses: npt.NDArray[np.uint64],
) -> list[IndexFile]:
    """Write the ZONEMAP index of ``values`` (one per live row, the rows at ``addresses``,
    ascending) into ``folder``; the files written with their sizes."""
    floating = pa.types.is_floating(values.type)
    mins, maxs, nulls, nans, fids, starts, lengths = [], [], [], [], [], [], []
    for z, e, fid, start, length in live_zones(addresses):
        zone = values.slice(z, e - z)
        nan_count = int(pc.sum(pc.is_nan(zone)).as_py() or 0) if floating else 0
        got = pc.min_max(zone)
        lo, hi = got["min"], got["max"]
        if nan_count:
            hi = pa.scalar(float("nan"), values.type)
            if not lo.is_valid:
                lo = hi
        mins.append(lo.cast(values.type))
        maxs.append(hi.cast(values.type))
        nulls.append(zone.null_count)
        nans.append(nan_count)
        fids.append(fid)
        starts.append(start)
        lengths.append(length)
    schema = _schema(values.type)
    writer = DataFileWriter(store, ZONEMAP_FILE, schema, INDEX_FILE_VERSION, folder=folder)
    writer.add_schema_metadata("rows_per_zone", str(ZONE_ROWS))
    null_rows = addresses[values.is_null().to_numpy(zero_copy_only=False)]
    position = writer.add_global_buffer(encode_row_id_tree_map(null_rows))
    writer.add_schema_metadata("null_bitmap", str(position))
    if fids:
        writer.write(
            pa.record_batch(
                [
                    pa.array([m.as_py() for m in mins], values.type),
                    pa.array([m.as_py() for m in maxs], values.type),
                    pa.array(nulls, pa.uint32()),
                    pa.array(nans, pa.uint32()),
                    pa.array(fids, pa.uint64()),
                    pa.array(starts, pa.uint64()),
                    pa.array(lengths, pa.uint64()),
                ],
                schema=schema,
            )
        )
    written = writer.close()
    return [IndexFile(ZONEMAP_FILE, written.size_bytes)]
