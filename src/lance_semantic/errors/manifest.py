"""Manifest errors (layer L0): a table or version that does not exist or already exists,
tags, a corrupt manifest, unsupported feature flags. Import them from
:mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import ManifestError

__all__ = [
    "DatasetNotFoundError",
    "DatasetExistsError",
    "VersionNotFoundError",
    "TagError",
    "TagNotFoundError",
    "TagExistsError",
    "InvalidTagNameError",
    "CorruptManifestError",
    "UnsupportedFeatureError",
]


class DatasetNotFoundError(ManifestError, FileNotFoundError, ValueError):
    """Raised when opening a table that does not exist. Also a ``ValueError``, which is
    what pylance raises.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> try:
    ...     ls.dataset("nowhere.lance")
    ... except ls.DatasetNotFoundError as e:
    ...     print(e.uri.endswith("nowhere.lance"), isinstance(e, FileNotFoundError))
    True True
    """

    def __init__(self, uri: str, detail: str = "") -> None:
        self.uri = uri
        msg = f"Dataset not found: {uri}"
        super().__init__(msg + (f" ({detail})" if detail else ""))


class DatasetExistsError(ManifestError, FileExistsError):
    """Raised when creating a table where one already exists.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ls.write_dataset(pa.table({"id": [2]}), "t.lance")
    ... except ls.DatasetExistsError as e:
    ...     print(e)
    Dataset already exists: t.lance (use mode='append' or mode='overwrite')
    """

    def __init__(self, uri: str) -> None:
        self.uri = uri
        super().__init__(f"Dataset already exists: {uri} (use mode='append' or mode='overwrite')")


class VersionNotFoundError(DatasetNotFoundError):
    """Raised when a version of an existing table does not exist (opening it, checking it
    out, pointing a tag at it). Like every ``DatasetNotFoundError`` a ``FileNotFoundError``
    and a ``ValueError``: pylance 14 raises ``ValueError`` from ``lance.dataset(uri,
    version=N)`` and from the tag verbs, and ``OSError`` from ``checkout_version(N)``.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.checkout_version(9)
    ... except ls.VersionNotFoundError as e:
    ...     print(e.version, isinstance(e, ls.DatasetNotFoundError))
    9 True
    """

    def __init__(self, uri: str, version: int) -> None:
        self.version = version
        super().__init__(uri, f"version {version} does not exist")


class TagError(ManifestError):
    """Base class of the errors about tags (``_refs/tags/<name>.json``).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> for bad in ("missing", "bad name"):
    ...     try:
    ...         ds.tags.update(bad)
    ...     except ls.TagError as e:
    ...         print(type(e).__name__)
    TagNotFoundError
    InvalidTagNameError
    """


class TagNotFoundError(TagError, OSError, ValueError):
    """Raised when a tag does not exist. An ``OSError`` (what pylance 14 raises from
    ``checkout_version(tag)``) and a ``ValueError`` (what it raises from
    ``lance.dataset(version=tag)`` and the tag verbs).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ls.dataset("t.lance", version="release")
    ... except ls.TagNotFoundError as e:
    ...     print(e.tag, "|", e)
    release | Ref not found: tag release does not exist
    """

    def __init__(self, tag: str) -> None:
        self.tag = tag
        super().__init__(f"Ref not found: tag {tag} does not exist")

    def __str__(self) -> str:  # OSError's own __str__ would format errno / strerror
        return str(self.args[0])


class TagExistsError(TagError, ValueError):
    """Raised when creating a tag whose name is taken (pylance: ``ValueError``).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("v1")
    >>> try:
    ...     ds.tags.create("v1")
    ... except ls.TagExistsError as e:
    ...     print(e.tag, isinstance(e, ValueError))
    v1 True
    """

    def __init__(self, tag: str) -> None:
        self.tag = tag
        super().__init__(f"Ref conflict: tag {tag} already exists")


class InvalidTagNameError(TagError, ValueError):
    """Raised for a tag name Lance does not allow: empty; characters other than letters,
    digits, ``.``, ``-``, ``_``; a leading or trailing dot; ``..``; a ``.lock`` suffix.
    (pylance 14 raises ``OSError("Ref is invalid: ...")`` for the same names.)

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.tags.create("v1.lock")
    ... except ls.InvalidTagNameError as e:
    ...     print(e.tag, "|", e.reason)
    v1.lock | a tag name cannot end with .lock
    """

    def __init__(self, tag: str, reason: str) -> None:
        self.tag = tag
        self.reason = reason
        super().__init__(f"invalid tag name {tag!r}: {reason}")


class CorruptManifestError(ManifestError):
    """Raised when a manifest file is truncated, cannot be decoded, or describes an
    impossible table (duplicate fragment ids, more deleted rows than rows, a file path that
    leaves the table directory). ``path`` is the manifest; ``named_path``, when the problem
    is a path the manifest names, is that path as written in the manifest.

    >>> import glob, pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> with open(glob.glob("t.lance/_versions/*.manifest")[0], "r+b") as f:
    ...     _ = f.truncate(10)
    >>> try:
    ...     ls.dataset("t.lance")
    ... except ls.CorruptManifestError as e:
    ...     print(e.path.endswith(".manifest"), "|", e.reason, "|", e.named_path)
    True | file too small for a manifest (10 bytes) | None
    """

    def __init__(self, path: str, reason: str, *, named_path: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.named_path = named_path
        super().__init__(f"Corrupt manifest {path}: {reason}")


def _bits(flags: int) -> list[int]:
    return [i for i in range(64) if flags >> i & 1]


class UnsupportedFeatureError(ManifestError):
    """Raised when a table carries feature flags this library does not know.

    ``kind`` is ``"reader"`` (refused on open) or ``"writer"`` (refused on commit);
    ``bits`` and ``features`` name the flags.

    >>> import lance, pyarrow as pa, lance_semantic as ls
    >>> _ = lance.write_dataset(pa.table({"id": [1]}), "t.lance", enable_stable_row_ids=True)
    >>> ds = ls.dataset("t.lance")  # readable
    >>> try:
    ...     ds.insert(pa.table({"id": [2]}))
    ... except ls.UnsupportedFeatureError as e:
    ...     print(e.kind, e.bits, e.features)
    writer (1,) ('stable_row_ids',)
    """

    def __init__(
        self, flags: int, *, kind: str, uri: str = "", features: Sequence[str] = ()
    ) -> None:
        self.flags = flags
        self.bits = tuple(_bits(flags))
        self.kind = kind
        self.uri = uri
        #: the features the bits stand for (``stable_row_ids``; ``bitN`` for unnamed ones)
        self.features = tuple(features) or tuple(f"bit{b}" for b in self.bits)
        action = "read" if kind == "reader" else "written"
        where = f" {uri}" if uri else ""
        named = ", ".join(
            f"{name} (bit {bit})" if not name.startswith("bit") else f"unknown bit {bit}"
            for name, bit in zip(self.features, self.bits, strict=False)
        )
        super().__init__(
            f"unsupported: dataset{where} cannot be {action} by lance-semantic; it uses "
            f"{kind} features lance-semantic does not support: {named} (flags {flags})"
        )
