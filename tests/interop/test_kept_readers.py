"""Fragment readers are kept from one scan to the next (``read.readers``).

A kept reader holds what its fragment needed before its first read (data files opened and
planned, the deletion vector), so it must never serve a fragment, table schema or output
schema other than its own. The class: one handle (and a second one on the same table)
moving through many commits -- deletes, updates, appends, a column added, renamed and
dropped, a restore -- with every read shape after each (every column, some, a filter with
and without late materialisation, a count, offsets, another output encoding), compared
each time with pylance's read of the same version, and with the cache's bound forced low.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls

readers = importlib.import_module("lance_semantic.read.readers")


def _rows(start: int, n: int) -> pa.Table:
    i = np.arange(start, start + n)
    return pa.table({"id": i, "s": [f"s{k}" for k in i], "f": i.astype(np.float64)})


def _table(tmp: Path, fragments: int = 24) -> str:
    uri = str(tmp / "t")
    lance.write_dataset(_rows(0, 6 * fragments), uri, max_rows_per_file=6)
    return uri


def _reads(ds) -> dict[str, object]:
    """Every read shape, the same calls for both engines."""
    names = list(ds.schema.names)
    return {
        "all": ds.to_table(),
        "some": ds.to_table(columns=names[::-1][:2]),
        "filter": ds.to_table(filter="id % 5 = 1"),
        "selective": ds.to_table(columns=[names[0]], filter="id = 37"),
        "dense": ds.to_table(filter="id >= 3"),
        "count": ds.count_rows("id % 3 = 0"),
        "rows": ds.count_rows(),
        "window": ds.to_table(offset=11, limit=23),
    }


def _same_as_pylance(ours, uri: str, version: int) -> None:
    theirs = lance.dataset(uri, version=version)
    got, want = _reads(ours), _reads(theirs)
    for shape in want:
        assert (
            got[shape] == want[shape]
            if isinstance(want[shape], int)
            else (got[shape].equals(want[shape]))
        ), f"version {version}, {shape}"


def test_one_handle_through_many_commits_reads_each_version_as_pylance(tmp_path: Path) -> None:
    uri = _table(tmp_path)
    ds = ls.dataset(uri)
    other = ls.dataset(uri)  # a second handle on the same table: its own manifest objects
    rng = np.random.default_rng(7)
    _same_as_pylance(ds, uri, ds.version)
    steps = [
        lambda: ds.delete(f"id = {int(rng.integers(0, 144))}"),
        lambda: ds.delete(f"id % 11 = {int(rng.integers(0, 11))}"),
        lambda: ds.update({"f": "f + 0.5"}, where=f"id % 7 = {int(rng.integers(0, 7))}"),
        lambda: ds.insert(_rows(1000 + ds.version * 10, 4)),
        lambda: ds.delete(f"id = {int(rng.integers(0, 144))}"),
        lambda: ds.add_columns({"g": "id * 2"}),
        lambda: ds.delete("id % 13 = 2"),
        lambda: ds.alter_columns({"path": "g", "name": "h"}),
        lambda: ds.update({"h": "h + 1"}, where="id < 20"),
        lambda: ds.drop_columns(["h"]),
        lambda: ds.delete("id < 9"),
    ]
    for step in steps:
        _reads(ds)  # the previous version's readers are kept
        step()
        _same_as_pylance(ds, uri, ds.version)
    first = ds.version
    old = ds.checkout_version(2)  # (a new handle, as pylance's)
    old.restore()
    _same_as_pylance(old, uri, old.version)
    ds = ds.checkout_latest()
    _same_as_pylance(ds, uri, ds.version)
    _same_as_pylance(ds, uri, ds.version)
    _same_as_pylance(other.checkout_version(first), uri, first)


def test_another_output_layout_or_fields_never_shares_a_reader(tmp_path: Path) -> None:
    """Flagged table, one handle: the same fields in two output layouts are two shapes."""
    uri = str(tmp_path / "f")
    for k in range(6):
        data = pa.table({"id": [k], "s": pa.array([f"v{k}"], pa.large_string())})
        ls.write_dataset(data, uri, mode="append" if k else "create", data_storage_version="2.3")
    ds = ls.dataset(uri)
    for _ in range(2):  # the second time from kept readers
        assert ds.to_table().schema.field("s").type == pa.large_string()
        view = ds.to_table(output_encodings={"s": "utf8_view"})
        assert view.schema.field("s").type == pa.string_view()
        small = ds.to_table(output_encodings={"s": "utf8"}, filter="id > 2")
        assert small.schema.field("s").type == pa.string()
        assert small.column("s").to_pylist() == ["v3", "v4", "v5"]
        assert ds.to_table(columns=["id"]).column_names == ["id"]


def test_a_second_scan_of_a_shape_opens_no_reader(tmp_path: Path) -> None:
    uri = _table(tmp_path, fragments=12)
    ds = ls.dataset(uri)
    readers.clear()
    first = ds.to_table(filter="id % 2 = 0")
    made = readers._kept[0]
    assert made >= 12  # the filter's column, then the others
    assert ds.to_table(filter="id % 2 = 0").equals(first)
    assert readers._kept[0] == made
    ds.delete("id = 0")  # one fragment changes: one reader per shape made anew
    assert ds.to_table(filter="id % 2 = 0").equals(first.slice(1))
    assert made < readers._kept[0] <= made + 2


def test_the_bound_forgets_readers_and_reads_stay_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = _table(tmp_path, fragments=40)
    monkeypatch.setattr(readers, "KEPT", 7)  # fewer than the fragments of one scan
    readers.clear()
    ds = ls.dataset(uri)
    for version in range(3):
        _same_as_pylance(ds, uri, ds.version)
        assert readers._kept[0] <= 7
        ds.delete(f"id = {version * 50}")


def test_scans_of_one_handle_from_several_threads(tmp_path: Path) -> None:
    uri = _table(tmp_path, fragments=60)
    ds = ls.dataset(uri)
    ds.delete("id % 9 = 4")
    want = _reads(lance.dataset(uri))
    errors: list[BaseException] = []

    def scan() -> None:
        try:
            for _ in range(3):
                got = _reads(ds)
                for shape, w in want.items():
                    assert got[shape] == w if isinstance(w, int) else got[shape].equals(w)
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
