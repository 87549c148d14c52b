"""Every library error pickles and unpickles as the same class with the same message and
attributes: an error raised in a worker process or a Ray task reaches the
caller as itself, field path included."""

from __future__ import annotations

import importlib
import inspect
import io
import pickle
import pkgutil
import subprocess
import sys
import traceback
import typing

import pytest

from lance_semantic import errors as E

INSTANCES = [
    E.LanceSemanticError("plain"),
    E.SchemaError("schema"),
    E.WriteError("write"),
    E.ReadError("read"),
    E.ManifestError("manifest"),
    E.CommitError("commit"),
    E.DatasetNotFoundError("/t", "no _versions"),
    E.DatasetExistsError("/t"),
    E.CorruptManifestError("/t/_versions/1.manifest", "truncated", named_path="data/x.lance"),
    E.CorruptTableError("/t/data/x.lance", "missing"),
    E.UnsupportedFeatureError(1 << 40, kind="reader", uri="/t", features=("x",)),
    E.UnsupportedTypeError("a.b", "map<int, int>", "why"),
    E.ReservedExtensionNameError("a", "lance.json"),
    E.SchemaMismatchError("a.b", "int64", "string", "reason"),
    E.UnsupportedInputTypeError("a.b", "string", "int32"),
    E.InvalidJsonError("doc", 3, "unexpected end", '{"a"'),
    E.InvalidBlobError("clip", 4, "not bytes"),
    E.InvariantViolationError("a", "utf8", None, "large_utf8", "arrow.json"),
    E.OutputEncodingOverflowError("s", 1 << 32, "utf8"),
    E.InvalidOutputEncodingError("s", "utf9", "unknown"),
    E.CommitConflictError(3, 4, "same rows", retryable=False),
    E.NotSupportedYetError("a feature"),
    E.InvalidExpressionError("id >", "syntax"),
    E.DuplicateKeyError(["id"]),
    E.DuplicateKeyError(["a", "b"], {"a": 1, "b": None}, count=3),
    E.ColumnNotFoundError("nope", ["id", "s"]),
    E.SchemaEvolutionError("a", "duplicate name"),
    E.MatchedRowError({"id": 4}),
    E.CommitOutcomeUnknownError(5, "s3://b/t/_versions/5.manifest", "timeout"),
    E.VersionNotFoundError("/t", 9),
    E.TagError("tag"),
    E.TagNotFoundError("v1"),
    E.TagExistsError("v1"),
    E.InvalidTagNameError("a/b", "bad characters"),
    E.TaggedVersionsCleanupError({"keep": 3}),
    E.StorageError("write the data file", "s3://b/t/data/x.lance", "connection reset"),
    E.InvalidUriError("ab:t.lance", "no object store for the scheme 'ab'"),
    E.InvalidStorageOptionError("allow_http", "True", "the value must be a str"),
]


def test_the_table_covers_every_exported_error() -> None:
    exported = {getattr(E, n) for n in E.__all__ if isinstance(getattr(E, n), type)}
    assert exported == {type(e) for e in INSTANCES}


def _same(a: BaseException, b: BaseException) -> None:
    assert type(a) is type(b)
    assert str(a) == str(b) and a.args == b.args
    assert a.__dict__ == b.__dict__


@pytest.mark.parametrize("error", INSTANCES, ids=lambda e: type(e).__name__)
def test_every_error_round_trips_through_pickle(error: BaseException) -> None:
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        _same(pickle.loads(pickle.dumps(error, protocol=protocol)), error)


def test_a_row_error_keeps_its_shifted_row() -> None:
    e = E.InvalidJsonError("doc", 3, "bad").at_offset(100)
    back = pickle.loads(pickle.dumps(e))
    assert back.row == 103 and "row 103" in str(back)


def test_an_error_raised_in_another_process_arrives_as_itself() -> None:
    code = (
        "import pickle, sys\n"
        "from lance_semantic.errors import SchemaMismatchError\n"
        "sys.stdout.buffer.write(pickle.dumps(SchemaMismatchError('st.x', 'int64', 'utf8')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    e = pickle.loads(out)
    assert isinstance(e, E.SchemaMismatchError) and e.field_path == "st.x"
    assert e.table_type == "int64" and "st.x" in str(e)


# ---- the errors package names itself as every error's module -----------------------------

#: every error class that a module of the package defines (private bases included)
DEFINED = sorted(
    {
        value
        for info in pkgutil.iter_modules(E.__path__)
        for value in vars(importlib.import_module(f"{E.__name__}.{info.name}")).values()
        if isinstance(value, type) and issubclass(value, E.LanceSemanticError)
    },
    key=lambda cls: cls.__qualname__,
)


def test_every_defined_error_is_exported_or_private() -> None:
    public = {cls for cls in DEFINED if not cls.__qualname__.startswith("_")}
    assert public == {type(e) for e in INSTANCES}
    assert E._RowError in DEFINED


@pytest.mark.parametrize("cls", DEFINED, ids=lambda cls: cls.__qualname__)
def test_every_error_class_names_the_package_as_its_module(cls: type) -> None:
    assert cls.__module__ == "lance_semantic.errors"
    assert getattr(E, cls.__qualname__) is cls
    for name, member in vars(cls).items():
        if inspect.isfunction(member):
            assert member.__module__ == "lance_semantic.errors", name
            # annotations resolve in the module the class names
            typing.get_type_hints(member, globalns=vars(E))
    typing.get_type_hints(cls)


class _Recording(pickle.Unpickler):
    """An unpickler that notes the module of every global (class, function) it loads."""

    def __init__(self, payload: bytes) -> None:
        super().__init__(io.BytesIO(payload))
        self.modules: set[str] = set()

    def find_class(self, module: str, name: str) -> object:
        self.modules.add(module)
        return super().find_class(module, name)


@pytest.mark.parametrize("error", INSTANCES, ids=lambda e: type(e).__name__)
def test_every_error_pickles_by_the_package_path(error: BaseException) -> None:
    """Pickles name ``lance_semantic.errors`` only (never one of its modules), so pickles of
    earlier versions load, and those of this one load in them."""
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        loader = _Recording(pickle.dumps(error, protocol=protocol))
        back = loader.load()
        assert loader.modules - {"builtins", "copyreg", "__builtin__"} == {"lance_semantic.errors"}
        _same(back, error)
        assert type(back).__module__ == "lance_semantic.errors"


def test_a_traceback_names_the_package() -> None:
    error = E.SchemaMismatchError("a.b", "int64", "string")
    line = traceback.format_exception_only(error)[-1]
    assert line.startswith("lance_semantic.errors.SchemaMismatchError: schema mismatch")
