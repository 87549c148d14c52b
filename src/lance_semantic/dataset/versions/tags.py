"""``Dataset.tags``: named versions, with pylance 14's verbs and return shapes (layer L5).

Tags are the files ``_refs/tags/<name>.json`` (commit/refs.py), byte for byte as pylance
writes them, so either library sees the other's tags. A *reference* names a version the
way pylance's do: an ``int`` (a version number), a ``str`` (a tag name), a
``(branch, version)`` tuple whose branch is ``None`` or ``"main"`` (version ``None``: the
latest), or ``None`` (the latest version).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Literal, TypeAlias, TypedDict

from ...commit import latest_version, list_versions, refs
from ...errors import (
    DatasetNotFoundError,
    NotSupportedYetError,
    TagExistsError,
    TagNotFoundError,
    VersionNotFoundError,
)
from ...storage import ObjectStore
from ..core import TableHandle
from ..core import arguments as args

__all__ = ["Tags", "Tag", "Reference", "resolve_reference"]

#: what names a version: a number, a tag name, ``(branch, version)``, or None (latest)
Reference: TypeAlias = int | str | tuple[str | None, int | None] | None


class Tag(TypedDict):
    """One tag as :meth:`Tags.list` reports it (pylance's ``lance.dataset.Tag``).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("v1")
    >>> tag = ds.tags.list()["v1"]
    >>> sorted(tag), tag["version"], tag["branch"], tag["metadata"]
    (['branch', 'created_at', 'manifest_size', 'metadata', 'updated_at', 'version'], 1, None, {})
    """

    branch: str | None
    version: int
    created_at: datetime | None
    updated_at: datetime | None
    manifest_size: int
    metadata: dict[str, str]


def _datetime(ns: int | None) -> datetime | None:
    """Aware UTC datetime, microseconds truncated (what pylance returns)."""
    if ns is None:
        return None
    seconds, nanos = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=nanos // 1000)


def _as_tag(contents: refs.TagContents) -> Tag:
    return {
        "branch": contents.branch,
        "version": contents.version,
        "created_at": _datetime(contents.created_at_ns),
        "updated_at": _datetime(contents.updated_at_ns),
        "manifest_size": contents.manifest_size,
        "metadata": dict(contents.metadata),
    }


def resolve_reference(store: ObjectStore, reference: Reference) -> int | None:
    """The version number ``reference`` names (None: the latest), looked up in ``store``.

    Raises
    ------
    TagNotFoundError
        A tag name that is not a tag of the table.
    NotSupportedYetError
        A branch other than the main one (a tuple's branch, or a tag made on a branch).
    """
    if reference is None or isinstance(reference, int):
        return reference
    if isinstance(reference, str):
        try:
            tag = refs.read_tag(store, reference)
        except TagNotFoundError:
            if latest_version(store) is None:
                raise DatasetNotFoundError(store.root) from None
            raise
        if tag.branch is not None:
            raise NotSupportedYetError(f"tag {reference!r} is on branch {tag.branch!r}")
        return tag.version
    branch, number = reference
    if branch not in (None, "main"):
        raise NotSupportedYetError(f"branches (a reference to branch {branch!r})")
    return number


def _existing_version(store: ObjectStore, reference: Reference) -> int:
    """The version ``reference`` names, which must exist (None: the latest)."""
    number = resolve_reference(store, reference)
    if number is None:
        latest = latest_version(store)
        if latest is None:
            raise DatasetNotFoundError(store.root)
        return latest
    if number not in list_versions(store):
        raise VersionNotFoundError(store.root, number)
    return number


class Tags:
    """The tags of a table (``Dataset.tags``), with pylance 14's verbs.

    Tagged versions are kept by :meth:`Dataset.cleanup_old_versions`.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("first")
    >>> ds.tags
    Tags(['first'])
    """

    def __init__(self, ds: TableHandle) -> None:
        self._store = ds._snapshot().store

    def list(self) -> dict[str, Tag]:
        """Every tag by name: ``{name: {"branch", "version", "created_at", "updated_at",
        "manifest_size", "metadata"}}`` (times are aware UTC datetimes, or None for tags
        written by older Lance).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("a", 1)
        >>> ds.tags.create("b")
        >>> {name: tag["version"] for name, tag in ds.tags.list().items()}
        {'a': 1, 'b': 2}
        """
        return {name: _as_tag(c) for name, c in refs.list_tags(self._store).items()}

    def list_ordered(
        self, order: Literal["asc", "desc"] | None = None
    ) -> builtins.list[tuple[str, Tag]]:
        """The tags as ``(name, tag)`` pairs ordered by version (``"desc"``, the default,
        newest first), ties by name.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("old", 1)
        >>> ds.tags.create("new", 2)
        >>> [name for name, _ in ds.tags.list_ordered()]
        ['new', 'old']
        >>> [name for name, _ in ds.tags.list_ordered("asc")]
        ['old', 'new']
        """
        if order not in (None, "asc", "desc"):
            raise ValueError(f"order must be 'asc' or 'desc', got {order!r}")
        items = sorted(self.list().items(), key=lambda kv: kv[0])
        items.sort(key=lambda kv: kv[1]["version"], reverse=order != "asc")
        return items

    def get_version(self, tag: str) -> int:
        """The version tag ``tag`` names; TagNotFoundError if there is no such tag.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("v1", 1)
        >>> ds.tags.get_version("v1")
        1
        >>> ds.tags.get_version("v9")
        Traceback (most recent call last):
        ...
        lance_semantic.errors.TagNotFoundError: Ref not found: tag v9 does not exist
        """
        return refs.read_tag(self._store, args.check_str("tag", tag, empty=True)).version

    def create(self, tag: str, reference: Reference = None) -> None:
        """Create tag ``tag`` on the version ``reference`` names (default: the latest).

        Raises
        ------
        TagExistsError
            ``tag`` is already a tag of the table.
        VersionNotFoundError
            The version does not exist.
        TagNotFoundError
            ``reference`` is a tag name that does not exist.
        InvalidTagNameError
            ``tag`` is not a valid tag name.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("stable", 1)
        >>> ds.tags.get_version("stable")
        1
        >>> ds.tags.create("stable")
        Traceback (most recent call last):
        ...
        lance_semantic.errors.TagExistsError: Ref conflict: tag stable already exists
        >>> ds.tags.create("bad name")
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidTagNameError: invalid tag name 'bad name': tag characters \
must be letters, digits, '.', '-' or '_'
        """
        name = refs.check_tag_name(args.check_str("tag", tag, empty=True))
        ref = args.check_reference(reference, name="reference")
        if refs.tag_exists(self._store, name):
            raise TagExistsError(name)
        refs.create_tag(self._store, name, _existing_version(self._store, ref))

    def update(self, tag: str, reference: Reference = None) -> None:
        """Point the existing tag ``tag`` at the version ``reference`` names (default: the
        latest); TagNotFoundError if there is no such tag.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("stable", 1)
        >>> ds.tags.update("stable")
        >>> ds.tags.get_version("stable")
        2
        """
        name = refs.check_tag_name(args.check_str("tag", tag, empty=True))
        ref = args.check_reference(reference, name="reference")
        refs.read_tag(self._store, name)  # a missing tag is named before the version
        refs.update_tag(self._store, name, _existing_version(self._store, ref))

    def delete(self, tag: str) -> None:
        """Delete tag ``tag`` (the version stays); TagNotFoundError if there is none.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("v1", 1)
        >>> ds.tags.delete("v1")
        >>> ds.tags.list(), ds.checkout_version(1).version
        ({}, 1)
        """
        refs.delete_tag(self._store, args.check_str("tag", tag, empty=True))

    def replace_metadata(self, tag: str, metadata: Mapping[str, str]) -> None:
        """Replace the metadata map of tag ``tag`` (its version and times stay).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> ds.tags.create("v1", 1)
        >>> ds.tags.replace_metadata("v1", {"owner": "ops"})
        >>> ds.tags.list()["v1"]["metadata"], ds.tags.get_version("v1")
        ({'owner': 'ops'}, 1)
        """
        name = args.check_str("tag", tag, empty=True)
        args.check_str_mapping("metadata", metadata, values="str", optional=False)
        refs.replace_tag_metadata(self._store, name, metadata)

    def __repr__(self) -> str:
        return f"Tags({sorted(refs.list_tags(self._store))})"
