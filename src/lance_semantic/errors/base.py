"""The base of the error hierarchy and its layer families (layer L0), and the errors that
belong to no family: an invalid SQL expression, a feature not supported yet.

Every error pickles with its attributes (:func:`_rebuild`). Import the errors from
:mod:`lance_semantic.errors`, which they name as their module.
"""

from __future__ import annotations

__all__ = [
    "LanceSemanticError",
    "SchemaError",
    "WriteError",
    "ReadError",
    "ManifestError",
    "CommitError",
    "InvalidExpressionError",
    "NotSupportedYetError",
]


class LanceSemanticError(Exception):
    """Base class of every error raised by lance-semantic.

    Every error pickles with its attributes (a worker's error reaches the caller as the
    same class): it is rebuilt from its message and attributes, not by calling its
    constructor again.

    >>> import pickle
    >>> e = pickle.loads(pickle.dumps(SchemaMismatchError("a.b", "int64", "string")))
    >>> type(e).__name__, e.field_path
    ('SchemaMismatchError', 'a.b')
    """

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class SchemaError(LanceSemanticError):
    """A schema or type problem.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.to_table(columns=["nope"])
    ... except ls.errors.SchemaError as e:
    ...     print(type(e).__name__)
    ColumnNotFoundError
    """


class WriteError(LanceSemanticError):
    """A write was refused; the table stays at its previous version.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"s": ["a"]}), "t.lance", data_storage_version="2.3")
    >>> try:
    ...     ds.insert(pa.table({"s": [1]}))
    ... except ls.errors.WriteError as e:
    ...     print(type(e).__name__, ds.version)
    UnsupportedInputTypeError 1
    """


class ReadError(LanceSemanticError):
    """A read could not produce what was asked.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.take([5])
    ... except ls.errors.ReadError as e:
    ...     print(e)
    take index 5 is out of range for 1 rows
    """


class ManifestError(LanceSemanticError):
    """Table metadata on disk is missing, unreadable or not supported.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> try:
    ...     ls.dataset("nowhere.lance")
    ... except ls.errors.ManifestError as e:
    ...     print(type(e).__name__)
    DatasetNotFoundError
    """


class CommitError(LanceSemanticError):
    """A commit could not be published.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("keep")
    >>> _ = ds.insert(pa.table({"id": [2]}), mode="overwrite")
    >>> try:
    ...     ds.cleanup_old_versions(retain_versions=1)
    ... except ls.errors.CommitError as e:
    ...     print(type(e).__name__, e.tags)
    TaggedVersionsCleanupError {'keep': 1}
    """


class InvalidExpressionError(LanceSemanticError, ValueError):
    """Raised when a SQL filter or expression cannot be parsed or evaluated.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.to_table(filter="id >")
    ... except ls.InvalidExpressionError as e:
    ...     print(e.expression, "|", e.reason)
    id > | DataFusion error: SQL error: ParserError("Expected: an expression, found: EOF")
    >>> ds.count_rows("id + 1")
    Traceback (most recent call last):
    ...
    lance_semantic.errors.InvalidExpressionError: invalid SQL expression 'id + 1': filter must \
be a boolean expression, but it gives int64
    """

    def __init__(self, expression: str, reason: str) -> None:
        self.expression = expression
        self.reason = reason
        super().__init__(f"invalid SQL expression {expression!r}: {reason}")


class NotSupportedYetError(LanceSemanticError, NotImplementedError):
    """Raised when a feature that lance-semantic does not implement yet is needed.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.scanner(order_by=["id"])
    ... except ls.NotSupportedYetError as e:
    ...     print(e.feature, "|", isinstance(e, NotImplementedError))
    ordered scans (order_by=); sort the result instead | True
    """

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(f"not supported yet by lance-semantic: {feature}")


def _rebuild(
    cls: type[LanceSemanticError], args: tuple[object, ...], state: dict[str, object]
) -> LanceSemanticError:
    """An unpickled error: its class, message arguments and attributes as they were."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error
