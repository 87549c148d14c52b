"""Transaction encode/decode for every operation (facts §3 "What pylance 14 writes")."""

from __future__ import annotations

import pytest

from lance_semantic.manifest.codec import decode_transaction, encode_transaction
from lance_semantic.manifest.model import (
    Append,
    CreateIndex,
    Delete,
    Merge,
    OpaqueOperation,
    Overwrite,
    Project,
    ReserveFragments,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    Update,
    UpdateConfig,
    UpdateMap,
)
from lance_semantic.schema.field import TableSchema

from . import _wire as wire
from ._samples import sample_fragment, sample_schema, txn

OPERATIONS = [
    Append((sample_fragment(0), sample_fragment(0, deleted=1))),
    Delete((sample_fragment(1, deleted=2),), (3, 4), "a > 3"),
    Overwrite((sample_fragment(0),), sample_schema(), {"k": "v"}),
    CreateIndex((b"\x0a\x00", b"\x1a\x01x"), (b"\x1a\x01y",)),
    Rewrite((RewriteGroup((sample_fragment(0), sample_fragment(1)), (sample_fragment(5),)),)),
    Merge((sample_fragment(0),), sample_schema()),
    Merge((sample_fragment(0),), sample_schema(), preserves_nullability=False),
    Restore(3),
    ReserveFragments(2),
    Update(
        removed_fragment_ids=(1,),
        updated_fragments=(sample_fragment(0, deleted=1),),
        new_fragments=(sample_fragment(0),),
        fields_for_preserving_frag_bitmap=(1,),
    ),
    Update(fields_modified=(2, 3), update_mode="rewrite_columns"),
    Project(TableSchema(sample_schema().fields)),  # Project stores no schema metadata
    UpdateConfig(config_updates=UpdateMap({"b": "1", "a": None})),
    UpdateConfig(
        table_metadata_updates=UpdateMap({"t": "1"}),
        schema_metadata_updates=UpdateMap({}, replace=True),
        field_metadata_updates={3: UpdateMap({"x": "y"}), 0: UpdateMap({"z": None}, replace=True)},
    ),
    OpaqueOperation(111, b"\x08\x01"),
    OpaqueOperation(115, b""),
    None,
]


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: type(op).__name__)
def test_round_trip(op):
    t = txn(op)
    data = encode_transaction(t)
    back = decode_transaction(data)
    assert back == t
    assert encode_transaction(back) == data


def test_header_fields():
    t = Transaction(
        7,
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        Restore(1),
        tag="v1",
        properties={"z": "1", "__lance_commit_message": "m"},
    )
    data = encode_transaction(t)
    assert wire.numbers(data) == [1, 2, 3, 4, 4, 106]
    assert wire.get(data, 1) == [7]
    assert wire.get(data, 3) == [b"v1"]
    keys = [wire.fields(e)[0][2] for e in wire.get(data, 4)]  # type: ignore[arg-type]
    assert keys == [b"z", b"__lance_commit_message"]
    assert decode_transaction(data) == t


def test_create_transaction_omits_read_version_zero():
    data = encode_transaction(txn(Append(()), read_version=0))
    assert wire.numbers(data)[0] == 2
    assert wire.get(data, 100) == [b""]  # empty Append is still present


def test_merge_and_project_set_preserves_nullability_like_pylance():
    (merge,) = wire.get(encode_transaction(txn(Merge((), sample_schema()))), 105)
    assert wire.get(merge, 4) == [1]  # type: ignore[arg-type]
    (project,) = wire.get(encode_transaction(txn(Project(sample_schema()))), 109)
    assert wire.get(project, 2) == [1]  # type: ignore[arg-type]
    assert 3 not in wire.numbers(project)  # type: ignore[arg-type]


def test_update_config_wire_shape():
    op = UpdateConfig(
        config_updates=UpdateMap({"k": "v", "gone": None}),
        field_metadata_updates={5: UpdateMap({"a": "b"}, replace=True)},
    )
    (body,) = wire.get(encode_transaction(txn(op)), 110)
    assert wire.numbers(body) == [6, 9]  # type: ignore[arg-type]
    (config,) = wire.get(body, 6)  # type: ignore[arg-type]
    entries = wire.get(config, 1)  # type: ignore[arg-type]
    assert wire.fields(entries[0]) == [(1, 2, b"k"), (2, 2, b"v")]  # type: ignore[arg-type]
    assert wire.fields(entries[1]) == [(1, 2, b"gone")]  # type: ignore[arg-type]
    (fm,) = wire.get(body, 9)  # type: ignore[arg-type]
    assert wire.get(fm, 1) == [5]  # type: ignore[arg-type]


def test_update_wire_shape():
    op = Update(removed_fragment_ids=(4,), fields_for_preserving_frag_bitmap=(1,))
    (body,) = wire.get(encode_transaction(txn(op)), 108)
    assert wire.numbers(body) == [1, 6]  # type: ignore[arg-type]  # mode 0 omitted


def test_unmodelled_operation_fields_survive():
    initial_bases = wire.length_delimited(5, wire.length_delimited(4, b"/x"))
    op = Overwrite((), sample_schema(), passthrough=initial_bases)
    t = txn(op)
    assert decode_transaction(encode_transaction(t)) == t
    deprecated = wire.length_delimited(1, b"\x0a\x01k\x12\x01v")
    uc = UpdateConfig(passthrough=deprecated)
    assert decode_transaction(encode_transaction(txn(uc))).operation == uc
    legacy_rewrite = wire.length_delimited(1, b"\x08\x03")
    rw = Rewrite((), rewritten_indices=(b"\x0a\x00",), passthrough=legacy_rewrite)
    assert decode_transaction(encode_transaction(txn(rw))).operation == rw
    mem_wal = wire.length_delimited(5, b"\x0a\x01a")
    up = Update(passthrough=mem_wal)
    assert decode_transaction(encode_transaction(txn(up))).operation == up


def test_unknown_operation_kept_in_passthrough():
    data = encode_transaction(txn(None)) + wire.length_delimited(150, b"\x08\x01")
    t = decode_transaction(data)
    assert t.operation is None
    assert encode_transaction(t) == data


def test_opaque_operation_number():
    data = encode_transaction(txn(OpaqueOperation(113, b"\x08\x01")))
    assert wire.get(data, 113) == [b"\x08\x01"]
