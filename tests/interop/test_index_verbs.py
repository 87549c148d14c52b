"""The index verbs besides ``create_index`` (dataset/indices/: drop.py, describe.py,
optimize.py; ``create_index_uncommitted`` and ``LanceOperation.CreateIndex``) against pylance
14 on twin tables: the same commits, descriptions, statistics and segments as pylance's for
the same index files, each library using what the other did, bad input refused with nothing
committed."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import shutil
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = [
    pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:LanceDataset.index_statistics:DeprecationWarning"),
]

N, D = 6000, 16
RNG = np.random.default_rng(5)
DATA = RNG.standard_normal((N + 1000, D)).astype(np.float32)
KINDS = [("IVF_FLAT", {}), ("IVF_PQ", {"num_sub_vectors": 4}), ("IVF_SQ", {})]


def _table(start: int, stop: int) -> pa.Table:
    x = DATA[start:stop]
    vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), D)
    labels = [[f"l{i % 3}"] for i in range(start, stop)]
    return pa.table({"id": np.arange(start, stop), "vec": vec, "labels": labels})


def _pylance_twins(tmp_path: Path, kind: str, extra: dict[str, int]) -> tuple[str, str]:
    """One table with a pylance-built index, copied: both twins hold the same index files."""
    theirs, ours = str(tmp_path / "theirs.lance"), str(tmp_path / "ours.lance")
    lance.write_dataset(_table(0, N), theirs, max_rows_per_file=N // 2)
    lance.dataset(theirs).create_index("vec", kind, num_partitions=4, **extra)
    shutil.copytree(theirs, ours)
    return ours, theirs


def _append(*uris: str) -> None:
    for uri in uris:
        lance.write_dataset(_table(N, N + 1000), uri, mode="append")


def _nearest(uri: str, q: np.ndarray) -> list[int]:
    query = {"column": "vec", "q": q, "k": 10, "nprobes": 4, "refine_factor": 2}
    got = lance.dataset(uri).to_table(nearest=query, columns=["id"])
    return list(got["id"].to_pylist())


def _transaction(uri: str) -> Any:
    ds = lance.dataset(uri)
    return ds.read_transaction(ds.version).operation


def _segments(op: Any) -> tuple[list[Any], list[Any]]:
    def seg(i: Any) -> tuple[str, list[int], int, str]:
        # (the details' build parameters come in pylance's hash-map order: not compared)
        return (i.name, sorted(i.fragment_ids), i.dataset_version, i.index_details[0])

    return [seg(i) for i in op.new_indices], [i.uuid for i in op.removed_indices]


# ---- drop_index -------------------------------------------------------------------------------


def test_drop_index_commits_what_pylance_commits(tmp_path: Path) -> None:
    ours, theirs = _pylance_twins(tmp_path, "IVF_FLAT", {})
    for uri in (ours, theirs):
        lance.dataset(uri).create_scalar_index("id", "BTREE")
    _append(ours, theirs)
    lance.dataset(theirs).optimize.optimize_indices(index_names=["vec_idx"])
    shutil.rmtree(ours)
    shutil.copytree(theirs, ours)  # two vec_idx segments and a BTREE on both
    assert lance.dataset(theirs).drop_index("vec_idx") is None
    ds = ls.dataset(ours)
    assert ds.drop_index("vec_idx") is None
    assert ds.version == lance.dataset(theirs).version == 6
    mine, pylances = _transaction(ours), _transaction(theirs)
    assert type(mine).__name__ == type(pylances).__name__ == "CreateIndex"
    assert mine.new_indices == pylances.new_indices == []
    assert sorted(i.uuid for i in mine.removed_indices) == sorted(
        i.uuid for i in pylances.removed_indices
    )
    assert len(mine.removed_indices) == 2
    assert [i["name"] for i in lance.dataset(ours).list_indices()] == ["id_idx"]
    # pylance drops what we listed, we drop what pylance left
    lance.dataset(ours).drop_index("id_idx")
    assert ls.dataset(ours).list_indices() == []


def test_drop_index_refuses_as_pylance(tmp_path: Path) -> None:
    ours, theirs = _pylance_twins(tmp_path, "IVF_FLAT", {})
    for call, kind in (("nope", RuntimeError), (3, TypeError)):
        with pytest.raises(kind) as pylances:
            lance.dataset(theirs).drop_index(call)
        with pytest.raises(kind) as mine:
            ls.dataset(ours).drop_index(call)  # type: ignore[arg-type]
        assert str(mine.value) in str(pylances.value)
    assert lance.dataset(ours).version == lance.dataset(theirs).version == 2


def test_drop_index_on_a_flagged_table(tmp_path: Path) -> None:
    uri = str(tmp_path / "f.lance")
    ds = ls.write_dataset(_table(0, 2000), uri, semantic_types=True)
    ds.create_index("vec", "IVF_FLAT", num_partitions=2).drop_index("vec_idx")
    assert ds.list_indices() == [] and ds.version == 3
    assert ls.dataset(uri).describe_indices() == []


# ---- describe_indices, index_statistics --------------------------------------------------------


def test_describe_indices_equals_pylances(tmp_path: Path) -> None:
    ours, theirs = _pylance_twins(tmp_path, "IVF_PQ", {"num_sub_vectors": 4})
    lance.dataset(theirs).create_scalar_index("id", "BTREE")
    lance.dataset(theirs).create_scalar_index("labels", "LABEL_LIST")
    _append(theirs)
    lance.dataset(theirs).delete("id < 50")
    shutil.rmtree(ours)
    shutil.copytree(theirs, ours)
    ls.dataset(ours).create_index("vec", "IVF_SQ", num_partitions=2, name="ours_sq")
    lance.dataset(theirs).create_index("vec", "IVF_SQ", num_partitions=2, name="ours_sq")
    mine, pylances = ls.dataset(ours).describe_indices(), lance.dataset(theirs).describe_indices()
    assert [d.name for d in mine] == [d.name for d in pylances]
    for a, b in zip(mine, pylances, strict=True):
        for attr in ("type_url", "index_type", "num_rows_indexed", "fields", "field_names"):
            assert getattr(a, attr) == getattr(b, attr), (a.name, attr)
        assert a.details == b.details, a.name
        if a.name != "ours_sq":  # the same files
            assert a.total_size_bytes == b.total_size_bytes
            assert repr(a) == repr(b)
            for s, t in zip(a.segments, b.segments, strict=True):
                for attr in ("uuid", "dataset_version_at_last_update", "index_version"):
                    assert getattr(s, attr) == getattr(t, attr)
                assert (s.created_at, s.size_bytes, s.base_id) == (
                    t.created_at,
                    t.size_bytes,
                    t.base_id,
                )
                assert set(s.fragment_ids) == set(t.fragment_ids)


def test_describe_indices_of_other_vector_types(tmp_path: Path) -> None:
    """HNSW and RQ indices (read as unknown by the search) are described as pylance does."""
    uri = str(tmp_path / "t.lance")
    lance.write_dataset(_table(0, 1000), uri)
    ds = lance.dataset(uri)
    ds.create_index("vec", "IVF_HNSW_SQ", num_partitions=1, name="hsq")
    ds.create_index("vec", "IVF_HNSW_PQ", num_partitions=1, num_sub_vectors=4, name="hpq")
    ds.create_index("vec", "IVF_RQ", num_partitions=1, name="rq")
    mine, pylances = ls.dataset(uri).describe_indices(), lance.dataset(uri).describe_indices()
    assert [(d.name, d.index_type, d.details) for d in mine] == [
        (d.name, d.index_type, d.details) for d in pylances
    ]
    with pytest.raises(ls.NotSupportedYetError, match="IVF_HNSW_SQ"):
        ls.dataset(uri).stats.index_stats("hsq")


@pytest.mark.parametrize(("kind", "extra"), KINDS)
@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_index_statistics_equal_pylances_for_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, extra: dict[str, int], metric: str
) -> None:
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "true")
    theirs = str(tmp_path / "theirs.lance")
    lance.write_dataset(_table(0, N), theirs, max_rows_per_file=N // 2)
    lance.dataset(theirs).create_index("vec", kind, num_partitions=4, metric=metric, **extra)
    _append(theirs)
    lance.dataset(theirs).delete("id < 10")
    with pytest.warns(DeprecationWarning, match="index_statistics"):
        mine = ls.dataset(theirs).index_statistics("vec_idx")
    assert mine == lance.dataset(theirs).index_statistics("vec_idx")
    assert ls.dataset(theirs).stats.index_stats("vec_idx") == mine
    assert mine["num_unindexed_rows"] == 1000 and mine["num_indexed_rows"] == N - 10
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    assert "centroids" not in ls.dataset(theirs).index_statistics("vec_idx")["indices"][0]


def test_index_statistics_of_our_index_are_pylances(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(_table(0, N), uri, max_rows_per_file=N // 2)
    ds.create_index("vec", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
    assert ds.index_statistics("vec_idx") == lance.dataset(uri).index_statistics("vec_idx")


def test_scalar_index_statistics(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    table = _table(0, 3000).append_column("s", pa.array([f"k{i % 7}" for i in range(3000)]))
    table = table.append_column("f", pa.array(np.linspace(-1.5, 2.25, 3000)))
    table = table.append_column("tiny", pa.array(np.linspace(1e-7, 3.0, 3000)))
    table = table.append_column("huge", pa.array(np.linspace(0.1, 2.5e20, 3000), pa.float32()))
    ts = pa.array(np.arange(3000) * 10**9, pa.timestamp("ns"))
    table = table.append_column("ts", ts).append_column("b", pa.array([True, False] * 1500))
    lance.write_dataset(table, uri)
    ds = lance.dataset(uri)
    ds.create_scalar_index("id", "BITMAP")
    ds.create_scalar_index("s", "BTREE")
    for column in ("f", "tiny", "huge", "ts", "b"):
        ds.create_scalar_index(column, "BTREE")
    ds.create_scalar_index("labels", "LABEL_LIST")
    ds.create_scalar_index("s", "INVERTED", name="fts")
    ours = ls.dataset(uri)
    for name in ("id_idx", "s_idx", "f_idx", "tiny_idx", "huge_idx", "ts_idx", "b_idx"):
        assert ours.index_statistics(name) == lance.dataset(uri).index_statistics(name), name
    assert ours.index_statistics("labels_idx") == lance.dataset(uri).index_statistics("labels_idx")
    with pytest.raises(ls.NotSupportedYetError, match="Inverted"):
        ours.index_statistics("fts")
    with pytest.raises(KeyError) as pylances:
        lance.dataset(uri).index_statistics("nope")
    with pytest.raises(KeyError) as mine:
        ours.index_statistics("nope")
    assert str(mine.value) == str(pylances.value)
    with pytest.raises(TypeError, match="index_name"):
        ours.index_statistics(3)  # type: ignore[arg-type]


# ---- optimize_indices -------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "extra"), KINDS)
@pytest.mark.parametrize("merge", [0, 1])
def test_optimize_indices_writes_pylances_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, extra: dict[str, int], merge: int
) -> None:
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "true")
    ours, theirs = _pylance_twins(tmp_path, kind, extra)
    _append(ours, theirs)
    lance.dataset(theirs).optimize.optimize_indices(num_indices_to_merge=merge)
    ds = ls.dataset(ours)
    assert ds.optimize.optimize_indices(num_indices_to_merge=merge) is None
    assert ds.version == lance.dataset(theirs).version == 4
    assert _segments(_transaction(ours)) == _segments(_transaction(theirs))
    mine = lance.dataset(ours).index_statistics("vec_idx")
    pylances = lance.dataset(theirs).index_statistics("vec_idx")
    assert ds.index_statistics("vec_idx") == mine
    for key in ("num_indices", "num_indexed_rows", "num_unindexed_rows"):
        assert mine[key] == pylances[key]
    for a, b in zip(mine["indices"], pylances["indices"], strict=True):
        assert a["partitions"] == b["partitions"] and a["centroids"] == b["centroids"]
        assert a["sub_index"] == b["sub_index"]
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
    for q in DATA[N : N + 1000 : 100]:
        assert _nearest(ours, q) == _nearest(theirs, q)


def test_optimize_indices_on_our_index_and_a_flagged_table(tmp_path: Path) -> None:
    """Our delta over our index: pylance searches through both segments; on a flagged table
    our own search does."""
    for flagged in (False, True):
        uri = str(tmp_path / f"t{flagged}.lance")
        ds = ls.write_dataset(_table(0, N), uri, semantic_types=flagged)
        ds.create_index("vec", "IVF_FLAT", num_partitions=4)
        ds.insert(_table(N, N + 1000))
        ds.optimize.optimize_indices()
        assert [sorted(i["fragment_ids"]) for i in ds.list_indices()] == [[0], [1]]
        q = DATA[N + 7]
        got = ds.to_table(nearest={"column": "vec", "q": q, "k": 1, "nprobes": 4}, columns=["id"])
        assert got["id"].to_pylist() == [N + 7]
        if not flagged:
            assert _nearest(uri, q)[0] == N + 7
            plan = lance.dataset(uri).scanner(nearest={"column": "vec", "q": q}).explain_plan()
            assert "deltas=2" in plan, plan


def test_a_delta_with_empty_partitions(tmp_path: Path) -> None:
    """One appended row: three of the four partitions of the PQ delta are empty."""
    ours, _ = _pylance_twins(tmp_path, "IVF_PQ", {"num_sub_vectors": 4})
    lance.write_dataset(_table(N, N + 1), ours, mode="append")
    ls.dataset(ours).optimize.optimize_indices()
    stats = lance.dataset(ours).stats.index_stats("vec_idx")
    assert [sum(p["size"] for p in i["partitions"]) for i in stats["indices"]] == [N, 1]
    assert _nearest(ours, DATA[N])[0] == N


@pytest.mark.parametrize(("kind", "extra"), KINDS)
def test_retrain_rebuilds_as_pylance(tmp_path: Path, kind: str, extra: dict[str, int]) -> None:
    ours, theirs = _pylance_twins(tmp_path, kind, extra)
    for uri in (ours, theirs):  # 9,000 rows: 2 partitions for IVF_FLAT, 1 for PQ / SQ
        for _ in range(3):
            lance.write_dataset(_table(N, N + 1000), uri, mode="append")
    lance.dataset(theirs).optimize.optimize_indices(retrain=True)
    ds = ls.dataset(ours)
    ds.optimize.optimize_indices(retrain=True)
    assert ds.version == lance.dataset(theirs).version == 6
    mine, pylances = _transaction(ours), _transaction(theirs)
    assert _segments(mine) == _segments(pylances)
    assert len(mine.removed_indices) == 1
    stats = [lance.dataset(u).stats.index_stats("vec_idx")["indices"] for u in (ours, theirs)]
    assert [i["num_partitions"] for i in stats[0]] == [i["num_partitions"] for i in stats[1]]
    assert sum(p["size"] for p in stats[0][0]["partitions"]) == N + 3000
    assert _nearest(ours, DATA[N + 5])[0] == N + 5


@pytest.mark.parametrize(("kind", "extra"), KINDS)
def test_a_delta_over_null_vectors_only(tmp_path: Path, kind: str, extra: dict[str, int]) -> None:
    """Appended rows whose vectors are all null: an empty delta segment that pylance reads
    (pylance 14's own optimize_indices fails there: "Not found: .../ivf_0.lance")."""
    ours, _ = _pylance_twins(tmp_path, kind, extra)
    nulls = pa.table(
        {
            "id": np.arange(N, N + 10),
            "vec": pa.nulls(10, pa.list_(pa.float32(), D)),
            "labels": pa.nulls(10, pa.list_(pa.string())),
        }
    )
    lance.write_dataset(nulls, ours, mode="append")
    ls.dataset(ours).optimize.optimize_indices()
    stats = lance.dataset(ours).stats.index_stats("vec_idx")
    assert [sum(p["size"] for p in i["partitions"]) for i in stats["indices"]] == [N, 0]
    assert stats["num_unindexed_rows"] == 0
    assert _nearest(ours, DATA[3])[0] == 3


def test_optimize_indices_up_to_date_commits_nothing(tmp_path: Path) -> None:
    ours, _ = _pylance_twins(tmp_path, "IVF_FLAT", {})
    ds = ls.dataset(ours)
    ds.optimize.optimize_indices()
    ds.optimize.optimize_indices(index_names=["nope"])
    assert ds.version == lance.dataset(ours).version == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"bogus": 1}, TypeError, "bogus"),
        ({"retrain": "yes"}, TypeError, "retrain"),
        ({"index_names": "vec_idx"}, ValueError, "index_names"),
        ({"num_indices_to_merge": -1}, OverflowError, "num_indices_to_merge"),
        ({"num_indices_to_merge": "x"}, TypeError, "num_indices_to_merge"),
    ],
)
def test_optimize_indices_refuses_bad_options(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    ours, theirs = _pylance_twins(tmp_path, "IVF_FLAT", {})
    _append(ours)
    if error is not TypeError or "bogus" not in kwargs:  # pylance ignores unknown options
        if error is not ls.NotSupportedYetError:
            with pytest.raises(error):
                lance.dataset(theirs).optimize.optimize_indices(**kwargs)
    with pytest.raises(error, match=match):
        ls.dataset(ours).optimize.optimize_indices(**kwargs)
    assert lance.dataset(ours).version == 3
    assert len(list((Path(ours) / "_indices").iterdir())) == 1


def test_optimize_indices_with_a_scalar_index(tmp_path: Path) -> None:
    ours, _ = _pylance_twins(tmp_path, "IVF_FLAT", {})
    lance.dataset(ours).create_scalar_index("id", "BTREE")
    _append(ours)
    ds = ls.dataset(ours)
    ds.optimize.optimize_indices(index_names=["vec_idx"])
    assert lance.dataset(ours).stats.index_stats("vec_idx")["num_unindexed_rows"] == 0
    assert lance.dataset(ours).stats.index_stats("id_idx")["num_unindexed_rows"] > 0
    ds.optimize.optimize_indices()  # the BTREE: built again over every fragment, as pylance
    assert lance.dataset(ours).stats.index_stats("id_idx")["num_unindexed_rows"] == 0


# ---- create_index_uncommitted + LanceOperation.CreateIndex --------------------------------------


def test_uncommitted_segments_commit_both_ways(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(_table(0, N), uri, max_rows_per_file=N // 2)
    first = ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=4, fragment_ids=[0])
    second = ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=4, fragment_ids=[1])
    assert isinstance(first, ls.Index) and ds.version == 1
    assert sorted(first.fragment_ids) == [0] and first.index_details is not None
    # ours, committed by pylance
    op = lance.LanceOperation.CreateIndex(new_indices=[first, second], removed_indices=[])
    theirs = lance.LanceDataset.commit(uri, op, read_version=1)
    assert [sorted(i["fragment_ids"]) for i in theirs.list_indices()] == [[0], [1]]
    assert _nearest(uri, DATA[10])[0] == 10
    # pylance's, committed by us
    pq = theirs.create_index_uncommitted(
        "vec", "IVF_PQ", name="pq", num_partitions=2, num_sub_vectors=4, fragment_ids=[0, 1]
    )
    ours = ls.Dataset.commit(
        uri, ls.LanceOperation.CreateIndex(new_indices=[pq], removed_indices=[]), read_version=2
    )
    assert ours.version == 3
    assert {i["name"] for i in lance.dataset(uri).list_indices()} == {"pq", "vec_idx"}
    # ours, committed by us, replacing both vec_idx segments
    whole = ours.create_index_uncommitted(
        "vec", "IVF_SQ", num_partitions=2, fragment_ids=[0, 1], replace=True
    )
    op2 = ls.LanceOperation.CreateIndex(new_indices=[whole], removed_indices=[first, second])
    ours = ls.Dataset.commit(uri, op2, read_version=3)
    listed = {i["name"]: i for i in lance.dataset(uri).list_indices()}
    assert listed["vec_idx"]["type"] == "IVF_SQ" and listed["vec_idx"]["uuid"] == whole.uuid
    got = ours.to_table(nearest={"column": "vec", "q": DATA[10], "k": 1, "nprobes": 2})
    assert got["id"].to_pylist() == [10]


def test_uncommitted_refusals(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(_table(0, N), uri, max_rows_per_file=N // 2)
    p = lance.dataset(uri)
    for kwargs, error in (({}, ValueError), ({"fragment_ids": [9]}, ValueError)):
        with pytest.raises(error) as pylances:
            p.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=2, **kwargs)
        with pytest.raises(error) as mine:
            ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=2, **kwargs)
        assert str(mine.value) in str(pylances.value)
    seg = ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=2, fragment_ids=[0, 1])
    ls.Dataset.commit(uri, ls.LanceOperation.CreateIndex([seg], []), read_version=1)
    # a second segment of the name over fragments the first covers (pylance panics)
    again = ds.create_index_uncommitted(
        "vec", "IVF_FLAT", num_partitions=2, fragment_ids=[1], replace=True
    )
    with pytest.raises(ValueError, match="covers fragments"):
        ls.Dataset.commit(uri, ls.LanceOperation.CreateIndex([again], []), read_version=2)
    with pytest.raises(TypeError, match="Index"):
        ls.Dataset.commit(uri, ls.LanceOperation.CreateIndex(["x"], []), read_version=2)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="new_indices"):
        ls.LanceOperation.CreateIndex("x", [])  # type: ignore[arg-type]
    with pytest.raises(ls.NotSupportedYetError, match="rabitq_model"):
        ds.create_index_uncommitted("vec", "IVF_FLAT", fragment_ids=[0], rabitq_model="m")
    assert lance.dataset(uri).version == 2


def test_the_signatures_are_pylances() -> None:
    for name in ("create_index_uncommitted", "drop_index", "index_statistics"):
        ours = inspect.signature(getattr(ls.Dataset, name))
        theirs = inspect.signature(getattr(lance.LanceDataset, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
            (p.name, p.kind, p.default) for p in theirs.parameters.values()
        ], name
    pylance_index = importlib.import_module("lance.dataset").Index
    assert [f.name for f in dataclasses.fields(ls.Index)] == [
        f.name for f in dataclasses.fields(pylance_index)
    ]


# ---- both libraries committing at once ---------------------------------------------------------


def test_index_commits_race_as_lance_rules_say(tmp_path: Path) -> None:
    """A stale optimize rebases over an append (the appended fragment stays unindexed); two
    index commits of one name conflict, in either library; nothing half-done is left."""
    uri = str(tmp_path / "t.lance")
    ls.write_dataset(_table(0, N), uri, max_rows_per_file=N // 2).create_index(
        "vec", "IVF_FLAT", num_partitions=4
    )
    lance.write_dataset(_table(N, N + 500), uri, mode="append")
    stale = ls.dataset(uri)
    lance.write_dataset(_table(N + 500, N + 1000), uri, mode="append")
    stale.optimize.optimize_indices()
    ds = lance.dataset(uri)
    assert [sorted(i["fragment_ids"]) for i in ds.list_indices()] == [[0, 1], [2]]
    assert ds.stats.index_stats("vec_idx")["num_unindexed_rows"] == 500
    stale = ls.dataset(uri)
    lance.dataset(uri).optimize.optimize_indices()
    with pytest.raises(ls.CommitConflictError, match="CreateIndex"):
        stale.optimize.optimize_indices()
    assert len(list((Path(uri) / "_indices").iterdir())) == 3  # ours were removed
    stale_pylance = lance.dataset(uri)
    ls.dataset(uri).drop_index("vec_idx")
    with pytest.raises(OSError, match="conflict"):
        stale_pylance.optimize.optimize_indices(retrain=True)
    assert lance.dataset(uri).list_indices() == []
    assert ls.check(uri).ok


def test_the_verbs_on_a_flagged_table(tmp_path: Path) -> None:
    uri = str(tmp_path / "f.lance")
    ds = ls.write_dataset(_table(0, N), uri, max_rows_per_file=N // 2, semantic_types=True)
    ds.create_index("vec", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
    ds.insert(_table(N, N + 1000))
    ds.optimize.optimize_indices()
    seg = ds.create_index_uncommitted(
        "vec", "IVF_SQ", name="sq", num_partitions=2, fragment_ids=[0, 1, 2]
    )
    ds = ls.Dataset.commit(uri, ls.LanceOperation.CreateIndex([seg], []), read_version=ds.version)
    assert [(d.name, d.num_rows_indexed, len(d.segments)) for d in ds.describe_indices()] == [
        ("sq", N + 1000, 1),
        ("vec_idx", N + 1000, 2),
    ]
    assert ds.stats.index_stats("vec_idx")["num_indexed_rows_per_delta"] == [N, 1000]
    near = {"column": "vec", "q": DATA[N + 3], "k": 1, "nprobes": 4, "refine_factor": 4}
    assert ds.to_table(nearest=near, columns=["id"])["id"].to_pylist() == [N + 3]
    ds.drop_index("sq")
    assert [d.name for d in ds.describe_indices()] == ["vec_idx"]
    assert ls.check(uri).ok
