"""Read errors (layer L0): a corrupt table file, a value that overflows the requested output
encoding. Import them from :mod:`lance_semantic.errors`.
"""

from __future__ import annotations

from .base import ReadError

__all__ = [
    "CorruptTableError",
    "OutputEncodingOverflowError",
]


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
