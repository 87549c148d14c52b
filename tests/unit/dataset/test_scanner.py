"""``Dataset.scanner()`` and the rest of ``Dataset`` as a
``pyarrow.dataset.Dataset``: the scanner's methods, windows and batch sizes, ``_rowid`` /
``_rowaddr`` on a table of several fragments with deletions, argument errors naming the
argument, and the pyarrow methods that work through the scan or refuse clearly. (pylance's
answers on the same tables: ``tests/interop/test_engines.py``.)"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pytest

import lance_semantic as ls
from lance_semantic.errors import (
    ColumnNotFoundError,
    InvalidExpressionError,
    NotSupportedYetError,
)
from lance_semantic.query.arrow_filters import expression_columns

N = 50
PER_FILE = 12  # fragments 0..4 of 12, 12, 12, 12, 2 rows


@pytest.fixture
def table(tmp_path: Path) -> ls.Dataset:
    i = np.arange(N)
    data = pa.table({"i": i, "s": [f"s{k}" for k in range(N)], "f": i * 0.5})
    ds = ls.write_dataset(data, tmp_path / "t.lance", max_rows_per_file=PER_FILE)
    ds.delete("i % 7 = 3")
    ds.delete("i >= 24 AND i < 36")  # fragment 2, whole
    return ds


def _addresses(ids: list[int]) -> list[int]:
    """The row addresses of rows ``i`` of the fixture (rows are laid out in order)."""
    return [(k // PER_FILE) << 32 | (k % PER_FILE) for k in ids]


def _live() -> list[int]:
    return [k for k in range(N) if k % 7 != 3 and not 24 <= k < 36]


# ---- the Scanner ---------------------------------------------------------------------------


def test_scanner_is_a_pyarrow_scanner_with_lance_names(table: ls.Dataset) -> None:
    sc = table.scanner(columns=["s"], filter="i > 40")
    assert isinstance(sc, ls.Scanner) and isinstance(sc, pds.Scanner)
    assert sc.projected_schema == pa.schema([pa.field("s", pa.string())])
    assert sc.dataset_schema == table.schema
    want = [f"s{k}" for k in _live() if k > 40]
    assert sc.to_table().column("s").to_pylist() == want
    assert [v for b in sc.to_batches() for v in b.column("s").to_pylist()] == want
    reader = sc.to_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all().column("s").to_pylist() == want
    assert sc.count_rows() == len(want)
    assert pa.table(sc).column("s").to_pylist() == want  # __arrow_c_stream__
    assert sc.head(2).column("s").to_pylist() == want[:2]
    assert sc.take([2, 0]).column("s").to_pylist() == [want[2], want[0]]
    assert "Scanner(" in repr(sc)


def test_to_reader_streams(table: ls.Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is read until a batch is asked for, and one batch does not read the table."""
    from lance_semantic.storage import datafile
    from lance_semantic.storage.datafile import DataFileReader

    reads: list[int] = []
    read_all, read_whole = DataFileReader.read_all, datafile.read_whole

    def spy(self: DataFileReader, columns: object, start: int, n: int) -> pa.RecordBatch:
        reads.append(n)
        return read_all(self, columns, start, n)  # type: ignore[arg-type]

    def spy_whole(requests: Any) -> list[pa.RecordBatch]:
        reads.extend(n for _, _, n in requests)
        return read_whole(requests)

    monkeypatch.setattr(DataFileReader, "read_all", spy)
    monkeypatch.setattr(datafile, "read_whole", spy_whole)
    reader = table.scanner(columns=["i"], batch_size=12).to_reader()
    assert reads == []
    first = reader.read_next_batch()
    assert first.num_rows <= 12 and 0 < sum(reads) < N


#: filters as SQL and as Arrow expressions, with the rows of the fixture they keep
FILTERS = {
    "none": (None, lambda k: True),
    "sql": ("i % 2 = 0", lambda k: k % 2 == 0),
    "arrow": (pc.field("i") > 30, lambda k: k > 30),
    "arrow string": (pc.field("s") == "s40", lambda k: k == 40),
}


@pytest.mark.parametrize(
    ("limit", "offset"), [(None, None), (5, None), (None, 7), (4, 20), (100, 0), (0, 3), (3, 90)]
)
@pytest.mark.parametrize("flt", list(FILTERS))
def test_limit_offset_and_batch_size(
    table: ls.Dataset, limit: int | None, offset: int | None, flt: str
) -> None:
    expr, keep = FILTERS[flt]
    want = [k for k in _live() if keep(k)][(offset or 0) :]
    want = want if limit is None else want[:limit]
    sc = table.scanner(columns=["i"], filter=expr, limit=limit, offset=offset, batch_size=5)
    batches = list(sc.to_batches())
    assert all(0 < b.num_rows <= 5 for b in batches)
    assert [v for b in batches for v in b.column("i").to_pylist()] == want
    assert sc.to_table().column("i").to_pylist() == want
    assert sc.count_rows() == len(want)


@pytest.mark.parametrize("flt", list(FILTERS))
@pytest.mark.parametrize("columns", [None, ["s"], []])
def test_row_ids_across_fragments_with_deletions(
    table: ls.Dataset, flt: str, columns: list[str] | None
) -> None:
    expr, keep = FILTERS[flt]
    live = [k for k in _live() if keep(k)]
    sc = table.scanner(columns=columns, filter=expr, with_row_id=True, with_row_address=True)
    got = sc.to_table()
    names = (["i", "s", "f"] if columns is None else columns) + ["_rowid", "_rowaddr"]
    assert got.schema.names == names == sc.projected_schema.names
    assert got.schema.field("_rowid").type == pa.uint64()
    assert got.column("_rowid").to_pylist() == _addresses(live)
    assert got.column("_rowaddr").to_pylist() == _addresses(live)
    window = table.scanner(columns=columns, filter=expr, with_row_id=True, offset=1, limit=3)
    assert window.to_table().column("_rowid").to_pylist() == _addresses(live)[1:4]


def test_row_ids_through_take_and_dense_paths(
    table: ls.Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small windows: a fragment spans several windows, evaluations span fragments, and the
    dense path (every column read at once) is reached."""
    import importlib

    fs = importlib.import_module("lance_semantic.read.row_streams")
    monkeypatch.setattr(fs, "WINDOW_ROWS", 4)
    monkeypatch.setattr(fs, "EVAL_ROWS", 6)
    monkeypatch.setattr(fs, "READ_BATCH", 3)
    for flt, keep in (("i = 13", lambda k: k == 13), ("i % 5 <> 0", lambda k: k % 5 != 0)):
        live = [k for k in _live() if keep(k)]
        got = table.scanner(columns=["s"], filter=flt, with_row_id=True).to_table()
        assert got.column("s").to_pylist() == [f"s{k}" for k in live]
        assert got.column("_rowid").to_pylist() == _addresses(live)


def test_scanner_reads_the_version_it_was_made_on(table: ls.Dataset) -> None:
    sc = table.scanner(columns=["i"])
    before = sc.count_rows()
    table.insert(pa.table({"i": [100], "s": ["x"], "f": [1.0]}))
    assert sc.count_rows() == before == sc.to_table().num_rows
    assert table.scanner().count_rows() == before + 1


def test_fragments_and_output_encodings(table: ls.Dataset, tmp_path: Path) -> None:
    frags = table.get_fragments()
    got = table.scanner(columns=["i"], fragments=[frags[1]], with_row_id=True).to_table()
    assert got.column("i").to_pylist() == [k for k in _live() if 12 <= k < 24]
    assert got.column("_rowid").to_pylist()[0] == 1 << 32
    flagged = ls.write_dataset(
        pa.table({"s": pa.array(["a", "b"], pa.large_string())}),
        tmp_path / "f.lance",
        data_storage_version="2.3",
    )
    assert flagged.scanner().projected_schema.field("s").type == pa.large_string()
    over = flagged.scanner(output_encodings={"s": "utf8_view"})
    assert over.to_table().schema.field("s").type == pa.string_view()
    assert pa.table(over).schema.field("s").type == pa.string_view()


def test_pickled_scanner_reads_the_same(table: ls.Dataset) -> None:
    sc = table.scanner(columns=["s"], filter="i > 3", limit=4, with_row_id=True)
    again = pickle.loads(pickle.dumps(sc))
    assert again.to_table().equals(sc.to_table())


# ---- arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"limit": -1}, ValueError, "limit"),
        ({"offset": "3"}, TypeError, "offset"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"with_row_id": "yes"}, TypeError, "with_row_id"),
        ({"with_row_address": 1}, TypeError, "with_row_address"),
        ({"filter": 3}, TypeError, "filter"),
        ({"columns": [1]}, TypeError, "columns"),
        ({"columns": ["nosuch"]}, ColumnNotFoundError, "nosuch"),
        ({"output_encodings": {"s": 1}}, TypeError, "output_encodings"),
        ({"fragments": "0"}, TypeError, "fragments"),
        ({"fragments": [7]}, ValueError, "fragments"),
        ({"foo": 1}, TypeError, "foo"),
        ({"nearest": {"column": "v", "q": [1.0]}}, ValueError, "nearest column 'v'"),
        ({"full_text_query": 3}, TypeError, "full_text_query"),
        ({"order_by": ["i"]}, NotSupportedYetError, "order_by"),
        ({"strict_batch_size": True}, NotSupportedYetError, "strict_batch_size"),
        ({"blob_handling": "all_binary"}, NotSupportedYetError, "blob_handling"),
        ({"filter": "nosuch > 1"}, InvalidExpressionError, "nosuch"),
        ({"filter": pc.field("nosuch") > 1}, InvalidExpressionError, "nosuch"),
        ({"filter": pc.field("i") + 1}, InvalidExpressionError, "boolean"),
    ],
)
def test_bad_arguments_name_the_argument(
    table: ls.Dataset, kwargs: dict, error: type[Exception], names: str
) -> None:
    with pytest.raises(error) as err:
        table.scanner(**kwargs)
    assert names in str(err.value)


def test_tuning_options_are_accepted(table: ls.Dataset) -> None:
    sc = table.scanner(
        columns=["i"],
        batch_readahead=4,
        fragment_readahead=2,
        scan_in_order=False,
        io_buffer_size=1 << 20,
        late_materialization=True,
        use_threads=True,
        prefilter=False,
        nearest=None,
        blob_handling="blobs_descriptions",
        strict_batch_size=False,
    )
    assert sc.count_rows() == len(_live())


def test_head_and_take_arguments(table: ls.Dataset) -> None:
    assert table.head(3, columns=["i"]).column("i").to_pylist() == _live()[:3]
    with pytest.raises(TypeError, match="num_rows"):
        table.head("3")  # type: ignore[arg-type]
    with pytest.raises(ls.errors.ReadError, match="take index 5 is out of range for 2 rows"):
        table.scanner(limit=2).take([5])


# ---- expression columns --------------------------------------------------------------------


def test_expression_columns() -> None:
    schema = pa.schema(
        [
            ("a", pa.int64()),
            ("b", pa.string()),
            ("st", pa.struct([("x", pa.int8())])),
            ("a b", pa.int8()),
        ]
    )
    assert expression_columns(pc.field("b") == "x", schema) == ["b"]
    assert expression_columns((pc.field("b") == "x") & (pc.field("a") > 1), schema) == ["a", "b"]
    assert expression_columns(pc.field("st", "x") > 1, schema) == ["st"]
    assert expression_columns(pc.field("a b").is_null(), schema) == ["a b"]
    assert expression_columns(pc.field("b").isin(["x", "y"]), schema) == ["b"]
    assert expression_columns(pc.scalar(True), schema) == []
    # what cannot be told: every column
    assert expression_columns(pc.field(0) > 1, schema) == schema.names
    assert expression_columns(pc.field("nosuch") > 1, schema) == schema.names


def test_positional_field_references_are_table_order(table: ls.Dataset) -> None:
    got = table.to_table(columns=["s"], filter=pc.field(0) == 5)
    assert got.column("s").to_pylist() == ["s5"]


# ---- Dataset as a pyarrow.dataset.Dataset --------------------------------------------------


def test_dataset_is_a_pyarrow_dataset_and_keeps_its_behaviour(table: ls.Dataset) -> None:
    assert isinstance(table, pds.Dataset)
    rows = len(_live())
    assert repr(table) == f"Dataset(uri={table.uri!r}, version={table.version}, rows={rows})"
    assert table.schema.names == ["i", "s", "f"]
    assert table.count_rows() == table.count_rows("i >= 0") == len(_live())
    assert table.to_table(columns=["i"]).column("i").to_pylist() == _live()
    assert table.take([0, 1]).column("i").to_pylist() == [0, 1]
    assert [f.fragment_id for f in table.get_fragments()] == [0, 1, 3, 4]
    assert pa.table(table).num_rows == len(_live())
    assert table.partition_expression.equals(pc.scalar(True))


def test_pickle_and_copy(table: ls.Dataset) -> None:
    again = pickle.loads(pickle.dumps(table))
    assert (again.uri, again.version) == (table.uri, table.version)
    assert again.to_table().equals(table.to_table())
    shallow = copy.copy(table)
    assert shallow is not table and shallow.manifest is table.manifest
    deep = copy.deepcopy(table)
    assert deep.version == table.version and deep.to_table().equals(table.to_table())


def test_pyarrow_methods_through_the_scan(table: ls.Dataset) -> None:
    desc = table.sort_by([("i", "descending")])
    assert isinstance(desc, pds.InMemoryDataset)
    assert desc.to_table().column("i").to_pylist() == _live()[::-1]
    right = pa.table({"i": [0, 1, 3], "r": ["x", "y", "z"]})
    joined = table.join(right, "i", join_type="inner").to_table().sort_by("i")
    assert joined.column("r").to_pylist() == ["x", "y"]
    self_joined = table.join(table, "i", right_suffix="_r", join_type="inner").to_table()
    assert self_joined.num_rows == len(_live())
    asof = table.join_asof(right, on="i", by=[], tolerance=0).to_table()
    assert asof.num_rows == len(_live())


@pytest.mark.parametrize("call", ["filter", "replace_schema"])
def test_pyarrow_methods_without_a_meaning_refuse(table: ls.Dataset, call: str) -> None:
    arg = pc.field("i") > 1 if call == "filter" else table.schema
    with pytest.raises(NotSupportedYetError, match=call):
        getattr(table, call)(arg)


def test_a_union_of_datasets_refuses_clearly(table: ls.Dataset) -> None:
    with pytest.raises(NotSupportedYetError):
        pds.dataset([table, table])


def test_write_dataset_takes_a_dataset(table: ls.Dataset, tmp_path: Path) -> None:
    copied = ls.write_dataset(table, tmp_path / "copy.lance")
    assert copied.to_table().equals(table.to_table())
