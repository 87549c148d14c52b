"""Model values: coercions, helpers and derived properties."""

from __future__ import annotations

import dataclasses

import pytest

from lance_semantic.manifest.model import (
    DataFile,
    DeletionFile,
    Fragment,
    OpaqueOperation,
    Transaction,
    Update,
    UpdateMap,
    preserves_nullability,
)
from lance_semantic.schema.field import Field, TableSchema

from ._samples import sample_fragment, sample_manifest


def test_deletion_file_path():
    arrow = DeletionFile("arrow", 2, 16401587589781719586, 3)
    assert arrow.path(7) == "_deletions/7-2-16401587589781719586.arrow"
    assert DeletionFile("bitmap", 5, 1, 5000).path(0) == "_deletions/0-5-1.bin"
    with pytest.raises(ValueError):
        DeletionFile("parquet", 1, 1)  # type: ignore[arg-type]


def test_values_are_frozen_and_coerced():
    d = DataFile("a.lance", [1, 2], range(2), 2, 2, 10)
    assert d.fields == (1, 2) and d.column_indices == (0, 1)
    assert d.file_version == "2.2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.path = "b"  # type: ignore[misc]
    f = Fragment(0, [d], 10)  # type: ignore[arg-type]
    assert f.files == (d,)
    assert hash(f) == hash(Fragment(0, (d,), 10))


def test_fragment_row_counts():
    frag = sample_fragment(0, deleted=3)
    assert frag.physical_rows == 10 and frag.num_deleted_rows == 3 and frag.num_rows == 7
    assert sample_fragment(1).num_rows == 10
    assert frag.field_ids == frozenset({0, 2, 3, 5, 6, 7, 8, 9})


def test_manifest_properties():
    m = sample_manifest()
    assert m.data_storage_version == "2.2"
    assert m.schema_metadata == {"b": b"1", "a": b"2"}
    assert m.num_rows == 18
    assert m.has_deletion_files
    assert m.fragment(1).id == 1
    with pytest.raises(KeyError):
        m.fragment(9)
    with pytest.raises(TypeError):
        m.config["x"] = "y"  # type: ignore[index]


def test_update_map_apply():
    assert UpdateMap({"a": "1", "b": None}).apply({"b": "2", "c": "3"}) == {"c": "3", "a": "1"}
    assert UpdateMap({"a": "1", "b": None}, replace=True).apply({"c": "3"}) == {"a": "1"}


def test_transaction_helpers():
    t = Transaction(4, "u-u", None, properties={"__lance_commit_message": "m"})
    assert t.file_name == "4-u-u.txn"
    assert t.commit_message == "m"


def test_operation_validation():
    with pytest.raises(ValueError):
        Update(update_mode="other")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OpaqueOperation(200, b"")
    assert OpaqueOperation(113, b"").name == "clone"


def _schema(*fields: Field) -> TableSchema:
    return TableSchema.from_flat(list(fields))


A = Field("a", 0, -1, "int64")
S = Field("s", 1, -1, "struct")
SX = Field("x", 2, 1, "int64")


@pytest.mark.parametrize(
    "new, expected",
    [
        (_schema(A, S, SX), True),
        (_schema(A, S, SX, Field("n", 3, -1, "int64")), True),  # nullable addition
        (_schema(A, S, SX, Field("n", 3, -1, "int64", nullable=False)), False),
        (_schema(A, S, SX, Field("y", 3, 1, "int64", nullable=False)), False),  # in old struct
        (
            _schema(
                A, S, SX, Field("t", 3, -1, "struct"), Field("y", 4, 3, "int64", nullable=False)
            ),
            True,
        ),  # in new nullable struct
        (_schema(Field("a", 0, -1, "int64", nullable=False), S, SX), False),  # tightening
        (_schema(A, S, Field("x", 2, 1, "int64", nullable=False)), False),  # nested tightening
        (_schema(A), True),  # drop
    ],
)
def test_preserves_nullability(new, expected):
    assert preserves_nullability(_schema(A, S, SX), new) is expected


def test_relaxing_preserves_nullability():
    old = _schema(Field("a", 0, -1, "int64", nullable=False))
    assert preserves_nullability(old, _schema(A))
