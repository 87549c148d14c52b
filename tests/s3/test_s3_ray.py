"""``lance_semantic.ray`` on S3: Ray workers write fragments
to an ``s3://`` table, the driver commits once; read_lance and compact_files on it; pylance
reads the result."""

from __future__ import annotations

from collections.abc import Iterator

import lance
import pyarrow as pa
import pytest
from tests import ray_support

import lance_semantic as ls

ray = pytest.importorskip("ray")
lsray = pytest.importorskip("lance_semantic.ray")

pytestmark = ray_support.RAY_WARNINGS


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    yield from ray_support.local_ray()


def test_write_read_and_compact_on_s3(s3_uri: str, s3_options: dict) -> None:
    o = s3_options
    blocks = [
        pa.table({"id": pa.array(range(k * 20, k * 20 + 20), pa.int64()), "s": [f"s{k}"] * 20})
        for k in range(4)
    ]
    lsray.write_lance(ray.data.from_arrow(blocks), s3_uri, storage_options=o)
    lsray.write_lance(
        ray.data.from_arrow([blocks[0].set_column(0, "id", pa.array(range(100, 120)))]),
        s3_uri,
        mode="append",
        storage_options=o,
    )
    ds = ls.dataset(s3_uri, storage_options=o)
    assert ds.version == 2 and ds.count_rows() == 100
    want = sorted([*range(80), *range(100, 120)])
    got = lsray.read_lance(s3_uri, columns=["id"], filter="id >= 0", storage_options=o)
    assert sorted(r["id"] for r in got.take_all()) == want
    lsray.compact_files(s3_uri, storage_options=o)
    after = ls.dataset(s3_uri, storage_options=o)
    assert len(after.get_fragments()) < len(ds.get_fragments())
    theirs = lance.dataset(s3_uri, storage_options=o)
    assert sorted(theirs.to_table(columns=["id"]).column("id").to_pylist()) == want
