"""Which row of the caller's input a row handed to the writer came from (layer L5; spec
failure row "json input is not valid JSON": the error names the field path and the row).

``merge_insert`` and ``update`` write batches they assembled themselves (matched source
rows, inserted source rows, rewritten table rows), so the writer's
:class:`~lance_semantic.errors.InvalidJsonError` first names a row of such a batch.
:class:`RowOrigins` remembers the batch last handed to the writer and how its rows map to
the caller's rows, and :meth:`RowOrigins.relocate` puts the error on the caller's row:
for ``merge_insert`` the source row (counted across the source's batches), for ``update``
the table row (the index ``take`` accepts). A value inside a list, struct or map is placed
on its top-level row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from ...errors import InvalidJsonError
from ...schema import Field, TableSchema
from ...types.families import is_list_like
from ...write import encode_json_values

__all__ = ["Origin", "RowOrigins", "first_invalid_json_row"]

#: a row of a batch handed to the writer -> the caller's row
Origin = Callable[[int], int]


class RowOrigins:
    """Tracks the batches a writer consumes, with their rows' origins."""

    def __init__(self) -> None:
        self._batch: pa.RecordBatch | None = None
        self._origin: Origin | None = None

    def track(
        self, batches: Iterable[tuple[pa.RecordBatch, Origin | None]]
    ) -> Iterator[pa.RecordBatch]:
        """The batches, remembering each one (and its origin) while the writer has it."""
        for batch, origin in batches:
            self._batch, self._origin = batch, origin
            yield batch
        self._batch = self._origin = None

    def relocate(self, error: InvalidJsonError, table: TableSchema) -> InvalidJsonError:
        """``error`` on the caller's row, or ``error`` itself when the batch being written
        has no origin or does not hold the invalid value."""
        batch, origin = self._batch, self._origin
        if batch is None or origin is None:
            return error
        for top in table.fields:
            if top.name not in batch.schema.names:
                continue
            if not any(f.path == error.field_path for f in top.walk()):
                continue
            found = first_invalid_json_row(batch.column(top.name), top, error.field_path)
            if found is None:
                return error
            row, cause = found
            return InvalidJsonError(error.field_path, origin(row), cause.reason, cause.excerpt)
        return error


def first_invalid_json_row(
    arr: pa.Array, field: Field, path: str
) -> tuple[int, InvalidJsonError] | None:
    """The top-level row of ``arr`` (the values of ``field``) holding the first invalid
    value of the json field ``path`` (``field`` itself or a descendant), with the error
    naming it; None when every value there is valid."""
    if field.path == path:
        try:
            encode_json_values(arr, field)
        except InvalidJsonError as e:
            return e.row, e
        return None
    dt = arr.type
    if isinstance(dt, pa.BaseExtensionType):
        arr, dt = arr.storage, dt.storage_type
    if pa.types.is_struct(dt):
        for i in range(dt.num_fields):
            c = next((f for f in field.children if f.name == dt.field(i).name), None)
            if c is not None and any(f.path == path for f in c.walk()):
                return first_invalid_json_row(arr.field(i), c, path)
        return None
    if pa.types.is_fixed_size_list(dt):
        size = dt.list_size
        values = arr.values.slice(arr.offset * size, len(arr) * size)
        found = first_invalid_json_row(values, field.children[0], path)
        return None if found is None else (found[0] // size, found[1])
    if is_list_like(dt, fixed=False) or pa.types.is_map(dt):
        offsets = arr.offsets.to_numpy()
        base = int(offsets[0]) if len(arr) else 0
        end = int(offsets[-1]) if len(arr) else 0
        if pa.types.is_map(dt):
            key_f, value_f = field.children[0].children
            in_key = any(f.path == path for f in key_f.walk())
            sub, values = (key_f, arr.keys) if in_key else (value_f, arr.items)
        else:
            sub, values = field.children[0], arr.values
        found = first_invalid_json_row(values.slice(base, end - base), sub, path)
        if found is None:
            return None
        row = int(np.searchsorted(offsets - base, found[0], side="right")) - 1
        return row, found[1]
    return None
