"""``read_lance``: a Lance table as a Ray dataset (layer L6; lance-ray ``LanceDatasource``).

The version is fixed when the datasource is made (the latest, or the one asked for), so
every read task reads the same manifest whatever is committed meanwhile. Fragments are
split into at most ``parallelism`` contiguous groups, one read task each; a task opens the
table at that version and streams its fragments' rows through the library's scan: one
``ScanRequest`` (column projection, filter, output encodings), checked on the driver, so
every block has the same Arrow schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import pyarrow as pa
import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource
from ray.data.datasource.datasource import ReadTask

from ..dataset.core import arguments as args
from ..dataset.core import scan_request
from ..dataset.dataset import Dataset, dataset
from ..read import Columns, ScanRequest
from ._errors import library_errors_raised

__all__ = ["LanceDatasource", "read_lance"]

#: rows per block a read task yields (at most)
BLOCK_ROWS = 131_072


@dataclass(frozen=True, slots=True)
class _Fragment:
    id: int
    rows: int
    size_bytes: int
    files: tuple[str, ...]


class LanceDatasource(Datasource):
    """A Ray Data ``Datasource`` over one version of a Lance table (see :func:`read_lance`)."""

    def __init__(
        self,
        uri: str | os.PathLike[str],
        *,
        columns: Columns | None = None,
        filter: str | None = None,
        output_encodings: Mapping[str, str] | None = None,
        version: int | None = None,
        storage_options: Mapping[str, str] | None = None,
        fragment_ids: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        options = args.check_storage_options(storage_options)
        self._storage_options = dict(options) if options is not None else None
        ds = dataset(uri, version=version, storage_options=self._storage_options)
        self._uri = ds.uri
        self._version = ds.version
        # a bad column, filter or encoding fails here, on the driver, before any task runs
        self._request = scan_request(
            columns,
            filter,
            batch_size=BLOCK_ROWS,
            output_encodings=dict(output_encodings) if output_encodings else None,
        )
        # the schema of every block
        self._schema = ds._plan(self._request).output_schema
        wanted = set(fragment_ids) if fragment_ids is not None else None
        self._fragments = [
            _Fragment(
                f.id,
                f.num_rows,
                sum(df.file_size_bytes for df in f.files),
                tuple(f"{self._uri.rstrip('/')}/data/{df.path}" for df in f.files),
            )
            for f in ds.manifest.fragments
            if wanted is None or f.id in wanted
        ]

    @property
    def version(self) -> int:
        return self._version

    def get_name(self) -> str:
        return "LanceSemantic"

    def estimate_inmemory_data_size(self) -> int | None:
        return sum(f.size_bytes for f in self._fragments)

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: Any = None,
    ) -> list[ReadTask]:
        if not self._fragments:
            return []
        tasks = []
        for group in _split(self._fragments, max(1, parallelism)):
            metadata = BlockMetadata(
                num_rows=sum(f.rows for f in group) if self._request.filter is None else None,
                size_bytes=sum(f.size_bytes for f in group),
                input_files=tuple(p for f in group for p in f.files),
                exec_stats=None,
            )
            read = partial(
                _read_fragments,
                self._uri,
                self._version,
                self._storage_options,
                tuple(f.id for f in group),
                self._request,
                per_task_row_limit,
                self._schema,
            )
            tasks.append(
                ReadTask(read, metadata, schema=self._schema, per_task_row_limit=per_task_row_limit)
            )
        return tasks


def _split(fragments: Sequence[_Fragment], n: int) -> list[Sequence[_Fragment]]:
    """At most ``n`` contiguous, non-empty groups of nearly equal length."""
    n = min(n, len(fragments))
    size, extra = divmod(len(fragments), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(fragments[start:end])
        start = end
    return out


def _read_fragments(
    uri: str,
    version: int,
    storage_options: Mapping[str, str] | None,
    fragment_ids: tuple[int, ...],
    request: ScanRequest,
    limit: int | None,
    schema: pa.Schema,
) -> Iterator[pa.Table]:
    """The rows of ``fragment_ids`` at ``version`` read as ``request`` asks, at most
    ``limit`` (runs in a read task); one empty block of ``schema`` when none match (Ray
    would make a block without columns)."""
    ds: Dataset = dataset(uri, version=version, storage_options=storage_options)
    wanted = set(fragment_ids)
    fragments = tuple(f for f in ds.get_fragments() if f.fragment_id in wanted)
    request = replace(request, limit=args.check_optional_int("limit", limit), fragments=fragments)
    batches = ds._scan(request)[1]
    empty = True
    for batch in batches:
        empty = False
        yield pa.Table.from_batches([batch])
    if empty:
        yield schema.empty_table()


def read_lance(
    uri: str | os.PathLike[str],
    *,
    columns: Columns | None = None,
    filter: str | None = None,
    output_encodings: Mapping[str, str] | None = None,
    version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
    fragment_ids: Sequence[int] | None = None,
    concurrency: int | None = None,
    override_num_blocks: int | None = None,
    ray_remote_args: Mapping[str, Any] | None = None,
) -> ray.data.Dataset:
    """The rows of the Lance table at ``uri`` as a Ray dataset (lance-ray's ``read_lance``).

    Parameters
    ----------
    columns, filter, output_encodings
        As ``Dataset.to_table`` takes them: column paths (or SQL projections), a SQL
        filter, and per-field output encodings (flagged tables; default: each field's).
    version
        The version to read (default: the latest when this is called). Every read task
        reads this version.
    fragment_ids
        Read only these fragments.
    concurrency, override_num_blocks, ray_remote_args
        Passed to ``ray.data.read_datasource``.

    Raises
    ------
    DatasetNotFoundError, ColumnNotFoundError, InvalidExpressionError,
    InvalidOutputEncodingError
        On the driver, before any task runs.
    """
    with library_errors_raised():
        source = LanceDatasource(
            uri,
            columns=columns,
            filter=filter,
            output_encodings=output_encodings,
            version=version,
            storage_options=storage_options,
            fragment_ids=fragment_ids,
        )
    extra: dict[str, Any] = {}
    if ray_remote_args:
        extra["ray_remote_args"] = dict(ray_remote_args)
    return ray.data.read_datasource(
        source, concurrency=concurrency, override_num_blocks=override_num_blocks, **extra
    )
