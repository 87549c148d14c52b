"""Helpers shared by the integrity tests: edit a table's latest manifest in place, damage a
file."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from lance_semantic.manifest.codec import (
    decode_manifest_file,
    encode_manifest_file,
    read_inline_transaction,
)
from lance_semantic.manifest.model import DataFile, Fragment, Manifest

__all__ = [
    "damage",
    "first_data_file",
    "latest_manifest",
    "rewrite_manifest",
    "with_data_path",
]


def latest_manifest(root: Path) -> Path:
    """The manifest file of the newest version (V2 names sort newest first)."""
    return sorted((root / "_versions").glob("*.manifest"))[0]


def rewrite_manifest(root: Path, change: Callable[[Manifest], Manifest]) -> Path:
    """Replace the latest manifest of ``root`` by ``change`` of it; its path."""
    path = latest_manifest(root)
    data = path.read_bytes()
    manifest = decode_manifest_file(data, str(path))
    path.write_bytes(encode_manifest_file(change(manifest), read_inline_transaction(data)))
    return path


def first_data_file(root: Path) -> Path:
    """The first data file of the first fragment of the latest version."""
    m = decode_manifest_file(latest_manifest(root).read_bytes())
    return root / "data" / m.fragments[0].files[0].path


def with_data_path(manifest: Manifest, path: str) -> Manifest:
    """``manifest`` with the first data file of its first fragment renamed to ``path``."""
    frag: Fragment = manifest.fragments[0]
    first: DataFile = replace(frag.files[0], path=path)
    frag = replace(frag, files=(first, *frag.files[1:]))
    return replace(manifest, fragments=(frag, *manifest.fragments[1:]))


def damage(path: Path, how: str) -> None:
    """Damage the file at ``path``: ``missing``, ``zero`` (length), ``cut-1``, ``cut-third``,
    ``cut-half``, ``cut-last`` (truncated to 1 byte, a third, half, all but the last byte),
    ``garbage`` (random bytes of the same length) or ``garbage-body`` (random bytes but the
    last 16: the footer's end, and the metadata read before the damage, still hold)."""
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
    elif how == "zero":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(random.Random(len(data)).randbytes(len(data)))
    elif how == "garbage-body":
        path.write_bytes(random.Random(len(data)).randbytes(len(data) - 16) + data[-16:])
    else:
        keep = {"cut-1": 1, "cut-third": len(data) // 3, "cut-half": len(data) // 2}
        path.write_bytes(data[: keep.get(how, len(data) - 1)])
