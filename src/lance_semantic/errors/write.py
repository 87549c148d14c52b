"""Write errors (layer L0): refused inputs, errors about one row of the caller's input
(invalid JSON, invalid blobs), merge_insert key errors and the layout invariant. Import
them from :mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import WriteError

__all__ = [
    "DuplicateKeyError",
    "MatchedRowError",
    "UnsupportedInputTypeError",
    "InvalidJsonError",
    "InvalidBlobError",
    "InvariantViolationError",
]


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
