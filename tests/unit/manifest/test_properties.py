"""Property tests: any model value survives encode -> decode, and re-encoding is stable."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lance_semantic.manifest.codec import (
    decode_manifest_file,
    decode_transaction,
    encode_manifest_file,
    encode_transaction,
    read_inline_transaction,
)
from lance_semantic.manifest.model import (
    Append,
    DataFile,
    Delete,
    DeletionFile,
    Fragment,
    Manifest,
    Merge,
    Overwrite,
    Project,
    Restore,
    Rewrite,
    RewriteGroup,
    Transaction,
    Update,
    UpdateConfig,
    UpdateMap,
    WriterVersion,
)
from lance_semantic.schema.field import Field, TableSchema, freeze_metadata

U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
I32 = st.integers(-(2**31), 2**31 - 1)
TEXT = st.text(max_size=8)
METADATA = st.dictionaries(TEXT, st.binary(max_size=8), max_size=3).map(freeze_metadata)


@st.composite
def schemas(draw: st.DrawFn) -> TableSchema:
    counter = iter(range(10_000))
    flat: list[Field] = []

    def add(parent: int, depth: int) -> None:
        fid = next(counter)
        flat.append(
            Field(
                name=draw(TEXT),
                id=fid,
                parent_id=parent,
                logical_type=draw(st.sampled_from(["int64", "struct", "list", "string", "json"])),
                nullable=draw(st.booleans()),
                metadata=draw(METADATA),
                extension_name=draw(st.none() | st.text(min_size=1, max_size=8)),
                encoding=draw(st.integers(0, 4)),
                dictionary=draw(st.sampled_from([None, (0, 0)])),
                unenforced_primary_key=draw(st.booleans()),
                unenforced_primary_key_position=draw(U32),
                unenforced_clustering_key_position=draw(U32),
            )
        )
        if depth < 2:
            for _ in range(draw(st.integers(0, 2))):
                add(fid, depth + 1)

    for _ in range(draw(st.integers(0, 3))):
        add(-1, 0)
    return TableSchema.from_flat(flat, draw(METADATA))


field_ids = st.lists(st.integers(0, 2**31 - 1), max_size=4).map(tuple)
data_files = st.builds(
    DataFile,
    path=TEXT,
    fields=field_ids,
    column_indices=st.lists(I32, max_size=4).map(tuple),
    file_major_version=U32,
    file_minor_version=U32,
    file_size_bytes=U64,
    base_id=st.none() | U32,
)
deletion_files = st.builds(
    DeletionFile,
    file_type=st.sampled_from(["arrow", "bitmap"]),
    read_version=U64,
    id=U64,
    num_deleted_rows=U64,
    base_id=st.none() | U32,
)
# passthrough: fields 5/9 of DataFragment (inline row ids / created-at versions)
fragment_passthrough = st.sampled_from([b"", b"\x2a\x02\x0a\x00", b"\x4a\x01\x01"])
fragments = st.builds(
    Fragment,
    id=U64,
    files=st.lists(data_files, max_size=2).map(tuple),
    physical_rows=U64,
    deletion_file=st.none() | deletion_files,
    passthrough=fragment_passthrough,
)
fragment_lists = st.lists(fragments, max_size=3).map(tuple)
str_maps = st.dictionaries(TEXT, TEXT, max_size=3)
update_maps = st.builds(
    UpdateMap, st.dictionaries(TEXT, st.none() | TEXT, max_size=3), replace=st.booleans()
)

manifests = st.builds(
    Manifest,
    schema=schemas(),
    fragments=fragment_lists,
    version=U64,
    writer_version=st.builds(WriterVersion, TEXT, TEXT, st.none() | TEXT, st.none() | TEXT).filter(
        lambda w: w != WriterVersion("", "")
    ),
    data_format=st.tuples(TEXT, TEXT),
    reader_feature_flags=U64,
    writer_feature_flags=U64,
    max_fragment_id=st.none() | U32,
    transaction_file=TEXT,
    config=str_maps,
    table_metadata=str_maps,
    timestamp_ns=st.none() | st.integers(0, 2**62),
    next_row_id=U64,
    index_section=st.none() | st.binary(max_size=16),
    max_allocated_field_id=st.none() | U64,
    # base_paths (18) and branch (20)
    passthrough=st.sampled_from([b"", b"\x92\x01\x02\x08\x01", b"\xa2\x01\x03dev"]),
)

operations = st.one_of(
    st.builds(Append, fragment_lists),
    st.builds(Delete, fragment_lists, st.lists(U64, max_size=3).map(tuple), TEXT),
    st.builds(Overwrite, fragment_lists, schemas(), str_maps),
    st.builds(
        Rewrite,
        st.lists(st.builds(RewriteGroup, fragment_lists, fragment_lists), max_size=2).map(tuple),
    ),
    st.builds(Merge, fragment_lists, schemas(), st.booleans()),
    st.builds(Restore, U64),
    st.builds(
        Update,
        st.lists(U64, max_size=2).map(tuple),
        fragment_lists,
        fragment_lists,
        st.lists(U32, max_size=2).map(tuple),
        st.lists(U32, max_size=2).map(tuple),
        st.sampled_from(["rewrite_rows", "rewrite_columns"]),
    ),
    st.builds(Project, schemas().map(lambda s: TableSchema(s.fields)), st.booleans()),
    st.builds(
        UpdateConfig,
        st.none() | update_maps,
        st.none() | update_maps,
        st.none() | update_maps,
        st.dictionaries(I32, update_maps, max_size=2),
    ),
)
transactions = st.builds(
    Transaction,
    read_version=U64,
    uuid=TEXT,
    operation=operations,
    tag=st.none() | st.text(min_size=1, max_size=5),
    properties=str_maps,
)


@settings(max_examples=150, deadline=None)
@given(manifests, st.none() | transactions)
def test_manifest_file_round_trip(manifest: Manifest, txn: Transaction | None) -> None:
    data = encode_manifest_file(manifest, txn)
    back = decode_manifest_file(data)
    assert back == manifest
    assert read_inline_transaction(data) == txn
    assert encode_manifest_file(back, txn) == data


@settings(max_examples=200, deadline=None)
@given(transactions)
def test_transaction_round_trip(txn: Transaction) -> None:
    data = encode_transaction(txn)
    back = decode_transaction(data)
    assert back == txn
    assert encode_transaction(back) == data
