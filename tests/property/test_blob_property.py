"""Properties of blob v2 writes on random values, with pylance 14 as the oracle.

Small thresholds (inline up to 200 bytes, dedicated over 1,000, packed sidecars of at most
1,500 bytes) put every kind, the boundaries between them and the packed-sidecar rollover
within reach of short random lists. For any list of values (bytes of any size, nulls,
external URIs with or without a range), written in one or several data files:

* our data files and sidecars are byte-identical to pylance's (modulo the hash-ordered
  metadata pair, see ``tests.blob_support.canonical``);
* ``take_blobs`` returns exactly the input bytes (or the external range), through us and
  through pylance, in any order of indices.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import lance
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lance.blob import Blob, blob_array, blob_field
from tests.blob_support import data_files

import lance_semantic as ls

os.environ.setdefault("LANCE_LOG", "error")

EXAMPLES = int(os.environ.get("LS_PROP_EXAMPLES", "40"))
ORACLE = settings(
    max_examples=max(5, EXAMPLES // 2),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FIELD = blob_field(
    "b", inline_size_threshold=200, dedicated_size_threshold=1000, pack_file_size_threshold=1500
)
EXTERNAL = bytes(range(256)) * 4

sizes = st.sampled_from([0, 1, 199, 200, 201, 999, 1000, 1001, 1499, 1500, 1501, 3000])
payloads = st.builds(lambda n, b: bytes([b]) * n, sizes, st.integers(0, 255))
ranges = st.one_of(
    st.none(),
    st.integers(0, len(EXTERNAL) - 1).flatmap(
        lambda start: st.tuples(st.just(start), st.integers(1, min(64, len(EXTERNAL) - start)))
    ),
)
values = st.lists(
    st.one_of(payloads, st.none(), ranges.map(lambda r: ("external", r))),
    min_size=1,
    max_size=12,
)


def _as_input(value: object, uri: str) -> object:
    if isinstance(value, tuple):
        rng = value[1]
        return uri if rng is None else Blob.from_uri(uri, position=rng[0], size=rng[1])
    return value


def _expected(value: object) -> bytes | None:
    if isinstance(value, tuple):
        rng = value[1]
        if rng is None:
            return EXTERNAL
        start = rng[0]
        return EXTERNAL[start : start + rng[1]]
    return value  # type: ignore[return-value]


@ORACLE
@given(values=values, per_file=st.integers(1, 12), data=st.data())
def test_blob_v2_writes_match_pylance_and_read_back(
    values: list[object], per_file: int, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "external.bin").write_bytes(EXTERNAL)
        uri = f"file://{root / 'external.bin'}"
        table = pa.table(
            {"b": blob_array([_as_input(v, uri) for v in values])}, schema=pa.schema([FIELD])
        )
        options = {"max_rows_per_file": per_file, "allow_external_blob_outside_bases": True}
        lance.write_dataset(table, root / "p", **options)
        ls.write_dataset(table, str(root / "o"), **options)
        assert data_files(root / "o") == data_files(root / "p")
        order = data.draw(st.permutations(range(len(values))))
        want = [_expected(values[i]) for i in order]
        for ds in (ls.dataset(str(root / "o")), lance.dataset(root / "o")):
            got = [None if f is None else f.read() for f in ds.take_blobs("b", indices=order)]
            assert got == want
