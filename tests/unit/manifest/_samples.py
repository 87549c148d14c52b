"""Hand-built model values for the manifest unit tests."""

from __future__ import annotations

from lance_semantic.manifest.model import (
    DataFile,
    DeletionFile,
    Fragment,
    Manifest,
    Transaction,
    WriterVersion,
)
from lance_semantic.schema.field import Field, TableSchema, freeze_metadata


def sample_schema() -> TableSchema:
    flat = [
        Field(
            "i",
            0,
            -1,
            "int64",
            nullable=False,
            encoding=1,
            metadata=freeze_metadata({"zz": b"1", "aa": b"\x00\xff"}),
        ),
        Field("s", 1, -1, "struct"),
        Field("x", 2, 1, "int32", encoding=1),
        Field("y", 3, 1, "string", encoding=2),
        Field("l", 4, -1, "list", encoding=1),
        Field("item", 5, 4, "int64", encoding=1),
        Field("d", 6, -1, "dict:string:int32:false", encoding=3, dictionary=(0, 0)),
        Field(
            "u",
            7,
            -1,
            "fixed_size_binary:16",
            encoding=1,
            extension_name="arrow.uuid",
            metadata=freeze_metadata(
                {"ARROW:extension:name": b"arrow.uuid", "ARROW:extension:metadata": b""}
            ),
        ),
        Field(
            "pk",
            8,
            -1,
            "int32",
            nullable=False,
            unenforced_primary_key=True,
            unenforced_primary_key_position=1,
            unenforced_clustering_key_position=2,
        ),
    ]
    return TableSchema.from_flat(flat, freeze_metadata({"b": b"1", "a": b"2"}))


def sample_fragment(fid: int = 0, *, deleted: int = 0) -> Fragment:
    files = (
        DataFile(f"f{fid}.lance", (0, 2, 3, 5, 6, 7, 8), range(7), 2, 2, 1234),
        DataFile(f"g{fid}.lance", [9], [0], 2, 2, 99, base_id=3),
    )
    deletion = DeletionFile("arrow", 2, 2**64 - 5, deleted) if deleted else None
    return Fragment(fid, files, 10, deletion)


def sample_manifest(version: int = 3, **changes: object) -> Manifest:
    m = Manifest(
        schema=sample_schema(),
        fragments=(sample_fragment(0, deleted=2), sample_fragment(1)),
        version=version,
        writer_version=WriterVersion("lance", "14.0.2"),
        data_format=("lance", "2.2"),
        reader_feature_flags=1,
        writer_feature_flags=9,
        max_fragment_id=1,
        transaction_file="2-abc.txn",
        config={"z": "1", "a": "2"},
        table_metadata={"t": "v"},
        timestamp_ns=1_700_000_000_123_456_789,
    )
    if changes:
        from dataclasses import replace

        m = replace(m, **changes)  # type: ignore[arg-type]
    return m


def txn(operation: object, read_version: int = 2) -> Transaction:
    return Transaction(
        read_version,
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        operation,  # type: ignore[arg-type]
        properties={"__lance_commit_message": "hi"},
    )
