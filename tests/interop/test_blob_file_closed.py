"""A closed ``BlobFile`` refuses every cursor and read call with ``ValueError``, as pylance's
``BlobFile`` and Python's files do (a read of no bytes, ``seek`` and ``tell`` included):
never ``b""`` or a position, as if the blob were empty. ``size()`` still answers, as in
pylance. Local blob files and blob files of a store alike."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.storage.blobs import BlobFile
from lance_semantic.storage.object_store import open_store

pytestmark = pytest.mark.interop

CALLS: dict[str, Callable[[Any], Any]] = {
    "read()": lambda f: f.read(),
    "read(0)": lambda f: f.read(0),
    "read(3)": lambda f: f.read(3),
    "readall": lambda f: f.readall(),
    "readinto": lambda f: f.readinto(bytearray(3)),
    "seek": lambda f: f.seek(0),
    "seek end": lambda f: f.seek(0, io.SEEK_END),
    "tell": lambda f: f.tell(),
}


def _blob_table(root: Path) -> str:
    field = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    data = pa.table({"clip": [b"hello world", b""]}, schema=pa.schema([field]))
    uri = str(root / "t.lance")
    lance.write_dataset(data, uri, data_storage_version="2.1")
    return uri


def _ours(uri: str, kind: str, row: int) -> BlobFile:
    if kind == "take_blobs":
        return ls.dataset(uri).take_blobs("clip", indices=[row])[0]
    Path(uri, "raw.bin").write_bytes(b"0123456789")
    return BlobFile.in_store(open_store(uri), "raw.bin", offset=2, size=3 if row == 0 else 0)


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("row", [0, 1], ids=["11 bytes", "empty"])
@pytest.mark.parametrize("kind", ["take_blobs", "in_store"])
def test_a_closed_blob_file_refuses_reads_and_cursor_calls(
    tmp_path: Path, call: str, row: int, kind: str
) -> None:
    uri = _blob_table(tmp_path)
    theirs = lance.dataset(uri).take_blobs("clip", indices=[row])[0]
    ours = _ours(uri, kind, row)
    size = ours.size()
    for f in (theirs, ours):
        f.close()
        assert f.closed
        with pytest.raises(ValueError, match="closed"):
            CALLS[call](f)
    with pytest.raises(ValueError, match="closed"):
        ours.read_range(0, 1)
    assert ours.size() == size  # (as pylance's)
