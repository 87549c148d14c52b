"""``ls.check``: prove a table version is sound, reading only (layer L5).

pylance's ``LanceDataset.validate()`` is the peer: it raises on the first problem it knows.
``check`` reports every problem it finds, the ones pylance knows (manifest structure,
fragment ids, row and deletion counts, files that exist) and the contract's invariants
pylance cannot know: each data file of a flagged table holds, for every field, a layout
accepted for its semantic type (the writer-boundary invariant, checked after the fact), and
every output-encoding entry is valid for its field. Nothing is ever written.

>>> import tempfile, pyarrow as pa, lance_semantic as ls
>>> uri = tempfile.mkdtemp() + "/t"
>>> _ = ls.write_dataset(pa.table({"s": ["a", "b"]}), uri, data_storage_version="2.3")
>>> ls.check(uri).ok
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa

from ...commit import list_versions
from ...errors import (
    CorruptTableError,
    InvalidOutputEncodingError,
    LanceSemanticError,
    NotSupportedYetError,
)
from ...manifest import (
    DataFile,
    Fragment,
    Manifest,
    decode_manifest_file,
    flags,
    index_field_ids,
    manifest_problems,
    named_paths,
    read_inline_transaction,
)
from ...read import deletion_problems, plan_data_file
from ...read.blob_descriptors import blob_descriptors
from ...schema import Field, is_blob, is_blob_v2, semantic_type_of
from ...storage import (
    ObjectStore,
    file_metadata,
    open_store,
    paths,
    read_deleted_rows,
    sidecar_path,
)
from ...types.layouts import validate_output_encoding
from ...write import check_file_layout
from ..core import check_storage_options, check_uri, check_version

__all__ = ["Problem", "CheckReport", "check"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a table: a stable ``code`` (e.g. ``missing-file``), the file or
    field ``path`` it is about, and a ``message`` a person can act on.

    >>> import os, pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> for name in os.listdir("t.lance/data"):
    ...     os.remove(f"t.lance/data/{name}")
    >>> problem = ls.check("t.lance").problems[0]
    >>> problem.code, problem.path.startswith(os.path.abspath("t.lance/data")), problem.message
    ('missing-file', True, 'referenced by the manifest, absent')
    """

    code: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What :func:`check` found: ``ok`` when ``problems`` is empty; ``uri`` is the table
    checked, ``version`` the version (None when there is no table).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> report = ls.check("t.lance")
    >>> report.ok, report.version, report.problems
    (True, 1, ())
    >>> print(ls.check("nowhere.lance"))  # doctest: +ELLIPSIS
    /.../nowhere.lance version None: 1 problem(s)
    not-a-table: /.../nowhere.lance: no manifest under _versions/
    """

    uri: str
    version: int | None
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        """True when no problem was found.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> ls.check("t.lance").ok, ls.check("t.lance", version=2).ok
        (True, False)
        """
        return not self.problems

    def to_dict(self) -> dict[str, object]:
        """The report as plain data: ``uri``, ``version``, ``ok``, ``problems`` (each a
        dict of ``code``, ``path``, ``message``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> report = ls.check("t.lance", version=3).to_dict()
        >>> report["ok"], [p["code"] for p in report["problems"]]
        (False, ['version-missing'])
        """
        return {
            "uri": self.uri,
            "version": self.version,
            "ok": self.ok,
            "problems": [
                {"code": p.code, "path": p.path, "message": p.message} for p in self.problems
            ],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON (what ``lance-semantic check --json`` prints).

        >>> import json, pyarrow as pa, lance_semantic as ls
        >>> _ = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> json.loads(ls.check("t.lance").to_json())["ok"]
        True
        """
        return json.dumps(self.to_dict())

    def __str__(self) -> str:
        head = f"{self.uri} version {self.version}: "
        if self.ok:
            return head + "ok"
        return head + f"{len(self.problems)} problem(s)\n" + "\n".join(map(str, self.problems))


def check(
    uri: str, *, version: int | None = None, storage_options: Mapping[str, str] | None = None
) -> CheckReport:
    """Verify one version of the table at ``uri`` (default: the latest) and report every
    problem found; reads only.

    Parameters
    ----------
    uri
        The table directory.
    version
        The version to check; the latest when None.
    storage_options
        As for :func:`lance_semantic.dataset`.

    Returns
    -------
    CheckReport
        ``.ok``, and ``.problems`` (each with ``.code``, ``.path``, ``.message``).

    Examples
    --------
    >>> import os, pyarrow as pa, lance_semantic as ls
    >>> _ = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> ls.check("t.lance").ok
    True
    >>> for name in os.listdir("t.lance/data"):
    ...     os.remove(f"t.lance/data/{name}")
    >>> [p.code for p in ls.check("t.lance").problems]
    ['missing-file']
    """
    uri = check_uri("uri", uri)
    version = check_version(version)
    store = open_store(uri, check_storage_options(storage_options))
    versions = list_versions(store)
    if not versions:
        problem = Problem("not-a-table", store.root, "no manifest under _versions/")
        return CheckReport(store.root, version, (problem,))
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        problem = Problem(
            "version-missing",
            store.root,
            f"version {chosen} does not exist ({len(versions)} versions, latest {max(versions)})",
        )
        return CheckReport(store.root, chosen, (problem,))
    name = f"{paths.VERSIONS_DIR}/{versions[chosen]}"
    where = store.uri(name)
    try:
        data = store.get(name)
        manifest = decode_manifest_file(data, where)
        read_inline_transaction(data, where)  # pylance reads it on every open
    except (LanceSemanticError, OSError) as e:
        return CheckReport(store.root, chosen, (Problem("manifest-corrupt", where, str(e)),))
    problems = list(_manifest_problems(store, manifest, where, chosen))
    return CheckReport(store.root, chosen, tuple(problems))


def _manifest_problems(
    store: ObjectStore, m: Manifest, where: str, version: int
) -> Iterator[Problem]:
    if m.version != version:
        yield Problem(
            "manifest-corrupt", where, f"holds version {m.version}, its name says {version}"
        )
    for mask, unknown in (
        ("reader", flags.unknown_reader_flags(m.reader_feature_flags)),
        ("writer", flags.unknown_writer_flags(m.writer_feature_flags)),
    ):
        if unknown:
            names = ", ".join(flags.flag_names(unknown))
            yield Problem("unknown-feature-flag", where, f"{mask} feature flags {names}")
    for code, message in manifest_problems(m):
        yield Problem(code, where, message)
    escaping: set[str] = set()
    for rel, why in paths.escapes(store.root, named_paths(m), links=store.is_local):
        escaping.add(rel)
        yield Problem("path-escape", where, f"path {rel!r} would leave the table: it has {why}")
    for frag in m.fragments:
        yield from _fragment_problems(store, m, frag, escaping)
    if m.transaction_file and m.transaction_file not in escaping:
        rel = f"{paths.TRANSACTIONS_DIR}/{m.transaction_file}"
        yield from _missing(store, rel)
    yield from _index_problems(m, where)
    if bool(m.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES):
        for f in (d for top in m.schema.fields for d in top.walk()):
            yield from _output_encoding_problems(f)


def _index_problems(m: Manifest, where: str) -> Iterator[Problem]:
    """Every index covers fields the schema has (else pylance's filtered reads fail with
    "Index referenced a field with id N")."""
    try:
        covered = index_field_ids(m.index_section)
    except ValueError as e:
        yield Problem("manifest-corrupt", where, f"the index section does not decode: {e}")
        return
    for field_id in sorted(covered - {f.id for top in m.schema.fields for f in top.walk()}):
        yield Problem(
            "index-field", where, f"an index covers field id {field_id}, not in the schema"
        )


def _missing(store: ObjectStore, rel: str) -> Iterator[Problem]:
    if not store.exists(rel):
        yield Problem("missing-file", store.uri(rel), "referenced by the manifest, absent")


def _fragment_problems(
    store: ObjectStore, m: Manifest, frag: Fragment, escaping: set[str]
) -> Iterator[Problem]:
    """Problems of the files ``frag`` names (never opened when their path escapes)."""
    flagged = bool(m.reader_feature_flags & flags.FLAG_SEMANTIC_TYPES)
    for df in frag.files:
        if df.path not in escaping:
            yield from _data_file_problems(store, m, frag, df, flagged)
    deletion = frag.deletion_file
    if deletion is None:
        return
    rel = deletion.path(frag.id)
    if rel.partition("/")[2] in escaping:
        return
    path = store.uri(rel)
    if not store.exists(rel):
        yield from _missing(store, rel)
        return
    try:
        rows = read_deleted_rows(
            store, frag.id, deletion.read_version, deletion.id, deletion.file_type == "bitmap"
        )
    except Exception as e:  # a damaged file is a finding here, never a crash
        yield Problem("unreadable-file", path, f"{type(e).__name__}: {e}")
        return
    for code, message in deletion_problems(rows, frag):
        yield Problem(code, path, message)


def _data_file_problems(
    store: ObjectStore, m: Manifest, frag: Fragment, df: DataFile, flagged: bool
) -> Iterator[Problem]:
    rel = f"{paths.DATA_DIR}/{df.path}"
    path = store.uri(rel)
    if not store.exists(rel):
        yield from _missing(store, rel)
        return
    try:
        schema, num_rows = file_metadata(store, rel)
    except Exception as e:  # a damaged file is a finding here, never a crash
        yield Problem("unreadable-file", path, f"{type(e).__name__}: {e}")
        return
    if num_rows != frag.physical_rows:
        yield Problem(
            "row-count",
            path,
            f"fragment {frag.id}: the data file holds {num_rows} rows, the manifest says "
            f"{frag.physical_rows}",
        )
    try:
        plan = plan_data_file(m.schema, df, schema, where=path)
    except CorruptTableError as e:  # the file's columns and the manifest's field ids
        yield Problem("data-file-fields", path, f"fragment {frag.id}: {e.reason}")
        return
    for field_id, column in plan.columns.items():
        table_field = m.schema.field_by_id(field_id)
        if is_blob(table_field):  # its data-file column holds descriptors
            yield from _blob_problems(store, df, table_field, frag)
            continue
        if any(is_blob_v2(f) for f in table_field.walk()):  # a struct with a blob v2
            continue  # member: the file lists it as pylance's descriptor, not a layout
        arrow = schema.field(column)
        retag = plan.retag.get(field_id)
        if retag is not None:
            arrow = arrow.with_type(retag.type)
        try:
            check_file_layout(
                [table_field], pa.schema([arrow.with_name(table_field.name)]), flagged=flagged
            )
        except LanceSemanticError as e:
            yield Problem("layout", path, str(e))


def _blob_problems(
    store: ObjectStore, df: DataFile, field: Field, frag: Fragment
) -> Iterator[Problem]:
    """Every descriptor points at bytes that exist: inside the data file (v1, v2 inline) or
    inside its sidecar (v2 packed / dedicated). External URIs are not the table's files."""
    data_path = store.uri(f"{paths.DATA_DIR}/{df.path}")
    try:
        shadow = blob_descriptors(store, df, field, frag.physical_rows)
        rows = shadow.to_table(columns=["blob"]).column("blob").to_pylist()
    except NotSupportedYetError:
        raise  # blob columns on an object store: no finding about the table
    except Exception as e:  # a damaged file is a finding here, never a crash
        yield Problem("unreadable-file", data_path, f"blob column '{field.path}': {e}")
        return
    sizes: dict[str, int | None] = {}
    for row, d in enumerate(rows):
        if d is None:
            continue
        kind = d.get("kind", 0) if is_blob_v2(field) else 0
        if kind == 3:  # external
            continue
        if kind in (1, 2):
            rel = f"{paths.DATA_DIR}/{sidecar_path(df.path, d['blob_id'])}"
        else:
            rel = f"{paths.DATA_DIR}/{df.path}"
        if rel not in sizes:
            sizes[rel] = store.size(rel) if store.exists(rel) else None
        size = sizes[rel]
        path = store.uri(rel)
        if size is None:
            yield Problem(
                "missing-file", path, f"blob column '{field.path}', row {row}: sidecar absent"
            )
            sizes[rel] = -1  # once per file
        elif size >= 0 and d["position"] + d["size"] > size:
            yield Problem(
                "blob-range",
                path,
                f"blob column '{field.path}', row {row}: bytes {d['position']}.."
                f"{d['position'] + d['size']} past the file's {size}",
            )


def _output_encoding_problems(f: Field) -> Iterator[Problem]:
    if f.output_encoding is None:
        return
    try:
        validate_output_encoding(semantic_type_of(f), f.output_encoding, path=f.path)
    except InvalidOutputEncodingError as e:
        yield Problem("output-encoding", f.path, str(e))
