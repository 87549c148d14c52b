"""Updates read the predicate's columns first and the whole rows only of the fragments with
a match, taking them when they are few (``dataset.mutations.rows_to_change``).

The class: small fragments in groups, with deletions, a second data file, nested, list and
dictionary columns, blob columns, flagged tables whose files hold every string layout;
predicates matching no row, one, a few per fragment, most (read whole), on a nested field
and on the column being updated. Legacy tables are compared with pylance's update of a twin
table; flagged and blob tables with the rows as written, updated in Python.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

mutation_scan = importlib.import_module("lance_semantic.dataset.mutations.rows_to_change")

WHERE = {
    "none": "i < 0",
    "one": "id = 17",
    "few": "i % 13 = 3",
    "nested": "st.x < 5",
    "nulls": "s IS NULL AND i > 30",
    "most": "i % 5 <> 0",
}


def _rows(start: int, n: int) -> pa.Table:
    i = np.arange(start, start + n)
    st = pa.StructArray.from_arrays(
        [pa.array((i % 9).astype(np.int32)), pa.array([f"y{k}" for k in i])], names=["x", "y"]
    )
    return pa.table(
        {
            "id": i,
            "i": i,
            "s": pa.array([None if k % 7 == 0 else f"s{k}" for k in i], pa.string()),
            "st": st,
            "lst": pa.array([list(range(k % 4)) for k in i], pa.list_(pa.int64())),
            "d": pa.array([f"d{k % 3}" for k in i]).dictionary_encode(),
        }
    )


def _twins(tmp: Path, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    uri = str(tmp / f"a{seed}")
    at = 0
    for k in range(int(rng.integers(25, 45))):
        n = int(rng.integers(1, 10))
        lance.write_dataset(_rows(at, n), uri, mode="create" if k == 0 else "append")
        at += n
    lance.dataset(uri).delete(f"i % {int(rng.integers(4, 8))} = 2")
    if seed % 2:
        lance.dataset(uri).add_columns({"g": "i * 2"})  # a second data file per fragment
    other = str(tmp / f"b{seed}")
    shutil.copytree(uri, other)
    return uri, other


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize(
    "updates",
    [{"s": "'new'"}, {"i": "i + 1000", "st": "named_struct('x', st.x + 1, 'y', 'z')"}],
    ids=["other column", "filtered and nested columns"],
)
def test_updates_over_small_fragments_match_pylance(
    tmp_path: Path, seed: int, where: str, updates: dict[str, str]
) -> None:
    ours_uri, theirs_uri = _twins(tmp_path, seed)
    ours, theirs = ls.dataset(ours_uri), lance.dataset(theirs_uri)
    got = ours.update(updates, where=WHERE[where])
    want = theirs.update(updates, where=WHERE[where])
    assert got["num_rows_updated"] == want["num_rows_updated"]
    for reader in (ls.dataset, lance.dataset):
        a, b = reader(ours_uri).to_table(), reader(theirs_uri).to_table()
        assert a.sort_by("id").equals(b.sort_by("id"))
    ours.update({"s": "'again'"}, where="id = 5 OR id = 60")  # from the kept readers
    theirs.update({"s": "'again'"}, where="id = 5 OR id = 60")
    assert ours.to_table().sort_by("id").equals(theirs.to_table().sort_by("id"))


def test_the_rows_taken_are_those_a_whole_read_would_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same update, with every matching fragment read whole (no take), leaves the same
    table."""
    a, b = _twins(tmp_path, 3)
    ls.dataset(a).update({"s": "'x'"}, where=WHERE["few"])
    monkeypatch.setattr(mutation_scan, "_DENSE", -1.0)  # every fragment with a match: whole
    ls.dataset(b).update({"s": "'x'"}, where=WHERE["few"])
    assert ls.dataset(a).to_table().sort_by("id").equals(ls.dataset(b).to_table().sort_by("id"))


LAYOUTS = [pa.string(), pa.large_string(), pa.string_view(), pa.dictionary(pa.int8(), pa.string())]


@pytest.mark.parametrize("where", ["id = 11", "id % 6 = 1", "id >= 0"])
def test_updates_of_a_flagged_table_in_every_layout(tmp_path: Path, where: str) -> None:
    """Each fragment appended from another string layout (every layout in every position);
    the rows come back as written, updated where the predicate holds."""
    uri = str(tmp_path / "flagged")
    rows: list[dict] = []
    for k in range(24):
        ids = list(range(k * 3, k * 3 + 3))
        texts = [f"t{j}" for j in ids]
        data = pa.table({"id": ids, "t": pa.array(texts).cast(LAYOUTS[k % len(LAYOUTS)])})
        ls.write_dataset(data, uri, mode="append" if k else "create", data_storage_version="2.3")
        rows += [{"id": j, "t": t} for j, t in zip(ids, texts, strict=True)]
    ds = ls.dataset(uri)
    ds.delete("id % 10 = 9")
    rows = [r for r in rows if r["id"] % 10 != 9]
    keep = {"id = 11": lambda j: j == 11, "id % 6 = 1": lambda j: j % 6 == 1}.get(
        where, lambda j: True
    )
    ds.update({"t": "concat(t, '!')"}, where=where)
    want = [{"id": r["id"], "t": r["t"] + "!" if keep(r["id"]) else r["t"]} for r in rows]
    got = ds.to_table(output_encodings={"t": "utf8"}).sort_by("id").to_pylist()
    assert got == want


def test_updates_of_a_table_with_blob_columns(tmp_path: Path) -> None:
    """Blob v1 columns (bytes stored out of line, pylance's layout on data storage 2.1):
    the rows taken keep their blobs."""
    uri = str(tmp_path / "blobs")
    field = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    schema = pa.schema([pa.field("id", pa.int64()), field])
    for k in range(20):
        ids = list(range(k * 4, k * 4 + 4))
        data = pa.table({"id": ids, "b": [bytes([j % 251]) * (j + 1) for j in ids]}, schema)
        lance.write_dataset(data, uri, mode="append" if k else "create", data_storage_version="2.1")
    ds = ls.dataset(uri)
    ds.update({"id": "id + 1000"}, where="id % 9 = 4")
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    want_ids = sorted(j + 1000 if j % 9 == 4 else j for j in range(80))
    assert sorted(ids) == want_ids
    for j in range(80):
        new = j + 1000 if j % 9 == 4 else j
        blob = ds.take_blobs("b", indices=[ids.index(new)])[0].readall()
        assert blob == bytes([j % 251]) * (j + 1), j
