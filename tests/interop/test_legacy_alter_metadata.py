"""Legacy tables keep their current behaviour exactly (spec "Compatibility and Migration"):
an ``alter_columns`` type change drops the field's plain metadata as pylance 14 does, with
stock pylance as the oracle. The extension keys are our one documented deviation (the
contract keeps extension metadata through schema evolution; pylance 14 drops them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

NOTE = {"note": "kept?", "lance-schema:output-encoding": "large_utf8"}  # plain on legacy
EXT = {"ARROW:extension:name": "example.thing", "ARROW:extension:metadata": "v1"}
EXT_ARROW = {k.encode(): v.encode() for k, v in EXT.items()}  # as pa.Field.metadata
EXT_TABLE = {k: v.encode() for k, v in EXT.items()}  # as Field.metadata
ITEM = pa.field("item", pa.int32(), metadata={"it": "m"})
MEMBER = pa.struct([pa.field("x", pa.int32(), metadata={"inner": "z"}), ("y", pa.string())])

SCHEMA = pa.schema(
    [
        pa.field("i", pa.int32(), metadata=NOTE),
        pa.field("s", pa.string(), metadata={"note": "s"}),
        pa.field("l", pa.list_(ITEM), metadata={"lo": "p"}),
        pa.field("st", MEMBER, metadata={"outer": "o"}),
        pa.field("e", pa.int32(), metadata={**EXT, "other": "y"}),
        pa.field("r", pa.int32(), metadata={"note": "r"}),
    ],
    metadata={"owner": "tests"},
)

ALTERATIONS: dict[str, list[dict[str, Any]]] = {
    "int32_to_int64": [{"path": "i", "data_type": pa.int64()}],
    "string_to_large_string": [{"path": "s", "data_type": pa.large_string()}],
    "list_item_type": [{"path": "l", "data_type": pa.list_(pa.int64())}],
    "struct_member": [{"path": "st.x", "data_type": pa.int64()}],
    "type_and_rename": [{"path": "s", "data_type": pa.large_string(), "name": "S"}],
    "rename_only": [{"path": "r", "name": "R", "nullable": True}],
    "extension_field": [{"path": "e", "data_type": pa.int64()}],
}


def _table() -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array([1, 2], pa.int32()),
            pa.array(["a", None]),
            pa.array([[1], [2, 3]], pa.list_(ITEM)),
            pa.array([{"x": 1, "y": "p"}, None], MEMBER),
            pa.array([5, 6], pa.int32()),
            pa.array([7, None], pa.int32()),
        ],
        schema=SCHEMA,
    )


def _tree(uri: str) -> list[tuple[str, int, str, dict[str, bytes]]]:
    return [
        (f.path, f.id, f.logical_type, dict(f.metadata)) for f in ls.dataset(uri).semantic_schema
    ]


@pytest.mark.parametrize("case", list(ALTERATIONS))
def test_legacy_alter_type_change_drops_plain_metadata_like_pylance(
    tmp_path: Path, case: str
) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lance.write_dataset(_table(), ours)
    lance.write_dataset(_table(), theirs)
    ls.dataset(ours).alter_columns(*ALTERATIONS[case])
    lance.dataset(theirs).alter_columns(*ALTERATIONS[case])

    mine, oracle = _tree(ours), _tree(theirs)
    if case == "extension_field":  # the deviation: our e keeps exactly its extension keys
        assert [m[:3] for m in mine] == [t[:3] for t in oracle]
        got = {m[0]: m[3] for m in mine}
        want = {t[0]: t[3] for t in oracle}
        assert want.pop("e") == {} and got.pop("e") == EXT_TABLE
        assert got == want
        assert lance.dataset(ours).schema.field("e").metadata == EXT_ARROW
        assert ls.dataset(ours).semantic_schema.field("e").extension_name == "example.thing"
        return
    assert mine == oracle  # ids, logical types and every field's metadata
    # the Arrow schemas both libraries report for our table equal pylance's for its own
    want_schema = lance.dataset(theirs).schema
    assert lance.dataset(ours).schema.equals(want_schema, check_metadata=True)
    assert ls.dataset(ours).schema.equals(want_schema, check_metadata=True)
    assert ls.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert not ls.dataset(ours).semantic_types


def test_flagged_alter_type_change_keeps_field_metadata(tmp_path: Path) -> None:
    """Flagged tables are not pylance's: a type change keeps the field's metadata (only the
    old layout's output encoding goes, the new layout decides)."""
    data = _table()
    # an output-encoding entry on an int32 is invalid on a flagged table (and refused)
    data = data.cast(SCHEMA.set(0, SCHEMA.field("i").with_metadata({"note": "kept?"})))
    ds = ls.write_dataset(data, str(tmp_path / "t"), data_storage_version="2.3")
    ds.alter_columns({"path": "i", "data_type": pa.int64()}, {"path": "e", "data_type": pa.int64()})
    got = ls.dataset(ds.uri).semantic_schema
    assert dict(got.field("i").metadata) == {"note": b"kept?"}
    assert dict(got.field("e").metadata) == {**EXT_TABLE, "other": b"y"}
