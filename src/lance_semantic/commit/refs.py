"""Tag files: ``_refs/tags/<name>.json``, read and written exactly as pylance 14 does
(layer L4; docs/format/lance-format-facts.md §1 "Dataset directory layout").

A tag names one version of the table. Its file is pretty-printed JSON (two-space indent,
no trailing newline) with the keys, in this order, ``branch`` (null: the main branch),
``version``, ``createdAt`` / ``updatedAt`` (RFC 3339 UTC with 0, 3, 6 or 9 fraction digits,
whichever is shortest and exact), ``manifestSize`` (the byte size of the tagged version's
manifest file) and ``metadata`` (a string map). Older Lance wrote only ``branch``,
``version`` and ``manifestSize``; such files are read with no timestamps and no metadata.
Every byte goes through the table's :class:`~lance_semantic.storage.object_store.ObjectStore`,
so tags work the same on object stores.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import MappingProxyType
from urllib.parse import quote, unquote

from ..errors import (
    CommitOutcomeUnknownError,
    CorruptTableError,
    InvalidTagNameError,
    TagExistsError,
    TagNotFoundError,
    VersionNotFoundError,
)
from ..storage import ObjectStore, OutcomeUnknown, create_once, paths
from .committer import list_versions

__all__ = [
    "TAGS_DIR",
    "TagContents",
    "check_tag_name",
    "encode_tag",
    "decode_tag",
    "format_timestamp",
    "parse_timestamp",
    "read_tag",
    "tag_exists",
    "list_tags",
    "create_tag",
    "update_tag",
    "delete_tag",
    "replace_tag_metadata",
    "manifest_size",
]

TAGS_DIR = "_refs/tags"

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class TagContents:
    """What a tag file holds. Times are nanoseconds since the epoch (UTC), None when the
    file has none (tags written by older Lance)."""

    version: int
    manifest_size: int
    branch: str | None = None
    created_at_ns: int | None = None
    updated_at_ns: int | None = None
    metadata: Mapping[str, str] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))


#: letters and digits (Unicode, as Rust's ``is_alphanumeric``), '_', '.' and '-'
_TAG_CHARS = re.compile(r"[\w.\-]+")


def check_tag_name(name: str) -> str:
    """``name`` if Lance accepts it as a tag name, else InvalidTagNameError (the rules of
    Lance's ``check_valid_tag``, confirmed against pylance 14).

    >>> check_tag_name("v1.2.3-rc4")
    'v1.2.3-rc4'
    """
    if not name:
        raise InvalidTagNameError(name, "a tag name cannot be empty")
    if not _TAG_CHARS.fullmatch(name):
        raise InvalidTagNameError(name, "tag characters must be letters, digits, '.', '-' or '_'")
    if name.startswith("."):
        raise InvalidTagNameError(name, "a tag name cannot begin with a dot")
    if name.endswith("."):
        raise InvalidTagNameError(name, "a tag name cannot end with a dot")
    if name.endswith(".lock"):
        raise InvalidTagNameError(name, "a tag name cannot end with .lock")
    if ".." in name:
        raise InvalidTagNameError(name, "a tag name cannot have two consecutive dots")
    return name


def _path(name: str) -> str:
    """``_refs/tags/<name>.json``, the name percent-encoded as Lance's object-store paths
    encode it (non-ASCII letters as ``%XX`` of their UTF-8 bytes: tag ``é`` is the file
    ``%C3%A9.json``, on a local disk and as an object key alike)."""
    return f"{TAGS_DIR}/{quote(name, safe='')}.json"


def format_timestamp(ns: int) -> str:
    """RFC 3339 in UTC with the fewest of 0 / 3 / 6 / 9 fraction digits that are exact
    (chrono's ``SecondsFormat::AutoSi``, what pylance writes).

    >>> format_timestamp(1_767_225_600_500_000_000)
    '2026-01-01T00:00:00.500Z'
    >>> format_timestamp(1_767_225_600_000_000_000)
    '2026-01-01T00:00:00Z'
    """
    seconds, nanos = divmod(ns, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if nanos == 0:
        fraction = ""
    elif nanos % 1_000_000 == 0:
        fraction = f".{nanos // 1_000_000:03d}"
    elif nanos % 1000 == 0:
        fraction = f".{nanos // 1000:06d}"
    else:
        fraction = f".{nanos:09d}"
    return f"{stamp}{fraction}Z"


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def parse_timestamp(text: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 timestamp (any offset, up to 9 fraction
    digits); ValueError if ``text`` is not one.

    >>> parse_timestamp("2026-01-01T00:00:00.5Z")
    1767225600500000000
    """
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    base = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    ns = int(base.timestamp()) * 1_000_000_000 + int((m.group(7) or "0").ljust(9, "0"))
    if m.group(9):
        offset = (int(m.group(10)) * 60 + int(m.group(11))) * 60 * 1_000_000_000
        ns -= offset if m.group(9) == "+" else -offset
    return ns


def encode_tag(contents: TagContents) -> bytes:
    """The bytes of a tag file, as pylance 14 writes them."""
    doc = {
        "branch": contents.branch,
        "version": contents.version,
        "createdAt": _stamp(contents.created_at_ns),
        "updatedAt": _stamp(contents.updated_at_ns),
        "manifestSize": contents.manifest_size,
        "metadata": dict(contents.metadata),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def _stamp(ns: int | None) -> str | None:
    return None if ns is None else format_timestamp(ns)


def decode_tag(data: bytes, path: str = "") -> TagContents:
    """A tag file's contents; CorruptTableError naming ``path`` when they are not a tag."""
    try:
        doc = json.loads(data.decode())
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        version, size = doc["version"], doc["manifestSize"]
        branch = doc.get("branch")
        metadata = doc.get("metadata") or {}
        for name, value in (("version", version), ("manifestSize", size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} is not a non-negative integer: {value!r}")
        if branch is not None and not isinstance(branch, str):
            raise ValueError(f"branch is not a string: {branch!r}")
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise ValueError("metadata is not a map of strings")
        created, updated = (_parse_optional(doc.get(k)) for k in ("createdAt", "updatedAt"))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise CorruptTableError(path, f"not a tag file: {e}") from e
    return TagContents(version, size, branch, created, updated, metadata)


def _parse_optional(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"timestamp is not a string: {value!r}")
    return parse_timestamp(value)


def read_tag(store: ObjectStore, name: str) -> TagContents:
    """The contents of tag ``name``; TagNotFoundError if there is no such tag."""
    check_tag_name(name)
    path = _path(name)
    try:
        data = store.get(path)
    except FileNotFoundError:
        raise TagNotFoundError(name) from None
    except OSError as e:
        raise CorruptTableError(store.uri(path), f"cannot read the tag file: {e}") from e
    return decode_tag(data, store.uri(path))


def tag_exists(store: ObjectStore, name: str) -> bool:
    return store.exists(_path(check_tag_name(name)))


def list_tags(store: ObjectStore) -> dict[str, TagContents]:
    """Every tag of the table by name (every ``*.json`` under ``_refs/tags``), sorted."""
    out: dict[str, TagContents] = {}
    for entry in store.list(TAGS_DIR):
        if entry.endswith(".json"):
            name = unquote(entry[: -len(".json")])
            try:
                data = store.get(_path(name))
            except (FileNotFoundError, IsADirectoryError):  # deleted meanwhile, or a dir
                continue
            out[name] = decode_tag(data, store.uri(_path(name)))
    return out


def manifest_size(store: ObjectStore, version: int) -> int:
    """The byte size of ``version``'s manifest file; VersionNotFoundError if it is absent."""
    name = list_versions(store).get(version)
    if name is None:
        raise VersionNotFoundError(store.root, version)
    return store.size(f"{paths.VERSIONS_DIR}/{name}")


def _now_ns() -> int:
    return time.time_ns()


def create_tag(store: ObjectStore, name: str, version: int) -> TagContents:
    """Write a new tag ``name`` on ``version``; TagExistsError if the name is taken,
    VersionNotFoundError if the version does not exist (checked in that order, as
    pylance does). The file is created with put-if-absent, so of two writers creating one
    tag exactly one succeeds (pylance overwrites); a lost answer is settled by reading the
    file back (its times make it this call's), else :class:`CommitOutcomeUnknownError`."""
    if tag_exists(store, name):
        raise TagExistsError(name)
    now = _now_ns()
    contents = TagContents(version, manifest_size(store, version), None, now, now)
    path = _path(name)
    try:
        ours = create_once(store, path, encode_tag(contents), well_formed=_is_tag)
    except OutcomeUnknown as e:
        raise CommitOutcomeUnknownError(version, e.uri, e.cause, tag=name) from e
    if not ours:  # another writer won
        raise TagExistsError(name)
    return contents


def _is_tag(data: bytes) -> bool:
    try:
        decode_tag(data)
    except CorruptTableError:
        return False
    return True


def update_tag(store: ObjectStore, name: str, version: int) -> TagContents:
    """Point tag ``name`` at ``version``; its creation time and metadata stay, its update
    time becomes now (as pylance 14)."""
    current = read_tag(store, name)
    contents = replace(
        current,
        version=version,
        manifest_size=manifest_size(store, version),
        branch=None,
        updated_at_ns=_now_ns(),
    )
    store.put(_path(name), encode_tag(contents))
    return contents


def replace_tag_metadata(store: ObjectStore, name: str, metadata: Mapping[str, str]) -> None:
    """Replace tag ``name``'s metadata map; its version and times stay (as pylance 14)."""
    contents = replace(read_tag(store, name), metadata=metadata)
    store.put(_path(name), encode_tag(contents))


def delete_tag(store: ObjectStore, name: str) -> None:
    """Remove tag ``name``; TagNotFoundError if there is no such tag."""
    check_tag_name(name)
    if not store.exists(_path(name)):
        raise TagNotFoundError(name)
    store.delete(_path(name))
