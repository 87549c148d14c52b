"""What a recursive listing of a table directory reports per file (layer L3)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileInfo"]


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file: ``path`` relative to the table root (``/``-separated), its ``size`` in
    bytes and its last modification time in nanoseconds since the epoch (UTC)."""

    path: str
    size: int
    mtime_ns: int
