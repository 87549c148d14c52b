"""first_invalid_json_row puts an invalid json value on its top-level row, through
structs, lists (sliced, with nulls), fixed-size lists and maps."""

from __future__ import annotations

import pyarrow as pa

from lance_semantic.dataset.mutations.source_rows import first_invalid_json_row
from lance_semantic.schema.arrow import schema_from_arrow
from lance_semantic.schema.field import Field

J = pa.json_(pa.string())


def _json(docs: list[str | None]) -> pa.Array:
    return pa.ExtensionArray.from_storage(J, pa.array(docs, pa.string()))


def _field(name: str, dt: pa.DataType) -> Field:
    return schema_from_arrow(pa.schema([(name, dt)])).fields[0]


def _row(arr: pa.Array, field: Field, path: str) -> int:
    found = first_invalid_json_row(arr, field, path)
    assert found is not None and found[1].field_path == path
    return found[0]


def test_top_level_and_struct_child() -> None:
    docs = _json(["{}", "[1]", "{", "1"])
    found = first_invalid_json_row(docs, _field("j", J), "j")
    assert found is not None and found[0] == 2 and found[1].field_path == "j"
    st = pa.StructArray.from_arrays([pa.array([1, 2, 3, 4]), docs], names=["n", "doc"])
    f = _field("s", st.type)
    assert _row(st, f, "s.doc") == 2
    assert _row(st.slice(1), f, "s.doc") == 1
    assert first_invalid_json_row(st.slice(3), f, "s.doc") is None


def test_list_items_by_their_row() -> None:
    # rows: [ok, ok], null, [], [ok, bad, bad], [bad]
    items = _json(["{}", "{}", "{}", "x", "y", "z"])
    offsets = pa.array([0, 2, 2, 2, 5, 6], pa.int32())
    arr = pa.ListArray.from_arrays(
        offsets, items, mask=pa.array([False, True, False, False, False])
    )
    f = _field("l", arr.type)
    assert _row(arr, f, "l.item") == 3
    assert _row(arr.slice(4), f, "l.item") == 0
    large = arr.cast(pa.large_list(J))
    assert _row(large.slice(1), f, "l.item") == 2


def test_fixed_size_lists_and_maps() -> None:
    st = pa.StructArray.from_arrays([_json(["{}", "{}", "{}", "!"])], names=["doc"])
    fsl = pa.FixedSizeListArray.from_arrays(st, 2)
    f = _field("f", fsl.type)
    path = next(c.path for c in f.walk() if c.logical_type == "json")
    assert _row(fsl, f, path) == 1
    m = pa.MapArray.from_arrays(
        pa.array([0, 1, 3], pa.int32()), pa.array(["a", "b", "c"]), _json(["{}", "{}", "nope"])
    )
    f = _field("m", m.type)
    value = next(c.path for c in f.walk() if c.logical_type == "json")
    found = first_invalid_json_row(m, f, value)
    assert found is not None and found[0] == 1 and found[1].field_path == value
