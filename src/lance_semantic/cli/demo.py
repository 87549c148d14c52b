"""``lance-semantic demo [DIR]``: build a small flagged table and show it (layer L6)."""

from __future__ import annotations

import os
import tempfile

import pyarrow as pa

from ..dataset import write_dataset
from ..errors import LanceSemanticError
from .inspect import format_inspect

__all__ = ["run_demo"]


def run_demo(directory: str | None) -> int:
    """Create ``DIR/demo.lance`` (DIR: a new temporary directory when not given) and print
    what it holds. An existing ``demo.lance`` is never overwritten."""
    root = directory or tempfile.mkdtemp(prefix="lance-semantic-demo-")
    uri = os.path.join(root, "demo.lance")
    if os.path.lexists(uri):
        raise LanceSemanticError(
            f"{uri} already exists; the demo never overwrites it (remove it or give another DIR)"
        )
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": pa.array(["ada", "grace", "linus"], pa.string()),
            "tags": pa.array([["math"], ["navy", "cobol"], []], pa.list_(pa.string())),
            "point": pa.array([{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}, None]),
        }
    )
    # semantic_types=True: the table carries FLAG_SEMANTIC_TYPES (the Semantic Type Contract)
    # on data storage 2.2, pylance 14's stable file format
    ds = write_dataset(table, uri, semantic_types=True)
    print(f"created {uri} (version {ds.version}, semantic types: {ds.semantic_types})")
    # layouts are not types: LargeUtf8 names, a large_list of views and a dictionary append
    more = pa.table(
        {
            "id": pa.array([4, 5], pa.int64()),
            "name": pa.array(["barbara", "edsger"], pa.large_string()),
            "tags": pa.array([["lisp"], []], pa.large_list(pa.string_view())),
        }
    )
    ds.insert(more)
    ds.insert(
        pa.table({"id": pa.array([6], pa.int64()), "name": pa.array(["ken"]).dictionary_encode()})
    )
    print("appended LargeUtf8, large_list<string_view> and dictionary data to the same columns\n")
    print(format_inspect(ds))
    print("\nread back (each column in the layout it was created with):")
    print(ds.schema)
    print("\nrows where id > 1, name as large_utf8 by request:")
    result = ds.to_table(
        columns=["id", "name", "point.x"],
        filter="id > 1",
        output_encodings={"name": "large_utf8"},
    )
    print(result.schema)
    print(result.to_pandas().to_string(index=False) if _has_pandas() else result)
    return 0


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True
