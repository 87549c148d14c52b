"""``Dataset.scanner()``: one configured scan of one version, with pylance's ``LanceScanner``
names, as the ``pyarrow.dataset.Scanner`` that engines consume (layer L5).

A :class:`Scanner` is planned when it is made (bad columns, filters and output encodings
fail then, naming the argument) and reads nothing until asked: ``to_reader()`` and
``to_batches()`` stream, ``to_table()`` collects. The rows come from the same machinery as
``Dataset.to_table`` (one ``ScanRequest`` through ``read.plan_scan`` / ``read.run_scan``), so
the filter and the columns are pushed into the fragment reads (late materialisation, output
encodings).

``with_row_id`` adds ``_rowid`` (uint64) numbered as pylance numbers rows of a table
without stable row ids: ``(fragment id << 32) | physical row offset``; ``with_row_address``
adds ``_rowaddr``, the same value. The scanner reads the version its dataset handle was at
when it was made, as pylance's does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds

from ..codecs.kernel_layout import has_view, to_kernel_layout, to_layout
from ..errors import NotSupportedYetError, ReadError
from ..fts import TextSearch
from ..fts import full_text_query as parse_full_text_query
from ..manifest import Fragment, flags, index_field_ids
from ..read import (
    ROW_ADDR,
    ROW_ID,
    Columns,
    FragmentReader,
    ScalarChoice,
    ScanPlan,
    ScanRequest,
    inverted_columns,
    plan_scan,
    run_scan,
    scalar_choice,
)
from ..vector import nearest_query
from .core import Snapshot, TableHandle, scan_request
from .core import arguments as args

if TYPE_CHECKING:
    from .fragment import LanceFragment

__all__ = ["Scanner", "make_scanner", "open_scanner", "TABLE_BATCH", "ROW_ID", "ROW_ADDR"]

#: rows per internal batch when a whole table is asked for (to_table): larger batches let
#: value conversions such as JSONB -> text use both cores
TABLE_BATCH = 262_144

#: pylance / pyarrow scanner options that only tune how a scan runs: accepted and ignored
#: (scans here are always in order and read ahead on their own; a vector search uses the
#: column's vector index unless ``nearest`` says ``use_index=False``; ``use_scalar_index``
#: is the request's)
_TUNING = frozenset(
    {
        "batch_size_bytes",
        "batch_readahead",
        "fragment_readahead",
        "scan_in_order",
        "io_buffer_size",
        "late_materialization",
        "use_stats",
        "disable_scoring_autoprojection",
        "use_threads",
        "cache_metadata",
        "memory_pool",
    }
)
#: pylance / pyarrow options of features not here: refused unless left at their default
_UNSUPPORTED: Mapping[str, str] = {
    "index_segments": "index segments (index_segments=)",
    "include_deleted_rows": "reading deleted rows (include_deleted_rows=True)",
    "scan_stats_callback": "scan statistics (scan_stats_callback=)",
    "order_by": "ordered scans (order_by=); sort the result instead",
    "row_addr_allowlist": "row address allow lists (row_addr_allowlist=)",
    "row_addr_blocklist": "row address block lists (row_addr_blocklist=)",
    "strict_batch_size": "strict batch sizes (strict_batch_size=True)",
    "fragment_scan_options": "file-format scan options (fragment_scan_options=)",
}
#: the default that ``blob_handling`` may be given explicitly (what reads return here)
_BLOB_HANDLING_DEFAULT = "blobs_descriptions"


class Scanner(pds.Scanner):
    """A scan of one dataset version: columns, filter, window and output layouts fixed.

    Made by :meth:`Dataset.scanner`. ``pyarrow.dataset.Scanner`` is its base so that DuckDB
    reads it like pyarrow's own (``duckdb.sql("SELECT * FROM scanner")``); every method of
    the base is defined here (the base's own would touch a C++ scanner there is none of).

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
    >>> sc = ds.scanner(columns=["s"], filter="id >= 2")
    >>> sc
    Scanner(uri='t.lance', version=1, columns=['s'])
    >>> sc.to_table().to_pydict()
    {'s': ['b', 'c']}
    """

    def __init__(
        self,
        ds: TableHandle,
        request: ScanRequest,
        plan: ScanPlan,
        fragments: Sequence[Fragment],
    ) -> None:
        # (no super().__init__: pyarrow's forbids direct construction)
        self._ds = ds
        self._snap = ds._snapshot()
        self._request = request
        self._plan = plan
        self._fragments = list(fragments)

    # ---- schemas ------------------------------------------------------------------------
    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the batches this scan returns.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner(columns=["s"], with_row_address=True).projected_schema
        s: string
        _rowaddr: uint64
        """
        schema = self._plan.result_schema
        for name in self._request.row_columns:
            schema = schema.append(pa.field(name, pa.uint64()))
        return schema

    @property
    def dataset_schema(self) -> pa.Schema:
        """The schema of the dataset version scanned (as ``Dataset.schema``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner(columns=["s"]).dataset_schema
        id: int64
        s: string
        """
        return self._snap.schema

    # ---- reads --------------------------------------------------------------------------
    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Stream the rows in batches of at most ``batch_size`` rows.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> [b.num_rows for b in ds.scanner(batch_size=2).to_batches()]
        [2, 1]
        """
        return self._run(self._request.batch_size)

    def to_reader(self) -> pa.RecordBatchReader:
        """The rows as a streaming ``pyarrow.RecordBatchReader``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> reader = ds.scanner(columns=["id"], limit=2).to_reader()
        >>> reader.schema, reader.read_all().to_pydict()
        (id: int64, {'id': [1, 2]})
        """
        return pa.RecordBatchReader.from_batches(self.projected_schema, self.to_batches())

    def to_table(self) -> pa.Table:
        """Read the rows into one table.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner(filter="s <> 'b'", offset=1).to_table().to_pydict()
        {'id': [3], 's': ['c']}
        """
        batches = list(self._run(self._request.batch_size or TABLE_BATCH))
        return pa.Table.from_batches(batches, schema=self.projected_schema)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.to_reader().__arrow_c_stream__(requested_schema)

    def head(self, num_rows: int) -> pa.Table:
        """The first ``num_rows`` rows of the scan.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner(columns=["s"], filter="id > 1").head(1).to_pydict()
        {'s': ['b']}
        """
        n = args.check_int("num_rows", num_rows)
        limit = n if self._request.limit is None else min(n, self._request.limit)
        batches = list(self._run(self._request.batch_size or TABLE_BATCH, limit=limit))
        return pa.Table.from_batches(batches, schema=self.projected_schema)

    def take(self, indices: Sequence[int] | np.ndarray | pa.Array) -> pa.Table:
        """Rows at ``indices`` of the scan's result (offsets into the rows it returns), in
        the order given, duplicates allowed. The scan streams: only the rows taken are
        kept, and it stops after the batch holding the last index.

        Raises ``ReadError`` for an index beyond the scan's rows (as ``Dataset.take``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner(filter="id > 1").take([1, 0]).to_pydict()
        {'id': [3, 2], 's': ['c', 'b']}
        """
        idx = args.check_row_indices("indices", indices)
        schema = self.projected_schema
        wanted, order = np.unique(idx, return_inverse=True)
        picked: list[list[pa.Array]] = [[] for _ in schema]
        seen = done = 0
        if len(wanted):
            for batch in self._run(self._request.batch_size or TABLE_BATCH):
                upto = int(np.searchsorted(wanted, seen + batch.num_rows))
                if upto > done:
                    rows = pa.array(wanted[done:upto] - seen)
                    for k, f in enumerate(schema):
                        picked[k].append(_take(batch.column(k), rows, f))
                    done = upto
                seen += batch.num_rows
                if done == len(wanted):
                    break
        if done < len(wanted):
            raise ReadError(f"take index {int(wanted[done])} is out of range for {seen} rows")
        positions = pa.array(order.reshape(-1))
        columns = [
            _take(pa.chunked_array(parts, type=f.type), positions, f)
            for parts, f in zip(picked, schema, strict=True)
        ]
        return pa.Table.from_arrays(columns, schema=schema)

    def count_rows(self) -> int:
        """How many rows the scan returns (its filter, offset and limit applied); without
        a filter only the fragments' row counts are read.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner().count_rows(), ds.scanner(filter="id > 1", limit=1).count_rows()
        (3, 1)
        """
        schema = self._snap.semantic_schema
        if self._plan.search is not None or self._plan.text is not None:  # its result rows
            return sum(b.num_rows for b in self._run(self._request.batch_size))
        if self._plan.predicate is None:
            total = sum(
                FragmentReader(self._snap.store, schema, f, [], pa.schema([])).live_rows()
                for f in self._fragments
            )
        else:  # the filter's columns only
            flagged = self._snap.semantic_types
            rows = ScanRequest(columns=[], filter=self._plan.predicate.expr)
            plan = plan_scan(schema, rows, flagged=flagged)
            count = ScanRequest(
                batch_size=TABLE_BATCH, use_scalar_index=self._request.use_scalar_index
            )
            batches = run_scan(
                self._snap.store,
                schema,
                self._fragments,
                plan,
                count,
                index_section=row_address_indices(self._snap),
            )
            total = sum(b.num_rows for b in batches)
        limit, offset = self._request.limit, self._request.offset
        total = max(0, total - (offset or 0))
        return total if limit is None else min(total, limit)

    def scan_batches(self) -> Iterator[Any]:
        """Not supported yet (pyarrow's batches tagged with their fragment): use
        :meth:`to_batches`.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.scanner().scan_batches()
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Scanner.scan_batches (batches tagged with their fragment); use to_batches()
        """
        raise NotSupportedYetError(
            "Scanner.scan_batches (batches tagged with their fragment); use to_batches()"
        )

    @staticmethod
    def from_dataset(*args: Any, **kwargs: Any) -> Scanner:
        """Not supported: make a scanner with ``Dataset.scanner(...)``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ls.Scanner.from_dataset(ds)
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Scanner.from_dataset; use Dataset.scanner(...)
        >>> ds.scanner(columns=["id"]).to_table().num_rows
        3
        """
        raise NotSupportedYetError("Scanner.from_dataset; use Dataset.scanner(...)")

    @staticmethod
    def from_fragment(*args: Any, **kwargs: Any) -> Scanner:
        """Not supported: scan some fragments with ``Dataset.scanner(fragments=[...])``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> ls.Scanner.from_fragment(ds.get_fragments()[1])
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Scanner.from_fragment; use Dataset.scanner(fragments=[...])
        >>> ds.scanner(fragments=ds.get_fragments()[1:]).to_table().to_pydict()
        {'id': [3]}
        """
        raise NotSupportedYetError("Scanner.from_fragment; use Dataset.scanner(fragments=[...])")

    @staticmethod
    def from_batches(*args: Any, **kwargs: Any) -> Scanner:
        """Not supported: write the batches to a dataset, then scan it.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> batch = pa.record_batch({"id": [1, 2]})
        >>> ls.Scanner.from_batches([batch])
        Traceback (most recent call last):
        ...
        lance_semantic.errors.NotSupportedYetError: not supported yet by lance-semantic: \
Scanner.from_batches; write the batches to a dataset first
        >>> ls.write_dataset([batch], "t.lance").scanner().count_rows()
        2
        """
        raise NotSupportedYetError("Scanner.from_batches; write the batches to a dataset first")

    def __reduce__(self) -> tuple[Any, ...]:
        return (open_scanner, (self._ds, self._request))

    def __repr__(self) -> str:
        return (
            f"Scanner(uri={self._snap.uri!r}, version={self._snap.version}, "
            f"columns={self.projected_schema.names})"
        )

    def _run(self, batch_size: int | None, limit: int | None = None) -> Iterator[pa.RecordBatch]:
        request = replace(
            self._request,
            limit=self._request.limit if limit is None else limit,
            batch_size=batch_size,
        )
        return run_scan(
            self._snap.store,
            self._snap.semantic_schema,
            self._fragments,
            self._plan,
            request,
            index_section=row_address_indices(self._snap),
        )

    def _scalar_choice(self, *, count_only: bool = False) -> ScalarChoice | None:
        """How the filter is answered through the scalar indices (None: scanned): the
        indices used and the rows they select (what an explain would show); of a count
        with ``count_only``."""
        return scalar_choice(
            self._snap.store,
            self._snap.semantic_schema,
            self._fragments,
            self._plan,
            row_address_indices(self._snap),
            use_scalar_index=self._request.use_scalar_index,
            count_only=count_only,
        )


def row_address_indices(snapshot: Snapshot) -> bytes | None:
    """The index section of the scanned version when its indices hold row addresses: an
    index of a table with stable row ids holds row ids, not read yet, so its searches are
    exact and its filters scan (fast_search is refused: open_scanner)."""
    manifest = snapshot.manifest
    if manifest.reader_feature_flags & flags.FLAG_STABLE_ROW_IDS:
        return None
    return manifest.index_section


def make_scanner(
    ds: TableHandle,
    columns: Columns | None = None,
    filter: str | pc.Expression | None = None,
    limit: int | None = None,
    offset: int | None = None,
    *,
    batch_size: int | None = None,
    with_row_id: bool | None = False,
    with_row_address: bool | None = False,
    output_encodings: Mapping[str, str] | None = None,
    fragments: Sequence[LanceFragment] | None = None,
    nearest: object = None,
    use_scalar_index: object = None,
    full_text_query: object = None,
    **options: Any,
) -> Scanner:
    """A :class:`Scanner` of ``ds`` at its current version (see ``Dataset.scanner``).

    ``nearest`` (with ``prefilter`` / ``fast_search``) is checked against the table's
    schema once, into the request's :class:`~lance_semantic.vector.NearestQuery`;
    ``full_text_query`` (a string, a ``{"query", "columns"}`` dict or a query of
    :mod:`lance_semantic.fts`) into its :class:`~lance_semantic.fts.TextSearch`."""
    options = dict(options)
    prefilter = options.pop("prefilter", None)
    fast_search = options.pop("fast_search", None)
    for name, flag in (("prefilter", prefilter), ("fast_search", fast_search)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {flag!r}")
    _check_options(options)
    request = scan_request(
        columns,
        filter,
        limit,
        offset,
        batch_size=batch_size,
        with_row_id=with_row_id,
        with_row_address=with_row_address,
        output_encodings=output_encodings,
        fragments=fragments,
        use_scalar_index=use_scalar_index,
    )
    if nearest is not None:
        query = nearest_query(
            nearest, ds._snapshot().schema, prefilter=prefilter, fast_search=fast_search
        )
        request = replace(request, nearest=query)
    if full_text_query is not None:
        if nearest is not None:
            raise ValueError("a scan cannot hold both nearest and full_text_query")
        snap = ds._snapshot()
        indexed = inverted_columns(snap.semantic_schema, snap.manifest.index_section)
        parsed = parse_full_text_query(full_text_query, indexed)
        if row_address_indices(snap) is None and set(parsed.columns) & set(indexed):
            raise NotSupportedYetError(
                "full text search through the INVERTED index of a table with stable row "
                "ids (its index holds row ids, not read yet)"
            )
        text = TextSearch(parsed, prefilter=bool(prefilter), fast_search=bool(fast_search))
        request = replace(request, full_text_query=text)
    return open_scanner(ds, request)


def _indexed_stable_row_ids(snapshot: Snapshot, column: str) -> None:
    """``fast_search`` on an indexed column of a table with stable row ids: its index holds
    row ids, which are not read yet (without fast_search such a search is exact)."""
    manifest = snapshot.manifest
    if not manifest.reader_feature_flags & flags.FLAG_STABLE_ROW_IDS:
        return
    if snapshot.semantic_schema.field(column).id in index_field_ids(manifest.index_section):
        raise NotSupportedYetError(
            f"fast_search=True on the indexed column {column!r} of a table with stable row "
            "ids (its index holds row ids, not read yet; without fast_search the search "
            "is exact)"
        )


def open_scanner(ds: TableHandle, request: ScanRequest) -> Scanner:
    """A :class:`Scanner` of ``ds`` at its current version for a checked ``request`` (how a
    pickled scanner is made again)."""
    handle = ds.__copy__()  # later commits through ``ds`` do not move the scan
    snapshot = handle._snapshot()
    manifest = snapshot.manifest
    if request.with_row_id and manifest.reader_feature_flags & flags.FLAG_STABLE_ROW_IDS:
        raise NotSupportedYetError(
            "with_row_id=True on a table with stable row ids (their row id sequences are "
            "not read); with_row_address=True gives each row's address"
        )
    if request.nearest is not None and request.nearest.fast_search:
        _indexed_stable_row_ids(snapshot, request.nearest.column)
    frags = _fragments(manifest.fragments, request.fragments)
    plan = plan_scan(snapshot.semantic_schema, request, flagged=snapshot.semantic_types)
    taken = plan.result_schema.names
    for name in request.row_columns:
        if name in taken:
            raise ValueError(f"columns already hold a column named {name!r}")
    return Scanner(handle, request, plan, frags)


def _check_options(options: Mapping[str, Any]) -> None:
    """pylance's other scanner options: tuning ones are ignored, those of features not here
    are refused unless left at their default, unknown names are a ``TypeError``."""
    for name, value in options.items():
        if name in _TUNING:
            continue
        if name in _UNSUPPORTED:
            if value is None or value is False:
                continue
            raise NotSupportedYetError(_UNSUPPORTED[name])
        if name == "blob_handling":
            if value is None or value == _BLOB_HANDLING_DEFAULT:
                continue
            raise NotSupportedYetError(
                f"blob_handling={value!r} (blob columns read as pylance's descriptors, "
                f"'{_BLOB_HANDLING_DEFAULT}'; their bytes through Dataset.take_blobs)"
            )
        raise TypeError(f"scanner() got an unexpected keyword argument {name!r}")


def _fragments(
    all_fragments: Sequence[Fragment], chosen: Sequence[object] | None
) -> list[Fragment]:
    """The fragments to scan: all of them, or those of ``chosen`` (of this version)."""
    if chosen is None:
        return list(all_fragments)
    by_id = {f.id: f for f in all_fragments}
    out = []
    for f in chosen:
        fid = getattr(f, "fragment_id", None)
        if not isinstance(fid, int) or fid not in by_id:
            raise ValueError(f"fragments must hold fragments of this dataset version, got {f!r}")
        out.append(by_id[fid])
    return out


def _take(
    arr: pa.Array | pa.ChunkedArray, rows: pa.Array, field: pa.Field
) -> pa.Array | pa.ChunkedArray:
    """``arr.take(rows)``, for view layouts too: Arrow has no take kernel for views, so
    those are taken in their kernel layout and converted back (values unchanged)."""
    if not has_view(field.type):
        return arr.take(rows)
    taken = to_kernel_layout(arr, field.name).take(rows)
    if isinstance(taken, pa.ChunkedArray):
        chunks = [to_layout(c, field.type, field.name) for c in taken.chunks]
        return pa.chunked_array(chunks, type=field.type)
    return to_layout(taken, field.type, field.name)
