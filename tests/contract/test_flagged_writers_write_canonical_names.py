"""Spec "Compatibility and Migration": *writers of flagged tables write only canonical names
in the table schema*, checked as a class: after every mutating operation, on a flagged
table that was created flagged, upgraded from a legacy table, or restored to a pre-upgrade
version, the newest manifest holds canonical names only (and valid output encodings)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from tests.fixtures.canonical import assert_canonical_names

import lance_semantic as ls

ITEM = pa.struct([("k", pa.int32()), ("v", pa.large_string())])


def rows(start: int, n: int, *, large: bool = True) -> pa.Table:
    """Every legacy alias's layout (``large=True``) or the default layouts."""
    r = range(start, start + n)
    text = pa.large_string() if large else pa.string()
    words = pa.array([f"d{i % 2}" for i in r])
    return pa.table(
        {
            "id": pa.array(r, pa.int64()),
            "s": pa.array([f"s{i}" if i % 3 else None for i in r]),
            "ls": pa.array([f"s{i}" for i in r], text),
            "dict": words.dictionary_encode() if large else words,
            "lb": pa.array([bytes([i % 256]) for i in r], pa.large_binary() if large else None),
            "ll": pa.array(
                [[i, i + 1] for i in r],
                pa.large_list(pa.int64()) if large else pa.list_(pa.int64()),
            ),
            "lls": pa.array([[{"k": i, "v": f"v{i}"}] for i in r], pa.large_list(ITEM)),
            "dec": pa.array(
                [Decimal(i) / 100 for i in r],
                pa.decimal256(10, 2) if large else pa.decimal128(10, 2),
            ),
            "dec60": pa.array([Decimal(i) for i in r], pa.decimal256(60, 0)),
            "st": pa.array([{"x": f"x{i}"} for i in r], pa.struct([("x", text)])),
            "m": pa.array([[("k", f"m{i}")] for i in r], pa.map_(pa.string(), text)),
        }
    )


def _created(uri: str) -> None:
    ls.write_dataset(rows(0, 8), uri, data_storage_version="2.3")


def _upgraded(uri: str) -> None:
    lance.write_dataset(rows(0, 8), uri)
    ls.upgrade(uri)


def _restored(uri: str) -> None:
    """pylance's legacy versions 1 and 2, the upgrade (3), then version 1 restored (4)."""
    lance.write_dataset(rows(0, 6), uri)
    lance.write_dataset(rows(6, 2), uri, mode="append")
    ls.upgrade(uri)
    ls.dataset(uri).checkout_version(1).restore()


ORIGINS: dict[str, Callable[[str], None]] = {
    "created": _created,
    "upgraded": _upgraded,
    "restored": _restored,
}


def _compact(ds: ls.Dataset) -> None:
    ds.insert(rows(20, 2, large=False))
    ds.insert(rows(22, 2))
    ds.optimize.compact_files()


OPS: dict[str, Callable[[ls.Dataset], object]] = {
    "append": lambda ds: ds.insert(rows(20, 3, large=False)),
    "overwrite": lambda ds: ls.write_dataset(rows(30, 4), ds.uri, mode="overwrite"),
    "update": lambda ds: ds.update({"ls": "'u'", "s": "concat(s, 'x')"}, where="id < 3"),
    "delete": lambda ds: ds.delete("id = 2"),
    "merge_insert": lambda ds: (
        ds.merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(rows(5, 6, large=False))
    ),
    "add_columns_sql": lambda ds: ds.add_columns({"z": "id * 2"}),
    "add_columns_data": lambda ds: ds.add_columns(
        pa.table({"n": pa.array([str(i) for i in range(ds.count_rows())], pa.large_string())})
    ),
    "add_columns_field": lambda ds: ds.add_columns(
        pa.field("e", pa.dictionary(pa.int16(), pa.string()))
    ),
    "alter_columns": lambda ds: ds.alter_columns(
        {"path": "s", "data_type": pa.large_string()},
        {"path": "dec", "data_type": pa.decimal128(10, 2)},
        {"path": "id", "data_type": pa.int32()},
        {"path": "ll", "data_type": pa.list_(pa.int32())},
    ),
    "drop_columns": lambda ds: ds.drop_columns(["lb", "st.x"]),
    "set_output_encoding": lambda ds: ds.set_output_encoding("m.value", "utf8_view"),
    "compaction": _compact,
    "upgrade": lambda ds: ls.upgrade(ds.uri),
    "restore": lambda ds: ds.checkout_version(1).restore(),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("origin", list(ORIGINS))
def test_flagged_newest_manifest_has_only_canonical_names_after(
    tmp_path: Path, origin: str, op: str
) -> None:
    uri = str(tmp_path / "t")
    ORIGINS[origin](uri)
    assert_canonical_names(uri)
    before = ls.dataset(uri)
    OPS[op](before)
    assert_canonical_names(uri)
    after = ls.dataset(uri)
    assert after.semantic_types
    assert after.to_table().num_rows == after.count_rows()
    if op not in ("overwrite", "alter_columns", "drop_columns", "set_output_encoding"):
        # the read types of the columns that were there stay as they were
        assert [after.schema.field(n).type for n in before.schema.names] == before.schema.types


def test_every_operation_in_sequence_keeps_canonical_names(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    _restored(uri)
    ds = ls.dataset(uri)
    # the appending operations before those that change the columns they write
    order = [*SEQUENCE, "append"]
    assert set(order) == set(OPS) - {"overwrite"}
    for name in order:
        OPS[name](ds)
        ds = ls.dataset(uri)
        assert_canonical_names(uri)
    assert ds.semantic_types


SEQUENCE = [
    "append",
    "update",
    "delete",
    "merge_insert",
    "set_output_encoding",
    "compaction",
    "upgrade",
    "add_columns_sql",
    "add_columns_data",
    "add_columns_field",
    "alter_columns",
    "drop_columns",
    "restore",
]


def test_restore_of_a_pre_upgrade_version_reads_back_its_types(tmp_path: Path) -> None:
    """The rewritten schema of the restored legacy version reads back exactly what pylance
    read at that version: the upgrade mapping, applied by the restore."""
    uri = str(tmp_path / "t")
    lance.write_dataset(rows(0, 6), uri)
    want = lance.dataset(uri).to_table()
    ds = ls.upgrade(uri)
    ds.alter_columns({"path": "ls", "data_type": pa.string()})  # another encoding since
    restored = ls.dataset(uri).checkout_version(1).restore()
    assert_canonical_names(uri)
    got = ls.dataset(uri).to_table()
    assert got.schema == want.schema
    assert got.equals(want)
    # the very schema the upgrade commit (version 2) wrote for version 1
    assert restored.semantic_schema == ls.dataset(uri, version=2).semantic_schema
    # a flagged version is restored as it is: its output encodings are its own
    again = ls.dataset(uri).checkout_version(3).restore()
    assert again.semantic_schema == ls.dataset(uri, version=3).semantic_schema
    assert again.semantic_schema.field("ls").output_encoding is None
    assert_canonical_names(uri)
