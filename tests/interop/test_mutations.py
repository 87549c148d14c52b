"""delete, update and merge_insert against stock pylance 14.0.2 as the oracle.

Legacy tables (pylance-written, several fragments, data storage 2.0 / 2.1 / 2.2, columns
int64, string with nulls, large_string, float64 and a struct<int32, string>) are copied
(``shutil.copytree``); pylance runs the operation on one copy and lance-semantic on the other.
Then both copies must agree on: the rows (sorted by key), Arrow types and metadata, field ids,
``count_rows``, the operation's result counts, the transaction kind, every fragment's id,
physical rows, DataFile layout and deletion file (arrow / bitmap, count), feature flag bit 0
(deletion files present) and the version number. pylance must read our result, append to it,
and we must read that back (facts §3, §6 bit 0, §7).

Flagged tables (``data_storage_version="2.3"``, appends in large_string, string_view and
dictionary layouts): the same operations keep ``ds.schema`` (the recorded output encodings),
return the right values and accept sources in other layouts of the same semantic type.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_semantic as ls
from lance_semantic.errors import DuplicateKeyError
from lance_semantic.manifest.codec import read_inline_transaction
from lance_semantic.storage.paths import parse_manifest_name

pytestmark = pytest.mark.interop

VERSIONS = ["2.0", "2.1", "2.2"]
ROWS_PER_FRAGMENT = 6000  # >= 5000, so one fragment can hold a bitmap deletion file
FRAGMENTS = 3
N = ROWS_PER_FRAGMENT * FRAGMENTS
EXTRA = 10**7  # first id of the rows pylance appends after each operation

STRUCT = pa.struct([("x", pa.int32()), ("y", pa.string())])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("a", pa.int32()),  # with b: a second, unique compound key (id // 7, id % 7)
        pa.field("b", pa.int32()),
        pa.field("s", pa.string()),
        pa.field("ls", pa.large_string()),
        pa.field("f", pa.float64()),
        pa.field("st", STRUCT),
    ],
    metadata={"owner": "tests"},
)


def rows(ids: range | list[int], *, tag: str = "") -> pa.Table:
    """Deterministic rows for ``ids``; ``tag`` changes the non-key values (source rows)."""
    ids = list(ids)
    return pa.Table.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array([i // 7 for i in ids], pa.int32()),
            pa.array([i % 7 for i in ids], pa.int32()),
            pa.array([f"s{tag}{i}" if i % 5 else None for i in ids], pa.string()),
            pa.array([f"L{tag}{i}" for i in ids], pa.large_string()),
            pa.array([i / 4 + (1000 if tag else 0) for i in ids], pa.float64()),
            pa.array([{"x": i, "y": f"y{tag}{i}"} for i in ids], STRUCT),
        ],
        schema=SCHEMA,
    )


# ---- the twin tables ---------------------------------------------------------------------------


class Twins:
    """A pylance-written legacy table and an exact copy: ``ours`` is mutated through
    lance-semantic, ``theirs`` through pylance."""

    def __init__(self, tmp_path: Path, version: str) -> None:
        self.version = version
        self.theirs = str(tmp_path / "theirs")
        self.ours = str(tmp_path / "ours")
        lance.write_dataset(
            rows(range(N)),
            self.theirs,
            max_rows_per_file=ROWS_PER_FRAGMENT,
            data_storage_version=version,
        )
        shutil.copytree(self.theirs, self.ours)

    def run(
        self, ours: Callable[[ls.Dataset], Any], theirs: Callable[[Any], Any]
    ) -> tuple[Any, Any]:
        """Run one operation on each side; return (our result, pylance's result)."""
        return ours(ls.dataset(self.ours)), theirs(lance.dataset(self.theirs))

    def check(self, *, versions: bool = True, txn: bool = True) -> None:
        check_same(self.ours, self.theirs, versions=versions, txn=txn)

    def check_pylance_appends(self) -> None:
        """pylance appends to both tables; we read ours, and both still agree."""
        extra = rows(range(EXTRA, EXTRA + 25))
        for uri in (self.ours, self.theirs):
            lance.write_dataset(extra, uri, mode="append")
        self.check()
        got = ls.dataset(self.ours).to_table(filter=f"id >= {EXTRA}")
        assert sort(got).equals(extra)


def sort(t: pa.Table) -> pa.Table:
    return t.sort_by([("id", "ascending")])


def _deletion(d: Any) -> tuple[str, int] | None:
    if d is None:
        return None
    kind = str(d.file_type if hasattr(d, "file_type") else d.type)
    return ("bitmap" if kind == "bitmap" else "arrow", d.num_deleted_rows)


def fragments(ds: Any) -> list[tuple[Any, ...]]:
    """(id, physical rows, DataFile layouts, deletion file) per fragment, from either engine."""
    out = []
    for f in ds.get_fragments():
        m = f.metadata
        files = [
            (list(df.fields), list(df.column_indices), df.file_major_version, df.file_minor_version)
            for df in m.files
        ]
        out.append((f.fragment_id, m.physical_rows, files, _deletion(m.deletion_file)))
    return out


def pylance_field_ids(fields: Any, prefix: str = "") -> list[tuple[int, str]]:
    out = []
    for f in fields:
        path = prefix + f.name()
        out.append((f.id(), path))
        out += pylance_field_ids(f.children(), path + ".")
    return out


def last_transaction(uri: str) -> Any:
    vdir = os.path.join(uri, "_versions")
    newest = max(
        (p for p in map(parse_manifest_name, os.listdir(vdir)) if p is not None),
        key=lambda p: p[0],
    )
    names = [n for n in os.listdir(vdir) if parse_manifest_name(n) == newest]
    with open(os.path.join(vdir, names[0]), "rb") as f:
        return read_inline_transaction(f.read())


def _txn_shape(txn: Any) -> tuple[Any, ...]:
    op = txn.operation
    kind = type(op).__name__
    if kind == "Delete":
        return kind, sorted(f.id for f in op.updated_fragments), sorted(op.deleted_fragment_ids)
    if kind == "Update":
        return (
            kind,
            sorted(f.id for f in op.updated_fragments),
            sorted(op.removed_fragment_ids),
            sorted(op.fields_for_preserving_frag_bitmap),
            len(op.new_fragments) > 0,
        )
    return (kind,)


def check_same(ours_uri: str, theirs_uri: str, *, versions: bool = True, txn: bool = True) -> None:
    ours, theirs, ours_by_pylance = (
        ls.dataset(ours_uri),
        lance.dataset(theirs_uri),
        lance.dataset(ours_uri),
    )
    if versions:
        assert ours.version == theirs.version == ours_by_pylance.version
    # Arrow types (and field / schema metadata)
    assert ours.schema.equals(theirs.schema, check_metadata=True), (ours.schema, theirs.schema)
    assert ours_by_pylance.schema.equals(theirs.schema, check_metadata=True)
    # rows, sorted by key: we read ours, pylance reads ours, pylance reads its own
    want = sort(theirs.to_table())
    assert sort(ours.to_table()).equals(want)
    assert sort(ours_by_pylance.to_table()).equals(want)
    assert ours.count_rows() == ours_by_pylance.count_rows() == theirs.count_rows() == want.num_rows
    assert ours.count_rows("f > 100") == theirs.count_rows("f > 100")
    # field ids, both as we record them and as pylance reads our manifest
    expected_ids = pylance_field_ids(theirs.lance_schema.fields())
    assert pylance_field_ids(ours_by_pylance.lance_schema.fields()) == expected_ids
    assert [(f.id, f.path) for f in ours.semantic_schema] == expected_ids
    # fragments, deletion files, flags and the transaction
    assert fragments(ours) == fragments(theirs)
    assert fragments(ours_by_pylance) == fragments(theirs)
    their_flags = ls.dataset(theirs_uri).feature_flags
    assert ours.feature_flags.reader & 1 == their_flags.reader & 1
    assert ours.feature_flags.writer & 1 == their_flags.writer & 1
    assert ours.feature_flags.reader == ours.feature_flags.writer
    if versions and txn:
        assert _txn_shape(last_transaction(ours_uri)) == _txn_shape(last_transaction(theirs_uri))


def count(result: Any, key: str) -> int:
    """A count from a pylance result dict or one of our result dataclasses."""
    return int(result[key] if isinstance(result, dict) else getattr(result, key))


def bit0(uri: str) -> int:
    flags = ls.dataset(uri).feature_flags
    return (flags.reader & 1) | (flags.writer & 1) << 1


@pytest.fixture(params=VERSIONS)
def twins(request: pytest.FixtureRequest, tmp_path: Path) -> Twins:
    return Twins(tmp_path, request.param)


@pytest.fixture
def twins22(tmp_path: Path) -> Twins:
    """Twins on data storage 2.2 only, for rules that do not depend on the file version."""
    return Twins(tmp_path, "2.2")


# ---- delete ------------------------------------------------------------------------------------


def _delete(twins: Twins, predicate: str) -> int:
    ours, theirs = twins.run(lambda d: d.delete(predicate), lambda d: d.delete(predicate))
    assert count(ours, "num_deleted_rows") == count(theirs, "num_deleted_rows")
    return count(ours, "num_deleted_rows")


def test_delete_few_rows_writes_arrow_deletion_files(twins: Twins) -> None:
    assert _delete(twins, "id % 97 = 3 OR s IS NULL AND id < 40") > 0
    twins.check()
    kinds = {f[3][0] for f in fragments(ls.dataset(twins.ours))}
    assert kinds == {"arrow"}
    assert bit0(twins.ours) == 0b11
    twins.check_pylance_appends()


def test_delete_5000_rows_of_a_fragment_writes_a_bitmap(twins: Twins) -> None:
    # 5000 rows of fragment 0 (bitmap) and 4999 of fragment 1 (still an arrow array)
    assert _delete(twins, "id < 5000 OR id >= 6000 AND id < 10999") == 9999
    twins.check()
    dels = [f[3] for f in fragments(ls.dataset(twins.ours))]
    assert dels == [("bitmap", 5000), ("arrow", 4999), None]
    twins.check_pylance_appends()


def test_delete_emptying_a_fragment_drops_it(twins: Twins) -> None:
    assert _delete(twins, "id >= 6000 AND id < 12000 OR id = 3") == 6001
    twins.check()
    ours = ls.dataset(twins.ours)
    assert [f.fragment_id for f in ours.get_fragments()] == [0, 2]
    assert _txn_shape(last_transaction(twins.ours)) == ("Delete", [0], [1])
    # the high-water mark is kept: pylance's next fragment is 3 on both sides
    twins.check_pylance_appends()
    assert [f.fragment_id for f in ls.dataset(twins.ours).get_fragments()] == [0, 2, 3]


def test_delete_whole_fragments_only_clears_flag_bit_0(twins: Twins) -> None:
    assert _delete(twins, "id < 6000") == 6000
    twins.check()
    assert bit0(twins.ours) == 0  # no deletion file anywhere
    twins.check_pylance_appends()


def test_second_delete_merges_with_the_first(twins: Twins) -> None:
    # fragment 0: 3000 + 2500 -> one bitmap of 5500; fragment 2: 10 + 10 -> arrow of 20
    _delete(twins, "id < 3000 OR id >= 12000 AND id < 12010")
    twins.check()
    _delete(twins, "id >= 3000 AND id < 5500 OR id >= 12010 AND id < 12020")
    twins.check()
    dels = [f[3] for f in fragments(ls.dataset(twins.ours))]
    assert dels == [("bitmap", 5500), None, ("arrow", 20)]
    # a third delete naming already deleted rows changes nothing of theirs
    assert _delete(twins, "id < 100 OR id = 12000") == 0
    twins.check(versions=False)
    assert ls.dataset(twins.ours).count_rows() == N - 5520


def test_delete_matching_nothing_deletes_nothing(twins: Twins) -> None:
    assert _delete(twins, "id < 0") == 0
    twins.check(versions=False)
    assert bit0(twins.ours) == 0
    assert ls.dataset(twins.ours).count_rows() == N


def test_delete_and_update_matching_nothing_commit_a_version_like_pylance(twins: Twins) -> None:
    _delete(twins, "id < 0")
    twins.run(
        lambda d: d.update({"f": "f + 1"}, "id < 0"), lambda d: d.update({"f": "f + 1"}, "id < 0")
    )
    twins.check()


# ---- update ------------------------------------------------------------------------------------


def _update(twins: Twins, updates: dict[str, str], where: str | None) -> int:
    ours, theirs = twins.run(lambda d: d.update(updates, where), lambda d: d.update(updates, where))
    assert count(ours, "num_rows_updated") == count(theirs, "num_rows_updated")
    return count(ours, "num_rows_updated")


def test_update_sql_expressions(twins: Twins) -> None:
    updates = {"f": "f * 2 + a", "s": "concat(upper(s), '-', CAST(b AS VARCHAR))", "ls": "'x'"}
    assert _update(twins, updates, "id % 3 = 0 AND id < 9000") == 3000
    twins.check()
    got = sort(ls.dataset(twins.ours).to_table(filter="id = 3"))
    assert got.column("f").to_pylist() == [3 / 4 * 2 + 0]
    assert got.column("s").to_pylist() == ["S3-3"]
    twins.check_pylance_appends()


def test_update_a_struct_column(twins: Twins) -> None:
    # pylance refuses nested references on the left ("st.x"); a whole struct is fine
    updates = {"st": "named_struct('x', st.x + 1, 'y', concat(st.y, '!'))"}
    assert _update(twins, updates, "id >= 17000") == 1000
    twins.check()
    got = ls.dataset(twins.ours).to_table(filter="id = 17000").column("st").to_pylist()
    assert got == [{"x": 17001, "y": "y17000!"}]
    twins.check_pylance_appends()


def test_update_of_a_struct_lists_its_children_like_pylance(twins: Twins) -> None:
    updates = {"st": "named_struct('x', st.x + 1, 'y', st.y)"}
    _update(twins, updates, "id >= 17000")
    ours, theirs = last_transaction(twins.ours), last_transaction(twins.theirs)
    assert sorted(theirs.operation.fields_for_preserving_frag_bitmap) == [6, 7, 8]
    assert _txn_shape(ours) == _txn_shape(theirs)


def test_update_without_where_rewrites_every_row(twins: Twins) -> None:
    assert _update(twins, {"b": "b + 10"}, None) == N
    twins.check()
    # every old fragment was fully rewritten, so only new fragments remain
    assert all(f[3] is None for f in fragments(ls.dataset(twins.ours)))
    twins.check_pylance_appends()


def test_update_twice_merges_deletions_and_rewrites_new_fragments(twins: Twins) -> None:
    _update(twins, {"f": "f + 1"}, "id < 100")
    _update(twins, {"f": "f + 1"}, "id < 5500")  # hits fragment 0 and the new fragment
    twins.check()
    assert fragments(ls.dataset(twins.ours))[0][3] == ("bitmap", 5500)
    twins.check_pylance_appends()


# ---- merge_insert ------------------------------------------------------------------------------


def _merge(
    twins: Twins,
    on: str | list[str],
    source: pa.Table,
    *,
    update: bool = True,
    insert: bool = True,
    delete: bool = False,
    delete_expr: str | None = None,
) -> tuple[int, int, int]:
    def build(d: Any) -> Any:
        b = d.merge_insert(on)
        if update:
            b = b.when_matched_update_all()
        if insert:
            b = b.when_not_matched_insert_all()
        if delete:
            b = (
                b.when_not_matched_by_source_delete(delete_expr)
                if delete_expr
                else b.when_not_matched_by_source_delete()
            )
        return b.execute(source)

    ours, theirs = twins.run(build, build)
    keys = ("num_inserted_rows", "num_updated_rows", "num_deleted_rows")
    got = tuple(count(ours, k) for k in keys)
    assert got == tuple(count(theirs, k) for k in keys)
    return got  # type: ignore[return-value]


def test_merge_insert_updates_and_inserts(twins: Twins) -> None:
    source = rows([*range(5990, 6010), *range(17995, 18010)], tag="new")
    # columns in another order than the table's
    source = source.select(["f", "st", "id", "ls", "b", "s", "a"])
    assert _merge(twins, "id", source) == (10, 25, 0)
    twins.check()
    got = sort(ls.dataset(twins.ours).to_table(filter="id >= 5990 AND id < 6010"))
    assert got.equals(rows(range(5990, 6010), tag="new"))
    twins.check_pylance_appends()


def test_merge_insert_insert_only_and_update_only(twins: Twins) -> None:
    source = rows(range(17990, 18020), tag="new")
    assert _merge(twins, "id", source, update=False) == (20, 0, 0)
    twins.check()
    assert _merge(twins, "id", rows(range(0, 40, 2), tag="again"), insert=False) == (0, 20, 0)
    twins.check()
    twins.check_pylance_appends()


def test_merge_insert_delete_by_source(twins: Twins) -> None:
    # every target row not in the source goes: fragments 0 and 1 are dropped entirely
    source = rows(range(12000, 12050), tag="new")
    assert _merge(twins, "id", source, delete=True) == (0, 50, N - 50)
    twins.check()
    assert ls.dataset(twins.ours).count_rows() == 50
    twins.check_pylance_appends()


def test_merge_insert_delete_by_source_with_expression(twins: Twins) -> None:
    source = rows([*range(0, 10), *range(N, N + 5)], tag="new")
    counts = _merge(twins, "id", source, delete=True, delete_expr="id >= 5000 AND id < 5500")
    assert counts == (5, 10, 500)
    twins.check()
    twins.check_pylance_appends()


def test_merge_insert_multi_column_keys(twins: Twins) -> None:
    ids = [*range(700, 720), *range(N, N + 7)]
    source = rows(ids, tag="new").drop_columns(["id"])  # (a, b) identify the row
    source = source.append_column("id", pa.array([i + 10**6 for i in ids], pa.int64()))
    assert _merge(twins, ["a", "b"], source) == (7, 20, 0)
    twins.check()
    got = ls.dataset(twins.ours).to_table(filter="a = 100 AND b = 0")  # id 700
    assert got.column("id").to_pylist() == [700 + 10**6]
    assert got.column("f").to_pylist() == [700 / 4 + 1000]
    assert got.column("st").to_pylist() == [{"x": 700, "y": "ynew700"}]
    twins.check_pylance_appends()


def test_merge_insert_partial_column_source(twins: Twins) -> None:
    source = pa.table(
        {
            "f": pa.array([-1.0, -2.0, -3.0], pa.float64()),
            "id": pa.array([1, 6001, N + 1], pa.int64()),
        }
    )
    if twins.version == "2.0":
        # the inserted row has a null struct, which 2.0 data files cannot hold: both refuse,
        # we with a library error naming the field
        files = sorted(os.listdir(os.path.join(twins.ours, "data")))
        with pytest.raises(ls.UnsupportedTypeError, match="data storage version 2.0") as e:
            _merge(twins, "id", source)
        assert e.value.field_path == "st"
        assert sorted(os.listdir(os.path.join(twins.ours, "data"))) == files
        with pytest.raises(OSError, match="struct validity"):
            lance.dataset(twins.theirs).merge_insert(
                "id"
            ).when_matched_update_all().when_not_matched_insert_all().execute(source)
        twins.check()  # nothing committed on either side
        source = source.slice(0, 2)
        assert _merge(twins, "id", source) == (0, 2, 0)
        twins.check()
        return
    assert _merge(twins, "id", source) == (1, 2, 0)
    twins.check()
    got = sort(ls.dataset(twins.ours).to_table(filter="id IN (1, 6001, 18001)")).to_pylist()
    assert got[0]["f"] == -1.0 and got[0]["st"] == {"x": 1, "y": "y1"}  # other columns kept
    assert got[2]["f"] == -3.0 and got[2]["s"] is None and got[2]["st"] is None
    twins.check_pylance_appends()


def test_merge_insert_after_a_delete_merges_the_deletion_files(twins: Twins) -> None:
    _delete(twins, "id < 4990")  # fragment 0: an arrow file of 4,990 rows
    # 20 rows of fragment 0 updated (4990..5009), 10 already deleted ones inserted again
    assert _merge(twins, "id", rows(range(4980, 5010), tag="new")) == (10, 20, 0)
    twins.check()
    assert fragments(ls.dataset(twins.ours))[0][3] == ("bitmap", 5010)
    twins.check_pylance_appends()


@pytest.mark.parametrize("op", ["delete", "update", "merge_insert"])
def test_merged_deletions_of_exactly_5000_rows_stay_an_arrow_file(twins22: Twins, op: str) -> None:
    twins = twins22
    _delete(twins, "id < 4990")
    if op == "delete":
        _delete(twins, "id < 5000")
    elif op == "update":
        _update(twins, {"f": "f + 1"}, "id >= 4990 AND id < 5000")
    else:
        _merge(twins, "id", rows(range(4990, 5000), tag="new"))
    theirs = fragments(lance.dataset(twins.theirs))[0][3]
    assert theirs == ("arrow", 5000)  # pylance's rule, as measured
    twins.check()


def test_merge_insert_duplicate_keys_raise_and_commit_nothing(twins: Twins) -> None:
    source = pa.concat_tables([rows([1, 2], tag="x"), rows([2], tag="y")])
    before = ls.dataset(twins.ours)
    files_before = {
        d: sorted(os.listdir(os.path.join(twins.ours, d))) for d in os.listdir(twins.ours)
    }
    builder = before.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    with pytest.raises(DuplicateKeyError, match="id"):
        builder.execute(source)
    with pytest.raises(OSError, match="(?i)ambiguous"):  # pylance refuses it too
        lance.dataset(twins.theirs).merge_insert(
            "id"
        ).when_matched_update_all().when_not_matched_insert_all().execute(source)
    after = {d: sorted(os.listdir(os.path.join(twins.ours, d))) for d in os.listdir(twins.ours)}
    assert after == files_before  # no data, deletion or transaction file left behind
    assert ls.dataset(twins.ours).version == before.version == 1
    twins.check()


@pytest.mark.parametrize(
    ("column", "source_type"), [("s", pa.large_string()), ("id", pa.int32()), ("f", pa.float32())]
)
def test_merge_insert_source_of_another_type_is_refused_on_legacy_tables(
    twins22: Twins, column: str, source_type: pa.DataType
) -> None:
    twins = twins22
    source = rows([1, N + 1], tag="new")
    i = source.schema.get_field_index(column)
    source = source.set_column(i, column, source.column(column).cast(source_type))
    with pytest.raises(OSError, match="different schema"):  # pylance
        lance.dataset(twins.theirs).merge_insert(
            "id"
        ).when_matched_update_all().when_not_matched_insert_all().execute(source)
    with pytest.raises(ls.SchemaMismatchError):  # as our own append of the same rows
        ls.write_dataset(source, twins.ours, mode="append")
    with pytest.raises(ls.SchemaMismatchError, match=column):
        ls.dataset(twins.ours).merge_insert(
            "id"
        ).when_matched_update_all().when_not_matched_insert_all().execute(source)
    twins.check()


def test_flagged_merge_insert_refuses_another_semantic_type(tmp_path: Path) -> None:
    t = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "x": pa.array([1.0, 2.0, 3.0])})
    ds = ls.write_dataset(t, str(tmp_path / "t"), data_storage_version="2.3")
    source = pa.table({"id": pa.array([2, 5], pa.int32()), "x": pa.array([9.0, 9.0])})
    with pytest.raises(ls.UnsupportedInputTypeError):  # as an append of the same rows
        ds.insert(source)
    with pytest.raises(ls.UnsupportedInputTypeError, match="id"):
        ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
            source
        )
    assert ls.dataset(ds.uri).version == 1


# ---- fragments larger than one expression batch ------------------------------------------------

BIG = 70_000  # > 8,192: DataFusion splits the batches it evaluates


@pytest.fixture
def big_twins(tmp_path: Path) -> Twins:
    """One 70,000-row fragment (and a small one), written by pylance, data storage 2.2."""
    twins = Twins.__new__(Twins)
    twins.version = "2.2"
    twins.theirs, twins.ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    t = pa.table(
        {
            "id": pa.array(range(BIG), pa.int64()),
            "f": pa.array([i / 8 for i in range(BIG)], pa.float64()),
            "s": pa.array([f"s{i}" for i in range(BIG)], pa.string()),
        }
    )
    lance.write_dataset(t, twins.theirs, max_rows_per_file=BIG - 10)
    shutil.copytree(twins.theirs, twins.ours)
    return twins


def test_big_fragment_filtered_read_and_delete(big_twins: Twins) -> None:
    got = ls.dataset(big_twins.ours).to_table(filter="id % 100 = 7")
    assert got.num_rows == BIG // 100
    assert all(i % 100 == 7 for i in got.column("id").to_pylist())
    ours, theirs = big_twins.run(
        lambda d: d.delete("id % 100 = 7"), lambda d: d.delete("id % 100 = 7")
    )
    assert count(ours, "num_deleted_rows") == count(theirs, "num_deleted_rows")
    big_twins.check()


def test_big_fragment_update(big_twins: Twins) -> None:
    updates = {"f": "CAST(id AS DOUBLE) + 0.5", "s": "concat('u', CAST(id AS VARCHAR))"}
    big_twins.run(
        lambda d: d.update(updates, "id % 3 = 0"), lambda d: d.update(updates, "id % 3 = 0")
    )
    big_twins.check()


def test_big_fragment_merge_insert_delete_condition(big_twins: Twins) -> None:
    source = pa.table({"id": pa.array([1, 2, BIG + 1], pa.int64()), "f": [0.0, 0.0, 0.0]})

    def merge(d: Any) -> Any:
        b = d.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
        return b.when_not_matched_by_source_delete("id % 1000 = 999").execute(source)

    big_twins.run(merge, merge)
    big_twins.check()


# ---- flagged tables ------------------------------------------------------------------------------

FLAGGED_ROWS = 40


def _flagged_batch(ids: list[int], layout: str, tag: str = "") -> pa.Table:
    """Rows for ``ids``; string columns in ``layout`` (utf8, large, view or dict)."""

    def strings(values: list[str | None], kind: str) -> pa.Array:
        if kind == "utf8":
            return pa.array(values, pa.string())
        if kind == "large":
            return pa.array(values, pa.large_string())
        if kind == "view":
            return pa.array(values, pa.string_view())
        return pa.array(values, pa.string()).dictionary_encode()

    s = [f"s{tag}{i}" if i % 3 else None for i in ids]
    w = [f"w{tag}{i % 4}" for i in ids]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": strings(s, layout),  # created as utf8: default output
            "w": strings(w, layout),  # created as large_string: output large_utf8
            "f": pa.array([float(i) for i in ids]),
        }
    )


def _model(ids: list[int], tag: str = "") -> dict[int, tuple[Any, ...]]:
    t = _flagged_batch(ids, "utf8", tag)
    return {r["id"]: (r["s"], r["w"], r["f"]) for r in t.to_pylist()}


@pytest.fixture
def flagged(tmp_path: Path) -> tuple[ls.Dataset, dict[int, tuple[Any, ...]], pa.Schema]:
    """A flagged table whose 4 fragments were appended in 4 layouts, plus the expected rows."""
    uri = str(tmp_path / "flagged")
    first = _flagged_batch(list(range(10)), "utf8")
    first = first.set_column(2, "w", first.column("w").cast(pa.large_string()))
    ds = ls.write_dataset(first, uri, data_storage_version="2.3")
    assert ds.semantic_types
    for k, layout in enumerate(["large", "view", "dict"], start=1):
        ds.insert(_flagged_batch(list(range(10 * k, 10 * k + 10)), layout))
    ds = ls.dataset(uri)
    schema = ds.schema
    assert schema.field("s").type == pa.string()
    assert schema.field("w").type == pa.large_string()
    return ds, _model(list(range(FLAGGED_ROWS))), schema


def _check_flagged(ds: ls.Dataset, model: dict[int, tuple[Any, ...]], schema: pa.Schema) -> None:
    ds = ls.dataset(ds.uri)
    assert ds.semantic_types
    assert ds.schema.equals(schema, check_metadata=True)
    t = ds.to_table()
    assert t.schema.equals(schema, check_metadata=True)
    got = {r["id"]: (r["s"], r["w"], r["f"]) for r in t.to_pylist()}
    assert got == model
    assert ds.count_rows() == len(model)
    for name in ("s", "w"):
        assert pc.count(t.column(name)).as_py() == sum(
            1 for v in model.values() if v[0 if name == "s" else 1]
        )


def test_flagged_delete_keeps_output_encodings(flagged: Any) -> None:
    ds, model, schema = flagged
    assert ds.delete("id % 4 = 1 OR w = 'w2'").num_deleted_rows == 20
    for i in list(model):
        if i % 4 in (1, 2):
            del model[i]
    _check_flagged(ds, model, schema)


def test_flagged_update_keeps_output_encodings(flagged: Any) -> None:
    ds, model, schema = flagged
    res = ds.update({"s": "concat(w, '+')", "f": "f * 10"}, where="id >= 5 AND id < 35")
    assert res.num_rows_updated == 30
    for i in range(5, 35):
        s, w, f = model[i]
        model[i] = (w + "+", w, f * 10)
    _check_flagged(ds, model, schema)
    ds = ls.dataset(ds.uri)
    ds.update({"w": "s"})  # where=None; w takes s's values (nulls included)
    model = {i: (s, s, f) for i, (s, w, f) in model.items()}
    _check_flagged(ds, model, schema)


@pytest.mark.parametrize("layout", ["utf8", "large", "view", "dict"])
def test_flagged_merge_insert_accepts_source_in_any_layout(flagged: Any, layout: str) -> None:
    ds, model, schema = flagged
    ids = [*range(35, FLAGGED_ROWS), *range(FLAGGED_ROWS, FLAGGED_ROWS + 5)]
    source = _flagged_batch(ids, layout, tag="n").select(["w", "f", "id", "s"])
    b = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    res = b.when_not_matched_by_source_delete("id < 3").execute(source)
    assert (res.num_inserted_rows, res.num_updated_rows, res.num_deleted_rows) == (5, 5, 3)
    model.update(_model(ids, tag="n"))
    for i in range(3):
        del model[i]
    _check_flagged(ds, model, schema)
    # keyed on a string column: a key in a view layout matches the stored values
    ds = ls.dataset(ds.uri)
    key = pa.table({"s": pa.array(["s4", "s5"], pa.string_view()), "f": [-4.0, -5.0]})
    res = ds.merge_insert("s").when_matched_update_all().execute(key)
    assert (res.num_inserted_rows, res.num_updated_rows, res.num_deleted_rows) == (0, 2, 0)
    model[4], model[5] = (*model[4][:2], -4.0), (*model[5][:2], -5.0)
    _check_flagged(ds, model, schema)
