"""The write request: one frozen value of a write's options, built once by
``write_request`` at the public boundary (``write_dataset``, ``Dataset.insert``,
``write_fragments``), with the argument checks those made before it existed."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import lance.fragment
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.dataset.writes import write_request
from lance_semantic.write import MAX_BYTES_PER_FILE, WriteRequest

FIELDS = [f.name for f in dataclasses.fields(WriteRequest)]
DATA = pa.table({"id": [1, 2, 3]})


def test_the_request_is_frozen_and_slotted() -> None:
    request = WriteRequest(mode="append")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.mode = "overwrite"  # type: ignore[misc]
    assert not hasattr(request, "__dict__")
    assert pickle.loads(pickle.dumps(WriteRequest(schema=DATA.schema))) == WriteRequest(
        schema=DATA.schema
    )


def test_the_defaults_are_pylances() -> None:
    """Every option pylance's ``write_dataset`` has defaults to pylance's value there
    (``semantic_types`` is this library's own)."""
    pylance = inspect.signature(lance.write_dataset).parameters
    assert [n for n in FIELDS if n not in pylance] == ["semantic_types"]
    for f in dataclasses.fields(WriteRequest):
        if f.name in pylance:
            assert f.default == pylance[f.name].default, f.name
    assert WriteRequest().max_bytes_per_file == MAX_BYTES_PER_FILE
    assert WriteRequest().semantic_types is None


def test_the_defaults_are_the_public_signatures() -> None:
    """``write_dataset``'s keywords are the request's fields with the request's defaults;
    ``write_fragments`` differs only in its mode (pylance's ``write_fragments`` appends)."""
    assert write_request() == WriteRequest()
    ours = inspect.signature(ls.write_dataset).parameters
    for name in FIELDS:
        assert ours[name].default == getattr(WriteRequest(), name), name
    two_phase = inspect.signature(ls.fragment.write_fragments).parameters
    theirs = inspect.signature(lance.fragment.write_fragments).parameters
    for name in FIELDS:
        want = "append" if name == "mode" else getattr(WriteRequest(), name)
        assert two_phase[name].default == want, name
        if name in theirs:
            assert theirs[name].default == want, name


def test_the_builder_converts_as_the_checks_do() -> None:
    request = write_request(
        DATA.schema, "append", True, np.int64(5), "2.3", np.bool_(True), np.bool_(False)
    )
    assert request == WriteRequest(DATA.schema, "append", 1, 5, "2.3", True, False)
    assert type(request.max_bytes_per_file) is int and request.semantic_types is True


#: (keyword, bad value, error class, message): each as ``write_dataset`` / ``insert`` /
#: ``write_fragments`` raised it before the request existed
BAD = [
    ("mode", "bogus", ValueError, "mode must be one of 'create', 'append', 'overwrite', got"),
    ("mode", 1, TypeError, "mode must be a str, got 1 (int)"),
    ("max_rows_per_file", -1, ValueError, "max_rows_per_file must be at least 1, got -1"),
    ("max_rows_per_file", 1.5, TypeError, "max_rows_per_file must be an integer, got 1.5"),
    ("max_bytes_per_file", 0, ValueError, "max_bytes_per_file must be at least 1, got 0"),
    ("max_bytes_per_file", "9", TypeError, "max_bytes_per_file must be an integer, got '9'"),
    ("data_storage_version", 2.2, TypeError, "data_storage_version must be a str, got 2.2"),
    ("data_storage_version", "", ValueError, "data_storage_version must not be empty"),
    ("semantic_types", "yes", TypeError, "semantic_types must be a bool, got 'yes' (str)"),
    ("semantic_types", 1, TypeError, "semantic_types must be a bool, got 1 (int)"),
    ("allow_external_blob_outside_bases", None, TypeError, "allow_external_blob_outside_bases"),
    ("schema", 5, TypeError, "schema must be a pyarrow.Schema, got int"),
]


def _raises(call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize(("name", "value", "error", "message"), BAD)
def test_a_bad_argument_gives_the_same_error_everywhere(
    tmp_path: Path, name: str, value: object, error: type[Exception], message: str
) -> None:
    """The builder, ``write_dataset``, ``insert`` and ``write_fragments`` raise the same
    error for one bad keyword, and nothing is written."""
    uri = tmp_path / "t.lance"
    kw = {name: value}
    _raises(lambda: write_request(**kw), error, message)
    _raises(lambda: ls.write_dataset(DATA, uri, **kw), error, message)
    assert not uri.exists()
    _raises(lambda: ls.fragment.write_fragments(DATA, uri, **kw), error, message)
    assert not uri.exists()
    ds = ls.write_dataset(DATA, uri)
    if name != "mode":  # (insert's mode is its own keyword, checked by write_dataset too)
        _raises(lambda: ds.insert(DATA, **kw), error, message)
    assert ls.dataset(uri).version == 1


def test_the_request_decides_append_or_new_schema(tmp_path: Path) -> None:
    """``mode`` reaches the write decision through the request: append keeps the table's
    schema, overwrite makes a new one, create refuses an existing table."""
    uri = tmp_path / "t.lance"
    ds = ls.write_dataset(DATA, uri, max_rows_per_file=2)
    assert [f.physical_rows for f in ds.get_fragments()] == [2, 1]
    ds.insert(DATA, max_rows_per_file=1)
    assert len(ds.get_fragments()) == 5 and ds.count_rows() == 6
    other = pa.table({"s": ["a"]})
    assert ds.insert(other, mode="overwrite").schema == other.schema
    with pytest.raises(ls.DatasetExistsError):
        ls.write_dataset(other, uri)
    fragments = ls.fragment.write_fragments(other, uri, max_rows_per_file=1)
    assert [f.physical_rows for f in fragments] == [1]
