"""Our manifest codec against real pylance 14 tables (facts §2, §3, §6, §8).

* every manifest and ``.txn`` pylance writes decodes, and re-encodes to the same bytes
  (whole file, hence also the Manifest and Transaction regions);
* a manifest we build is opened by pylance, and pylance commits on top of it, including a
  concurrent commit that must read our transaction to rebase;
* pylance refuses a table carrying :data:`FLAG_SEMANTIC_TYPES`.
"""

from __future__ import annotations

import struct
import time
import uuid
from dataclasses import replace
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from lance_semantic.manifest import flags  # noqa: E402
from lance_semantic.manifest.codec import (  # noqa: E402
    decode_manifest_file,
    decode_transaction,
    encode_manifest_file,
    encode_transaction,
    manifest_region,
    read_inline_transaction,
)
from lance_semantic.manifest.model import (  # noqa: E402
    Manifest,
    Merge,
    Project,
    Transaction,
    UpdateConfig,
    UpdateMap,
    preserves_nullability,
)

pytestmark = pytest.mark.interop

U64_MAX = 2**64 - 1


def _manifest_path(root: Path, version: int) -> Path:
    return root / "_versions" / f"{U64_MAX - version:020d}.manifest"


def _table(n: int, start: int = 0) -> pa.Table:
    r = range(start, start + n)
    schema = pa.schema(
        [
            pa.field("i", pa.int64(), nullable=False, metadata={"k1": "v1", "zz": "2", "aa": "3"}),
            pa.field("s", pa.struct([("x", pa.int32()), ("y", pa.string())])),
            pa.field("l", pa.list_(pa.int64())),
            pa.field("ls", pa.list_(pa.struct([("a", pa.int64())]))),
            pa.field("m", pa.map_(pa.string(), pa.int64())),
            pa.field("d", pa.dictionary(pa.int32(), pa.string())),
            pa.field("u", pa.uuid()),
            pa.field("v", pa.list_(pa.float32(), 4)),
            pa.field("j", pa.json_()),
        ],
        metadata={"b": "1", "a": "2", "c": "3", "zzz": "4", "k": "5"},
    )
    return pa.table(
        {
            "i": pa.array(list(r), pa.int64()),
            "s": [{"x": i, "y": f"y{i}"} if i % 3 else None for i in r],
            "l": [[i, i + 1] if i % 2 else [] for i in r],
            "ls": [[{"a": i}] for i in r],
            "m": [[("k", i)] for i in r],
            "d": pa.array([f"d{i % 3}" for i in r]).dictionary_encode(),
            "u": pa.array([i.to_bytes(16, "little") for i in r], pa.binary(16)).cast(pa.uuid()),
            "v": pa.array([[float(i)] * 4 for i in r], pa.list_(pa.float32(), 4)),
            "j": pa.array(['{"b": 1, "a": [true, null]}'] * n, pa.json_()),
        },
        schema=schema,
    )


def _small(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "a": pa.array(range(start, start + n), pa.int64()),
            "b": [f"s{i}" for i in range(start, start + n)],
        }
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pylance")
    out: dict[str, Path] = {}

    root = base / "types"
    ds = lance.write_dataset(_table(20), root, max_rows_per_file=8)
    ds = lance.write_dataset(_table(5, 20), root, mode="append")
    ds.delete("i = 2 or i = 21")
    ds.add_columns({"n": "i * 2"})
    ds.update({"n": "0"}, where="i < 3")
    ds.update_config({"x.a": "1", "x.b": "2"})
    ds.delete_config_keys(["x.a"])
    ds.drop_columns(["n"])
    ds.alter_columns({"path": "l", "name": "l2"})
    ds.delete("i >= 0 and i < 8")  # removes a whole fragment
    out["types"] = root

    root = base / "ops"
    ds = lance.write_dataset(_small(100), root, max_rows_per_file=30)
    ds.create_scalar_index("a", "BTREE")
    ds = lance.dataset(root)
    ds.merge_insert("a").when_matched_update_all().when_not_matched_insert_all().execute(
        _small(10, 95)
    )
    ds = lance.dataset(root)
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    ds = lance.dataset(root)
    ds.alter_columns({"path": "b", "data_type": pa.large_string()})
    ds.update_schema_metadata({"sm": "1"})
    lance.dataset(root).checkout_version(2).restore()
    lance.write_dataset(_small(5), root, mode="overwrite")
    lance.write_dataset(_small(5), root, mode="append", commit_message="hello")
    out["ops"] = root

    root = base / "rowids"
    ds = lance.write_dataset(_small(10), root, enable_stable_row_ids=True)
    ds = lance.write_dataset(_small(10, 10), root, mode="append")
    ds.delete("a = 3")
    ds.update({"b": "'u'"}, where="a < 2")
    out["rowids"] = root

    root = base / "legacy"
    t = pa.table({"d": pa.array(["x", "y", "x"]).dictionary_encode(), "i": [1, 2, 3]})
    lance.write_dataset(t, root, data_storage_version="legacy")
    lance.write_dataset(t, root, mode="append")
    out["legacy"] = root

    for version in ("2.0", "2.1"):
        root = base / f"v{version}"
        lance.write_dataset(_small(3), root, data_storage_version=version)
        out[f"v{version}"] = root
    return out


def _manifests(root: Path) -> list[Path]:
    return sorted((root / "_versions").glob("*.manifest"), reverse=True)


@pytest.mark.parametrize("name", ["types", "ops", "rowids", "legacy", "v2.0", "v2.1"])
def test_pylance_manifests_reencode_byte_for_byte(tables: dict[str, Path], name: str) -> None:
    root = tables[name]
    paths = _manifests(root)
    assert paths
    for path in paths:
        data = path.read_bytes()
        manifest = decode_manifest_file(data, str(path))
        assert _manifest_path(root, manifest.version) == path
        txn = read_inline_transaction(data, str(path))
        assert txn is not None  # pylance 14 always embeds the transaction (field 23)
        txn_file = (root / "_transactions" / manifest.transaction_file).read_bytes()
        assert encode_transaction(txn) == txn_file
        assert decode_transaction(txn_file) == txn
        again = encode_manifest_file(manifest, txn)
        start, end = manifest_region(data)
        start2, end2 = manifest_region(again)
        assert again[start2:end2] == data[start:end], f"manifest region of {path.name}"
        assert again == data, f"whole file {path.name}"


def test_pylance_operations_decode_as_expected(tables: dict[str, Path]) -> None:
    ops = {}
    for path in _manifests(tables["types"]):
        data = path.read_bytes()
        m = decode_manifest_file(data)
        t = read_inline_transaction(data)
        assert t is not None
        ops[m.version] = (m, t)
    assert [type(ops[v][1].operation).__name__ for v in sorted(ops)] == [
        "Overwrite",
        "Append",
        "Delete",
        "Merge",
        "Update",
        "UpdateConfig",
        "UpdateConfig",
        "Project",
        "Project",
        "Delete",
    ]
    merge = ops[4][1].operation
    assert isinstance(merge, Merge)
    # "n" = i * 2 is non-nullable (i is): pylance clears preserves_nullability
    assert not merge.preserves_nullability
    assert merge.preserves_nullability == preserves_nullability(ops[3][0].schema, merge.schema)
    project = ops[8][1].operation
    assert isinstance(project, Project) and project.preserves_nullability
    delete_keys = ops[7][1].operation
    assert isinstance(delete_keys, UpdateConfig)
    assert delete_keys.config_updates == UpdateMap({"x.a": None})
    m1 = ops[1][0]
    assert m1.max_fragment_id == 2 and m1.data_storage_version == "2.2"
    assert m1.writer_version.library == "lance"
    assert m1.writer_version.version == lance.__version__  # the pylance that wrote it
    by_path = {f.path: f for f in m1.schema}
    assert by_path["d"].dictionary == (0, 0)
    assert by_path["u"].extension_name == "arrow.uuid"
    assert by_path["j"].extension_name == "lance.json"
    assert by_path["i"].metadata == {"k1": b"v1", "zz": b"2", "aa": b"3"}
    assert dict(m1.schema.metadata) == {"b": b"1", "a": b"2", "c": b"3", "zzz": b"4", "k": b"5"}
    assert ops[3][0].reader_feature_flags == flags.FLAG_DELETION_FILES
    assert ops[6][0].writer_feature_flags & flags.FLAG_TABLE_CONFIG
    for m, _ in ops.values():
        flags.check_readable(m)
        flags.check_writable(m)


def _commit_by_hand(root: Path, base: Manifest, config: dict[str, str]) -> Manifest:
    """Publish version base.version + 1 with an UpdateConfig transaction built by us."""
    txn = Transaction(
        read_version=base.version,
        uuid=str(uuid.uuid4()),
        operation=UpdateConfig(config_updates=UpdateMap(config)),
    )
    new = replace(
        base,
        version=base.version + 1,
        config={**base.config, **config},
        transaction_file=txn.file_name,
        timestamp_ns=time.time_ns(),
    )
    reader, writer = flags.next_flags(base.reader_feature_flags, base.writer_feature_flags, new)
    new = replace(new, reader_feature_flags=reader, writer_feature_flags=writer)
    (root / "_transactions" / txn.file_name).write_bytes(encode_transaction(txn))
    _manifest_path(root, new.version).write_bytes(encode_manifest_file(new, txn))
    return new


def test_pylance_reads_and_commits_after_our_manifest(tmp_path: Path) -> None:
    root = tmp_path / "t"
    ds = lance.write_dataset(_table(10), root)
    ds.delete("i = 4")
    v2 = lance.dataset(root)
    assert v2.version == 2
    base = decode_manifest_file(_manifest_path(root, 2).read_bytes())

    ours = _commit_by_hand(root, base, {"ls.key": "1"})
    ds = lance.dataset(root)
    assert ds.version == 3
    assert ds.config() == {"ls.key": "1"}
    assert ds.to_table() == v2.to_table()
    assert ds.count_rows() == 9

    # a concurrent pylance commit read version 2: to rebase it reads our transaction
    frags = lance.fragment.write_fragments(_table(3, 100), root)
    lance.LanceDataset.commit(root, lance.LanceOperation.Append(frags), read_version=2)
    ds = lance.dataset(root)
    assert ds.version == 4 and ds.count_rows() == 12
    assert ds.config() == {"ls.key": "1"}

    # and a plain pylance append on top
    ds = lance.write_dataset(_table(2, 200), root, mode="append")
    assert ds.version == 5 and ds.count_rows() == 14
    latest = decode_manifest_file(_manifest_path(root, 5).read_bytes())
    assert latest.config == ours.config
    assert latest.writer_feature_flags & flags.FLAG_TABLE_CONFIG


def test_pylance_refuses_semantic_types_flag(tmp_path: Path) -> None:
    root = tmp_path / "t"
    lance.write_dataset(_small(4), root)
    base = decode_manifest_file(_manifest_path(root, 1).read_bytes())
    flagged = replace(
        base,
        version=2,
        reader_feature_flags=base.reader_feature_flags | flags.FLAG_SEMANTIC_TYPES,
        writer_feature_flags=base.writer_feature_flags | flags.FLAG_SEMANTIC_TYPES,
    )
    _manifest_path(root, 2).write_bytes(encode_manifest_file(flagged))
    with pytest.raises((OSError, ValueError), match="cannot be read"):
        lance.dataset(root).to_table()
    # our own checks accept it
    flags.check_readable(flagged)
    flags.check_writable(flagged)


def test_pylance_refuses_to_write_with_writer_only_semantic_flag(tmp_path: Path) -> None:
    root = tmp_path / "t"
    lance.write_dataset(_small(4), root)
    base = decode_manifest_file(_manifest_path(root, 1).read_bytes())
    flagged = replace(
        base,
        version=2,
        writer_feature_flags=base.writer_feature_flags | flags.FLAG_SEMANTIC_TYPES,
    )
    _manifest_path(root, 2).write_bytes(encode_manifest_file(flagged))
    assert lance.dataset(root).count_rows() == 4  # reading still works
    with pytest.raises((OSError, ValueError), match="cannot be written"):
        lance.write_dataset(_small(1), root, mode="append")


def test_minimal_manifest_without_transaction_is_accepted(tmp_path: Path) -> None:
    root = tmp_path / "t"
    lance.write_dataset(_small(4), root)
    base = decode_manifest_file(_manifest_path(root, 1).read_bytes())
    data = encode_manifest_file(replace(base, version=2, transaction_file=""))
    assert struct.unpack_from("<q", data, len(data) - 16)[0] == 0
    _manifest_path(root, 2).write_bytes(data)
    ds = lance.dataset(root)
    assert ds.version == 2 and ds.count_rows() == 4
    ds = lance.write_dataset(_small(1), root, mode="append")
    assert ds.version == 3 and ds.count_rows() == 5


def test_preserves_nullability_matches_pylance(tmp_path: Path) -> None:
    root = tmp_path / "t"
    t = pa.table(
        {
            "a": pa.array([1, 2, 3], pa.int64()),
            "b": pa.array([1, 2, 3], pa.int64()),
            "s": pa.array([{"x": 1}] * 3),
        }
    )
    t = t.cast(pa.schema([pa.field("a", pa.int64(), nullable=False), *list(t.schema)[1:]]))
    ds = lance.write_dataset(t, root)
    ds.add_columns({"n1": "a * 2"})  # non-nullable addition
    ds.add_columns({"n2": "b * 2"})  # nullable addition
    ds.add_columns(pa.field("st", pa.struct([pa.field("x", pa.int64(), nullable=False)])))
    ds.alter_columns({"path": "b", "nullable": False})  # tightening
    ds.alter_columns({"path": "s.x", "nullable": False})  # nested tightening
    ds.alter_columns({"path": "b", "nullable": True})  # relaxing
    ds.drop_columns(["n1"])
    ds.alter_columns({"path": "n2", "data_type": pa.int32()})
    seen = []
    previous = None
    for path in sorted((root / "_versions").glob("*.manifest"), reverse=True):
        data = path.read_bytes()
        m = decode_manifest_file(data)
        op = read_inline_transaction(data).operation  # type: ignore[union-attr]
        if isinstance(op, (Merge, Project)):
            assert previous is not None
            assert preserves_nullability(previous.schema, op.schema) == op.preserves_nullability
            seen.append(op.preserves_nullability)
        previous = m
    assert seen == [False, True, True, False, False, True, True, True]
