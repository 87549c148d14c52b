"""merge_insert over the grid of sources and clauses, twinned with pylance 14.0.2.

A pylance-written legacy table (three fragments; ``nn`` non-nullable) is copied; pylance
runs a merge on one copy and lance-semantic on the other, for every combination of

* the key: ``id`` alone, or the compound ``(a, b)``;
* the source's columns: all of them, a subset (the nullable ``s`` and ``st`` missing), or
  without the non-nullable ``nn``;
* key repetitions in the source: none, a repeated key that matches a target row, a repeated
  key that matches none, and repeated null keys (which match nothing);
* the ``when_*`` clauses: no matched clause, update (also with a condition one of two
  repeated rows satisfies), delete or fail, with or without insert, with or without
  delete-by-source.

Then both agree in full: the error (class for us, message for pylance) or the counts, the
rows (sorted, values and Arrow types with metadata), the version, every fragment's layout
and deletion file, and the transaction; pylance reads our result. A flagged table
(``data_storage_version="2.3"``) made of the same rows gives pylance's counts and rows: the
contract is silent on merge_insert's rows, so it behaves as pylance.

What pylance 14 does, as measured: a source may lack a non-nullable column when no row is
inserted (an update-only merge updates the columns it has); a repeated key that matches no
target row is inserted once per row; a repeated key matching a target row is refused
("Ambiguous merge inserts are prohibited") only when the matched rows are updated (after the
condition) or deleted, and runs otherwise; ``when_matched_fail`` alone is a merge that
fails on a match and commits an empty version otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from tests.interop.test_mutations import _txn_shape, fragments, last_transaction

import lance_semantic as ls

pytestmark = pytest.mark.interop

STRUCT = pa.struct([pa.field("x", pa.int32(), nullable=False), pa.field("y", pa.string())])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("a", pa.int32()),  # with b: a compound key (id // 3, id % 3)
        pa.field("b", pa.int32()),
        pa.field("nn", pa.int64(), nullable=False),
        pa.field("v", pa.float64()),  # in every source: the update condition reads it
        pa.field("s", pa.string()),
        pa.field("st", STRUCT),
    ],
    metadata={"owner": "tests"},
)
TARGET_IDS = list(range(12))


def rows(ids: list[int | None], *, v: list[float] | None = None, tag: str = "") -> pa.Table:
    """Rows for ``ids`` (a null id has null compound keys too); ``tag`` marks source rows."""
    return pa.Table.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array([None if i is None else i // 3 for i in ids], pa.int32()),
            pa.array([None if i is None else i % 3 for i in ids], pa.int32()),
            pa.array([1000 * (k + 1) + (i or 0) for k, i in enumerate(ids)], pa.int64()),
            pa.array(v if v is not None else [float(k + 1) for k in range(len(ids))]),
            pa.array([f"s{tag}{i}" if (i or 0) % 4 else None for i in ids], pa.string()),
            pa.array([{"x": i or 0, "y": f"y{tag}{i}"} for i in ids], STRUCT),
        ],
        schema=SCHEMA,
    )


#: key repetitions: source ids and the ``v`` of each source row (the condition is ``v > 0``:
#: of two rows repeating a key one satisfies it, so the conditional update is not ambiguous)
REPEATS: dict[str, tuple[list[int | None], list[float]]] = {
    "none": ([1, 6, 100, 101], [1.0, 2.0, 3.0, 4.0]),
    "matched": ([1, 1, 6, 100], [-1.0, 2.0, 3.0, 4.0]),
    "unmatched": ([1, 6, 100, 100], [1.0, 2.0, 3.0, -4.0]),
    "null": ([1, 6, None, None], [1.0, 2.0, 3.0, 4.0]),
}
COLUMNS = {
    "all": SCHEMA.names,
    "subset": ["id", "a", "b", "nn", "v"],  # the nullable s and st missing
    "no_required": ["v", "st", "b", "id", "a", "s"],  # nn missing; another column order
}
MATCHED = ["none", "update", "update_if", "delete", "fail"]
CLAUSES = [
    (m, ins, by_source)
    for m in MATCHED
    for ins in (False, True)
    for by_source in (False, True)
    if (m, ins, by_source) != ("none", False, False)  # refused by both: test_noop_requests
]


def source(repeat: str, columns: str) -> pa.Table:
    ids, v = REPEATS[repeat]
    return rows(ids, v=v, tag="new").select(COLUMNS[columns])


def merge(ds: Any, on: str | list[str], clauses: tuple[str, bool, bool], data: pa.Table) -> Any:
    matched, insert, by_source = clauses
    b = ds.merge_insert(on)
    if matched == "update":
        b = b.when_matched_update_all()
    elif matched == "update_if":
        b = b.when_matched_update_all("source.v > 0")
    elif matched == "delete":
        b = b.when_matched_delete()
    elif matched == "fail":
        b = b.when_matched_fail()
    if insert:
        b = b.when_not_matched_insert_all()
    if by_source:
        b = b.when_not_matched_by_source_delete()
    return b.execute(data)


#: pylance's message -> the library error we raise for the same refusal
REFUSALS: dict[str, type[Exception]] = {
    "Ambiguous merge inserts are prohibited": ls.DuplicateKeyError,
    "found matching row": ls.MatchedRowError,
    "partial-schema source": ls.SchemaMismatchError,
}

COUNTS = ("num_inserted_rows", "num_updated_rows", "num_deleted_rows")


def _run(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except Exception as e:  # compared below
        return None, e


def _sorted_rows(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _files(uri: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), uri) for d, _, fs in os.walk(uri) for f in fs}


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("merge-grid") / "legacy")
    lance.write_dataset(rows(TARGET_IDS), uri, max_rows_per_file=4, data_storage_version="2.1")
    return uri


#: pylance 14 fails on when_matched_delete + when_not_matched_by_source_delete without an
#: insert ("Internal error: Dataset field ... missing from merge insert input schema -- this
#: indicates a logical plan pruning bug"); that merge deletes every target row (a target row
#: two source rows match is ambiguous, as for when_matched_delete alone)
PYLANCE_BUG = "logical plan pruning bug"


def _pylance_bug(
    error: BaseException | None, clauses: tuple[str, bool, bool], repeat: str, got: Any, uri: str
) -> None:
    assert clauses == ("delete", False, True)
    if repeat == "matched":
        assert isinstance(error, ls.DuplicateKeyError)
        assert ls.dataset(uri).version == 1
        return
    assert error is None, error
    assert tuple(got[k] for k in COUNTS) == (0, 0, len(TARGET_IDS))
    ds = ls.dataset(uri)
    assert ds.version == 2 and ds.count_rows() == 0
    if not ds.semantic_types:  # pylance reads what we wrote
        assert lance.dataset(uri).count_rows() == 0


def _check_refused(ours: BaseException | None, theirs: BaseException, uri: str) -> None:
    want = next((cls for text, cls in REFUSALS.items() if text in str(theirs)), None)
    assert want is not None, f"pylance refused it unexpectedly: {theirs}"
    assert isinstance(ours, want), (ours, theirs)
    assert ls.dataset(uri).version == 1  # nothing committed


@pytest.mark.parametrize("clauses", CLAUSES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("columns", list(COLUMNS))
@pytest.mark.parametrize("repeat", list(REPEATS))
@pytest.mark.parametrize("on", ["id", ("a", "b")], ids=["id", "a_b"])
def test_merge_insert_matches_pylance(
    tmp_path: Path,
    legacy: str,
    on: str | tuple[str, ...],
    repeat: str,
    columns: str,
    clauses: tuple[str, bool, bool],
) -> None:
    keys = on if isinstance(on, str) else list(on)
    theirs_uri, ours_uri = str(tmp_path / "theirs"), str(tmp_path / "ours")
    shutil.copytree(legacy, theirs_uri)
    shutil.copytree(legacy, ours_uri)
    data = source(repeat, columns)
    want, refused = _run(lambda: merge(lance.dataset(theirs_uri), keys, clauses, data))
    before = _files(ours_uri)
    got, error = _run(lambda: merge(ls.dataset(ours_uri), keys, clauses, data))
    if refused is not None and PYLANCE_BUG in str(refused):
        _pylance_bug(error, clauses, repeat, got, ours_uri)
        return
    if refused is not None:
        _check_refused(error, refused, ours_uri)
        assert _files(ours_uri) == before
        return
    assert error is None, error
    assert tuple(got[k] for k in COUNTS) == tuple(want[k] for k in COUNTS)

    ours, theirs = ls.dataset(ours_uri), lance.dataset(theirs_uri)
    by_pylance = lance.dataset(ours_uri)
    assert ours.version == theirs.version == by_pylance.version == 2
    assert ours.schema.equals(theirs.schema, check_metadata=True)
    expected = theirs.to_table()
    for table in (ours.to_table(), by_pylance.to_table()):
        assert table.schema.equals(expected.schema, check_metadata=True)
        assert _sorted_rows(table) == _sorted_rows(expected)
    assert fragments(ours) == fragments(theirs) == fragments(by_pylance)
    assert _txn_shape(last_transaction(ours_uri)) == _txn_shape(last_transaction(theirs_uri))


@pytest.mark.parametrize("clauses", CLAUSES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("columns", list(COLUMNS))
@pytest.mark.parametrize("repeat", list(REPEATS))
def test_flagged_merge_insert_behaves_as_pylance(
    tmp_path: Path, legacy: str, repeat: str, columns: str, clauses: tuple[str, bool, bool]
) -> None:
    theirs_uri, ours_uri = str(tmp_path / "theirs"), str(tmp_path / "ours")
    shutil.copytree(legacy, theirs_uri)
    ls.write_dataset(rows(TARGET_IDS), ours_uri, max_rows_per_file=4, data_storage_version="2.3")
    assert ls.dataset(ours_uri).semantic_types
    data = source(repeat, columns)
    want, refused = _run(lambda: merge(lance.dataset(theirs_uri), "id", clauses, data))
    before = _files(ours_uri)
    got, error = _run(lambda: merge(ls.dataset(ours_uri), "id", clauses, data))
    if refused is not None and PYLANCE_BUG in str(refused):
        _pylance_bug(error, clauses, repeat, got, ours_uri)
        return
    if refused is not None:
        _check_refused(error, refused, ours_uri)
        assert _files(ours_uri) == before
        return
    assert error is None, error
    assert tuple(got[k] for k in COUNTS) == tuple(want[k] for k in COUNTS)
    ours = ls.dataset(ours_uri)
    assert ours.version == 2
    assert _sorted_rows(ours.to_table()) == _sorted_rows(lance.dataset(theirs_uri).to_table())


# ---- sources whose structs lack members -------------------------------------------------------

Z = pa.struct([pa.field("p", pa.int32()), pa.field("q", pa.int32(), nullable=False)])
DEEP = pa.struct(
    [pa.field("x", pa.int32(), nullable=False), pa.field("y", pa.string()), pa.field("z", Z)]
)
DEEP_SCHEMA = pa.schema(
    [pa.field("id", pa.int64()), pa.field("st", DEEP), pa.field("v", pa.int64())]
)


def _deep_value(i: int, tag: int) -> dict[str, Any] | None:
    """Row ``i``'s struct: null every 5th row, a null ``z`` every 3rd."""
    if i % 5 == 4:
        return None
    z = None if i % 3 == 2 else {"p": i + tag, "q": -i - tag}
    return {"x": i + tag, "y": f"y{i + tag}", "z": z}


def _deep_rows(ids: list[int], tag: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "st": pa.array([_deep_value(i, tag) for i in ids], DEEP),
            "v": pa.array([i + tag for i in ids], pa.int64()),
        },
        schema=DEEP_SCHEMA,
    )


#: the members of ``st`` a source gives (``z`` with its own members, in the order given)
SHAPES: dict[str, list[tuple[str, list[str] | None]]] = {
    "no_y": [("x", None), ("z", ["p", "q"])],  # a nullable member missing
    "no_x": [("z", ["q", "p"]), ("y", None)],  # a non-nullable member missing
    "no_z": [("x", None), ("y", None)],
    "z_no_q": [("x", None), ("y", None), ("z", ["p"])],  # missing at depth 2 only
    "z_no_p": [("z", ["q"]), ("x", None)],  # missing at both depths
    "reordered": [("z", ["q", "p"]), ("y", None), ("x", None)],  # every member
}
DEEP_CLAUSES = [
    ("update", False, False),
    ("update", True, False),
    ("update_if", False, False),
    ("update", False, True),
    ("none", True, False),
    ("delete", False, False),
]
#: source ids: matched rows whose source struct is valid, null (4, 9) or has a null z (2, 5),
#: over target rows of every kind, and rows matching nothing
DEEP_SOURCE_IDS = [0, 1, 2, 3, 4, 5, 9, 14, 100, 102, 104]


def _shape_type(shape: list[tuple[str, list[str] | None]]) -> pa.DataType:
    members = []
    for name, inner in shape:
        m = DEEP.field(name)
        if inner is not None:
            m = m.with_type(pa.struct([Z.field(n) for n in inner]))
        members.append(m)
    return pa.struct(members)


def _shaped(value: dict[str, Any] | None, shape: list[tuple[str, list[str] | None]]) -> Any:
    if value is None:
        return None
    out = {}
    for name, inner in shape:
        v = value[name]
        out[name] = v if inner is None or v is None else {n: v[n] for n in inner}
    return out


def deep_source(shape: str) -> pa.Table:
    full = _deep_rows(DEEP_SOURCE_IDS, tag=1000)
    # the condition (source.v > 0) leaves out one matched row
    v = [-1 if i == 3 else i + 1000 for i in DEEP_SOURCE_IDS]
    values = [_shaped(r, SHAPES[shape]) for r in full.column("st").to_pylist()]
    return pa.table(
        {
            "v": pa.array(v, pa.int64()),
            "st": pa.array(values, _shape_type(SHAPES[shape])),
            "id": full.column("id"),
        }
    )


#: pylance 14's refusal of when_not_matched_by_source_delete with a source lacking members
NOT_SUPPORTED = "not supported when the source data has a different schema"


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("merge-deep") / "legacy")
    lance.write_dataset(_deep_rows(list(range(15))), uri, max_rows_per_file=6)
    return uri


@pytest.mark.parametrize("clauses", DEEP_CLAUSES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_merge_insert_of_partial_structs_matches_pylance(
    tmp_path: Path, deep: str, flagged: bool, shape: str, clauses: tuple[str, bool, bool]
) -> None:
    """An updated row keeps the members its source struct lacks, at every depth; a member
    the source gives takes the source's value, null under a null source struct; the row's
    struct is null only where both are (pylance's merge of struct members). Inserted rows
    get null members; a non-nullable member missing is refused only when rows are inserted."""
    theirs_uri, ours_uri = str(tmp_path / "theirs"), str(tmp_path / "ours")
    shutil.copytree(deep, theirs_uri)
    if flagged:
        ls.write_dataset(
            _deep_rows(list(range(15))), ours_uri, max_rows_per_file=6, data_storage_version="2.3"
        )
    else:
        shutil.copytree(deep, ours_uri)
    data = deep_source(shape)
    want, refused = _run(lambda: merge(lance.dataset(theirs_uri), "id", clauses, data))
    if refused is not None and NOT_SUPPORTED in str(refused):
        # pylance 14 refuses to delete by source with a partial source; we do it, as
        # its update-only merge followed by a delete of the rows the source lacks
        assert clauses == ("update", False, True)
        want = dict(merge(lance.dataset(theirs_uri), "id", ("update", False, False), data))
        ids = ", ".join(map(str, DEEP_SOURCE_IDS))
        gone = lance.dataset(theirs_uri).delete(f"id NOT IN ({ids})")
        want["num_deleted_rows"] = gone["num_deleted_rows"]
        refused = None
    before = _files(ours_uri)
    got, error = _run(lambda: merge(ls.dataset(ours_uri), "id", clauses, data))
    if refused is not None:
        assert "Append with different schema" in str(refused), refused
        assert isinstance(error, ls.SchemaMismatchError), error
        assert error.field_path.startswith("st.")
        assert ls.dataset(ours_uri).version == 1 and _files(ours_uri) == before
        return
    assert error is None, error
    assert tuple(got[k] for k in COUNTS) == tuple(want[k] for k in COUNTS)
    expected = lance.dataset(theirs_uri).to_table()
    ours = ls.dataset(ours_uri)
    assert ours.version == 2
    assert ours.to_table().schema.equals(expected.schema, check_metadata=True)
    assert _sorted_rows(ours.to_table()) == _sorted_rows(expected)
    if not flagged:  # (pylance writes some of these merges as column rewrites: not compared)
        assert _sorted_rows(lance.dataset(ours_uri).to_table()) == _sorted_rows(expected)


@pytest.mark.parametrize("given", ["table", "reader"])
@pytest.mark.parametrize("rows_given", [0, 1])
@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_a_source_lacking_a_non_nullable_column_is_refused_unless_empty_and_whole(
    tmp_path: Path, rows_given: int, flagged: bool, given: str
) -> None:
    """pylance 14 refuses a source without a non-nullable column for an inserting merge
    ('Cannot insert rows with a partial-schema source') unless the source is a table of no
    rows: then it runs, inserting nothing (by_source delete deletes every row). A reader it
    refuses even when empty."""
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("v", pa.int64(), nullable=False),
            pa.field("s", pa.string()),
        ]
    )
    data = pa.table({"id": [1, 2], "v": [10, 20], "s": ["a", "b"]}, schema=schema)
    src = pa.table(
        {
            "id": pa.array([5][:rows_given], pa.int64()),
            "s": pa.array(["z"][:rows_given], pa.string()),
        }
    )

    def run(lib: Any, uri: str) -> Any:
        if lib is ls:
            ds = ls.write_dataset(data, uri, semantic_types=flagged)
        else:
            ds = lance.write_dataset(data, uri)
        builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
        given_src = src if given == "table" else src.to_reader()
        return builder.when_not_matched_by_source_delete().execute(given_src)

    ours, ours_error = _run(lambda: run(ls, str(tmp_path / "o")))
    theirs, theirs_error = _run(lambda: run(lance, str(tmp_path / "p")))
    if rows_given or given == "reader":
        assert isinstance(theirs_error, OSError)
        assert isinstance(ours_error, ls.SchemaMismatchError)
        assert "'v'" in str(ours_error)
        assert ls.dataset(str(tmp_path / "o")).version == 1
        return
    assert ours_error is None and theirs_error is None
    assert ours.num_deleted_rows == theirs["num_deleted_rows"] == 2
    assert ours.num_inserted_rows == theirs["num_inserted_rows"] == 0
    assert ls.dataset(str(tmp_path / "o")).count_rows() == 0
