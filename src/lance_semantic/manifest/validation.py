"""Structural checks of a decoded manifest (layer L3; strict manifests).

A manifest that decodes can still describe an impossible table: two fragments with one id,
more deleted rows than rows, a data file whose field ids and column indices disagree, a data
file of another format version than the table's. pylance reads several of these and returns
wrong answers; :func:`validate_manifest` refuses them, so every open fails loudly instead.
Checks that need the files themselves (row counts, deletion offsets) happen where the files
are read (``read/fragment_reader.py``); checks of the protobuf wire format in ``codec.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter

from ..errors import CorruptManifestError
from . import flags
from ._pb import lance_table_pb2 as tpb
from .model import DataFile, Fragment, Manifest

__all__ = ["validate_manifest", "manifest_problems", "named_paths", "validation_context"]


#: (code, message) of one problem; the codes are ``ls.check``'s
Problem = tuple[str, str]


def _problems(m: Manifest, base_ids: frozenset[int], start: int = 0) -> Iterator[Problem]:
    if m.version < 1:
        yield "manifest-corrupt", f"version {m.version} (versions start at 1)"
    for f in m.schema:
        if not f.logical_type:
            yield "schema", f"field {f.name!r} (id {f.id}) has no logical_type (a required field)"
    mixed = bool(m.writer_feature_flags & flags.FLAG_MIXED_FILE_VERSIONS)
    ids = list(map(_fragment_id, m.fragments))
    if len(set(ids)) != len(ids) or (
        m.max_fragment_id is not None and max(ids, default=0) > m.max_fragment_id
    ):
        seen: set[int] = set()
        for i in ids:
            if i in seen:
                yield "duplicate-fragment-id", f"duplicate fragment id {i}"
            seen.add(i)
            if m.max_fragment_id is not None and i > m.max_fragment_id:
                yield "fragment-id", f"fragment id {i} above max_fragment_id {m.max_fragment_id}"
    context = (m.data_format[1], mixed, base_ids)
    for frag in m.fragments[start:] if start else m.fragments:
        problems = _checked_fragment(frag, context)
        if problems:
            yield from problems


_fragment_id = attrgetter("id")

#: id(fragment) -> (fragment, context, its problems): a fragment is immutable and shared by
#: consecutive versions, so each one is checked once per context, not on every open
_CHECKED: dict[int, tuple[Fragment, tuple[str, bool, frozenset[int]], tuple[Problem, ...]]] = {}


def _checked_fragment(
    frag: Fragment, context: tuple[str, bool, frozenset[int]]
) -> tuple[Problem, ...]:
    known = _CHECKED.get(id(frag))
    if known is not None and known[0] is frag and known[1] == context:
        return known[2]
    found = tuple(_fragment_problems(frag, *context))
    if len(_CHECKED) >= 262_144:
        _CHECKED.clear()
    _CHECKED[id(frag)] = (frag, context, found)
    return found


def _fragment_problems(
    frag: Fragment, table_version: str, mixed: bool, base_ids: frozenset[int]
) -> Iterator[Problem]:
    where = f"fragment {frag.id}"
    if not frag.files:
        yield "fragment-empty", f"{where} has no data file"
    for d in frag.files:
        yield from _data_file_problems(d, where, table_version, mixed, base_ids)
    dfile = frag.deletion_file
    if dfile is not None:
        if dfile.num_deleted_rows > frag.physical_rows:
            yield (
                "deletion-count",
                f"{where} has {dfile.num_deleted_rows} deleted rows but only "
                f"{frag.physical_rows} rows",
            )
        if dfile.base_id is not None and dfile.base_id not in base_ids:
            yield (
                "base-path",
                f"{where}: deletion file base_id {dfile.base_id} is not a registered base path",
            )


def _data_file_problems(
    d: DataFile, where: str, table_version: str, mixed: bool, base_ids: frozenset[int]
) -> Iterator[Problem]:
    what = f"{where}, data file {d.path!r}"
    if d.file_major_version >= 2 and d.column_indices and len(d.column_indices) != len(d.fields):
        yield (
            "data-file-fields",
            f"{what} has {len(d.fields)} field ids but {len(d.column_indices)} column indices",
        )
    stored = [i for i in d.fields if i >= 0]
    if len(set(stored)) != len(stored):
        yield "data-file-fields", f"{what} lists a field id twice ({list(d.fields)})"
    if d.base_id is not None and d.base_id not in base_ids:
        yield "base-path", f"{what}: base_id {d.base_id} is not a registered base path"
    if not mixed:
        expected = _file_version(table_version)
        if expected is not None and (d.file_major_version, d.file_minor_version) != expected:
            if not (expected[0] == 0 and d.file_major_version == 0):  # legacy: any 0.x label
                yield (
                    "file-version",
                    f"{what} has format version {d.file_version}, the table "
                    f"{table_version} (and the mixed-versions flag is not set)",
                )


def _file_version(table_version: str) -> tuple[int, int] | None:
    if table_version in ("0.1", "legacy"):
        return (0, 0)
    major, _, minor = table_version.partition(".")
    if major.isdigit() and minor.isdigit():
        return int(major), int(minor)
    return None


def validate_manifest(manifest: Manifest, path: str, *, checked: int = 0) -> None:
    """Refuse a manifest whose content is inconsistent (every open calls this after
    :func:`~lance_semantic.manifest.codec.decode_manifest_file`, which stays a pure codec).
    ``checked``: how many leading fragments are known sound (the fragments of a version
    already validated, in the same context; see :func:`validation_context`).

    Raises
    ------
    CorruptManifestError
        Naming ``path`` and the first problem found.
    """
    for _code, problem in manifest_problems(manifest, checked=checked):
        raise CorruptManifestError(path, problem)


def _base_ids(manifest: Manifest) -> frozenset[int]:
    if not manifest.passthrough:
        return frozenset()
    # registered base paths are not modelled: they pass through
    return frozenset(b.id for b in tpb.Manifest.FromString(manifest.passthrough).base_paths)


def validation_context(manifest: Manifest) -> tuple[str, bool, frozenset[int]]:
    """What the per-fragment checks depend on besides the fragment itself."""
    mixed = bool(manifest.writer_feature_flags & flags.FLAG_MIXED_FILE_VERSIONS)
    return manifest.data_format[1], mixed, _base_ids(manifest)


def manifest_problems(manifest: Manifest, *, checked: int = 0) -> Iterator[Problem]:
    """Every inconsistency :func:`validate_manifest` refuses, as (code, message)."""
    yield from _problems(manifest, _base_ids(manifest), checked)


def named_paths(manifest: Manifest, *, checked: int = 0) -> Iterator[tuple[str, str]]:
    """Every file the manifest names, as (directory relative to the table, name as the
    manifest gives it): data files, deletion files and the transaction file; ``checked``
    leading fragments left out."""
    for frag in manifest.fragments[checked:] if checked else manifest.fragments:
        for d in frag.files:
            yield "data", d.path
        if frag.deletion_file is not None:
            directory, _, name = frag.deletion_file.path(frag.id).partition("/")
            yield directory, name
    if manifest.transaction_file:
        yield "_transactions", manifest.transaction_file
