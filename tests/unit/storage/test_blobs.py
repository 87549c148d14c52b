"""``storage/blobs.py``: sidecar names and the BlobFile object."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lance_semantic.errors import CorruptTableError
from lance_semantic.storage.blobs import BlobFile, sidecar_path


def test_sidecar_names_are_the_blob_id_in_binary_least_significant_bit_first() -> None:
    """facts §10: blob_id 1 -> 1000…0.blob, 2 -> 0100…0.blob (32 digits)."""
    assert sidecar_path("x.lance", 1) == "x/" + "1" + "0" * 31 + ".blob"
    assert sidecar_path("x.lance", 2) == "x/01" + "0" * 30 + ".blob"
    assert sidecar_path("x.lance", 3) == "x/11" + "0" * 30 + ".blob"
    assert sidecar_path("x.lance", 2**32 - 1) == "x/" + "1" * 32 + ".blob"


@pytest.fixture
def blob(tmp_path: Path) -> Path:
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(100)))
    return path


def test_blob_file_is_a_window_of_its_object(blob: Path) -> None:
    f = BlobFile(str(blob), 10, 20)
    assert f.size() == 20 and f.read() == bytes(range(10, 30)) and f.read() == b""
    assert f.seek(-5, io.SEEK_END) == 15 and f.read(100) == bytes(range(25, 30))
    assert f.seek(2) == 2 and f.read(3) == bytes(range(12, 15)) and f.tell() == 5
    assert f.read_range(0, 4) == bytes(range(10, 14)) and f.tell() == 5
    buf = bytearray(4)
    assert f.readinto(buf) == 4 and bytes(buf) == bytes(range(15, 19))
    with pytest.raises(ValueError):
        f.seek(-1)


def test_blob_file_of_a_whole_external_object(blob: Path) -> None:
    """Size None (an external blob stored with size 0): to the end of the object."""
    f = BlobFile(f"file://{blob}", 90, None)
    assert f.size() == 10 and f.read() == bytes(range(90, 100))


def test_blob_file_never_returns_a_blob_cut_short(blob: Path) -> None:
    f = BlobFile(str(blob), 90, 20)  # the object ends 10 bytes early
    with pytest.raises(CorruptTableError) as e:
        f.read()
    assert e.value.path == str(blob) and "10 bytes early" in e.value.reason
    f.close()
    assert f.closed
