"""Blob columns of a data file, read as pylance's descriptors (layer L4;
docs/format/lance-format-facts.md §10).

A blob column's data-file pages hold descriptors (blob v1: position and size in the data
file; blob v2: kind, position, size, sidecar id and URI), and pylance returns exactly those
on a scan. pylance 14's *file-level* reader cannot project such a column: the data file's
own schema lists the descriptor members with field id -1, so ``LanceFileReader`` counts them
as extra columns ("the projection specified the column index 6 but there are only 2
columns"). Its table reader maps columns through ``DataFile.fields`` instead and reads them.

So a blob column is read through a *shadow table*: a one-fragment manifest, written by our
own manifest codec into a private temporary directory, whose only field is the blob field
and whose one data file is the real one, reached through a registered base path (Lance's
multi-base layout; nothing is copied). The shadow has no deletion file and no feature
flags; the fragment reader applies deletions and projections as for every other column.
Shadows are cached per data file (data files are immutable and uniquely named).

The same reader cannot read any column stored *after* a blob v2 column either (its
projection counts the descriptor members it lists as columns), so those columns are read
through a shadow of their own (:func:`late_columns`): its fields are the file's columns as
stored, with the field ids of ``DataFile.fields``, so pylance returns what its file reader
returns for the columns before the blob.

The directory lives only while the shadow is opened: pylance reads the manifest when it
opens the table, and its reads go to the data file through the base path (checked against
pylance 14: takes and fragment reads work once the directory is gone). So no temporary file
outlives the call, whatever interrupts it, and none piles up in a long-running process.
pylance's table reader reports a signal raised during a read as an error of its own
(``ArrowInvalid: External error: KeyboardInterrupt``): it is raised as the interrupt it is;
a Rust panic of the reader (a damaged data file) is a CorruptTableError naming the file.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TypeVar

import lance
import numpy as np
import pyarrow as pa

from ..errors import CorruptTableError
from ..manifest import DataFile, Fragment, Manifest, encode_manifest_file
from ..manifest._pb import lance_table_pb2 as tpb
from ..schema import (
    BLOB_V1_KEY,
    BLOB_V2_EXTENSION,
    ENCODING,
    Field,
    TableSchema,
    field_from_arrow,
    is_blob_v2,
    leaf_fields,
)
from ..storage import (
    BlobFile,
    DataFileReader,
    ObjectStore,
    first_line,
    is_panic,
    unprojectable_columns,
)
from ..types.arrow_names import child_fields, with_child_fields
from ..types.blob_layouts import V2_LOGICAL_TYPE
from ..types.metadata_keys import EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY
from .blob_files import blob_file, descriptors_to_values
from .plan import id_entries

__all__ = ["BlobAwareReader", "blob_descriptors", "fragment_blob_files", "late_columns"]

_T = TypeVar("_T")

_COLUMN = "blob"


def _shadow_field(field_id: int, v2: bool) -> Field:
    if not v2:
        return Field(
            _COLUMN,
            field_id,
            -1,
            "large_binary",
            metadata={BLOB_V1_KEY: b"true"},
            encoding=ENCODING["VAR_BINARY"],
            path=_COLUMN,
        )
    # the members are schema-only (the data file holds one descriptor column); any unused
    # ids will do
    children = (
        Field("data", field_id + 1, field_id, "large_binary", encoding=ENCODING["VAR_BINARY"]),
        Field("uri", field_id + 2, field_id, "string", encoding=ENCODING["VAR_BINARY"]),
    )
    return Field(
        _COLUMN,
        field_id,
        -1,
        "struct",
        metadata={
            EXTENSION_NAME_KEY: BLOB_V2_EXTENSION.encode(),
            EXTENSION_METADATA_KEY: b"",
        },
        extension_name=BLOB_V2_EXTENSION,
        children=children,
        path=_COLUMN,
    )


@lru_cache(maxsize=256)
def _shadow(
    table_root: str,
    options: tuple[tuple[str, str], ...] | None,
    path: str,
    field_id: int,
    column_index: int,
    version: tuple[int, int],
    num_rows: int,
    v2: bool,
) -> lance.LanceDataset:
    data_file = DataFile(
        path=path,
        fields=(field_id,),
        column_indices=(column_index,),
        file_major_version=version[0],
        file_minor_version=version[1],
        base_id=1,
    )
    fields = (_shadow_field(field_id, v2),)
    return _opened_shadow(table_root, options, data_file, fields, num_rows)


def _opened_shadow(
    table_root: str,
    options: tuple[tuple[str, str], ...] | None,
    data_file: DataFile,
    fields: tuple[Field, ...],
    num_rows: int,
) -> lance.LanceDataset:
    """pylance's table reader of a one-fragment shadow table: ``fields`` stored in
    ``data_file`` (of the table at ``table_root``, reached as base path 1)."""
    version = (data_file.file_major_version, data_file.file_minor_version)
    base = tpb.Manifest(base_paths=[tpb.BasePath(id=1, is_dataset_root=True, path=table_root)])
    manifest = Manifest(
        schema=TableSchema.of(fields),
        fragments=(Fragment(id=0, files=(data_file,), physical_rows=num_rows),),
        version=1,
        data_format=("lance", f"{version[0]}.{version[1]}"),
        max_fragment_id=0,
        passthrough=base.SerializeToString(),
    )
    path = data_file.path
    data = encode_manifest_file(manifest)
    # (removed on leaving, and when the object is collected if an interrupt comes first)
    with tempfile.TemporaryDirectory(
        prefix="lance-semantic-blob-shadow-", ignore_cleanup_errors=True
    ) as shadow:
        os.mkdir(os.path.join(shadow, "_versions"))
        with open(os.path.join(shadow, "_versions", "1.manifest"), "wb") as f:
            f.write(data)
        storage = None if options is None else dict(options)
        where = f"{table_root}/data/{path}"
        return _interruptible(where, lambda: lance.dataset(shadow, storage_options=storage))


def blob_descriptors(
    store: ObjectStore, data_file: DataFile, field: Field, num_rows: int
) -> lance.LanceDataset:
    """The shadow table holding ``field``'s descriptors of ``data_file`` as column
    ``"blob"`` (rows in data-file order)."""
    pos = data_file.fields.index(field.id)
    column_index = data_file.column_indices[pos] if data_file.column_indices else pos
    version = (data_file.file_major_version, data_file.file_minor_version)
    options = store.storage_options
    return _shadow(
        store.codec_root,
        None if options is None else tuple(sorted(options.items())),
        data_file.path,
        field.id,
        column_index,
        version,
        num_rows,
        is_blob_v2(field),
    )


def late_columns(
    store: ObjectStore, data_file: DataFile, schema: pa.Schema, num_rows: int
) -> lance.LanceDataset | None:
    """The shadow table holding the columns of ``data_file`` (whose columns are ``schema``)
    that pylance's file reader cannot read and that are no blob v2 columns (those after a
    blob v2 column), under their file names and as stored; None when there are none."""
    late = unprojectable_columns(schema)
    if not any(not _is_descriptor_column(f) for f in schema if f.name in late):
        return None
    options = store.storage_options
    return _late_shadow(
        store.codec_root,
        None if options is None else tuple(sorted(options.items())),
        data_file,
        schema.serialize().to_pybytes(),
        num_rows,
    )


def _is_descriptor_column(f: pa.Field) -> bool:
    return (f.metadata or {}).get(BLOB_V1_KEY.encode()) == b"true" and pa.types.is_struct(f.type)


@lru_cache(maxsize=256)
def _late_shadow(
    table_root: str,
    options: tuple[tuple[str, str], ...] | None,
    data_file: DataFile,
    schema_bytes: bytes,
    num_rows: int,
) -> lance.LanceDataset:
    schema = pa.ipc.read_schema(pa.py_buffer(schema_bytes))
    late = unprojectable_columns(schema)
    major, minor = data_file.file_major_version, data_file.file_minor_version
    ids, indices = list(data_file.fields), list(data_file.column_indices)
    if (major, minor) < (2, 1) or len(indices) != len(ids):  # (blob v2 needs 2.2+)
        raise CorruptTableError(data_file.path, "a blob v2 column in a data file before 2.2")
    fresh = itertools.count(max(ids, default=0) + 1)  # ids of parents: not in the file
    fields: list[Field] = []
    shadow_ids: list[int] = []
    shadow_indices: list[int] = []
    at = 0
    for f in schema:
        n = id_entries(f, major, minor)
        if f.name in late and not _is_descriptor_column(f):
            fields.append(_stored_field(f, ids[at : at + n], fresh, data_file.path))
            shadow_ids += ids[at : at + n]
            shadow_indices += indices[at : at + n]
        at += n
    shadow_file = replace(
        data_file, fields=tuple(shadow_ids), column_indices=tuple(shadow_indices), base_id=1
    )
    return _opened_shadow(table_root, options, shadow_file, tuple(fields), num_rows)


def _stored_field(f: pa.Field, ids: list[int], fresh: Iterator[int], path: str) -> Field:
    """The shadow field of file column ``f``: its leaves (2.1+ files) take ``ids``, the
    ``DataFile.fields`` entries it owns, its parents ids from ``fresh``. Without field
    metadata (a JSON or blob marker would make pylance convert the values): the values
    come back as stored, as its file reader returns them."""
    field = field_from_arrow(_bare(f), ids=fresh)
    if sum(1 for _ in leaf_fields([field])) != len(ids):
        raise CorruptTableError(path, f"column '{f.name}' does not take {len(ids)} field ids")
    return _renumbered(field, iter(ids), fresh)


def _bare(f: pa.Field) -> pa.Field:
    """``f`` without field metadata at any depth (extension types are kept); a blob v2
    member as a blob v2 field (read as its descriptors)."""
    if _is_descriptor_column(f):
        return pa.field(f.name, V2_LOGICAL_TYPE, f.nullable, metadata=_BLOB_V2_METADATA)
    kids = child_fields(f.type)
    dt = with_child_fields(f.type, [_bare(k) for k in kids]) if kids else f.type
    return pa.field(f.name, dt, f.nullable)


_BLOB_V2_METADATA = {EXTENSION_NAME_KEY: BLOB_V2_EXTENSION, EXTENSION_METADATA_KEY: ""}


def _renumbered(f: Field, leaves: Iterator[int], fresh: Iterator[int], parent: int = -1) -> Field:
    """``f`` with the ids of its leaves (and of blob v2 fields: one column each) taken from
    ``leaves`` and those of the other fields from ``fresh``."""
    if is_blob_v2(f):
        own = next(leaves)
        kids = tuple(replace(c, id=next(fresh), parent_id=own) for c in f.children)
        return replace(f, id=own, parent_id=parent, children=kids)
    if not f.children:
        return replace(f, id=next(leaves), parent_id=parent)
    own = next(fresh)
    kids = tuple(_renumbered(c, leaves, fresh, own) for c in f.children)
    return replace(f, id=own, parent_id=parent, children=kids)


def fragment_blob_files(
    store: ObjectStore, fragment: Fragment, field: Field, physical_rows: np.ndarray
) -> list[BlobFile | None]:
    """A file object for ``field``'s value at each physical row of ``fragment`` (None for
    null values), in the order of ``physical_rows``."""
    data_file = next((df for df in fragment.files if field.id in df.fields), None)
    if data_file is None:  # a column added without data in this fragment: all null
        return [None] * len(physical_rows)
    shadow = blob_descriptors(store, data_file, field, fragment.physical_rows)
    indices = np.asarray(physical_rows, dtype=np.int64)
    where = store.uri(f"data/{data_file.path}")
    table = _read(where, lambda: shadow.take(indices, columns=[_COLUMN]), len(indices))
    rows = table.column(_COLUMN).to_pylist()
    return [blob_file(store, data_file.path, field, d) for d in rows]


def _interruptible(path: str, call: Callable[[], _T]) -> _T:
    """``call()``, a call of pylance's table reader on the shadow of data file ``path``;
    the signal it reports as an error (``External error: KeyboardInterrupt``) raised as a
    ``KeyboardInterrupt``, a Rust panic (a damaged file) as a CorruptTableError."""
    try:
        return call()
    except BaseException as e:
        if is_panic(e):
            raise CorruptTableError(
                path, f"cannot read the blob descriptors: Rust panic: {first_line(e)}"
            ) from e
        if not isinstance(e, OSError | ValueError | RuntimeError | pa.ArrowException):
            raise
        if "KeyboardInterrupt" not in str(e):
            raise
        raise KeyboardInterrupt(
            f"the read of the blob descriptors of {path} was interrupted"
        ) from e


def _read(path: str, call: Callable[[], pa.Table], rows: int) -> pa.Table:
    """The ``rows`` rows a read of the shadow of data file ``path`` gives (see
    :func:`_interruptible`), never fewer."""
    table = _interruptible(path, call)
    if table.num_rows < rows:
        raise KeyboardInterrupt(
            f"the read of the blob descriptors of {path} was interrupted after "
            f"{table.num_rows} of {rows} rows"
        )
    return table


def _single(table: pa.Table) -> pa.Array:
    col = table.column(_COLUMN)
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


class BlobAwareReader:
    """A :class:`DataFileReader` whose blob columns (``blob`` maps file column name ->
    table field) come from their shadow tables, and the columns after a blob v2 column from
    the file's :func:`late_columns` shadow; same ``read`` / ``take`` interface.

    Columns named in ``values`` (blob v2 only) are returned as the logical values the
    descriptors stand for (``struct<data, uri, position, size>``, bytes read), which is what
    rewrites (update, merge_insert, compaction) write back."""

    def __init__(
        self,
        store: ObjectStore,
        reader: DataFileReader,
        data_file: DataFile,
        blob: dict[str, Field],
        values: frozenset[str] = frozenset(),
    ) -> None:
        self._reader = reader
        self._shadows = {
            name: blob_descriptors(store, data_file, f, reader.num_rows) for name, f in blob.items()
        }
        self._store = store
        self._path = data_file.path
        #: the data file, in messages
        self._where = store.uri(f"data/{data_file.path}")
        self._fragments = {
            name: _interruptible(self._where, t.get_fragments)[0]
            for name, t in self._shadows.items()
        }
        self._late = late_columns(store, data_file, reader.schema, reader.num_rows)
        self._late_fragment = (
            None if self._late is None else _interruptible(self._where, self._late.get_fragments)[0]
        )
        self._late_names = frozenset(() if self._late is None else self._late.schema.names)
        self._fields = blob
        self._values = values
        self.schema = reader.schema
        self.num_rows = reader.num_rows

    def _finish(self, name: str, descriptors: pa.Array) -> pa.Array:
        if name not in self._values:
            return descriptors
        return descriptors_to_values(self._store, self._path, self._fields[name], descriptors)

    def _slice(self, name: str, offset: int, limit: int) -> pa.Array:
        # the fragment's own reader: about 1.7x faster than the table scanner for descriptor
        # ranges (its take fails on blob columns in pylance 14, so takes use the table's)
        fragment = self._fragments[name]
        table = _read(
            self._where,
            lambda: fragment.to_table(columns=[_COLUMN], offset=offset, limit=limit),
            limit,
        )
        return _single(table)

    def _take(self, name: str, indices: np.ndarray) -> Callable[[], pa.Table]:
        shadow = self._shadows[name]
        return lambda: shadow.take(indices, columns=[_COLUMN])

    def _split(self, columns: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
        """``columns`` as those of the file reader, of the late shadow, of blob shadows."""
        late = self._late_names
        plain = [c for c in columns if c not in self._shadows and c not in late]
        later = [c for c in columns if c in late and c not in self._shadows]
        return plain, later, [c for c in columns if c in self._shadows]

    def _late_slice(self, columns: list[str], offset: int, limit: int) -> dict[str, pa.Array]:
        fragment = self._late_fragment
        assert fragment is not None
        table = _read(
            self._where,
            lambda: fragment.to_table(columns=columns, offset=offset, limit=limit),
            limit,
        )
        return {c: _array(table, c) for c in columns}

    def _late_take(self, columns: list[str], indices: np.ndarray) -> dict[str, pa.Array]:
        shadow = self._late
        assert shadow is not None
        table = _read(self._where, lambda: shadow.take(indices, columns=columns), len(indices))
        return {c: _array(table, c) for c in columns}

    def _with(
        self,
        columns: Sequence[str],
        plain: pa.Table | pa.RecordBatch | None,
        blobs: dict[str, pa.Array],
    ) -> pa.RecordBatch:
        arrays = [blobs[c] if c in blobs else _array(plain, c) for c in columns]
        return pa.RecordBatch.from_arrays(arrays, names=list(columns))

    def read(
        self, columns: Sequence[str], start: int, num_rows: int, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        plain, late, blob = self._split(columns)
        step = max(batch_size, 1)
        if plain:
            batches = self._reader.read(plain, start, num_rows, batch_size)
        else:
            batches = iter(
                _no_columns(min(step, start + num_rows - s))
                for s in range(start, start + num_rows, step)
            )
        at = start
        for b in batches:
            got = {c: self._finish(c, self._slice(c, at, b.num_rows)) for c in blob}
            if late:
                got.update(self._late_slice(late, at, b.num_rows))
            yield self._with(columns, b if plain else None, got)
            at += b.num_rows

    def take(self, columns: Sequence[str], rows: Sequence[int]) -> pa.Table:
        plain, late, blob = self._split(columns)
        base = self._reader.take(plain, rows) if plain else None
        indices = np.asarray(rows, dtype=np.int64)
        got = {
            c: self._finish(c, _single(_read(self._where, self._take(c, indices), len(indices))))
            for c in blob
        }
        if late:
            got.update(self._late_take(late, indices))
        return pa.Table.from_batches([self._with(columns, base, got)])


def _no_columns(n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_struct_array(pa.nulls(n, pa.struct([])))


def _array(plain: pa.Table | pa.RecordBatch | None, name: str) -> pa.Array:
    assert plain is not None
    col = plain.column(name)
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col
