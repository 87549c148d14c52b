"""Helpers shared by the integrity tests: edit a table's latest manifest in place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from lance_semantic.manifest.codec import (
    decode_manifest_file,
    encode_manifest_file,
    read_inline_transaction,
)
from lance_semantic.manifest.model import DataFile, Fragment, Manifest

__all__ = ["latest_manifest", "rewrite_manifest", "with_data_path", "first_data_file"]


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
