"""Names of the files of a Lance table directory (layer L3; docs/format/lance-format-facts.md §1,
§7, §8).

Pure functions: no IO. Manifests use the V2 naming scheme for new tables
(``u64::MAX - version``, zero-padded to 20 digits) and are read in either scheme.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Collection, Iterable, Iterator
from enum import Enum

from ..errors import CorruptManifestError

__all__ = [
    "VERSIONS_DIR",
    "DATA_DIR",
    "TRANSACTIONS_DIR",
    "DELETIONS_DIR",
    "HINT_FILE",
    "NamingScheme",
    "manifest_name",
    "parse_manifest_name",
    "new_data_file_name",
    "transaction_file_name",
    "deletion_file_name",
    "unsafe_reason",
    "check_inside",
    "check_directories",
    "V2_NAME_LENGTH",
    "escapes",
]

VERSIONS_DIR = "_versions"
DATA_DIR = "data"
TRANSACTIONS_DIR = "_transactions"
DELETIONS_DIR = "_deletions"
HINT_FILE = "latest_version_hint.json"

_U64_MAX = (1 << 64) - 1
#: the length of a V2 manifest name (20 digits, then ".manifest")
V2_NAME_LENGTH = 20 + len(".manifest")


class NamingScheme(Enum):
    V1 = "v1"  # "{version}.manifest"
    V2 = "v2"  # "{u64::MAX - version:020d}.manifest"


def manifest_name(version: int, scheme: NamingScheme = NamingScheme.V2) -> str:
    """The file name of ``version``'s manifest under ``scheme``.

    >>> manifest_name(1)
    '18446744073709551614.manifest'
    >>> manifest_name(3, NamingScheme.V1)
    '3.manifest'
    """
    if scheme is NamingScheme.V1:
        return f"{version}.manifest"
    return f"{_U64_MAX - version:020d}.manifest"


def parse_manifest_name(name: str) -> tuple[int, NamingScheme] | None:
    """(version, scheme) of a manifest file name, or None for other files.

    Detached versions (``d…``) and ``_latest.manifest`` are not versions and give None.

    >>> parse_manifest_name('18446744073709551613.manifest')
    (2, <NamingScheme.V2: 'v2'>)
    >>> parse_manifest_name('12.manifest')
    (12, <NamingScheme.V1: 'v1'>)
    """
    if not name.endswith(".manifest") or name.startswith("d"):
        return None
    head = name.split(".", 1)[0]
    if not head.isdigit():
        return None
    if len(name) == V2_NAME_LENGTH:
        return _U64_MAX - int(head), NamingScheme.V2
    return int(head), NamingScheme.V1


def new_data_file_name() -> str:
    """A fresh data file name shaped like pylance's (docs/format/lance-format-facts.md §1): 24
    bits, then 26 hex digits.

    >>> len(new_data_file_name())
    56
    """
    raw = uuid.uuid4().bytes
    bits = "".join(f"{b:08b}" for b in raw[:3])
    return f"{bits}{raw[3:].hex()}.lance"


def transaction_file_name(read_version: int, txn_uuid: str) -> str:
    return f"{read_version}-{txn_uuid}.txn"


def deletion_file_name(fragment_id: int, read_version: int, file_id: int, bitmap: bool) -> str:
    return f"{fragment_id}-{read_version}-{file_id}.{'bin' if bitmap else 'arrow'}"


def unsafe_reason(relative: str) -> str | None:
    """Why ``relative`` (a path a manifest names, relative to a table directory) could
    leave that directory or is not a path at all; None when it is a plain relative path.

    >>> unsafe_reason("data/x.lance") is None
    True
    >>> unsafe_reason("../../outside/x.lance")
    "a '..' component"
    """
    if not relative:
        return "an empty path"
    if relative.startswith(("/", "\\")) or os.path.isabs(relative) or "://" in relative:
        return "an absolute path"
    if any(ord(c) < 0x20 or c == "\x7f" for c in relative):
        return "control characters"
    parts = relative.replace("\\", "/").split("/")
    if ".." in parts:
        return "a '..' component"
    if any(p in ("", ".") for p in parts):
        return "an empty or '.' component"
    return None


def check_inside(
    root: str, named: Iterable[tuple[str, str]], *, manifest: str, links: bool = True
) -> None:
    """Check that every ``(directory, name)`` in ``named`` (``name`` as a manifest gives
    it, relative to ``directory`` of the table directory ``root``) is a file inside
    ``root``: no absolute path, no ``..``, and (``links``: a local file system) no symbolic
    link, of the file or of a directory on the way, that resolves outside ``root``.

    Raises
    ------
    CorruptManifestError
        Naming ``manifest`` and the first offending path.
    """
    for rel, why in escapes(root, named, links=links):
        raise CorruptManifestError(
            manifest,
            f"path {rel!r} would leave the table directory {root}: it has {why}",
            named_path=rel,
        )


#: a name of plain components (letters, digits, ``_``, ``-``, inner dots): what every
#: library writes; anything else takes the full :func:`unsafe_reason` check
_PLAIN = re.compile(r"[\w\-]+(?:\.[\w\-]+)*(?:/[\w\-]+(?:\.[\w\-]+)*)*", re.ASCII)


def _links_in(directory: str) -> frozenset[str]:
    """The names of the symbolic links directly in ``directory`` (empty if it is missing)."""
    try:
        with os.scandir(directory) as entries:
            return frozenset(e.name for e in entries if e.is_symlink())
    except OSError:
        return frozenset()


#: a directory with at most this many files to check has them ``lstat``-ed one by one; a
#: larger one is listed once
_FEW = 32

#: (directory, its inode) -> names found there as regular files (not links) by this process.
#: Table files are written once under fresh names, so each is checked the first time the
#: process sees it; a file replaced by a link later is not seen again (whoever can do that
#: can also rewrite the file itself).
_REGULAR: dict[tuple[str, int], set[str]] = {}


def _links_among(directory: str, names: Collection[str]) -> frozenset[str]:
    """Which of ``names`` in ``directory`` are symbolic links (names already found regular
    by this process are not looked at again)."""
    try:
        inode = os.stat(directory).st_ino
    except OSError:
        return frozenset()
    known = _REGULAR.setdefault((directory, inode), set())
    fresh = set(names).difference(known)
    if not fresh:
        return frozenset()
    if len(fresh) > _FEW:
        links = _links_in(directory).intersection(fresh)
    else:
        links = frozenset(n for n in fresh if os.path.islink(os.path.join(directory, n)))
    if len(_REGULAR) > 1024:
        _REGULAR.clear()
    known.update(fresh.difference(links))
    return links


#: a newline-terminated run of plain names (see ``_PLAIN``), none with a ``/``
_PLAIN_LINES = re.compile(r"(?:[\w\-]+(?:\.[\w\-]+)*\n)*", re.ASCII)


def check_directories(root: str, directories: Iterable[str], *, manifest: str) -> None:
    """Each of the table's ``directories`` that exists resolves inside ``root`` (a directory
    may be a link to elsewhere in the table, never out of it), else CorruptManifestError."""
    real_root = os.path.realpath(root)
    for directory in directories:
        path = os.path.join(root, directory)
        if os.path.islink(path):
            target = os.path.realpath(path)
            if not _within(target, real_root):
                raise CorruptManifestError(
                    manifest,
                    f"directory {directory!r} is a symbolic link that resolves outside the "
                    f"table directory {root} ({target})",
                    named_path=directory,
                )


def escapes(
    root: str, named: Iterable[tuple[str, str]], *, links: bool = True
) -> Iterator[tuple[str, str]]:
    """Each ``(name, why)`` of ``named`` that :func:`check_inside` refuses; without
    ``links`` (an object store: keys, no links) only the names themselves are checked.

    Cost per call: the names of one directory are checked by one regular expression over
    all of them; symbolic links are looked for only among files this process has not seen
    as regular files yet, with one ``lstat`` each when they are few, else with one listing
    of the directory."""
    if not links:
        yield from _unsafe_names(named)
        return
    real_dirs: dict[str, str] = {}  # a table has few directories: resolve each once

    def real_dir(directory: str) -> str:
        if directory not in real_dirs:
            real_dirs[directory] = os.path.realpath(directory)
        return real_dirs[directory]

    real_root = real_dir(root)
    by_directory: dict[str, list[str]] = {}
    for directory, rel in named:
        by_directory.setdefault(directory, []).append(rel)
    by_folder: dict[str, list[tuple[str, str]]] = {}  # folder -> (name in it, name as given)
    for directory, rels in by_directory.items():
        head = os.path.join(root, directory)
        if _PLAIN_LINES.fullmatch("\n".join(rels) + "\n"):  # the common case, all at once
            inside = _within(real_dir(head), real_root)
            if inside and not _links_among(head, rels).intersection(rels):
                continue
            by_folder.setdefault(head, []).extend((rel, rel) for rel in rels)
            continue
        for rel in rels:
            why = None if _PLAIN.fullmatch(rel) else unsafe_reason(rel)
            if why is not None:
                yield rel, why
                continue
            folder, name = os.path.split(os.path.join(head, rel))
            by_folder.setdefault(folder, []).append((name, rel))
    for head, entries in by_folder.items():
        inside = _within(real_dir(head), real_root)
        linked = _links_among(head, [name for name, _ in entries]) if inside else frozenset()
        for name, rel in entries:
            target = real_dir(head)
            if name in linked:
                target = os.path.realpath(os.path.join(head, name))
            if not inside or (name in linked and not _within(target, real_root)):
                yield rel, f"a symbolic link that resolves outside the table ({target})"


def _unsafe_names(named: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Each ``(name, why)`` of ``named`` whose name could leave the table (strings only)."""
    by_directory: dict[str, list[str]] = {}
    for directory, rel in named:
        by_directory.setdefault(directory, []).append(rel)
    for rels in by_directory.values():
        if _PLAIN_LINES.fullmatch("\n".join(rels) + "\n"):
            continue
        for rel in rels:
            why = None if _PLAIN.fullmatch(rel) else unsafe_reason(rel)
            if why is not None:
                yield rel, why


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
