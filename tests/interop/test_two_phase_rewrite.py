"""A two-phase ``Rewrite`` of fragments written without ids, against pylance: one commit,
one new version, the new fragments numbered in group order after the table's highest id
(after a concurrent append's too, when the commit is rebased over one). The operation
used to reserve the ids in a commit of its own first, so it made two versions where
pylance makes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import lance.fragment
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

ROWS = 12  # six fragments of two rows


def _rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def _state(uri: str) -> tuple[int, list[int], list[int], list[int]]:
    """What pylance reads: the latest version, the versions, fragment ids, the ids."""
    ds = lance.dataset(uri)
    return (
        ds.version,
        [v["version"] for v in ds.versions()],
        [f.fragment_id for f in ds.get_fragments()],
        ds.to_table()["id"].to_pylist(),
    )


def _rewrite(engine: str, uri: str, groups: list[list[int]], concurrent: bool) -> None:
    """Rewrites each group of fragment positions into one new id-less fragment (the same
    rows), committed by ``engine`` at the version read before; ``concurrent``: an append
    lands in between."""
    lance.write_dataset(_rows(0, ROWS), uri, max_rows_per_file=2)
    read = lance.dataset(uri)
    frags = read.get_fragments()
    pairs: list[tuple[list[Any], Any]] = []
    for group in groups:
        old = [frags[k].metadata for k in group]
        rows = pa.concat_tables([frags[k].to_table() for k in group])
        if engine == "pylance":
            new = lance.fragment.LanceFragment.create(uri, rows)
        else:
            (new,) = ls.fragment.write_fragments(rows, uri)
        assert new.id == 0
        pairs.append((old, new))
    if concurrent:
        lance.write_dataset(_rows(100, 3), uri, mode="append")
    if engine == "pylance":
        op: Any = lance.LanceOperation.Rewrite(
            [lance.LanceOperation.RewriteGroup(old, [new]) for old, new in pairs], []
        )
        lance.LanceDataset.commit(uri, op, read_version=read.version)
    else:
        op = ls.LanceOperation.Rewrite(
            [ls.LanceOperation.RewriteGroup(old, [new]) for old, new in pairs]
        )
        ls.Dataset.commit(uri, op, read_version=read.version)


@pytest.mark.parametrize("groups", [[[0, 1]], [[0, 1], [3, 4]], [[5]], [[2], [0, 1], [4, 5]]])
@pytest.mark.parametrize("concurrent", [False, True])
def test_rewrite_of_id_less_fragments_is_one_version_like_pylance(
    tmp_path: Path, groups: list[list[int]], concurrent: bool
) -> None:
    _rewrite("pylance", str(tmp_path / "theirs"), groups, concurrent)
    _rewrite("ours", str(tmp_path / "ours"), groups, concurrent)
    theirs, ours = _state(str(tmp_path / "theirs")), _state(str(tmp_path / "ours"))
    assert ours == theirs
    version, versions, _, ids = ours
    assert versions == list(range(1, version + 1)) and version == 2 + concurrent
    assert sorted(ids) == list(range(ROWS)) + ([100, 101, 102] if concurrent else [])
    ds = ls.dataset(str(tmp_path / "ours"))
    assert ds.to_table()["id"].to_pylist() == ids


@pytest.mark.parametrize("old_ids", [[99], [1, 99], [99, 0]])
def test_rewrite_of_a_fragment_the_table_lacks_is_a_conflict_like_pylance(
    tmp_path: Path, old_ids: list[int]
) -> None:
    """Old fragments the table does not have (one of them or all): pylance's
    ``CommitConflictError`` naming the fragment, and nothing committed; it was a
    ``ValueError`` from ``min()`` with no fragment named."""
    import json

    versions = {}
    for engine in ("pylance", "ours"):
        uri = str(tmp_path / engine)
        lance.write_dataset(_rows(0, ROWS), uri, max_rows_per_file=2)
        read = lance.dataset(uri)
        template = read.get_fragments()[0].metadata.to_json()
        old = [
            lance.fragment.FragmentMetadata.from_json(json.dumps({**template, "id": i}))
            for i in old_ids
        ]
        if engine == "pylance":
            new: Any = lance.fragment.LanceFragment.create(uri, _rows(0, 2))
            op: Any = lance.LanceOperation.Rewrite(
                [lance.LanceOperation.RewriteGroup(old, [new])], []
            )
            with pytest.raises(Exception, match="id=99") as theirs:
                lance.LanceDataset.commit(uri, op, read_version=read.version)
            assert type(theirs.value).__name__ == "CommitConflictError"
        else:
            (new,) = ls.fragment.write_fragments(_rows(0, 2), uri)
            op = ls.LanceOperation.Rewrite([ls.LanceOperation.RewriteGroup(old, [new])])
            with pytest.raises(ls.errors.CommitConflictError, match="no fragment 99") as ours:
                ls.Dataset.commit(uri, op, read_version=read.version)
            assert not ours.value.retryable
        versions[engine] = _state(uri)
    assert versions["ours"] == versions["pylance"]
    assert versions["ours"][0] == 1
