"""The fault matrix of tests/s3/test_s3_faults.py: the committing operations, the state of a
table they are judged by, and the check of one case (an operation run with one fault
injected by tests/s3/faulty_proxy.py).

A case passes when the call either returned and the operation is applied exactly once (the
table equals the one a clean run leaves), or raised a library error and the table is
unchanged, or raised ``CommitOutcomeUnknownError`` and the table is one or the other; and in
every case the latest version reads fully, ``ls.check`` finds nothing wrong in any version,
the files of the table before the call are intact and, for a legacy table, pylance reads it
as we do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import lance
import pyarrow as pa
from tests.s3.faulty_proxy import Fault, FaultyProxy, ProxiedRequest

import lance_semantic as ls
from lance_semantic.storage.object_store import open_store

Options = Mapping[str, str]
#: an operation's call, run once the table is open (its result: the handle it advanced)
Call = Callable[[], Any]


def rows(ids: list[int], tag: str = "n") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"{tag}{i}" for i in ids], pa.string()),
        }
    )


def build(uri: str, options: Options, flagged: bool) -> None:
    """The table every operation starts from: three versions, three fragments, one with a
    deletion file (so that compaction, restore and cleanup have work)."""
    ls.write_dataset(
        rows(list(range(6))),
        uri,
        max_rows_per_file=3,
        semantic_types=flagged,
        storage_options=options,
    )
    ds = ls.write_dataset(rows([6, 7, 8]), uri, mode="append", storage_options=options)
    ds.delete("id = 1")


def _open(uri: str, options: Options) -> ls.Dataset:
    return ls.dataset(uri, storage_options=options)


def _create(uri: str, o: Options, flagged: bool) -> Call:
    return lambda: ls.write_dataset(rows([0, 1, 2]), uri, semantic_types=flagged, storage_options=o)


def _append(uri: str, o: Options, flagged: bool) -> Call:
    return lambda: ls.write_dataset(rows([20, 21]), uri, mode="append", storage_options=o)


def _on_handle(act: Callable[[ls.Dataset], object]) -> Callable[[str, Options, bool], Call]:
    """An operation on a handle opened before the fault is armed; the call gives the handle."""

    def prepare(uri: str, o: Options, flagged: bool) -> Call:
        ds = _open(uri, o)

        def call() -> ls.Dataset:
            act(ds)
            return ds

        return call

    return prepare


def _merge_insert(ds: ls.Dataset) -> object:
    builder = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
    return builder.execute(rows([2, 30], tag="m"))


def _restore(uri: str, o: Options, flagged: bool) -> Call:
    old = _open(uri, o).checkout_version(1)
    return old.restore


def _upgrade(uri: str, o: Options, flagged: bool) -> Call:
    return lambda: ls.upgrade(uri, storage_options=o)


@dataclass(frozen=True)
class Operation:
    name: str
    prepare: Callable[[str, Options, bool], Call]
    layouts: tuple[bool, ...] = (False, True)
    #: whether the table exists before (False: the call creates it)
    needs_table: bool = True
    #: whether the call may remove files of the table (cleanup): then the files of the
    #: table before are not checked, and the versions may be any between before and after
    removes_files: bool = False
    #: whether the call commits a version that changes no data before its own (compaction
    #: reserves fragment ids first, as pylance does): a failure after it leaves the data
    #: as before, one version on
    reserves_first: bool = False


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("create", _create, needs_table=False),
        Operation("append", _append),
        Operation("delete", _on_handle(lambda ds: ds.delete("id = 4"))),
        Operation("update", _on_handle(lambda ds: ds.update({"name": "'u'"}, where="id = 2"))),
        Operation("merge_insert", _on_handle(_merge_insert)),
        Operation("add_columns", _on_handle(lambda ds: ds.add_columns({"twice": "id * 2"}))),
        Operation("drop_columns", _on_handle(lambda ds: ds.drop_columns(["name"]))),
        Operation(
            "alter_columns",
            _on_handle(
                lambda ds: ds.alter_columns(
                    {"path": "name", "name": "label", "data_type": pa.large_string()}
                )
            ),
        ),
        Operation(
            "compact", _on_handle(lambda ds: ds.optimize.compact_files()), reserves_first=True
        ),
        Operation("restore", _restore),
        Operation(
            "set_output_encoding",
            _on_handle(lambda ds: ds.set_output_encoding("name", "large_utf8")),
            layouts=(True,),
        ),
        Operation("upgrade", _upgrade, layouts=(False,)),
        Operation("tag_create", _on_handle(lambda ds: ds.tags.create("keep", 2))),
        Operation(
            "cleanup_old_versions",
            _on_handle(lambda ds: ds.cleanup_old_versions(older_than=timedelta(0))),
            removes_files=True,
        ),
    )
}


# -- the state of a table -------------------------------------------------------------------


@dataclass(frozen=True)
class TableState:
    """What a caller can see of a table (None: no table): the latest version, its rows,
    schema (with metadata and field ids), flags, tags and the versions kept."""

    version: int
    rows: tuple[tuple[tuple[str, Any], ...], ...]
    schema: str
    fields: tuple[tuple[object, ...], ...]
    semantic_types: bool
    tags: tuple[tuple[str, int], ...]
    versions: tuple[int, ...]

    def same_table(self, other: TableState) -> bool:
        """Equal but for the versions kept (cleanup removes some)."""
        return self == TableState(**{**other.__dict__, "versions": self.versions})

    def same_data(self, other: TableState) -> bool:
        """Equal but for the version numbers."""
        return self == TableState(
            **{**other.__dict__, "version": self.version, "versions": self.versions}
        )


def table_state(uri: str, options: Options) -> TableState | None:
    """The state of the table at ``uri``; raises what reading the latest version raises."""
    try:
        ds = _open(uri, options)
    except ls.DatasetNotFoundError:
        return None
    table = ds.to_table()
    fields = tuple(
        (f.id, f.path, f.logical_type, f.output_encoding, f.nullable) for f in ds.semantic_schema
    )
    return TableState(
        version=ds.version,
        rows=tuple(tuple(r.items()) for r in table.sort_by("id").to_pylist()),
        schema=ds.schema.to_string(show_field_metadata=True, show_schema_metadata=True),
        fields=fields,
        semantic_types=ds.semantic_types,
        tags=tuple(sorted((n, t["version"]) for n, t in ds.tags.list().items())),
        versions=tuple(v["version"] for v in ds.versions()),
    )


def inventory(uri: str, options: Options) -> dict[str, int]:
    """Every object of the table and its size."""
    return {f.path: f.size for f in open_store(uri, options).walk("")}


# -- requests as targets --------------------------------------------------------------------

_MASKS = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "*"),
    (re.compile(r"(?<=data/)[^/?]+(?=\.lance)"), "*"),
    (re.compile(r"(?<=_deletions/)(\d+-\d+)-\d+"), r"\1-*"),
)


#: a manifest of the V2 naming scheme: named by u64::MAX - version, 20 digits
_V2_MANIFEST = re.compile(r"(?<=_versions/)(\d{20})(?=\.manifest)")


def signature(request: ProxiedRequest, table_key: str) -> str:
    """The request described without what differs between two runs on fresh tables (the
    table's key, random file names), V2 manifest names as ``v<version>``: a target that
    the same run hits again.

    >>> from tests.s3.faulty_proxy import ProxiedRequest
    >>> put = ProxiedRequest(0, "PUT", "b", "t/_versions/18446744073709551611.manifest", {},
    ...                      {"if-none-match": "*"}, 10)
    >>> signature(put, "t")
    'PUT _versions/v4.manifest [if-none-match: *]'
    """
    text = request.describe().replace(f"{request.bucket}/", "", 1).replace(f"{table_key}/", "")
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return _V2_MANIFEST.sub(lambda m: f"v{2**64 - 1 - int(m.group(1))}", text)


@dataclass(frozen=True)
class Target:
    """The ``occurrence``-th request of the run whose signature is ``signature``; ``index``
    is its position in the clean run, ``has_body`` whether its clean answer had a body."""

    index: int
    signature: str
    occurrence: int
    has_body: bool

    @property
    def writes(self) -> bool:
        return not self.signature.startswith(("GET ", "HEAD "))


def targets(requests: list[ProxiedRequest], table_key: str) -> list[Target]:
    seen: dict[str, int] = {}
    out = []
    for r in requests:
        sig = signature(r, table_key)
        out.append(Target(r.index, sig, seen.get(sig, 0), bool(r.answer_size)))
        seen[sig] = seen.get(sig, 0) + 1
    return out


#: for a read (GET, HEAD) a lost or late-applied answer is the same to the client as the
#: fault that does not reach the server, so reads get only the kinds below
_READ_FAULTS = (Fault.RESET, Fault.ERROR_5XX, Fault.LATE_ANSWER, Fault.DELAY)
_WRITE_FAULTS = (
    Fault.LOST_ANSWER,
    Fault.LATE_ANSWER,
    Fault.ERROR_5XX,
    Fault.APPLIED_5XX,
    Fault.RESET,
    Fault.DELAY,
    Fault.LATE_APPLY,
)


def faults_for(target: Target) -> tuple[Fault, ...]:
    """The fault kinds that mean something at ``target`` (truncated bodies: answers with
    a body)."""
    if target.writes:
        return _WRITE_FAULTS
    return (*_READ_FAULTS, Fault.TRUNCATED_BODY) if target.has_body else _READ_FAULTS


# -- one case -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clean:
    """The clean run of an operation on one layout: its requests and the table it leaves."""

    targets: tuple[Target, ...]
    after: TableState | None


@dataclass
class Outcome:
    """What one case did: the error raised (None: returned), the request the fault hit
    (None: it did not fire) and every broken invariant (empty: the case passes)."""

    error: BaseException | None
    injected: str | None
    applied: str = ""
    symptoms: list[str] = field(default_factory=list)


def _name(e: BaseException) -> str:
    return f"{type(e).__module__}.{type(e).__qualname__}"


def _call(call: Call) -> tuple[Any, BaseException | None]:
    try:
        return call(), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 -- pyo3 panics are BaseExceptions: judged below
        return None, e


@dataclass
class Matrix:
    """Runs cases: ``direct`` are the server's options (to build and judge tables),
    ``proxied`` the same through ``proxy`` with short client timeouts."""

    proxy: FaultyProxy
    direct: dict[str, str]
    proxied: dict[str, str]
    new_uri: Callable[[], str]

    def _start(self, op: Operation, flagged: bool) -> tuple[str, Call]:
        uri = self.new_uri()
        if op.needs_table:
            build(uri, self.direct, flagged)
        call = op.prepare(uri, self.proxied, flagged)
        return uri, call

    def clean(self, op: Operation, flagged: bool) -> Clean:
        uri, call = self._start(op, flagged)
        with self.proxy.recording() as requests:
            call()
            self.proxy.settle()
        recorded = list(requests)
        return Clean(tuple(targets(recorded, _key(uri))), table_state(uri, self.direct))

    def case(
        self, op: Operation, flagged: bool, fault: Fault, target: Target, clean: Clean
    ) -> Outcome:
        uri, call = self._start(op, flagged)
        before = table_state(uri, self.direct)
        files = inventory(uri, self.direct)
        key = _key(uri)
        self.proxy.reset()
        self.proxy.arm(fault, target.occurrence, lambda r: signature(r, key) == target.signature)
        result, error = _call(call)
        self.proxy.disarm()
        self.proxy.settle()
        hit = self.proxy.injected
        outcome = Outcome(error, hit.describe() if hit is not None else None)
        if hit is None:
            outcome.symptoms.append("the fault did not fire: the run made other requests")
        judge(outcome, op, uri, self.direct, before, files, clean.after, result)
        return outcome


def _key(uri: str) -> str:
    return uri.split("://", 1)[1].split("/", 1)[1]


def judge(
    outcome: Outcome,
    op: Operation,
    uri: str,
    options: Options,
    before: TableState | None,
    files: dict[str, int],
    clean: TableState | None,
    result: Any,
) -> None:
    """Fill ``outcome.symptoms`` with every invariant the case broke."""
    symptoms = outcome.symptoms
    error = outcome.error
    try:
        after = table_state(uri, options)
    except Exception as e:  # noqa: BLE001 -- a symptom
        symptoms.append(f"latest version unreadable: {_name(e)}: {str(e)[:200]}")
        after = _unreadable
    foreign = error is not None and not isinstance(error, ls.errors.LanceSemanticError)
    if after is _unreadable and error is not None and foreign:
        symptoms.append(f"raised {_name(error)}")
    if after is not _unreadable:
        outcome.applied = _which(after, before, clean, op)
        if error is None:
            if outcome.applied != "clean":
                symptoms.append(f"returned, table {outcome.applied}")
            elif isinstance(result, ls.Dataset) and after is not None:
                if result.version != after.version:
                    symptoms.append(f"returned a handle at {result.version}, not {after.version}")
        elif foreign and error is not None:
            symptoms.append(f"raised {_name(error)} (table {outcome.applied})")
        elif isinstance(error, ls.CommitOutcomeUnknownError):
            if outcome.applied not in ("clean", "before"):
                symptoms.append(f"raised CommitOutcomeUnknownError, table {outcome.applied}")
        elif outcome.applied != "before" and not (
            # cleanup is not one commit, and running it again finishes it: any state on
            # the way is an answer the caller can act on
            op.removes_files and outcome.applied in ("partly cleaned", "clean")
        ):
            symptoms.append(f"raised {type(error).__name__}, table {outcome.applied}")
    symptoms.extend(_check_versions(uri, options))
    if not op.removes_files:
        now = inventory(uri, options)
        lost = sorted(p for p, size in files.items() if now.get(p) != size)
        if lost:
            symptoms.append(f"files of the table before are gone or changed: {lost}")
    if isinstance(after, TableState) and not after.semantic_types:
        symptoms.extend(_pylance_reads(uri, options, after))


#: a marker for "the latest version could not be read"
_unreadable: Any = object()


def _which(
    after: TableState | None, before: TableState | None, clean: TableState | None, op: Operation
) -> str:
    """``clean`` (as the clean run left it), ``before`` (unchanged), else a description."""
    if op.removes_files and after is not None and before is not None and clean is not None:
        if after.same_table(clean) and set(clean.versions) <= set(after.versions):
            if after.versions == clean.versions:
                return "clean"
            if set(after.versions) <= set(before.versions):
                return "before" if after == before else "partly cleaned"
    if after == clean:
        return "clean"
    if after == before:
        return "before"
    if op.reserves_first and after is not None and before is not None:
        if after.same_data(before) and after.version == before.version + 1:
            return "before"  # (its fragment ids reserved)
    if after is None:
        return "missing"
    if clean is not None and after.version > clean.version:
        return f"at version {after.version}, clean run at {clean.version} (applied twice?)"
    return f"at version {after.version}, neither before nor clean"


def _check_versions(uri: str, options: Options) -> list[str]:
    """Problems ``ls.check`` finds in the latest version and ``missing-file`` in any."""
    out: list[str] = []
    try:
        if table_state(uri, options) is None:
            return out
        report = ls.check(uri, storage_options=options)
        out.extend(f"check: {p.code} {p.path}" for p in report.problems)
        latest = report.version
        for v in [v["version"] for v in _open(uri, options).versions()]:
            if v == latest:
                continue
            old = ls.check(uri, version=v, storage_options=options)
            out.extend(
                f"check v{v}: {p.code} {p.path}" for p in old.problems if p.code == "missing-file"
            )
    except Exception as e:  # noqa: BLE001 -- a symptom
        out.append(f"check failed: {_name(e)}: {str(e)[:200]}")
    return out


def _pylance_reads(uri: str, options: Options, after: TableState) -> list[str]:
    try:
        theirs = lance.dataset(uri, storage_options=dict(options))
        table = theirs.to_table()
    except Exception as e:  # noqa: BLE001 -- a symptom
        return [f"pylance cannot read: {_name(e)}: {str(e)[:200]}"]
    out: list[str] = []
    if theirs.version != after.version:
        out.append(f"pylance sees version {theirs.version}, we {after.version}")
    theirs_rows = tuple(tuple(r.items()) for r in table.sort_by("id").to_pylist())
    if theirs_rows != after.rows:
        out.append("pylance reads other rows")
    return out
