"""Helpers shared by the blob tests: comparing data directories with pylance's."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["canonical", "data_files"]

#: the two metadata entries of a blob v2 descriptor field in a data file's own schema; the
#: encoder writes them from a hash map, so their order differs between runs of pylance itself
_PACKED_ENTRY = b"R\x1d\n\x15lance-encoding:packed\x12\x04true"
_BLOB_ENTRY = b"R\x1b\n\x13lance-encoding:blob\x12\x04true"


def canonical(data: bytes) -> bytes:
    return data.replace(_PACKED_ENTRY + _BLOB_ENTRY, _BLOB_ENTRY + _PACKED_ENTRY)


def data_files(root: Path) -> list[tuple[str, bytes]]:
    """(path with the data file stem replaced, bytes) of every file under data/, sorted
    (the descriptor field's metadata entries in one order, see ``_PACKED_ENTRY``)."""
    out = []
    for dirpath, _, names in os.walk(root / "data"):
        for name in names:
            full = Path(dirpath) / name
            rel = full.relative_to(root / "data")
            shape = "<stem>.lance" if rel.suffix == ".lance" else f"<stem>/{rel.name}"
            out.append((shape, canonical(full.read_bytes())))
    return sorted(out)
