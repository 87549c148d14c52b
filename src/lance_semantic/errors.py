"""The whole exception hierarchy of lance-semantic (layer L0).

Every error derives from :class:`LanceSemanticError`. Each class that the spec's
"Failure Semantics" table needs carries the facts of its row as attributes and
builds its message from them, so callers can assert attributes instead of prose.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "LanceSemanticError",
    "SchemaError",
    "WriteError",
    "ReadError",
    "ManifestError",
    "CommitError",
    "DatasetNotFoundError",
    "DatasetExistsError",
    "VersionNotFoundError",
    "TagError",
    "TagNotFoundError",
    "TagExistsError",
    "InvalidTagNameError",
    "TaggedVersionsCleanupError",
    "CorruptManifestError",
    "CorruptTableError",
    "UnsupportedFeatureError",
    "UnsupportedTypeError",
    "ReservedExtensionNameError",
    "SchemaMismatchError",
    "UnsupportedInputTypeError",
    "InvalidJsonError",
    "InvalidBlobError",
    "InvariantViolationError",
    "OutputEncodingOverflowError",
    "InvalidOutputEncodingError",
    "CommitConflictError",
    "NotSupportedYetError",
    "InvalidExpressionError",
    "DuplicateKeyError",
    "ColumnNotFoundError",
    "SchemaEvolutionError",
    "MatchedRowError",
    "CommitOutcomeUnknownError",
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
    """A schema or type problem."""


class WriteError(LanceSemanticError):
    """A write was refused; the table stays at its previous version."""


class ReadError(LanceSemanticError):
    """A read could not produce what was asked."""


class ManifestError(LanceSemanticError):
    """Table metadata on disk is missing, unreadable or not supported."""


class CommitError(LanceSemanticError):
    """A commit could not be published."""


class InvalidExpressionError(LanceSemanticError, ValueError):
    """Raised when a SQL filter or expression cannot be parsed or evaluated."""

    def __init__(self, expression: str, reason: str) -> None:
        self.expression = expression
        self.reason = reason
        super().__init__(f"invalid SQL expression {expression!r}: {reason}")


class DuplicateKeyError(WriteError, ValueError):
    """Raised when a merge_insert source holds the same key more than once."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        super().__init__(
            f"merge_insert source has duplicate values of key column(s) {', '.join(keys)}: "
            "each key may appear at most once"
        )


class ColumnNotFoundError(SchemaError, KeyError, ValueError):
    """Raised when a read, a take or a schema change names a column (or nested field) the
    table does not have. Also a ``ValueError``, as pylance raises one."""

    def __init__(self, field_path: str, available: tuple[str, ...] | list[str] = ()) -> None:
        self.field_path = field_path
        self.available = tuple(available)
        msg = f"column '{field_path}' does not exist in the dataset"
        if self.available:
            msg += f" (columns: {', '.join(self.available)})"
        super().__init__(msg)

    def __str__(self) -> str:
        return str(self.args[0])


class SchemaEvolutionError(SchemaError, ValueError):
    """Raised when a schema change is invalid: a duplicate or dotted name, a cast pylance
    refuses or that would lose values, nulls in a column made non-nullable, dropping every
    column. Nothing is committed."""

    def __init__(self, field_path: str, reason: str) -> None:
        self.field_path = field_path
        self.reason = reason
        super().__init__(f"cannot change column '{field_path}': {reason}")


class MatchedRowError(WriteError, OSError):
    """Raised by ``merge_insert(...).when_matched_fail()`` when a source row matches a
    target row; nothing is committed. Also an ``OSError``, which is what pylance raises."""

    def __init__(self, keys: dict[str, object]) -> None:
        self.keys = dict(keys)
        shown = ", ".join(f"{k} = {v!r}" for k, v in self.keys.items())
        super().__init__(
            f"merge_insert with when_matched_fail: a source row matches an existing row "
            f"with key values {shown}; nothing was committed"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class NotSupportedYetError(LanceSemanticError, NotImplementedError):
    """Raised when a feature that lance-semantic does not implement yet is needed."""

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(f"not supported yet by lance-semantic: {feature}")


class DatasetNotFoundError(ManifestError, FileNotFoundError, ValueError):
    """Raised when opening a table that does not exist. Also a ``ValueError``, which is
    what pylance raises."""

    def __init__(self, uri: str, detail: str = "") -> None:
        self.uri = uri
        msg = f"Dataset not found: {uri}"
        super().__init__(msg + (f" ({detail})" if detail else ""))


class DatasetExistsError(ManifestError, FileExistsError):
    """Raised when creating a table where one already exists."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        super().__init__(f"Dataset already exists: {uri} (use mode='append' or mode='overwrite')")


class VersionNotFoundError(DatasetNotFoundError):
    """Raised when a version of an existing table does not exist (opening it, checking it
    out, pointing a tag at it). Like every ``DatasetNotFoundError`` a ``FileNotFoundError``
    and a ``ValueError``: pylance 14 raises ``ValueError`` from ``lance.dataset(uri,
    version=N)`` and from the tag verbs, and ``OSError`` from ``checkout_version(N)``."""

    def __init__(self, uri: str, version: int) -> None:
        self.version = version
        super().__init__(uri, f"version {version} does not exist")


class TagError(ManifestError):
    """Base class of the errors about tags (``_refs/tags/<name>.json``)."""


class TagNotFoundError(TagError, OSError, ValueError):
    """Raised when a tag does not exist. An ``OSError`` (what pylance 14 raises from
    ``checkout_version(tag)``) and a ``ValueError`` (what it raises from
    ``lance.dataset(version=tag)`` and the tag verbs)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        super().__init__(f"Ref not found: tag {tag} does not exist")

    def __str__(self) -> str:  # OSError's own __str__ would format errno / strerror
        return str(self.args[0])


class TagExistsError(TagError, ValueError):
    """Raised when creating a tag whose name is taken (pylance: ``ValueError``)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        super().__init__(f"Ref conflict: tag {tag} already exists")


class InvalidTagNameError(TagError, ValueError):
    """Raised for a tag name Lance does not allow: empty; characters other than letters,
    digits, ``.``, ``-``, ``_``; a leading or trailing dot; ``..``; a ``.lock`` suffix.
    (pylance 14 raises ``OSError("Ref is invalid: ...")`` for the same names.)"""

    def __init__(self, tag: str, reason: str) -> None:
        self.tag = tag
        self.reason = reason
        super().__init__(f"invalid tag name {tag!r}: {reason}")


class CorruptManifestError(ManifestError):
    """Raised when a manifest file is truncated, cannot be decoded, or describes an
    impossible table (duplicate fragment ids, more deleted rows than rows, a file path that
    leaves the table directory). ``path`` is the manifest; ``named_path``, when the problem
    is a path the manifest names, is that path as written in the manifest."""

    def __init__(self, path: str, reason: str, *, named_path: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.named_path = named_path
        super().__init__(f"Corrupt manifest {path}: {reason}")


class CorruptTableError(ReadError):
    """Raised when a file of the table (data file, deletion file, transaction file, blob
    sidecar) is missing, truncated, unreadable, or disagrees with what the manifest says
    about it. ``path`` is the file."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"Corrupt table file {path}: {reason}")


def _bits(flags: int) -> list[int]:
    return [i for i in range(64) if flags >> i & 1]


class UnsupportedFeatureError(ManifestError):
    """Raised when a table carries feature flags this library does not know."""

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


class UnsupportedTypeError(SchemaError, TypeError):
    """Raised when an Arrow type or logical_type has no Lance representation."""

    def __init__(self, field_path: str, type_name: str, reason: str = "") -> None:
        self.field_path = field_path
        self.type_name = type_name
        msg = f"field '{field_path}': type {type_name} is not supported"
        super().__init__(msg + (f": {reason}" if reason else ""))


class ReservedExtensionNameError(UnsupportedTypeError):
    """Raised when a write would introduce an extension name under Lance's reserved
    ``lance.`` prefix that Lance does not define (spec "Extension Semantic Types: Reserved
    prefix"). Raised before any data file is written."""

    def __init__(self, field_path: str, extension_name: str) -> None:
        self.extension_name = extension_name
        super().__init__(
            field_path,
            f"extension {extension_name}",
            "extension names starting with 'lance.' are reserved for Lance and this is not "
            "one Lance defines; use a project prefix such as 'lancedb.' or a reverse-DNS name",
        )


class SchemaMismatchError(SchemaError, ValueError):
    """Raised when appended/merged/updated data does not match the table's types."""

    def __init__(self, field_path: str, table_type: str, input_type: str, reason: str = "") -> None:
        self.field_path = field_path
        self.table_type = table_type
        self.input_type = input_type
        msg = (
            f"schema mismatch at field '{field_path}': table has {table_type}, "
            f"input has {input_type}"
        )
        super().__init__(msg + (f" ({reason})" if reason else ""))


class UnsupportedInputTypeError(WriteError, TypeError):
    """Raised when an input Arrow type is not accepted for a field's semantic type."""

    def __init__(self, field_path: str, semantic_type: str, input_type: str) -> None:
        self.field_path = field_path
        self.semantic_type = semantic_type
        self.input_type = input_type
        super().__init__(
            f"field '{field_path}': input type {input_type} is not accepted for "
            f"semantic type {semantic_type}"
        )


class _RowError(WriteError):
    """An error about one row of the caller's input. Each layer that slices or nests the
    input shifts the row back into its own numbering (:meth:`at_offset`,
    :meth:`in_element`), so the caller sees the row of the table or reader as given."""

    row: int
    elements: tuple[int, ...] = ()

    def _message(self) -> str:
        raise NotImplementedError

    def _where(self) -> str:
        inner = "".join(f"[{i}]" for i in self.elements)
        return f"row {self.row}" + (f", element {inner}" if inner else "")

    def _refresh(self) -> None:
        self.args = (self._message(),)

    def at_offset(self, offset: int) -> _RowError:
        """The same error ``offset`` rows further on (a batch's rows start at ``offset``)."""
        self.row += offset
        self._refresh()
        return self

    def in_element(self, row: int, element: int) -> _RowError:
        """The same error seen from the enclosing list or map: its value ``self.row`` is
        element ``element`` of row ``row``."""
        self.row = row
        self.elements = (element, *self.elements)
        self._refresh()
        return self


class InvalidJsonError(_RowError, ValueError):
    """Raised when a json input value is not valid JSON. ``row`` is the row of the caller's
    input; for json inside lists or maps, ``elements`` holds the positions inside that row
    (outermost first)."""

    def __init__(self, field_path: str, row: int, reason: str = "", excerpt: str = "") -> None:
        self.field_path = field_path
        self.row = row
        self.elements = ()
        self.reason = reason
        self.excerpt = excerpt
        super().__init__(self._message())

    def _message(self) -> str:
        msg = f"field '{self.field_path}', {self._where()}: invalid JSON"
        if self.reason:
            msg += f": {self.reason}"
        if self.excerpt:
            msg += f" (near {self.excerpt!r})"
        return msg


class InvalidBlobError(_RowError, ValueError):
    """Raised when a blob value breaks the Blob specification's rules (neither or both of
    ``data`` and ``uri``, a half-given range, an external URI outside the table's bases)."""

    def __init__(self, field_path: str, row: int, reason: str) -> None:
        self.field_path = field_path
        self.row = row
        self.elements = ()
        self.reason = reason
        super().__init__(self._message())

    def _message(self) -> str:
        return f"field '{self.field_path}', {self._where()}: invalid blob: {self.reason}"


class InvariantViolationError(WriteError):
    """Raised when an array reaches the encoder in a layout other than the declared one."""

    def __init__(
        self,
        field_path: str,
        expected_layout: str,
        expected_extension: str | None,
        actual_layout: str,
        actual_extension: str | None,
    ) -> None:
        self.field_path = field_path
        self.expected_layout = expected_layout
        self.expected_extension = expected_extension
        self.actual_layout = actual_layout
        self.actual_extension = actual_extension
        super().__init__(
            f"internal invariant violation at field '{field_path}': expected layout "
            f"{expected_layout} (extension {expected_extension}), got {actual_layout} "
            f"(extension {actual_extension})"
        )


class OutputEncodingOverflowError(ReadError):
    """Raised when the requested output layout cannot hold a value.

    ``unit`` says what ``value_size`` counts: ``"bytes"`` for a string or binary value that
    overflows 32-bit offsets, ``"items"`` for a list value that overflows a ``list`` layout's
    offsets, ``"distinct values"`` for a value whose dictionary outgrows the key type.
    """

    def __init__(
        self, field_path: str, value_size: int, requested_encoding: str, unit: str = "bytes"
    ) -> None:
        self.field_path = field_path
        self.value_size = value_size
        self.requested_encoding = requested_encoding
        self.unit = unit
        super().__init__(
            f"field '{field_path}': a value of {value_size} {unit} does not fit output encoding "
            f"{requested_encoding}; {_overflow_hint(requested_encoding, unit)}"
        )


def _overflow_hint(encoding: str, unit: str) -> str:
    if unit == "items":
        return "request large_list instead"
    if unit == "distinct values":
        value = encoding.rsplit(":", 1)[-1]
        return f"request a wider key (dictionary:int32:{value}) or the plain layout {value}"
    value = encoding.rsplit(":", 1)[-1]
    binary = value in ("binary", "large_binary", "binary_view")
    wide = "large_binary / binary_view" if binary else "large_utf8 / utf8_view"
    if encoding.startswith("dictionary:"):
        key = encoding.split(":")[1]
        large = "large_binary" if binary else "large_utf8"
        return f"request dictionary:{key}:{large} or {wide} instead"
    return f"request {wide} instead"


class InvalidOutputEncodingError(SchemaError, ValueError):
    """Raised when an output encoding is invalid for a field's type or parameters."""

    def __init__(self, field_path: str, encoding: str, why: str) -> None:
        self.field_path = field_path
        self.encoding = encoding
        self.why = why
        super().__init__(f"field '{field_path}': invalid output encoding {encoding!r}: {why}")


class TaggedVersionsCleanupError(CommitError, OSError):
    """Raised by ``cleanup_old_versions(error_if_tagged_old_versions=True)`` when tagged
    versions match the cleanup policy; nothing is deleted. ``tags`` maps each such tag to
    its version. An ``OSError``, as pylance 14's cleanup error."""

    def __init__(self, tags: dict[str, int]) -> None:
        self.tags = dict(sorted(tags.items()))
        listed = ", ".join(f"{name!r}: {version}" for name, version in self.tags.items())
        super().__init__(
            f"Cleanup error: {len(self.tags)} tagged version(s) have been marked for cleanup. "
            f"Either set error_if_tagged_old_versions=False or delete the following tag(s) "
            f"to enable cleanup: {{{listed}}}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class CommitConflictError(CommitError):
    """Raised when a concurrent commit conflicts and retries are exhausted.

    ``retryable`` is False when re-running the operation on the newest version cannot help
    (the other commit replaced the table: an overwrite or a restore), as Lance's
    "incompatible" conflicts; delete / update / merge_insert re-run only retryable ones.
    """

    def __init__(
        self,
        read_version: int,
        attempted_version: int,
        reason: str = "",
        *,
        retryable: bool = True,
    ) -> None:
        self.read_version = read_version
        self.attempted_version = attempted_version
        self.retryable = retryable
        msg = (
            f"commit conflict: read version {read_version}, could not publish version "
            f"{attempted_version}"
        )
        super().__init__(msg + (f" ({reason})" if reason else ""))


class CommitOutcomeUnknownError(CommitError, OSError):
    """Raised when publishing a version failed in a way that leaves unknown whether the
    manifest was stored (the store's answer was lost and the manifest cannot be read
    back). The operation's data files are kept, since a published manifest may name them;
    ``ls.dataset(uri)`` shows whether version ``attempted_version`` exists."""

    def __init__(self, attempted_version: int, path: str, cause: str) -> None:
        self.attempted_version = attempted_version
        self.path = path
        self.cause = cause
        super().__init__(
            f"could not tell whether version {attempted_version} was published ({path}): "
            f"{cause}; its data files are kept; open the table to see which version is latest"
        )

    def __str__(self) -> str:
        return str(self.args[0])


def _rebuild(
    cls: type[LanceSemanticError], args: tuple[object, ...], state: dict[str, object]
) -> LanceSemanticError:
    """An unpickled error: its class, message arguments and attributes as they were."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error
