"""Spec "Value-transforming types" (blob row) and open decision 2 over blob v2: blob is
classified as value-transforming, its layouts and read modes are the Blob specification's,
and an extension layered over blob v2 (a media type) survives and reads back in the Arrow
slot. Interop with pylance is in ``tests/interop/test_blob_interop.py``."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

import lance_semantic as ls
from lance_semantic.types.layouts import output_encodings

VIDEO = {
    "lance-schema:extension-name": b"example.video",
    "lance-schema:extension-metadata": json.dumps({"codec": "h264"}).encode(),
}


def _video_table(values: list[bytes | None], metadata: dict[str, bytes] = VIDEO) -> pa.Table:
    field = blob_field("clip")
    field = pa.field("clip", field.type, metadata={**metadata})
    schema = pa.schema([pa.field("id", pa.int64()), field])
    return pa.table({"id": pa.array(range(len(values))), "clip": blob_array(values)}, schema=schema)


def test_blob_is_value_transforming_with_no_output_encodings(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_video_table([b"a"]), uri, semantic_types=True)
    st = ds.semantic_schema.field("clip").semantic_type
    assert (str(st), st.kind) == ("blob", "value_transforming")
    assert output_encodings(st) == ()
    with pytest.raises(ls.InvalidOutputEncodingError, match="Blob specification"):
        ds.set_output_encoding("clip", "large_binary")


def test_open_decision_2_media_extension_over_blob_v2_reads_back_in_the_arrow_slot(
    tmp_path: Path,
) -> None:
    """The field keeps ``lance.blob.v2`` in the Arrow slot and the media type under the
    lance-schema keys; reads (which return descriptors, a plain struct) put the media type
    in the Arrow slot, and it survives an append and a compaction."""
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(_video_table([b"a" * 100, None]), uri, semantic_types=True)
    field = ds.semantic_schema.field("clip")
    assert field.extension_name == "lance.blob.v2"
    assert field.metadata["lance-schema:extension-name"] == b"example.video"
    out = ds.to_table().schema.field("clip")
    assert out.metadata[b"ARROW:extension:name"] == b"example.video"
    assert out.metadata[b"ARROW:extension:metadata"] == VIDEO["lance-schema:extension-metadata"]
    assert [c.name for c in out.type] == ["kind", "position", "size", "blob_id", "blob_uri"]
    assert ds.schema.field("clip").equals(out, check_metadata=True)
    assert ds.take([0], columns=["clip"]).schema.field("clip").equals(out, check_metadata=True)
    # the same media type, or none (engines drop it), appends; the values are stored
    ds.insert(_video_table([b"b" * 70_000]))
    ds.insert(_video_table([b"c"], metadata={}))
    ds.optimize.compact_files()
    ds = ls.dataset(uri)
    assert ds.semantic_schema.field("clip").metadata == field.metadata
    assert ds.to_table().schema.field("clip").equals(out, check_metadata=True)
    blobs = ds.take_blobs("clip", indices=[0, 1, 2, 3])
    assert [None if b is None else b.read() for b in blobs] == [
        b"a" * 100,
        None,
        b"b" * 70_000,
        b"c",
    ]


def test_open_decision_2_another_media_type_over_blob_is_a_schema_mismatch(
    tmp_path: Path,
) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(_video_table([b"a"]), uri, semantic_types=True)
    other = {**VIDEO, "lance-schema:extension-name": b"example.audio"}
    with pytest.raises(ls.SchemaMismatchError, match="clip"):
        ls.dataset(uri).insert(_video_table([b"b"], metadata=other))
    assert ls.dataset(uri).count_rows() == 1


def test_legacy_blob_reads_drop_field_metadata_like_pylance(tmp_path: Path) -> None:
    """On a legacy table the descriptor carries only pylance's own keys (pylance 14 drops
    the field's metadata there); the table schema keeps the media type."""
    uri = str(tmp_path / "t")
    ls.write_dataset(_video_table([b"a"]), uri)
    ours = ls.dataset(uri).to_table().schema.field("clip")
    theirs = lance.dataset(uri).to_table().schema.field("clip")
    assert ours.equals(theirs, check_metadata=True)
    assert (
        ls.dataset(uri).semantic_schema.field("clip").metadata["lance-schema:extension-name"]
        == b"example.video"
    )


@pytest.mark.parametrize("given", ["blob_array", "large_binary"])
def test_blob_merge_insert_takes_the_inputs_insert_takes(tmp_path: Path, given: str) -> None:
    """A flagged blob v2 column takes plain ``large_binary`` bytes in merge_insert as insert
    does (matched rows updated, new rows inserted, the bytes read back)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), blob_field("blob")])
    table = pa.Table.from_arrays(
        [pa.array([1, 2], pa.int64()), blob_array([b"a", b"bb"])], schema=schema
    )
    ds = ls.write_dataset(table, str(tmp_path / "t"), semantic_types=True)
    values = [b"x", b"y"]
    blobs = blob_array(values) if given == "blob_array" else pa.array(values, pa.large_binary())
    source = pa.table({"id": pa.array([2, 3], pa.int64()), "blob": blobs})
    result = (
        ds.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(source)
    )
    assert (result.num_updated_rows, result.num_inserted_rows) == (1, 1)
    fresh = ls.dataset(str(tmp_path / "t"))
    ids = fresh.to_table(columns=["id"], with_row_id=True)
    order = sorted(range(ids.num_rows), key=lambda i: ids["id"][i].as_py())
    got = [b.readall() for b in fresh.take_blobs("blob", indices=order)]
    assert got == [b"a", b"x", b"y"]
