"""The README's "Using it" block runs as written (with ``/tmp`` replaced by a temporary
directory) and leaves the tables it describes: it reads the view layout it sets through
filtered reads, ``take``, ``update`` and ``merge_insert``."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

import lance_semantic as ls

README = Path(__file__).resolve().parents[2] / "README.md"


def _using_it_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Using it\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert found is not None, "no python block in the README's 'Using it' section"
    return found.group(1)


def test_readme_using_it_block_runs_as_written(tmp_path: Path) -> None:
    code = _using_it_block()
    assert "/tmp/" in code
    namespace: dict[str, object] = {}
    exec(compile(code.replace("/tmp/", f"{tmp_path}/"), str(README), "exec"), namespace)
    ds = ls.dataset(str(tmp_path / "t.lance"))
    assert ds.semantic_types
    got = ds.to_table()
    assert got.schema.field("name").type == pa.string_view()  # set_output_encoding
    rows = {r["id"]: r["name"] for r in got.to_pylist()}
    assert rows == {1: "A", 3: "c", 40: "d", 5: "e"}
    assert ls.dataset(str(tmp_path / "t.lance"), version=1).count_rows() == 2
    legacy = ls.dataset(str(tmp_path / "legacy.lance"))
    assert legacy.semantic_types and legacy.to_table().column("s").to_pylist() == ["x"]
    assert ls.dataset(str(tmp_path / "clips.lance")).count_rows() == 2
