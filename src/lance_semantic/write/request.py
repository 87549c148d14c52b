"""One write's options, fixed (layer L4): what ``write_dataset``, ``Dataset.insert``,
``ls.fragment.write_fragments`` and Ray's ``write_lance`` were asked for.

The public entry points keep pylance's flat keywords; the dataset layer checks them once
(``dataset.writes.write_request``) and hands one :class:`WriteRequest` to the write decision
(:func:`~lance_semantic.write.target.write_target`: ``mode``, ``data_storage_version``,
``semantic_types``) and to the rows written
(:func:`~lance_semantic.write.target.write_rows`: the file limits, external blobs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from .defaults import MAX_BYTES_PER_FILE, MAX_ROWS_PER_FILE

__all__ = ["WriteRequest", "WriteMode"]

WriteMode = Literal["create", "append", "overwrite"]


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """The options of one write, each with pylance's default (``lance.write_dataset``).

    ``semantic_types`` (None: the enablement rule decides) is this library's own;
    ``allow_external_blob_outside_bases`` is pylance's option of that name.

    >>> from lance_semantic.write import WriteRequest
    >>> request = WriteRequest(mode="append", max_rows_per_file=10)
    >>> request.mode, request.max_rows_per_file, request.data_storage_version
    ('append', 10, None)
    """

    schema: pa.Schema | None = None
    mode: WriteMode = "create"
    max_rows_per_file: int = MAX_ROWS_PER_FILE
    max_bytes_per_file: int = MAX_BYTES_PER_FILE
    data_storage_version: str | None = None
    semantic_types: bool | None = None
    allow_external_blob_outside_bases: bool = False
