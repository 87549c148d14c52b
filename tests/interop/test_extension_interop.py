"""Extension semantic types on legacy tables against stock pylance 14 (the oracle): the same
appends through both libraries are accepted or refused alike, and each reads the other's
extension fields with the same Arrow field (spec "Extension Semantic Types"; "Legacy tables
keep their current behavior exactly")."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

FSL = pa.list_(pa.float32(), 4)
BBOX = {b"ARROW:extension:name": b"example.bbox", b"ARROW:extension:metadata": b"\x00\x01v1"}


def _table(md: dict[bytes, bytes] | None, start: int = 0) -> pa.Table:
    values = pa.array([[float(start), 1.0, 2.0, 3.0]], FSL)
    return pa.Table.from_arrays([values], schema=pa.schema([pa.field("bb", FSL, metadata=md)]))


APPENDS = {
    "plain_storage": (None, False),
    "other_extension": ({b"ARROW:extension:name": b"other.x"}, False),
    "same_name_other_metadata": ({**BBOX, b"ARROW:extension:metadata": b"v2"}, False),
    "same_extension": (BBOX, True),
    "same_extension_other_layered_key": ({**BBOX, b"lance-schema:extension-name": b"x.y"}, True),
}


@pytest.mark.parametrize("case", list(APPENDS))
def test_legacy_extension_appends_are_accepted_or_refused_like_pylance(
    tmp_path: Path, case: str
) -> None:
    md, accepted = APPENDS[case]
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    lance.write_dataset(_table(BBOX), theirs)
    ls.write_dataset(_table(BBOX), ours)
    if accepted:
        lance.write_dataset(_table(md, 1), theirs, mode="append")
        ls.write_dataset(_table(md, 1), ours, mode="append")
    else:
        with pytest.raises(OSError, match="does not match the file schema"):
            lance.write_dataset(_table(md, 1), theirs, mode="append")
        with pytest.raises(ls.SchemaMismatchError) as err:
            ls.write_dataset(_table(md, 1), ours, mode="append")
        assert err.value.field_path == "bb"
    assert lance.dataset(ours).to_table().equals(lance.dataset(theirs).to_table())
    assert ls.dataset(ours).schema.equals(lance.dataset(theirs).schema, check_metadata=True)
    assert lance.dataset(ours).schema.field("bb").metadata == BBOX


def test_pylance_reads_our_extension_columns_and_we_read_theirs(tmp_path: Path) -> None:
    """Unregistered extension over a legacy table, metadata bytes that are not text."""
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ls.write_dataset(_table(BBOX), ours).insert(_table(BBOX, 1))
    lance.write_dataset(_table(BBOX), theirs)
    lance.write_dataset(_table(BBOX, 1), theirs, mode="append")
    assert lance.dataset(ours).to_table().equals(ls.dataset(theirs).to_table())
    assert ls.dataset(theirs).schema.field("bb").metadata == BBOX
    assert lance.dataset(ours).schema.field("bb").metadata == BBOX
