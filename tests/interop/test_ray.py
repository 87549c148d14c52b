"""``lance_semantic.ray`` on a local Ray: write / append / read / compact on legacy and
flagged tables, pylance reading our legacy results as lance-ray's, interop with lance-ray
both ways, and a worker's refused write raising the library error on the caller.

One Ray instance serves the module (its start costs 5-9 s and about 1 GiB), so the tests are
few and each covers a whole flow.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from tests import ray_support

import lance_semantic as ls

ray = pytest.importorskip("ray")
lance_ray = pytest.importorskip("lance_ray")
lsray = pytest.importorskip("lance_semantic.ray")

pytestmark = [pytest.mark.interop, *ray_support.RAY_WARNINGS]


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    yield from ray_support.local_ray()


def _block(start: int, n: int = 50, s: pa.DataType | None = None) -> pa.Table:
    strings = pa.array([f"s{i}" for i in range(start, start + n)])
    if s is not None:
        strings = strings.dictionary_encode() if pa.types.is_dictionary(s) else strings.cast(s)
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "s": strings,
            "st": pa.array([{"x": i, "tag": f"t{i % 3}"} for i in range(start, start + n)]),
        }
    )


def _file_types(ds: ls.Dataset, column: str) -> list[pa.DataType]:
    return [
        LanceFileReader(os.path.join(ds.uri, "data", df.path)).metadata().schema.field(column).type
        for f in ds.manifest.fragments
        for df in f.files
    ]


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


def test_legacy_write_append_read_compact_as_lance_ray(tmp_path: Path) -> None:
    """The same blocks through our write_lance and lance-ray's: pylance reads both the same
    (types, values, field ids); read_lance and compact_files agree with them."""
    ours_uri, theirs_uri = str(tmp_path / "ours"), str(tmp_path / "theirs")
    blocks = ray.data.from_arrow([_block(0), _block(50), _block(100), _block(150)])
    more = ray.data.from_arrow([_block(200), _block(250)])
    small = {"min_rows_per_file": 10}  # one write task per block or two
    ds = lsray.write_lance(blocks, ours_uri, max_rows_per_file=60, **small)
    assert ds is not None and ds.version == 1 and not ds.semantic_types
    ds = lsray.write_lance(more, ours_uri, mode="append", **small)
    assert ds is not None and ds.version == 2
    lance_ray.write_lance(blocks, theirs_uri, max_rows_per_file=60, **small)
    lance_ray.write_lance(more, theirs_uri, mode="append", **small)

    ours, theirs = lance.dataset(ours_uri), lance.dataset(theirs_uri)
    assert ours.schema == theirs.schema
    assert str(ours.lance_schema) == str(theirs.lance_schema)  # names, ids, logical types
    expected = _sorted(theirs.to_table())
    assert _sorted(ours.to_table()).equals(expected)
    assert expected.num_rows == 300

    read = lsray.read_lance(ours_uri)
    assert read.schema().base_schema == ls.dataset(ours_uri).schema
    assert _sorted(pa.concat_tables(ray.get(read.to_arrow_refs()))).equals(expected)
    part = lsray.read_lance(ours_uri, columns=["id", "st.x"], filter="id >= 250")
    got = _sorted(pa.concat_tables(ray.get(part.to_arrow_refs())))
    assert got["id"].to_pylist() == list(range(250, 300))

    fragments = len(ls.dataset(ours_uri).get_fragments())
    metrics = lsray.compact_files(ours_uri, target_rows_per_fragment=1000)
    assert metrics is not None and metrics.fragments_removed == fragments
    after = ls.dataset(ours_uri)
    assert after.version == 4 and len(after.get_fragments()) == 1  # ReserveFragments + Rewrite
    assert _sorted(lance.dataset(ours_uri).to_table()).equals(expected)
    assert lsray.compact_files(ours_uri, target_rows_per_fragment=1000) is None
    assert ls.check(ours_uri).ok


def test_flagged_blocks_keep_their_layouts(tmp_path: Path) -> None:
    """Blocks feeding one string column utf8, large_utf8 and dictionary: one flagged table,
    one semantic type, each data file in its block's layout; reads in any output encoding,
    pinned to a version; compaction merges into one layout that holds them all."""
    uri = str(tmp_path / "f")
    layouts = [pa.string(), pa.large_string(), pa.dictionary(pa.int32(), pa.string())]
    blocks = ray.data.from_arrow([_block(100 * i, s=t) for i, t in enumerate(layouts)])
    ds = lsray.write_lance(blocks, uri, data_storage_version="2.3", min_rows_per_file=10)
    assert ds is not None and ds.semantic_types
    assert ds.semantic_schema.field("s").logical_type == "string"
    assert sorted(map(str, _file_types(ds, "s"))) == sorted(map(str, layouts))
    more = ray.data.from_arrow([_block(900, s=pa.large_string())])
    ds = lsray.write_lance(more, uri, mode="append", min_rows_per_file=10)
    assert ds is not None and ds.version == 2

    read = lsray.read_lance(uri, output_encodings={"s": "large_utf8"})
    table = _sorted(pa.concat_tables(ray.get(read.to_arrow_refs())))
    assert table.schema.field("s").type == pa.large_string()
    assert table.num_rows == 200 and table["s"].to_pylist()[-1] == "s949"
    assert table.equals(_sorted(ls.dataset(uri).to_table(output_encodings={"s": "large_utf8"})))
    first = lsray.read_lance(uri, version=1)
    assert first.count() == 150

    lsray.compact_files(uri, target_rows_per_fragment=10_000)
    compacted = ls.dataset(uri)
    assert len(compacted.get_fragments()) == 1 and compacted.semantic_types
    assert _file_types(compacted, "s") == [pa.large_string()]
    assert _sorted(compacted.to_table()).equals(_sorted(ls.dataset(uri, version=2).to_table()))
    with pytest.raises(Exception, match="cannot be read by this version"):
        lance.dataset(uri).to_table()


def test_interop_with_lance_ray(tmp_path: Path) -> None:
    """We read what lance-ray wrote; lance-ray reads (and appends to) our legacy table."""
    theirs_uri, ours_uri = str(tmp_path / "theirs"), str(tmp_path / "ours")
    blocks = ray.data.from_arrow([_block(0), _block(50)])
    lance_ray.write_lance(blocks, theirs_uri, min_rows_per_file=10)
    expected = _sorted(lance.dataset(theirs_uri).to_table())
    got = lsray.read_lance(theirs_uri)
    assert _sorted(pa.concat_tables(ray.get(got.to_arrow_refs()))).equals(expected)

    lsray.write_lance(blocks, ours_uri, min_rows_per_file=10)
    read = lance_ray.read_lance(ours_uri)
    assert _sorted(pa.concat_tables(ray.get(read.to_arrow_refs()))).equals(expected)
    lance_ray.write_lance(ray.data.from_arrow([_block(100)]), ours_uri, mode="append")
    assert ls.dataset(ours_uri).count_rows() == 150
    assert ls.check(ours_uri).ok


def test_a_refused_block_raises_the_library_error(tmp_path: Path) -> None:
    flagged = ls.write_dataset(_block(0), str(tmp_path / "f"), data_storage_version="2.3")
    legacy = ls.write_dataset(_block(0), str(tmp_path / "l"))
    bad = pa.table({"id": pa.array([1], pa.int64()), "s": pa.array([7], pa.int64())})
    with pytest.raises(ls.UnsupportedInputTypeError) as refused:
        lsray.write_lance(
            ray.data.from_arrow([_block(50), bad]), flagged.uri, mode="append", min_rows_per_file=1
        )
    assert type(refused.value) is ls.UnsupportedInputTypeError
    assert (refused.value.field_path, refused.value.input_type) == ("s", "int64")
    with pytest.raises(ls.SchemaMismatchError) as mismatch:
        lsray.write_lance(
            ray.data.from_arrow([_block(50, s=pa.large_string())]), legacy.uri, mode="append"
        )
    assert type(mismatch.value) is ls.SchemaMismatchError
    assert mismatch.value.field_path == "s"
    with pytest.raises(ls.DatasetExistsError):
        lsray.write_lance(ray.data.from_arrow([_block(50)]), legacy.uri)
    assert ls.dataset(flagged.uri).version == ls.dataset(legacy.uri).version == 1


def test_the_docs_ray_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block of docs/guides/two-phase-and-ray.md, twice, on this module's Ray (its
    ``ray.init(..., ignore_reinit_error=True)`` finds Ray running); tests/docs/test_blocks.py
    runs the other pages."""
    import tempfile

    from tests.docs.blocks import run_page
    from tests.docs.page_checks import RAY_PAGE, two_phase_and_ray

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_page(RAY_PAGE, tmp_path, two_phase_and_ray)
