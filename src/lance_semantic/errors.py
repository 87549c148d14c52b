"""The whole exception hierarchy of lance-semantic (layer L0).

Every error derives from :class:`LanceSemanticError`. Each class that the spec's
"Failure Semantics" table needs carries the facts of its row as attributes and
builds its message from them, so callers can assert attributes instead of prose.
The errors are re-exported by the package (``ls.SchemaMismatchError``) and grouped in
families by layer (:class:`SchemaError`, :class:`WriteError`, :class:`ReadError`,
:class:`ManifestError`, :class:`CommitError`); builtin bases (``ValueError``,
``TypeError``, ...) keep generic handlers working.

>>> import pyarrow as pa, lance_semantic as ls
>>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
>>> try:
...     ds.insert(pa.table({"id": pa.array([2], pa.int32())}))
... except ls.errors.SchemaError as e:
...     print(type(e).__name__, e.field_path, e.table_type, e.input_type)
SchemaMismatchError id int64 int32
>>> issubclass(ls.SchemaMismatchError, ValueError)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    "StorageError",
    "InvalidUriError",
    "InvalidStorageOptionError",
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


class DuplicateKeyError(WriteError, ValueError):
    """Raised when several merge_insert source rows match one target row that the merge
    updates or deletes (which of them wins is ambiguous); nothing is committed, as in
    pylance. ``keys`` are the key columns, ``values`` the key values of that target row and
    ``count`` the source rows matching it. A key the source repeats is otherwise fine:
    rows that match no target row are each inserted, and an insert-only merge ignores
    matched rows.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> try:
    ...     ds.merge_insert("id").when_matched_delete().execute(pa.table({"id": [2, 2]}))
    ... except ls.DuplicateKeyError as e:
    ...     print(e.keys, e.values, e.count, ds.version)
    ['id'] {'id': 2} 2 1
    >>> ds.merge_insert("id").when_not_matched_insert_all().execute(
    ...     pa.table({"id": [2, 2, 3, 3]})).num_inserted_rows
    2
    """

    def __init__(
        self, keys: list[str], values: Mapping[str, object] | None = None, count: int = 2
    ) -> None:
        self.keys = list(keys)
        self.values = dict(values) if values is not None else {}
        self.count = count
        shown = ", ".join(f"{k} = {v!r}" for k, v in self.values.items())
        row = f"the target row with key values {shown}" if shown else "one target row"
        super().__init__(
            f"merge_insert: {count} source rows match {row} (key column(s) "
            f"{', '.join(self.keys)}); each target row that is updated or deleted may be "
            "matched by at most one source row; nothing was committed"
        )


class ColumnNotFoundError(SchemaError, KeyError, ValueError):
    """Raised when a read, a take or a schema change names a column (or nested field) the
    table does not have. Also a ``ValueError``, as pylance raises one.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1], "s": ["a"]}), "t.lance")
    >>> try:
    ...     ds.to_table(columns=["nope"])
    ... except ls.ColumnNotFoundError as e:
    ...     print(e.field_path, e.available, isinstance(e, ValueError))
    nope ('id', 's') True
    >>> ds.take([0], columns=["st.x"])
    Traceback (most recent call last):
    ...
    lance_semantic.errors.ColumnNotFoundError: column 'st.x' does not exist in the dataset \
(columns: id, s)
    """

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
    column. Nothing is committed.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1], "x": [2]}), "t.lance")
    >>> try:
    ...     ds.alter_columns({"path": "x", "name": "id"})
    ... except ls.SchemaEvolutionError as e:
    ...     print(e.field_path, "|", e.reason, "|", ds.version)
    x | duplicate field name 'id' | 1
    """

    def __init__(self, field_path: str, reason: str) -> None:
        self.field_path = field_path
        self.reason = reason
        super().__init__(f"cannot change column '{field_path}': {reason}")


class MatchedRowError(WriteError, OSError):
    """Raised by ``merge_insert(...).when_matched_fail()`` when a source row matches a
    target row; nothing is committed. Also an ``OSError``, which is what pylance raises.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
    >>> builder = ds.merge_insert("id").when_matched_fail().when_not_matched_insert_all()
    >>> try:
    ...     builder.execute(pa.table({"id": [2, 3]}))
    ... except ls.MatchedRowError as e:
    ...     print(e.keys, isinstance(e, OSError), ds.version)
    {'id': 2} True 1
    """

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
    """Raised when a feature that lance-semantic does not implement yet is needed.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> try:
    ...     ds.scanner(full_text_query="hello")
    ... except ls.NotSupportedYetError as e:
    ...     print(e.feature, "|", isinstance(e, NotImplementedError))
    full text search (full_text_query=) | True
    """

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(f"not supported yet by lance-semantic: {feature}")


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


class CorruptTableError(ReadError):
    """Raised when a file of the table (data file, deletion file, transaction file, blob
    sidecar) is missing, truncated, unreadable, or disagrees with what the manifest says
    about it. ``path`` is the file.

    >>> import glob, pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> with open(glob.glob("t.lance/data/*.lance")[0], "r+b") as f:
    ...     _ = f.truncate(10)
    >>> try:
    ...     ds.to_table()
    ... except ls.CorruptTableError as e:
    ...     print("/data/" in e.path, e.reason.startswith("cannot read the data file"))
    True True
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"Corrupt table file {path}: {reason}")


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


class UnsupportedTypeError(SchemaError, TypeError):
    """Raised when an Arrow type or logical_type has no Lance representation.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"d": pa.array([(1, 2, 3)], pa.month_day_nano_interval())})
    >>> try:
    ...     ls.write_dataset(data, "t.lance")
    ... except ls.UnsupportedTypeError as e:
    ...     print(e.field_path, e.type_name, isinstance(e, TypeError))
    d month_day_nano_interval True
    """

    def __init__(self, field_path: str, type_name: str, reason: str = "") -> None:
        self.field_path = field_path
        self.type_name = type_name
        msg = f"field '{field_path}': type {type_name} is not supported"
        super().__init__(msg + (f": {reason}" if reason else ""))


class ReservedExtensionNameError(UnsupportedTypeError):
    """Raised when a write would introduce an extension name under Lance's reserved
    ``lance.`` prefix that Lance does not define (spec "Extension Semantic Types: Reserved
    prefix"). Raised before any data file is written.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> field = pa.field("x", pa.int64(), metadata={"ARROW:extension:name": "lance.mine"})
    >>> try:
    ...     ls.write_dataset(pa.table([[1]], schema=pa.schema([field])), "t.lance")
    ... except ls.ReservedExtensionNameError as e:
    ...     print(e.field_path, e.extension_name, isinstance(e, ls.UnsupportedTypeError))
    x lance.mine True
    """

    def __init__(self, field_path: str, extension_name: str) -> None:
        self.extension_name = extension_name
        super().__init__(
            field_path,
            f"extension {extension_name}",
            "extension names starting with 'lance.' are reserved for Lance and this is not "
            "one Lance defines; use a project prefix such as 'lancedb.' or a reverse-DNS name",
        )


class SchemaMismatchError(SchemaError, ValueError):
    """Raised when appended/merged/updated data does not match the table's types.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")  # legacy: exact types
    >>> ds.insert(pa.table({"id": pa.array([2], pa.int32())}))
    Traceback (most recent call last):
    ...
    lance_semantic.errors.SchemaMismatchError: schema mismatch at field 'id': table has int64, \
input has int32
    """

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
    """Raised when an input Arrow type is not accepted for a field's semantic type.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"s": ["a"]}), "t.lance", data_storage_version="2.3")
    >>> ds.insert(pa.table({"s": pa.array(["b"], pa.large_string())})).count_rows()  # accepted
    2
    >>> try:
    ...     ds.insert(pa.table({"s": pa.array([b"c"], pa.binary())}))
    ... except ls.UnsupportedInputTypeError as e:
    ...     print(e.field_path, e.semantic_type, e.input_type, ds.version)
    s string binary 2
    """

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
    :meth:`in_element`), so the caller sees the row of the table or reader as given.

    >>> issubclass(InvalidJsonError, _RowError), issubclass(InvalidBlobError, _RowError)
    (True, True)
    """

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
        """The same error ``offset`` rows further on (a batch's rows start at ``offset``).

        >>> error = InvalidJsonError("doc", 2, "unexpected end of input")
        >>> error.at_offset(1000).row, str(error)
        (1002, "field 'doc', row 1002: invalid JSON: unexpected end of input")
        """
        self.row += offset
        self._refresh()
        return self

    def in_element(self, row: int, element: int) -> _RowError:
        """The same error seen from the enclosing list or map: its value ``self.row`` is
        element ``element`` of row ``row``.

        >>> error = InvalidJsonError("l.item", 7, "unexpected end of input")
        >>> error.in_element(row=3, element=7).row, error.elements
        (3, (7,))
        >>> str(error)
        "field 'l.item', row 3, element [7]: invalid JSON: unexpected end of input"
        """
        self.row = row
        self.elements = (element, *self.elements)
        self._refresh()
        return self


class InvalidJsonError(_RowError, ValueError):
    """Raised when a json input value is not valid JSON. ``row`` is the row of the caller's
    input; for json inside lists or maps, ``elements`` holds the positions inside that row
    (outermost first).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"j": pa.array(['{"a": 1}', '{"a":'], pa.json_(pa.string()))})
    >>> try:
    ...     ls.write_dataset(data, "t.lance", data_storage_version="2.3")
    ... except ls.InvalidJsonError as e:
    ...     print(e.field_path, e.row, e.elements, "|", e.reason, "|", e.excerpt)
    j 1 () | unexpected end of input | {"a":
    """

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
    ``data`` and ``uri``, a half-given range, an external URI outside the table's bases).

    >>> import pyarrow as pa, lance_semantic as ls
    >>> from lance.blob import blob_array
    >>> try:
    ...     ls.write_dataset(pa.table({"b": blob_array(["clips/a.mp4"])}), "t.lance")
    ... except ls.InvalidBlobError as e:
    ...     print(e.field_path, e.row, "|", e.reason)  # doctest: +ELLIPSIS
    b 0 | external blob URI 'clips/a.mp4' is outside the table's registered bases; ...
    """

    def __init__(self, field_path: str, row: int, reason: str) -> None:
        self.field_path = field_path
        self.row = row
        self.elements = ()
        self.reason = reason
        super().__init__(self._message())

    def _message(self) -> str:
        return f"field '{self.field_path}', {self._where()}: invalid blob: {self.reason}"


class InvariantViolationError(WriteError):
    """Raised when an array reaches the encoder in a layout other than the declared one.

    An internal check (the writer boundary should make it impossible); the table does not
    change.

    >>> e = InvariantViolationError("s", "utf8", None, "large_utf8", None)
    >>> e.field_path, e.expected_layout, e.actual_layout
    ('s', 'utf8', 'large_utf8')
    """

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

    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"l": [[str(i) for i in range(300)]]})  # one list of 300 strings
    >>> ds = ls.write_dataset(data, "t.lance", data_storage_version="2.3")
    >>> try:
    ...     ds.to_table(output_encodings={"l.item": "dictionary:int8:utf8"})
    ... except ls.OutputEncodingOverflowError as e:
    ...     print(e.field_path, e.value_size, e.unit, e.requested_encoding)
    l.item 300 distinct values dictionary:int8:utf8
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
    """Raised when an output encoding is invalid for a field's type or parameters.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"p": pa.array([1], pa.decimal256(40, 2))})
    >>> ds = ls.write_dataset(data, "t.lance", data_storage_version="2.3")
    >>> try:
    ...     ds.set_output_encoding("p", "decimal128")
    ... except ls.InvalidOutputEncodingError as e:
    ...     print(e.field_path, e.encoding, "|", e.why)
    p decimal128 | decimal128 cannot hold precision 40; decimal:40:2 needs decimal256
    """

    def __init__(self, field_path: str, encoding: str, why: str) -> None:
        self.field_path = field_path
        self.encoding = encoding
        self.why = why
        super().__init__(f"field '{field_path}': invalid output encoding {encoding!r}: {why}")


class TaggedVersionsCleanupError(CommitError, OSError):
    """Raised by ``cleanup_old_versions(error_if_tagged_old_versions=True)`` when tagged
    versions match the cleanup policy; nothing is deleted. ``tags`` maps each such tag to
    its version. An ``OSError``, as pylance 14's cleanup error.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
    >>> ds.tags.create("keep")
    >>> _ = ds.insert(pa.table({"id": [2]}), mode="overwrite")
    >>> try:
    ...     ds.cleanup_old_versions(retain_versions=1)
    ... except ls.TaggedVersionsCleanupError as e:
    ...     print(e.tags, len(ds.versions()))
    {'keep': 1} 2
    >>> ds.cleanup_old_versions(retain_versions=1, error_if_tagged_old_versions=False).old_versions
    0
    """

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

    >>> e = CommitConflictError(4, 5, "an overwrite replaced the table", retryable=False)
    >>> e.read_version, e.attempted_version, e.retryable
    (4, 5, False)
    >>> str(e)
    'commit conflict: read version 4, could not publish version 5 (an overwrite replaced the table)'
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
    """Raised when publishing a version (or creating a tag: ``tag``) failed in a way that
    leaves unknown whether the manifest was stored (the store's answer was lost and the
    manifest cannot be read back). The operation's data files are kept, since a published
    manifest may name them; ``ls.dataset(uri)`` shows whether version
    ``attempted_version`` exists.

    >>> e = CommitOutcomeUnknownError(3, "t.lance/_versions/3.manifest", "connection reset")
    >>> e.attempted_version, e.path, e.cause, isinstance(e, OSError)
    (3, 't.lance/_versions/3.manifest', 'connection reset', True)
    """

    def __init__(
        self, attempted_version: int, path: str, cause: str, *, tag: str | None = None
    ) -> None:
        self.attempted_version = attempted_version
        self.path = path
        self.cause = cause
        #: the tag whose creation is in doubt (a tag on ``attempted_version``), else None
        self.tag = tag
        if tag is not None:
            message = (
                f"could not tell whether tag {tag!r} (on version {attempted_version}) was "
                f"created ({path}): {cause}; list the tags to see"
            )
        else:
            message = (
                f"could not tell whether version {attempted_version} was published ({path}): "
                f"{cause}; its data files are kept; open the table to see which version is "
                "latest"
            )
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])


class StorageError(LanceSemanticError, OSError):
    """Raised when the table's storage fails an operation: a request to an object store
    that fails, or a call into pylance's file codec or obstore (Rust code) that panics or
    fails. ``operation`` says what was being done, ``path`` on which file or object,
    ``reason`` what went wrong. An ``OSError``, as pylance's own storage errors.

    >>> import lance_semantic as ls
    >>> e = ls.StorageError("write the data file", "s3://b/t/data/x.lance", "connection reset")
    >>> e.operation, e.path, isinstance(e, OSError)
    ('write the data file', 's3://b/t/data/x.lance', True)
    >>> str(e)
    'cannot write the data file s3://b/t/data/x.lance: connection reset'
    """

    def __init__(self, operation: str, path: str, reason: str, *, message: str = "") -> None:
        self.operation = operation
        self.path = path
        self.reason = reason
        super().__init__(message or f"cannot {operation} {path}: {reason}")

    def __str__(self) -> str:  # OSError's own __str__ would format errno / strerror
        return str(self.args[0])


class InvalidUriError(StorageError, ValueError):
    """Raised for a table location that pylance 14 cannot use either: a scheme it has no
    store for (``ab:t.lance`` is a URI of scheme ``ab``, as in pylance; ``./ab:t.lance`` is
    the local path), an object store URI without a bucket, a path with control characters
    or with percent-escapes that do not decode to UTF-8. ``uri`` is the location as given,
    ``reason`` why it is refused. Nothing is read or written.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> try:
    ...     ls.write_dataset(pa.table({"id": [1]}), "ab:t.lance")
    ... except ls.InvalidUriError as e:
    ...     print(e.uri, "|", e.reason)
    ab:t.lance | no object store for the scheme 'ab' (a location with a scheme is a URI)
    """

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        super().__init__("open", uri, reason, message=f"invalid table location {uri!r}: {reason}")


class InvalidStorageOptionError(StorageError, TypeError, ValueError):
    """Raised when ``storage_options`` cannot configure the store: a value that is not a
    ``str`` (pylance 14 takes strings only: ``"true"``, not ``True``), a boolean option whose
    value is none of ``true/false, 1/0, yes/no, on/off, y/n``, or a value the object store
    refuses. ``key`` names the option (None when the store does not say which), ``value``
    is the ``repr`` of its value (or None). Raised before anything is read or written.

    >>> import lance_semantic as ls
    >>> try:
    ...     ls.dataset("s3://bucket/t.lance", storage_options={"allow_http": True})
    ... except ls.InvalidStorageOptionError as e:
    ...     print(e.key, e.value, "|", e.reason)
    allow_http True | the value must be a str, not bool (pylance takes strings: 'true')
    """

    def __init__(self, key: str | None, value: str | None, reason: str) -> None:
        self.key = key
        self.value = value
        where = f"storage option {key!r}" if key is not None else "storage options"
        shown = f" = {value}" if value is not None else ""
        super().__init__(
            "configure the store with", where, reason, message=f"invalid {where}{shown}: {reason}"
        )


def _rebuild(
    cls: type[LanceSemanticError], args: tuple[object, ...], state: dict[str, object]
) -> LanceSemanticError:
    """An unpickled error: its class, message arguments and attributes as they were."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error
