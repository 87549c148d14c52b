"""What the examples of some pages leave behind, checked after each run of the page (the
assertions the README's example tests made before the README moved to docs/)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

import lance_semantic as ls
from tests.docs.blocks import PageRun

RAY_PAGE = "docs/guides/two-phase-and-ray.md"


def _getting_started(run: PageRun) -> None:
    ns = run.namespace
    ds = ls.dataset(ns["uri"])
    assert ds.semantic_types
    got = ds.to_table()
    assert got.schema.field("name").type == pa.string_view()  # set_output_encoding
    assert {r["id"]: r["name"] for r in got.to_pylist()} == {1: "A", 3: "c", 40: "d", 5: "e"}
    assert ls.dataset(ns["legacy_uri"]).semantic_types
    assert ns["stable"].data_storage_version == "2.2" and ns["stable"].semantic_types


def _engines(run: PageRun) -> None:
    values = [v for _, v in run.values]
    assert values[0] == [("b",), ("c",)]
    assert values[1]["name"].to_list() == ["b", "c"]
    assert values[2] == pa.large_string()
    assert values[3] == pa.schema([("name", pa.string_view()), ("_rowid", pa.uint64())])
    assert values[4] == [("b", 1), ("c", 2)]
    assert values[5] == ((2, 2), 2)


def two_phase_and_ray(run: PageRun) -> None:
    """What the Ray page's examples leave (tests/interop/test_ray.py runs the page)."""
    ns = run.namespace
    ds = ls.dataset(ns["ds"].uri)
    assert ds.version == 2 and ds.semantic_types
    assert ds.to_table().column("s").to_pylist() == ["a", "b", "c", "d"]
    assert ds.semantic_schema.field("s").output_encoding is None
    ray_ds = ls.dataset(ns["uri"])
    assert ray_ds.count_rows() == 4 and ray_ds.semantic_types and len(ray_ds.get_fragments()) == 1
    assert sorted(r["s"] for r in ns["rows"].take_all()) == ["b", "b"]


def _s3(run: PageRun) -> None:
    ds = ls.dataset(run.namespace["uri"], storage_options=run.namespace["options"])
    assert ds.to_table().column("id").to_pylist() == [1, 2, 3]  # overwritten on a second run


def _readme(run: PageRun) -> None:
    ds = ls.dataset(run.namespace["uri"])
    assert ds.to_table().to_pydict() == {"id": [2, 3, 4], "name": ["grace", "linus", "KEN"]}
    vs = ls.dataset(run.namespace["vec_uri"])  # flagged, with an IVF_FLAT index on v
    assert vs.semantic_types
    assert [(i["name"], i["type"]) for i in vs.list_indices()] == [("v_idx", "IVF_FLAT")]
    q = run.namespace["vectors"][42]
    hits = vs.to_table(columns=["id"], nearest={"column": "v", "q": q, "k": 3, "nprobes": 2})
    assert hits["id"][0].as_py() == 42 and hits.column_names == ["id", "_distance"]


CHECKS: dict[str, Callable[[PageRun], None]] = {
    "README.md": _readme,
    "docs/getting-started.md": _getting_started,
    "docs/guides/engines.md": _engines,
    "docs/guides/s3.md": _s3,
}
