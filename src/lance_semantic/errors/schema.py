"""Schema errors (layer L0): a column that does not exist, an invalid schema change, a type
with no Lance representation, data that does not match the table's types, an invalid
output encoding. Import them from :mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from .base import SchemaError

__all__ = [
    "ColumnNotFoundError",
    "SchemaEvolutionError",
    "UnsupportedTypeError",
    "ReservedExtensionNameError",
    "SchemaMismatchError",
    "InvalidOutputEncodingError",
]


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
