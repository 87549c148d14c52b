"""Indices stay true (issue 30 item 4): random sequences of operations on twin tables with
a vector index, checked after every step.

Two tables get the same operations: append, delete (some rows, whole fragments), update
(rows move to new fragments), merge_insert (update and insert), compact_files and
create_index(replace=True). By default we run an operation on our twin and pylance on its
twin; ``swapped`` steps run pylance on ours and us on pylance's. Our twin's index is built by
us or by pylance, pylance's twin's by pylance. The index is IVF_FLAT searched with every
partition probed, so its recall is 1: after every step our ``nearest`` and pylance's, on
both twins, return the rows an exact search of the live rows returns (distances to float
tolerance), and the twins hold the same fragments and index entries (name, fragment
bitmap).

Bounded for CI (a few hundred rows of 8 dimensions, a fixed seed); for longer hunts set
``LANCE_SEMANTIC_INDEX_TWINS_EXAMPLES`` / ``LANCE_SEMANTIC_INDEX_TWINS_STEPS`` (and
``LANCE_SEMANTIC_INDEX_TWINS_RANDOM=1`` for other examples than CI's).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.property.twin_support import assert_library_error, attempt, fragments_of

import lance_semantic as ls
from lance_semantic.manifest import index_entries

pytestmark = pytest.mark.interop

DIM = 8
K = 5
PARTITIONS = 3
EXAMPLES = int(os.environ.get("LANCE_SEMANTIC_INDEX_TWINS_EXAMPLES", "10"))
STEPS = int(os.environ.get("LANCE_SEMANTIC_INDEX_TWINS_STEPS", "15"))

SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=os.environ.get("LANCE_SEMANTIC_INDEX_TWINS_RANDOM", "0") == "0",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _vectors(ids: list[int], tag: int) -> np.ndarray:
    """One vector per (id, tag), the same for both twins."""
    out = np.empty((len(ids), DIM), dtype=np.float32)
    for k, i in enumerate(ids):
        out[k] = np.random.default_rng(i * 1000 + tag).random(DIM, dtype=np.float32)
    return out


def _rows(ids: list[int], tag: int) -> pa.Table:
    vectors = _vectors(ids, tag).reshape(-1)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "x": pa.array([tag] * len(ids), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors), DIM),
        }
    )


def _queries() -> np.ndarray:
    return np.random.default_rng(2030).random((2, DIM), dtype=np.float32)


def _oracle(uri: str, q: np.ndarray) -> tuple[list[int], np.ndarray]:
    table = lance.dataset(uri).to_table(columns=["id", "vec"])
    if not table.num_rows:
        return [], np.empty(0, np.float32)
    vectors = table.column("vec").combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    d = ((vectors.astype(np.float64) - q) ** 2).sum(axis=1)
    order = np.argsort(d, kind="stable")[:K]
    ids = table.column("id").to_numpy()
    return ids[order].tolist(), d[order]


def _nearest(ds: Any, q: np.ndarray) -> tuple[list[int], np.ndarray]:
    near = {"column": "vec", "q": q, "k": K, "nprobes": PARTITIONS}
    got = ds.to_table(columns=["id"], nearest=near)
    return got["id"].to_pylist(), got["_distance"].to_numpy()


def _index_of(uri: str) -> list[tuple[str, tuple[int, ...]]]:
    manifest = ls.dataset(uri)._snapshot().manifest
    return sorted((e.name, e.fragment_ids) for e in index_entries(manifest.index_section))


def _index_uuids(uri: str) -> list[str]:
    manifest = ls.dataset(uri)._snapshot().manifest
    return sorted(e.uuid for e in index_entries(manifest.index_section))


class IndexTwins(RuleBasedStateMachine):
    """Our table and pylance's twin, each with an IVF_FLAT index, under the same random
    operations."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="ls-index-twins-")
        self.ours = os.path.join(self.dir, "ours.lance")
        self.theirs = os.path.join(self.dir, "theirs.lance")
        self.next_id = 0
        self.tag = 0

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _fresh(self, n: int) -> list[int]:
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        return ids

    def _both(
        self, what: str, swapped: bool, ours: Callable[[Any], Any], theirs: Callable[[Any], Any]
    ) -> None:
        """``ours(handle)`` on our twin by us and ``theirs(handle)`` on pylance's by pylance
        (``swapped``: pylance's call on our twin, ours on pylance's); both succeed or both
        refuse, ours with a library error."""
        note(f"{what}{' (swapped)' if swapped else ''}")
        if swapped:
            t = attempt(lambda: theirs(lance.dataset(self.ours)))
            o = attempt(lambda: ours(ls.dataset(self.theirs)))
        else:
            t = attempt(lambda: theirs(lance.dataset(self.theirs)))
            o = attempt(lambda: ours(ls.dataset(self.ours)))
        if o.error is not None:
            assert_library_error(o.error, what)
        assert o.ok == t.ok, f"{what}: pylance {t}; lance-semantic {o}"
        event(f"{what.split(' ')[0]}: {'done' if o.ok else 'refused by both'}")

    @initialize(
        n=st.integers(60, 200), files=st.integers(1, 4), builder=st.sampled_from(["us", "pylance"])
    )
    def setup(self, n: int, files: int, builder: str) -> None:
        rows = _rows(self._fresh(n), 0)
        per_file = -(-n // files)
        lance.write_dataset(rows, self.theirs, max_rows_per_file=per_file)
        ls.write_dataset(rows, self.ours, max_rows_per_file=per_file)
        lance.dataset(self.theirs).create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
        owner: Any = ls if builder == "us" else lance
        owner.dataset(self.ours).create_index("vec", "IVF_FLAT", num_partitions=PARTITIONS)
        note(f"setup: {n} rows in {files} files, our index built by {builder}")

    @rule(n=st.integers(1, 60), swapped=st.booleans())
    def append(self, n: int, swapped: bool) -> None:
        self.tag += 1
        rows = _rows(self._fresh(n), self.tag)
        self._both(
            f"append {n}",
            swapped,
            lambda ds: ds.insert(rows),
            lambda ds: lance.write_dataset(rows, ds.uri, mode="append"),
        )

    @rule(
        predicate=st.sampled_from(["id % 5 = 1", "id % 3 = 0", "id < 40", "id >= 150", "x = 1"]),
        swapped=st.booleans(),
    )
    def delete(self, predicate: str, swapped: bool) -> None:
        self._both(
            f"delete {predicate}",
            swapped,
            lambda ds: ds.delete(predicate),
            lambda ds: ds.delete(predicate),
        )

    @rule(where=st.sampled_from(["id % 4 = 2", "id < 30", "x > 0"]), swapped=st.booleans())
    def update(self, where: str, swapped: bool) -> None:
        self._both(
            f"update where {where}",
            swapped,
            lambda ds: ds.update({"x": "x + 10"}, where=where),
            lambda ds: ds.update({"x": "x + 10"}, where=where),
        )

    @rule(
        existing=st.integers(0, 20),
        new=st.integers(0, 20),
        swapped=st.booleans(),
        step=st.integers(1, 9),
    )
    def merge_insert(self, existing: int, new: int, swapped: bool, step: int) -> None:
        self.tag += 1
        ids = lance.dataset(self.theirs).to_table(columns=["id"])["id"].to_pylist()
        source = _rows(sorted(ids)[::step][:existing] + self._fresh(new), self.tag)

        def run(ds: Any) -> Any:
            return (
                ds.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(source)
            )

        self._both(f"merge_insert {existing}+{new}", swapped, run, run)

    @rule(
        rows=st.sampled_from([None, 50, 1000]),
        threshold=st.sampled_from([None, 0.01]),
        swapped=st.booleans(),
    )
    def compact_files(self, rows: int | None, threshold: float | None, swapped: bool) -> None:
        options: dict[str, Any] = {}
        if rows is not None:
            options["target_rows_per_fragment"] = rows
        if threshold is not None:
            options["materialize_deletions_threshold"] = threshold
        before = {uri: _index_uuids(uri) for uri in (self.ours, self.theirs)}
        self._both(
            f"compact_files {options}",
            swapped,
            lambda ds: ds.optimize.compact_files(**options),
            lambda ds: ds.optimize.compact_files(**options),
        )
        remapped = [before[uri] != _index_uuids(uri) for uri in (self.ours, self.theirs)]
        assert remapped[0] == remapped[1], "one twin's index was remapped, not the other's"
        event(f"compact_files: {'index remapped' if remapped[0] else 'index kept'}")

    @rule(builder=st.sampled_from(["us", "pylance"]))
    def create_index(self, builder: str) -> None:
        """Rebuild the indices: pylance on its twin, ``builder`` on ours."""
        if lance.dataset(self.theirs).count_rows() < 4 * PARTITIONS:
            return
        note(f"create_index(replace=True), ours by {builder}")
        lance.dataset(self.theirs).create_index(
            "vec", "IVF_FLAT", num_partitions=PARTITIONS, replace=True
        )
        owner: Any = ls if builder == "us" else lance
        owner.dataset(self.ours).create_index(
            "vec", "IVF_FLAT", num_partitions=PARTITIONS, replace=True
        )

    @invariant()
    def twins_agree(self) -> None:
        if not os.path.exists(self.theirs):
            return
        assert fragments_of(ls.dataset(self.ours)) == fragments_of(lance.dataset(self.theirs))
        assert _index_of(self.ours) == _index_of(self.theirs)

    @invariant()
    def nearest_is_exact_everywhere(self) -> None:
        if not os.path.exists(self.theirs):
            return
        for q in _queries():
            want, want_d = _oracle(self.theirs, q)
            assert _oracle(self.ours, q)[0] == want
            for name, ds in (
                ("ours by us", ls.dataset(self.ours)),
                ("ours by pylance", lance.dataset(self.ours)),
                ("theirs by us", ls.dataset(self.theirs)),
                ("theirs by pylance", lance.dataset(self.theirs)),
            ):
                ids, d = _nearest(ds, q)
                assert ids == want, (name, ids, want)
                np.testing.assert_allclose(d, want_d, rtol=1e-4, atol=1e-5, err_msg=name)


IndexTwins.TestCase.settings = SETTINGS
TestIndexTwins = IndexTwins.TestCase
