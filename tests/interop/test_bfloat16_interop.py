"""``lance.bfloat16`` elements in both forms pylance hands out (spec "Unchanged types":
``fixed_size_list:<elem>:<n>`` including ``lance.bfloat16`` elements), against stock
pylance 14 as the oracle.

pylance registers ``lance.arrow.BFloat16Type`` only when ``lance.arrow`` is imported; without
it its reads return the *metadata form*: ``fixed_size_binary(2)`` items whose field carries
``ARROW:extension:name = lance.bfloat16``. Both forms are one type: pylance stores either as
``fixed_size_list:lance.bfloat16:<n>``, appends either to either, and so do we, on legacy and
flagged tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.arrow import BFloat16Type

import lance_semantic as ls

pytestmark = pytest.mark.interop

BF16_KEYS = {"ARROW:extension:name": "lance.bfloat16", "ARROW:extension:metadata": ""}
LOGICAL = "fixed_size_list:lance.bfloat16:2"
FORMS = ["registered", "metadata"]
TABLES = ["legacy", "flagged"]


def _storage(start: int) -> pa.Array:
    # bfloat16 bit patterns (1.0, 2.0, null, 3.0, ...), little-endian
    values = [bytes([0x80 + start, 0x3F]), bytes([0x00, 0x40 + start]), None, b"\x40\x40"]
    return pa.array(values, pa.binary(2))


def bf16_column(form: str, start: int = 0) -> pa.Array:
    """Two rows of ``fixed_size_list<bfloat16, 2>`` in the given form."""
    storage = _storage(start)
    if form == "registered":
        return pa.FixedSizeListArray.from_arrays(
            pa.ExtensionArray.from_storage(BFloat16Type(), storage), 2
        )
    item = pa.field("item", pa.binary(2), metadata=BF16_KEYS)
    return pa.FixedSizeListArray.from_arrays(storage, type=pa.list_(item, 2))


def table(form: str, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array([start, start + 1], pa.int64()), "v": bf16_column(form, start)})


def bits(t: pa.Table) -> list[object]:
    """The stored bytes of ``v`` per row, whatever form the read returned."""
    arr = t.column("v").combine_chunks()
    assert arr.null_count == 0
    flat = arr.flatten()
    if isinstance(flat, pa.ExtensionArray):
        flat = flat.storage
    values, n = flat.to_pylist(), arr.type.list_size
    return [values[i : i + n] for i in range(0, len(values), n)]


def item_form(t: pa.Schema) -> str:
    item = t.field("v").type.value_field
    if isinstance(item.type, BFloat16Type):
        return "registered"
    assert item.type == pa.binary(2)
    assert {k.decode(): v.decode() for k, v in (item.metadata or {}).items()} == BF16_KEYS
    return "metadata"


def create(uri: str, data: pa.Table, kind: str) -> ls.Dataset:
    if kind == "flagged":
        return ls.write_dataset(data, uri, data_storage_version="2.3")
    return ls.write_dataset(data, uri)


@pytest.fixture
def bf16_unregistered() -> Iterator[None]:
    """This test as a process that never imported ``lance.arrow``: pylance's reads then
    return the metadata form (pyarrow keeps an unregistered extension as storage + keys)."""
    pa.unregister_extension_type("lance.bfloat16")
    try:
        yield
    finally:
        pa.register_extension_type(BFloat16Type())


def _rows(t: pa.Table) -> list[object]:
    return list(zip(t.column("id").to_pylist(), bits(t), strict=True))


# ---- create: logical type as pylance stores it ------------------------------------------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("kind", TABLES)
def test_bfloat16_create_stores_fixed_size_list_of_lance_bfloat16(
    tmp_path: Path, form: str, kind: str
) -> None:
    ours = create(str(tmp_path / "ours"), table(form), kind)
    assert ours.semantic_schema.field("v").logical_type == LOGICAL
    assert ours.semantic_schema.field("v").children == ()
    assert _rows(ours.to_table()) == _rows(table(form))
    if kind == "legacy":
        theirs = str(tmp_path / "theirs")
        lance.write_dataset(table(form), theirs)
        oracle = ls.dataset(theirs).semantic_schema.field("v")
        assert oracle.logical_type == LOGICAL  # pylance's own manifest, read by us
        assert [(f.id, f.logical_type, dict(f.metadata)) for f in ours.semantic_schema] == [
            (f.id, f.logical_type, dict(f.metadata)) for f in ls.dataset(theirs).semantic_schema
        ]
        # pylance reads our table exactly as its own
        assert lance.dataset(ours.uri).schema == lance.dataset(theirs).schema
        assert _rows(lance.dataset(ours.uri).to_table()) == _rows(lance.dataset(theirs).to_table())
    else:
        assert ours.semantic_types
        assert item_form(ours.schema) == "registered"  # lance.arrow is imported here


# ---- append: either form onto a table created from either ---------------------------------


@pytest.mark.parametrize("created", FORMS)
@pytest.mark.parametrize("appended", FORMS)
@pytest.mark.parametrize("kind", TABLES)
def test_bfloat16_append_of_either_form_to_either(
    tmp_path: Path, created: str, appended: str, kind: str
) -> None:
    ds = create(str(tmp_path / "ours"), table(created), kind)
    ds.insert(table(appended, 2))
    want = _rows(table(created)) + _rows(table(appended, 2))
    assert _rows(ds.to_table()) == want
    assert _rows(ls.dataset(ds.uri).to_table()) == want
    assert ls.dataset(ds.uri).semantic_schema.field("v").logical_type == LOGICAL
    if kind == "legacy":  # the oracle accepts the same append; it reads ours like its own
        theirs = str(tmp_path / "theirs")
        lance.write_dataset(table(created), theirs)
        lance.write_dataset(table(appended, 2), theirs, mode="append")
        assert _rows(lance.dataset(theirs).to_table()) == want
        assert _rows(lance.dataset(ds.uri).to_table()) == want
        assert lance.dataset(ds.uri).schema == lance.dataset(theirs).schema


# ---- pylance's read-back appended to a legacy table ---------------------------------------


def _read_back_appends(tmp_path: Path, expect_form: str) -> None:
    for creator in ("ours", "pylance"):
        for appender in ("ours", "pylance"):
            uri = str(tmp_path / f"{creator}-{appender}")
            if creator == "ours":
                ls.write_dataset(table("metadata"), uri)
            else:
                lance.write_dataset(table("metadata"), uri)
            back = lance.dataset(uri).to_table()
            assert item_form(back.schema) == expect_form
            if appender == "ours":
                ls.write_dataset(back, uri, mode="append")
            else:
                lance.write_dataset(back, uri, mode="append")
            want = _rows(table("metadata")) * 2
            assert _rows(lance.dataset(uri).to_table()) == want, (creator, appender)
            assert _rows(ls.dataset(uri).to_table()) == want, (creator, appender)
            assert ls.dataset(uri).semantic_schema.field("v").logical_type == LOGICAL


def test_pylance_read_back_in_metadata_form_appends_to_a_legacy_table(
    tmp_path: Path, bf16_unregistered: None
) -> None:
    _read_back_appends(tmp_path, "metadata")


def test_pylance_read_back_in_registered_form_appends_to_a_legacy_table(tmp_path: Path) -> None:
    _read_back_appends(tmp_path, "registered")
