"""``write_lance``: write a Ray dataset as (or into) a Lance table (layer L6; lance-ray
``LanceDatasink``).

Each write task hands its blocks to ``ls.fragment.write_fragments`` (the sink's one
``WriteRequest``, checked on the driver, through ``write_uncommitted``) and returns the
fragments with the schema of its first block; nothing is visible until the driver commits
them all in one ``Overwrite`` (create / overwrite) or ``Append``, read at the version the
driver saw when the write started (a later commit by someone else is rebased over).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import pyarrow as pa
import ray.data
from ray.data.block import BlockAccessor
from ray.data.datasource.datasink import Datasink, WriteResult

from ..commit import latest_version
from ..dataset import Dataset
from ..dataset.core import arguments as args
from ..dataset.writes import FragmentMetadata, LanceOperation, commit_operation, write_uncommitted
from ..errors import DatasetExistsError
from ..storage import open_store
from ..write import MAX_BYTES_PER_FILE, WriteRequest
from ._errors import library_errors_raised

__all__ = ["LanceDatasink", "write_lance"]

#: lance-ray's ``write_lance`` / ``LanceDatasink`` defaults (a file per task holds at least
#: 1024 * 1024 rows, at most 64 * 1024 * 1024): lance-ray's own, not pylance's
#: ``max_rows_per_file``
SINK_MIN_ROWS_PER_FILE = 1024 * 1024
SINK_MAX_ROWS_PER_FILE = 64 * 1024 * 1024

#: what one write task returns: its fragments and the schema of its first block
TaskResult = tuple[list[FragmentMetadata], pa.Schema | None]


def _batches(blocks: Iterable[Any]) -> Iterator[pa.RecordBatch]:
    for block in blocks:
        table = BlockAccessor.for_block(block).to_arrow()
        yield from table.to_batches()


class LanceDatasink(Datasink[TaskResult]):
    """A Ray Data ``Datasink`` writing a Lance table (see :func:`write_lance`)."""

    NAME = "LanceSemantic"

    def __init__(
        self,
        uri: str | os.PathLike[str],
        *,
        schema: pa.Schema | None = None,
        mode: Literal["create", "append", "overwrite"] = "create",
        data_storage_version: str | None = None,
        semantic_types: bool | None = None,
        storage_options: Mapping[str, str] | None = None,
        min_rows_per_file: int = SINK_MIN_ROWS_PER_FILE,
        max_rows_per_file: int = SINK_MAX_ROWS_PER_FILE,
        max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    ) -> None:
        self.uri = args.check_uri("uri", uri)
        self.mode = args.check_mode("mode", mode, ("create", "append", "overwrite"))
        if schema is not None and not isinstance(schema, pa.Schema):
            raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
        self.schema = schema
        self.data_storage_version = args.check_optional_str(
            "data_storage_version", data_storage_version
        )
        self.semantic_types = args.check_optional_bool("semantic_types", semantic_types)
        options = args.check_storage_options(storage_options)
        self.storage_options = dict(options) if options is not None else None
        self.min_rows_per_file = args.check_int("min_rows_per_file", min_rows_per_file, minimum=1)
        self.max_rows_per_file = args.check_int("max_rows_per_file", max_rows_per_file, minimum=1)
        if self.min_rows_per_file > self.max_rows_per_file:
            raise ValueError(
                f"min_rows_per_file ({min_rows_per_file}) must not exceed max_rows_per_file "
                f"({max_rows_per_file})"
            )
        self.max_bytes_per_file = args.check_int(
            "max_bytes_per_file", max_bytes_per_file, minimum=1
        )
        #: what every write task writes: append mode writes rows of the table's schema (a
        #: new schema when there is none yet); create and overwrite write rows of a new
        #: schema
        self.request = WriteRequest(
            schema=schema,
            mode="append" if self.mode == "append" else "overwrite",
            max_rows_per_file=self.max_rows_per_file,
            max_bytes_per_file=self.max_bytes_per_file,
            data_storage_version=self.data_storage_version,
            semantic_types=self.semantic_types,
        )
        self.read_version: int | None = None
        #: the table the driver committed, once the write is complete
        self.result: Dataset | None = None

    def get_name(self) -> str:
        return self.NAME

    @property
    def supports_distributed_writes(self) -> bool:
        return True

    @property
    def min_rows_per_write(self) -> int:
        """Ray Data bundles blocks into write tasks of at least this many rows."""
        return self.min_rows_per_file

    def on_write_start(self, schema: pa.Schema | None = None) -> None:
        store = open_store(self.uri, self.storage_options)
        latest = latest_version(store)
        if self.mode == "create" and latest is not None:
            raise DatasetExistsError(self.uri)
        self.read_version = latest if self.mode == "append" else None

    def write(self, blocks: Iterable[Any], ctx: Any) -> TaskResult:
        """One write task: its blocks as uncommitted fragments (runs on a worker)."""
        batches = _batches(blocks)
        first = next(batches, None)
        if first is None:
            return [], None

        def rows() -> Iterator[pa.RecordBatch]:
            yield first
            yield from batches

        fragments = write_uncommitted(
            rows(), self.uri, self.request, storage_options=self.storage_options
        )
        return fragments, first.schema

    def on_write_complete(self, write_result: WriteResult[TaskResult]) -> None:
        fragments: list[FragmentMetadata] = []
        first_schema: pa.Schema | None = None
        for task_fragments, schema in write_result.write_returns:
            fragments.extend(task_fragments)
            if first_schema is None:
                first_schema = schema
        new_schema = self.schema or first_schema
        if new_schema is None:
            return  # no rows anywhere: nothing to commit (as lance-ray)
        operation: LanceOperation.Append | LanceOperation.Overwrite
        if self.read_version is not None:
            operation = LanceOperation.Append(fragments)
        else:
            operation = LanceOperation.Overwrite(new_schema, fragments)
        store, uri, manifest = commit_operation(
            self.uri,
            operation,
            self.read_version,
            storage_options=self.storage_options,
            data_storage_version=self.data_storage_version,
            semantic_types=self.semantic_types,
            create=self.mode == "create",
        )
        self.result = Dataset(store, uri, manifest)


def write_lance(
    ds: ray.data.Dataset,
    uri: str | os.PathLike[str],
    *,
    schema: pa.Schema | None = None,
    mode: Literal["create", "append", "overwrite"] = "create",
    data_storage_version: str | None = None,
    semantic_types: bool | None = None,
    storage_options: Mapping[str, str] | None = None,
    min_rows_per_file: int = SINK_MIN_ROWS_PER_FILE,
    max_rows_per_file: int = SINK_MAX_ROWS_PER_FILE,
    max_bytes_per_file: int = MAX_BYTES_PER_FILE,
    ray_remote_args: Mapping[str, Any] | None = None,
    concurrency: int | None = None,
) -> Dataset | None:
    """Write the Ray dataset ``ds`` to the Lance table at ``uri`` (lance-ray's
    ``write_lance``).

    Parameters
    ----------
    ds
        The rows. Each block is written as it is: on a flagged table blocks may hold
        different accepted layouts of a column's semantic type (each data file keeps its
        block's layout); on a legacy table every block must have the table's Arrow types.
    mode
        ``"create"`` (default; ``DatasetExistsError`` when a table exists), ``"append"``
        (creates the table when there is none) or ``"overwrite"``.
    schema
        Cast every block to this schema first (lance-ray's option); the new table's schema
        is otherwise that of the first written block.
    data_storage_version, semantic_types
        For a new table, as in ``ls.write_dataset`` (data storage 2.3: flagged).
    min_rows_per_file
        Ray Data hands each write task blocks of at least this many rows (lance-ray's
        default, 1 Mi rows).
    max_rows_per_file, max_bytes_per_file
        When a write task starts a new data file (and fragment); lance-ray's defaults.
    ray_remote_args, concurrency
        Passed to ``ray.data.Dataset.write_datasink``.

    Returns
    -------
    Dataset or None
        The table as committed (None when ``ds`` had no rows and nothing was committed).

    Raises
    ------
    LanceSemanticError
        The library error a write task raised (``UnsupportedInputTypeError``,
        ``SchemaMismatchError`` … with its field path), or the commit's; no version is
        committed and no data file is referenced.
    """
    sink = LanceDatasink(
        uri,
        schema=schema,
        mode=mode,
        data_storage_version=data_storage_version,
        semantic_types=semantic_types,
        storage_options=storage_options,
        min_rows_per_file=min_rows_per_file,
        max_rows_per_file=max_rows_per_file,
        max_bytes_per_file=max_bytes_per_file,
    )
    with library_errors_raised():
        ds.write_datasink(
            sink, ray_remote_args=dict(ray_remote_args or {}), concurrency=concurrency
        )
    return sink.result
