"""Schema evolution on legacy tables against stock pylance 14.0.2 as the oracle.

Each test copies one pylance-written table (several fragments, deletion files) twice, runs
the same ``add_columns`` / ``drop_columns`` / ``alter_columns`` call through ``lance`` on one
copy and through ``lance_semantic`` on the other, and compares: the field records (ids,
parents, names, logical types, nullability, metadata), every fragment's DataFiles
(``fields``, ``column_indices``, file version), the committed operation and its
preserves-nullability bit, and the rows and Arrow types each library reads. pylance then
reads our result, appends to it, and we read that (and the other way round).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.commit.committer import load_manifest
from lance_semantic.dataset.evolution.alter import (
    ColumnNotFoundError,
    SchemaEvolutionError,
    add_columns,
)
from lance_semantic.manifest.codec import decode_transaction
from lance_semantic.storage.object_store import open_store

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2"]

EXT = {"ARROW:extension:name": "example.thing", "ARROW:extension:metadata": '{"u":1}'}
_EXTENSION_KEYS = {"ARROW:extension:name", "ARROW:extension:metadata"}

Op = Callable[[Any], Any]

# ---- the table and what is compared ---------------------------------------------------------


def _table(n: int = 10, start: int = 0) -> pa.Table:
    r = range(start, start + n)
    schema = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("s", pa.struct([("x", pa.int64()), ("y", pa.string())])),
            pa.field("b", pa.string(), metadata={"note": "kept"}),
            pa.field("nn", pa.int64(), nullable=False),
            pa.field("l", pa.list_(pa.int32())),
            pa.field("d", pa.decimal128(10, 2)),
            pa.field("e", pa.int32(), metadata=EXT),
        ],
        metadata={"owner": "tests"},
    )
    return pa.table(
        {
            "a": [None if i == 7 else i for i in r],
            "s": [{"x": i * 10, "y": f"y{i}"} for i in r],
            "b": [f"b{i}" for i in r],
            "nn": [i * 30 for i in r],
            "l": [None if i % 4 == 3 else list(range(i % 3)) for i in r],
            "d": [Decimal(i) / 4 for i in r],
            "e": list(r),
        },
        schema=schema,
    )


def _base(tmp_path: Path, version: str) -> tuple[str, str]:
    """Two copies of one pylance table: 3 fragments, deletion files in two of them."""
    base = tmp_path / "base"
    lance.write_dataset(_table(), base, data_storage_version=version, max_rows_per_file=4)
    lance.dataset(base).delete("a = 1 or nn = 150 or nn = 180")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    return str(ours), str(theirs)


def _fields(uri: str) -> list[tuple[Any, ...]]:
    m = load_manifest(open_store(uri))
    return [
        (f.id, f.parent_id, f.name, f.logical_type, f.nullable, dict(f.metadata)) for f in m.schema
    ]


def _files(uri: str) -> list[tuple[Any, ...]]:
    m = load_manifest(open_store(uri))
    return [
        (
            f.id,
            f.physical_rows,
            [
                (d.fields, d.column_indices, d.file_major_version, d.file_minor_version)
                for d in f.files
            ],
            f.deletion_file is not None,
        )
        for f in m.fragments
    ]


def _operation(uri: str) -> tuple[str, bool | None]:
    m = load_manifest(open_store(uri))
    with open(os.path.join(uri, "_transactions", m.transaction_file), "rb") as fh:
        op = decode_transaction(fh.read()).operation
    return type(op).__name__, getattr(op, "preserves_nullability", None)


def _lance_ids(uri: str) -> list[tuple[int, str]]:
    def walk(fields: Any, prefix: str) -> list[tuple[int, str]]:
        out = []
        for f in fields:
            out.append((f.id(), prefix + f.name()))
            out += walk(f.children(), prefix + f.name() + ".")
        return out

    return walk(lance.dataset(uri).lance_schema.fields(), "")


def _same_rows(ours: pa.Table, theirs: pa.Table, *, field_metadata: bool = True) -> None:
    if field_metadata:
        assert ours.schema.equals(theirs.schema, check_metadata=True), (ours.schema, theirs.schema)
    else:
        assert [(f.name, f.type, f.nullable) for f in ours.schema] == [
            (f.name, f.type, f.nullable) for f in theirs.schema
        ]
    assert ours.to_pylist() == theirs.to_pylist()


def _data_files(uri: str) -> set[str]:
    return set(os.listdir(os.path.join(uri, "data")))


@dataclass(frozen=True)
class Result:
    """Our table after the operation (before the appends of the round trip)."""

    uri: str
    operation: tuple[str, bool | None]
    files: list[tuple[Any, ...]]
    schema: pa.Schema
    semantic_schema: ls.TableSchema


def _compare(
    tmp_path: Path,
    version: str,
    op: Op,
    *,
    retyped: tuple[str, ...] = (),
    their_op: Op | None = None,
) -> Result:
    """Run ``op`` on both copies and compare everything.

    ``retyped`` names the (new) columns whose type changed and that carried extension keys:
    we keep those (the contract keeps extension metadata through every rewrite), pylance 14
    drops them. Other field metadata goes with a type change in both (legacy = pylance).
    """
    ours, theirs = _base(tmp_path, version)
    original = {f[0]: f[5] for f in _fields(ours)}
    op(ls.dataset(ours))
    (their_op or op)(lance.dataset(theirs))
    mine, their = _fields(ours), _fields(theirs)
    assert [f[:5] for f in mine] == [f[:5] for f in their]
    for m, t in zip(mine, their, strict=True):
        if m[2] in retyped:
            assert t[5] == {} and m[5]
            assert set(m[5]) <= _EXTENSION_KEYS
            assert any(m[5].items() <= o.items() for o in original.values())
        else:
            assert m[5] == t[5]
    assert _lance_ids(ours) == _lance_ids(theirs)
    assert _files(ours) == _files(theirs)
    assert _operation(ours) == _operation(theirs)
    assert ls.dataset(ours).version == lance.dataset(theirs).version
    expected = lance.dataset(theirs).to_table()
    _same_rows(lance.dataset(ours).to_table(), expected, field_metadata=not retyped)
    _same_rows(ls.dataset(ours).to_table(), lance.dataset(ours).to_table())
    assert ls.dataset(ours).count_rows() == lance.dataset(theirs).count_rows()
    done = ls.dataset(ours)
    result = Result(ours, _operation(ours), _files(ours), done.schema, done.semantic_schema)
    _append_both_ways(ours)
    return result


def _append_both_ways(uri: str) -> None:
    """pylance appends to our result and we read it; we append and pylance reads it."""
    extra = lance.dataset(uri).to_table().slice(0, 3)
    lance.write_dataset(extra, uri, mode="append")
    _same_rows(ls.dataset(uri).to_table(), lance.dataset(uri).to_table())
    ls.dataset(uri).insert(extra)
    _same_rows(lance.dataset(uri).to_table(), ls.dataset(uri).to_table())
    assert ls.dataset(uri).count_rows() == lance.dataset(uri).count_rows()


# ---- add_columns -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_add_columns_sql(version: str, tmp_path: Path) -> None:
    """Lance's literal coercion types ``a * 2`` as int32; ``'lit'`` and ``nn + 1`` are
    non-nullable (field 4 of the Merge is then false); struct members and strings work."""
    res = _compare(
        tmp_path,
        version,
        lambda ds: ds.add_columns(
            {"twice": "a * 2", "label": "concat(s.y, '!')", "k": "'lit'", "n1": "nn + 1"}
        ),
    )
    assert res.schema.field("twice").type == pa.int32()
    assert not res.schema.field("k").nullable and not res.schema.field("n1").nullable
    assert res.operation == ("Merge", False)
    assert all(len(f[2]) == 2 for f in res.files)  # one new data file per fragment


@pytest.mark.parametrize("version", VERSIONS)
def test_add_all_null_columns_is_metadata_only(version: str, tmp_path: Path) -> None:
    res = _compare(
        tmp_path,
        version,
        lambda ds: ds.add_columns([pa.field("f", pa.float64()), pa.field("t", pa.string())]),
    )
    assert all(len(f[2]) == 1 for f in res.files)  # no data file written
    assert res.operation == ("Merge", True)


def test_add_null_casts_are_metadata_only_like_pylance(tmp_path: Path) -> None:
    res = _compare(tmp_path, "2.2", lambda ds: ds.add_columns({"z": "CAST(NULL AS bigint)"}))
    assert res.schema.field("z").type == pa.int64()
    assert all(len(f[2]) == 1 for f in res.files)


def test_add_columns_from_a_batch_function(tmp_path: Path) -> None:
    def udf(batch: pa.RecordBatch) -> pa.RecordBatch:
        ten = pa.array([v * 10 if v is not None else None for v in batch["a"].to_pylist()])
        return pa.record_batch({"ten": ten, "big": batch["b"].cast(pa.large_string())})

    res = _compare(tmp_path, "2.2", lambda ds: ds.add_columns(udf, read_columns=["a", "b"]))
    assert res.schema.field("big").type == pa.large_string()


def test_add_columns_from_data_aligned_with_live_rows(tmp_path: Path) -> None:
    values = pa.table({"z": pa.array(range(7), pa.int64())})  # 10 rows, 3 deleted
    _compare(tmp_path, "2.2", lambda ds: ds.add_columns(values))


def test_add_columns_in_small_batches_around_deleted_rows(tmp_path: Path) -> None:
    """Batches of 2 rows: some batches are wholly deleted, and deleted rows are never
    evaluated (``10 / (a - 1)`` would divide by zero on the deleted row ``a = 1``)."""
    exprs = {"k": "'lit'", "q": "10 / (a - 1)", "n1": "nn + 1"}
    res = _compare(
        tmp_path,
        "2.2",
        lambda ds: add_columns(ds._snapshot(), exprs, batch_size=2),
        their_op=lambda ds: ds.add_columns(exprs, batch_size=2),
    )
    assert res.operation == ("Merge", False)


def test_add_columns_keeps_row_order_in_big_batches(tmp_path: Path) -> None:
    """One batch of 20,000 rows: DataFusion must not repartition it out of row order."""
    n = 20_000
    lance.write_dataset(pa.table({"a": pa.array(range(n), pa.int64())}), tmp_path / "p")
    shutil.copytree(tmp_path / "p", tmp_path / "o")
    snapshot = ls.dataset(str(tmp_path / "o"))._snapshot()
    add_columns(snapshot, {"b": "a * 2", "c": "a > 3"}, batch_size=n)
    lance.dataset(tmp_path / "p").add_columns({"b": "a * 2", "c": "a > 3"})
    ours = lance.dataset(tmp_path / "o").to_table()
    assert ours.column("b").to_pylist() == [2 * i for i in range(n)]
    _same_rows(ours, lance.dataset(tmp_path / "p").to_table())


def test_add_columns_after_alter_gets_ids_past_every_data_file(tmp_path: Path) -> None:
    """Ids come from the schema and every DataFile: after retyping ``a`` (id 0 -> 10) and
    dropping it, id 0 still sits in the first data file but 10 left with its files, so
    ``c`` gets 10 (pylance agrees)."""

    def op(ds: Any) -> None:
        ds.alter_columns({"path": "a", "data_type": pa.int64()})
        ds.drop_columns(["a"])
        ds.add_columns({"c": "nn * 2"})

    res = _compare(tmp_path, "2.2", op)
    assert res.semantic_schema.field("c").id == 10


# ---- drop_columns ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "columns", [["b"], ["s.x"], ["s.x", "s.y"], ["a", "l", "e"], ["l.item"]], ids=str
)
def test_drop_columns(version: str, columns: list[str], tmp_path: Path) -> None:
    res = _compare(tmp_path, version, lambda ds: ds.drop_columns(columns))
    assert res.operation == ("Project", True)


def test_drop_then_add_keeps_ids_of_files_that_still_hold_them(tmp_path: Path) -> None:
    def op(ds: Any) -> None:
        ds.add_columns({"c": "a + nn"})
        ds.drop_columns(["c", "b"])  # c's data files go, b stays in the first file

    res = _compare(tmp_path, "2.2", op)
    assert all(len(f[2]) == 1 for f in res.files)


# ---- alter_columns ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_rename_and_nullability_are_a_project(version: str, tmp_path: Path) -> None:
    res = _compare(
        tmp_path,
        version,
        lambda ds: ds.alter_columns(
            {"path": "a", "name": "A"},
            {"path": "nn", "nullable": True},
            {"path": "e", "name": "E"},
            {"path": "b", "nullable": False},
        ),
    )
    assert res.operation == ("Project", False)  # b made non-nullable
    assert res.semantic_schema.field("E").extension_name == "example.thing"


def test_rename_nested_field(tmp_path: Path) -> None:
    _compare(tmp_path, "2.2", lambda ds: ds.alter_columns({"path": "s.x", "name": "xx"}))


def test_rename_nested_field_metadata_matches_pylance(tmp_path: Path) -> None:
    ours, theirs = _base(tmp_path, "2.2")
    for ds in (ls.dataset(ours), lance.dataset(theirs)):
        ds.alter_columns({"path": "s.x", "name": "xx"})
    assert _fields(ours) == _fields(theirs)
    assert _files(ours) == _files(theirs)
    _same_rows(lance.dataset(ours).to_table(), lance.dataset(theirs).to_table())


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "alterations",
    [
        [{"path": "a", "data_type": pa.int64()}],
        [
            {"path": "l", "data_type": pa.large_list(pa.int16())},
            {"path": "a", "data_type": pa.int16()},
        ],
        [{"path": "l", "data_type": pa.large_list(pa.int64())}],
        [{"path": "d", "data_type": pa.decimal256(20, 4)}],
        [{"path": "nn", "data_type": pa.int32()}],  # non-nullable: Merge field 4 false
        [{"path": "a", "data_type": pa.int32(), "name": "same_type", "nullable": True}],
        [{"path": "d", "data_type": pa.decimal128(12, 2)}, {"path": "a", "name": "A"}],
    ],
    ids=lambda a: "+".join(f"{x['path']}:{x.get('data_type', x.get('name'))}" for x in a),
)
def test_alter_type_rewrites_under_new_field_ids(
    version: str, alterations: list[dict[str, Any]], tmp_path: Path
) -> None:
    res = _compare(tmp_path, version, lambda ds: ds.alter_columns(*alterations))
    assert res.operation[0] == "Merge"


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("path", ["s.x", "l.item"])
def test_alter_type_of_nested_field(version: str, path: str, tmp_path: Path) -> None:
    res = _compare(
        tmp_path, version, lambda ds: ds.alter_columns({"path": path, "data_type": pa.int16()})
    )
    assert len(res.files[0][2]) == 2


def test_nested_type_change_on_2_0_is_refused(tmp_path: Path) -> None:
    """pylance 14 commits it (tombstoning the struct's id in the old files) and then cannot
    read the table; we refuse it and commit nothing."""
    ours, _ = _base(tmp_path, "2.0")
    with pytest.raises(ls.errors.NotSupportedYetError):
        ls.dataset(ours).alter_columns({"path": "s.y", "data_type": pa.large_string()})
    assert ls.dataset(ours).version == 2


def test_alter_type_keeps_extension_metadata_where_pylance_drops_it(tmp_path: Path) -> None:
    """The contract keeps extension field metadata through a type change; pylance 14 drops
    it. Plain field metadata goes, as in pylance (``b``'s note). Everything else matches."""
    alteration = [
        {"path": "e", "data_type": pa.int64()},
        {"path": "b", "data_type": pa.large_string(), "name": "B"},
    ]
    res = _compare(tmp_path, "2.2", lambda ds: ds.alter_columns(*alteration), retyped=("e",))
    field = res.semantic_schema.field("e")
    assert field.extension_name == "example.thing"
    assert dict(field.metadata) == {k: v.encode() for k, v in EXT.items()}
    assert dict(res.semantic_schema.field("B").metadata) == {}
    assert res.semantic_schema.field("B").logical_type == "large_string"


@pytest.mark.parametrize("version", VERSIONS)
def test_alter_to_a_dictionary(version: str, tmp_path: Path) -> None:
    dictionary = pa.dictionary(pa.int16(), pa.string())
    res = _compare(
        tmp_path,
        version,
        lambda ds: ds.alter_columns({"path": "b", "data_type": dictionary}),
    )
    assert res.schema.field("b").type == dictionary
    # and pylance reads our result with the metadata
    assert lance.dataset(res.uri).schema.field("e").metadata == {
        k.encode(): v.encode() for k, v in EXT.items()
    }


# ---- errors: nothing committed ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "error"),
    [
        (lambda ds: ds.drop_columns(["nope"]), ColumnNotFoundError),
        (lambda ds: ds.drop_columns(["s.nope"]), ColumnNotFoundError),
        (lambda ds: ds.alter_columns({"path": "nope", "name": "x"}), ColumnNotFoundError),
        (lambda ds: ds.drop_columns(["a", "s", "b", "nn", "l", "d", "e"]), SchemaEvolutionError),
        (
            lambda ds: ds.alter_columns({"path": "a", "data_type": pa.string()}),
            SchemaEvolutionError,
        ),
        (
            lambda ds: ds.alter_columns({"path": "a", "data_type": pa.float64()}),
            SchemaEvolutionError,
        ),
        (lambda ds: ds.alter_columns({"path": "s", "data_type": pa.int64()}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "nn", "data_type": pa.int8()}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "a", "nullable": False}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "a", "name": "b"}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "a", "name": "x.y"}), SchemaEvolutionError),
        (lambda ds: ds.alter_columns({"path": "a"}), SchemaEvolutionError),
        (
            lambda ds: ds.alter_columns(
                {"path": "b", "nullable": False}, {"path": "a", "data_type": pa.int64()}
            ),
            SchemaEvolutionError,
        ),
        (lambda ds: ds.add_columns({"a": "nn"}), SchemaEvolutionError),
        (lambda ds: ds.add_columns(pa.field("b", pa.string())), SchemaEvolutionError),
        (lambda ds: ds.add_columns({"c": "a + 1.5"}), ls.errors.InvalidExpressionError),
        (lambda ds: ds.add_columns({"c": "nosuch + 1"}), ls.errors.InvalidExpressionError),
        (
            lambda ds: ds.add_columns(pa.field("c", pa.int64(), nullable=False)),
            SchemaEvolutionError,
        ),
    ],
)
def test_errors_commit_nothing_and_pylance_refuses_too(
    op: Op, error: type[Exception], tmp_path: Path
) -> None:
    ours, theirs = _base(tmp_path, "2.2")
    before, files = ls.dataset(ours).version, _data_files(ours)
    with pytest.raises(error) as info:
        op(ls.dataset(ours))
    assert isinstance(info.value, ls.errors.LanceSemanticError)
    assert ls.dataset(ours).version == before
    assert _data_files(ours) == files  # files written before the failure are removed
    with pytest.raises((OSError, ValueError)):
        op(lance.dataset(theirs))


def test_unknown_column_error_names_it(tmp_path: Path) -> None:
    ours, _ = _base(tmp_path, "2.2")
    with pytest.raises(KeyError) as info:
        ls.dataset(ours).alter_columns({"path": "s.zz", "name": "q"})
    assert isinstance(info.value, ColumnNotFoundError)
    assert info.value.field_path == "s.zz"
    assert "s.zz" in str(info.value)
