"""The one recursive layout converter (``codecs/convert.py``) in both its meanings: a read's
output layout, and (``widen=True``) compaction's merged layout of data files. The two agree
on everything but dictionaries (re-keyed, not encoded afresh), fixed-size lists (converted
item by item) and extension types (cast as they are, never rendered as JSON text)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lance_semantic.codecs import convert
from lance_semantic.codecs.convert import DoesNotFit, identity, resolve_converter
from lance_semantic.dataset.compaction import converter

SMALL = pa.dictionary(pa.int8(), pa.string())


def _dictionary() -> pa.DictionaryArray:
    """Indices into a dictionary with an unused value, in an order a fresh encoding would not
    give."""
    return pa.DictionaryArray.from_arrays(
        pa.array([2, None, 0, 2], pa.int8()), pa.array(["c", "unused", "a"])
    )


def test_compaction_converts_with_the_read_converter_in_its_widen_meaning() -> None:
    target = pa.dictionary(pa.int32(), pa.string())
    arr = _dictionary()
    assert converter(SMALL, target, "s")(arr).equals(
        resolve_converter(SMALL, target, "s", widen=True)(arr)
    )
    assert converter(pa.string(), pa.string(), "s") is identity


@pytest.mark.parametrize(
    "target",
    [pa.dictionary(pa.int32(), pa.string()), pa.dictionary(pa.int64(), pa.large_string())],
)
def test_widen_rekeys_a_dictionary_and_keeps_its_values(target: pa.DictionaryType) -> None:
    arr = _dictionary()
    for part in (arr, arr.slice(1), arr.slice(1, 2)):
        out = resolve_converter(part.type, target, "s", widen=True)(part)
        assert out.type == target
        assert out.dictionary.to_pylist() == ["c", "unused", "a"]
        assert out.indices.to_pylist() == part.indices.to_pylist()
        assert out.to_pylist() == part.to_pylist()


def test_a_read_encodes_the_dictionary_afresh() -> None:
    arr = _dictionary()
    out = resolve_converter(SMALL, pa.dictionary(pa.int32(), pa.string()), "s")(arr)
    assert out.dictionary.to_pylist() == ["a", "c"]
    assert out.to_pylist() == arr.to_pylist()


def test_widen_converts_fixed_size_list_items() -> None:
    item = pa.struct([("a", pa.string()), ("d", SMALL)])
    arr = pa.array(
        [[{"a": "x", "d": "u"}, None], None, [{"a": None, "d": "v"}, {"a": "z", "d": None}]],
        pa.list_(item, 2),
    )
    wide = pa.struct([("a", pa.large_string()), ("d", pa.large_string())])
    target = pa.list_(wide, 2)
    for part in (arr, arr.slice(1), arr.slice(2, 1)):
        out = resolve_converter(part.type, target, "f", widen=True)(part)
        out.validate(full=True)
        assert out.type == target
        assert out.to_pylist() == part.to_pylist()


def test_widen_decodes_a_dictionary_and_splits_what_outgrows_32_bit_offsets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 0, 0], pa.int8()), pa.array(["abc"]))
    conv = resolve_converter(arr.type, pa.string(), "s", widen=True)
    assert conv(arr).to_pylist() == ["abc"] * 3
    monkeypatch.setattr(convert, "OFFSET_LIMIT", 5)
    with pytest.raises(DoesNotFit) as err:
        conv(arr)
    assert (err.value.path, err.value.value_size, err.value.encoding) == ("s", 3, "utf8")
    batch = pa.RecordBatch.from_arrays([arr], names=["s"])
    schema = pa.schema([("s", pa.string())])
    out = list(convert.convert_batch(batch, [conv], schema))
    assert [b.num_rows for b in out] == [1, 1, 1]


def test_widen_casts_nested_extension_types_as_they_are() -> None:
    uuid = pa.uuid()
    values = pa.ExtensionArray.from_storage(
        uuid, pa.array([b"0" * 16, None, b"1" * 16], pa.binary(16))
    )
    arr = pa.StructArray.from_arrays([values, pa.array(["x", "y", "z"])], names=["u", "s"])
    target = pa.struct([("u", uuid), ("s", pa.large_string())])
    out = resolve_converter(arr.type, target, "t", widen=True)(arr)
    assert out.type == target
    assert out.field("u").equals(values)
