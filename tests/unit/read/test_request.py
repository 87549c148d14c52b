"""The scan request: one frozen value of pylance's scanner options, built once by
``scan_request`` from the flat keywords, with the argument checks the entry points made
before it existed (error class and message naming the argument)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_semantic as ls
from lance_semantic.dataset.core import scan_request
from lance_semantic.read import ROW_ADDR, ROW_ID, ScanRequest, plan_scan

FIELDS = [f.name for f in dataclasses.fields(ScanRequest)]


def test_the_request_is_frozen_and_slotted() -> None:
    request = ScanRequest(columns=["id"], limit=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.limit = 4  # type: ignore[misc]
    assert not hasattr(request, "__dict__")
    assert dataclasses.replace(request, limit=4).limit == 4 and request.limit == 3


def test_the_request_holds_every_option_of_the_public_scanner() -> None:
    """Every keyword of ``Dataset.scanner`` but the pass-through options is a field."""
    params = inspect.signature(ls.Dataset.scanner).parameters
    named = [n for n, p in params.items() if n != "self" and p.kind is not p.VAR_KEYWORD]
    assert sorted(named) == sorted(FIELDS)


def test_the_defaults_are_pylances() -> None:
    """Where pylance's ``LanceDataset.scanner`` has the option, the default means the same:
    the same value, or ``None`` where the request keeps a bool (pylance reads it as
    False)."""
    pylance = inspect.signature(lance.LanceDataset.scanner).parameters
    shared = [name for name in FIELDS if name in pylance]
    assert "output_encodings" not in shared  # (this library's own)
    assert len(shared) == len(FIELDS) - 1
    for f in dataclasses.fields(ScanRequest):
        if f.name not in pylance:
            continue
        theirs = pylance[f.name].default
        if isinstance(f.default, bool):
            assert theirs is None or theirs is f.default, f.name
            assert bool(theirs) is f.default, f.name
        else:
            assert f.default == theirs, f.name


def test_the_defaults_are_the_public_signatures() -> None:
    """The request built from no keyword is the request's defaults, and the public
    signatures default to the same values."""
    assert scan_request() == ScanRequest()
    for verb in (ls.Dataset.scanner, ls.Dataset.to_table, ls.Dataset.to_batches):
        for name, p in inspect.signature(verb).parameters.items():
            if name in FIELDS:
                assert p.default == getattr(ScanRequest(), name), (verb.__name__, name)


def test_row_columns_and_pickling() -> None:
    assert ScanRequest().row_columns == ()
    both = ScanRequest(with_row_id=True, with_row_address=True)
    assert both.row_columns == (ROW_ID, ROW_ADDR) == ("_rowid", "_rowaddr")
    request = ScanRequest(["id"], pc.field("id") > 1, 2, 1, 5, True, False, {"s": "utf8"})
    again = pickle.loads(pickle.dumps(request))
    assert again.columns == ["id"] and again.filter.equals(request.filter)
    assert (again.limit, again.offset, again.batch_size, again.row_columns) == (2, 1, 5, (ROW_ID,))


def test_the_builder_converts_as_the_checks_do() -> None:
    import numpy as np

    request = scan_request(
        ["id"], "id > 1", True, np.int64(2), batch_size=3, with_row_id=None, fragments=[1]
    )
    assert (request.limit, request.offset, request.batch_size) == (1, 2, 3)
    assert type(request.offset) is int and request.with_row_id is False
    assert request.fragments == (1,) and request.columns == ["id"]


#: (keyword, bad value, error class, message): each as the entry points raised it before
#: the request existed (dataset.core.arguments' checks)
BAD = [
    ("columns", 5, TypeError, "columns must be a list of column names or a dict of output"),
    ("columns", [1], TypeError, "columns[0] must be a str (a column name), got 1 (int)"),
    ("columns", {"a": 1}, TypeError, "columns['a'] must be a SQL expression (str), got 1"),
    ("filter", 3, TypeError, "filter must be a SQL string or a pyarrow.compute.Expression"),
    ("output_encodings", "utf8", TypeError, "output_encodings must be a dict of str to"),
    ("output_encodings", {"s": 8}, TypeError, "output_encodings['s'] must be a output"),
    ("output_encodings", {"": "utf8"}, ValueError, "output_encodings keys must not be empty"),
    ("limit", "2", TypeError, "limit must be an integer, got '2' (str)"),
    ("limit", -1, ValueError, "limit must be non-negative, got -1"),
    ("offset", 1.5, TypeError, "offset must be an integer, got 1.5 (float)"),
    ("offset", -2, ValueError, "offset must be non-negative, got -2"),
    ("batch_size", 0, ValueError, "batch_size must be at least 1, got 0"),
    ("batch_size", "8", TypeError, "batch_size must be an integer, got '8' (str)"),
]
#: the scanner's own keywords
BAD_SCANNER = [
    ("with_row_id", "yes", TypeError, "with_row_id must be a bool"),
    ("with_row_address", 1, TypeError, "with_row_address must be a bool"),
    ("fragments", "0", TypeError, "fragments must be a list of LanceFragment, got '0'"),
    ("fragments", 7, TypeError, "fragments must be a list of LanceFragment, got 7"),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> ls.Dataset:
    uri = tmp_path_factory.mktemp("request") / "t.lance"
    data = pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]})
    return ls.write_dataset(data, Path(uri), max_rows_per_file=2, data_storage_version="2.3")


def _raises(call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize(("name", "value", "error", "message"), BAD + BAD_SCANNER)
def test_a_bad_argument_gives_the_same_error_everywhere(
    table: ls.Dataset, name: str, value: object, error: type[Exception], message: str
) -> None:
    """The builder, ``scanner``, ``to_table`` and ``to_batches`` (with and without scanner
    options) raise the same error for one bad keyword, before anything is read."""
    kw = {name: value}
    _raises(lambda: scan_request(**kw), error, message)
    _raises(lambda: table.scanner(**kw), error, message)
    _raises(lambda: table.to_table(**kw), error, message)
    _raises(lambda: list(table.to_batches(**kw)), error, message)
    _raises(lambda: table.to_table(batch_readahead=None, **kw), error, message)  # a scanner
    if name in ("columns", "output_encodings"):
        _raises(lambda: table.take([0], **kw), error, message)
        _raises(lambda: table.get_fragment(0).take([0], **kw), error, message)
    if name in ("columns", "filter", "output_encodings"):
        _raises(lambda: table.get_fragment(0).to_table(**kw), error, message)


def test_the_scanner_keeps_its_other_checks(table: ls.Dataset) -> None:
    """Those that need the table, and pylance's pass-through options, stay where they were."""
    _raises(lambda: table.scanner(bogus=1), TypeError, "unexpected keyword argument 'bogus'")
    other = ls.write_dataset(pa.table({"id": [1]}), table.uri + ".other")
    with pytest.raises(ValueError, match="fragments must hold fragments of this dataset"):
        table.scanner(fragments=[*other.get_fragments(), object()])
    with pytest.raises(ValueError, match="columns already hold a column named '_rowid'"):
        table.scanner(columns={"_rowid": "id"}, with_row_id=True)


def test_planning_and_execution_take_the_request(table: ls.Dataset) -> None:
    """One request gives the plan (columns, filter, output encodings) and the stream (window,
    batch size, row columns), as the flat keywords do."""
    request = scan_request(
        ["s"], "id >= 2", 1, 0, batch_size=1, output_encodings={"s": "large_utf8"}
    )
    plan = plan_scan(table.semantic_schema, request, flagged=True)
    assert plan.output_schema == pa.schema([pa.field("s", pa.large_string())])
    flat = table.to_table(
        columns=["s"], filter="id >= 2", limit=1, offset=0, output_encodings={"s": "large_utf8"}
    )
    assert flat.to_pydict() == {"s": ["b"]} and flat.schema == plan.output_schema
    sc = table.scanner(columns=["s"], filter="id >= 2", with_row_id=True, batch_size=1)
    assert [b.num_rows for b in sc.to_batches()] == [1, 1]
    assert pickle.loads(pickle.dumps(sc)).to_table().to_pydict() == sc.to_table().to_pydict()
