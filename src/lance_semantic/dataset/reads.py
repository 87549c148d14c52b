"""The read verbs of ``Dataset`` (layer L5): ``to_table``, ``to_batches``, ``take``,
``take_blobs``, ``count_rows``, ``sample``, ``head``, fragments and scanners.

Reads never move the handle: their keywords become one ``ScanRequest``
(``core.scan_request``), planned against the version the handle is at (``read.plan_scan``)
and run over that version's fragments (``read.run_scan``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np
import pyarrow as pa

from ..errors import ReadError
from ..fts import FullTextQuery
from ..read import (
    Columns,
    Filter,
    FragmentReader,
    ScanPlan,
    ScanRequest,
    plan_scan,
    run_scan,
    take_rows,
)
from ..storage import BlobFile
from .blobs import take_blobs
from .core import arguments as args
from .core import scan_request
from .fragment import LanceFragment
from .handle import Handle
from .scanner import TABLE_BATCH, Scanner, make_scanner, row_address_indices

__all__ = ["Reads"]


class Reads(Handle):
    """The read verbs of a ``Dataset``."""

    def get_fragments(self) -> list[LanceFragment]:
        """The fragments of this version, in table order (each write adds at least one).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [3]}))
        >>> [(f.fragment_id, f.count_rows()) for f in ds.get_fragments()]
        [(0, 2), (1, 1)]
        """
        return [LanceFragment(self, f) for f in self._manifest.fragments]

    def get_fragment(self, fragment_id: int) -> LanceFragment | None:
        """The fragment with id ``fragment_id``, or None if this version has none.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> ds.get_fragment(0), ds.get_fragment(7)
        (LanceFragment(id=0, physical_rows=2), None)
        """
        wanted = args.check_int("fragment_id", fragment_id)
        found = [f for f in self._manifest.fragments if f.id == wanted]
        return LanceFragment(self, found[0]) if found else None

    def count_rows(self, filter: Filter | None = None) -> int:
        """How many rows the version has, or how many match ``filter`` (as for
        :meth:`to_table`). Without a filter only the fragments' counts are read.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> ds.count_rows(), ds.count_rows("id > 1")
        (3, 2)
        """
        if filter is None:
            schema = self.semantic_schema
            return sum(
                FragmentReader(self._store, schema, f, [], pa.schema([])).live_rows()
                for f in self._manifest.fragments
            )
        return sum(b.num_rows for b in self.to_batches(columns=[], filter=filter))

    def to_batches(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        *,
        fragments: Sequence[LanceFragment] | None = None,
        **scanner_options: Any,
    ) -> Iterator[pa.RecordBatch]:
        """Stream the rows as record batches of at most ``batch_size`` rows.

        The arguments are those of :meth:`to_table`; ``fragments`` restricts the read to
        some fragments of this version (:meth:`get_fragments`); other :meth:`scanner`
        options (``with_row_id``, ...) pass through to a scanner, as in pylance. Rows are
        read as the iterator is consumed.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3, 4, 5]}), "t.lance")
        >>> [b.num_rows for b in ds.to_batches(batch_size=2)]
        [2, 2, 1]
        >>> [b["id"].to_pylist() for b in ds.to_batches(filter="id > 3")]
        [[4, 5]]
        """
        if scanner_options:
            return self.scanner(
                columns,
                filter,
                limit,
                offset,
                batch_size=batch_size,
                output_encodings=output_encodings,
                fragments=fragments,
                **scanner_options,
            ).to_batches()
        request = scan_request(
            columns,
            filter,
            limit,
            offset,
            batch_size=batch_size,
            output_encodings=output_encodings,
            fragments=fragments,
        )
        return self._scan(request)[1]

    def _scan(
        self, request: ScanRequest, default_batch: int | None = None
    ) -> tuple[ScanPlan, Iterator[pa.RecordBatch]]:
        """The plan of a read and its stream of output batches (``default_batch`` rows per
        batch when the request gives no ``batch_size``); the request's fragments are those
        given (``LanceFragment`` handles), read as they are."""
        plan = self._plan(request)
        chosen = request.fragments
        frags = (
            self._manifest.fragments
            if chosen is None
            else [cast(LanceFragment, f)._fragment for f in chosen]
        )
        if request.batch_size is None and default_batch is not None:
            request = replace(request, batch_size=default_batch)
        indices = row_address_indices(self._snapshot())
        stream = run_scan(
            self._store, self.semantic_schema, frags, plan, request, index_section=indices
        )
        return plan, stream

    def to_table(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        output_encodings: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        **scanner_options: Any,
    ) -> pa.Table:
        """Read the rows into one ``pyarrow.Table``.

        Parameters
        ----------
        columns : list of str or dict of str to str, optional
            The columns to return, in this order (default: every column). Either field
            paths, a nested field giving a flat column named by its path (``"st.x"``), or a
            mapping of output names to SQL expressions over the table's columns
            (``{"id": "id", "twice": "id * 2"}``), as in pylance. ``[]`` returns the
            rows without columns.
        filter : str or pyarrow.compute.Expression, optional
            Keep the rows for which it is true (null counts as false). A string is one SQL
            expression in Lance's dialect, DataFusion's, which evaluates it:

            * comparisons ``=``, ``<>`` (``!=``), ``<``, ``<=``, ``>``, ``>=``, combined
              with ``AND``, ``OR``, ``NOT`` and brackets;
            * ``id IN (1, 3)``, ``id NOT IN (...)``, ``id BETWEEN 2 AND 3``,
              ``name LIKE 'b%'`` (``ILIKE``: any case), ``name IS NULL``,
              ``name IS NOT NULL``, and DataFusion's functions (``lower(name) = 'ant'``);
            * struct fields by their dotted path: ``st.x > 2``;
            * literals keep their type, as in pylance: a literal that a column's type
              cannot hold unchanged is refused, not cast (``id > '3'`` or ``id > 2.5`` on
              an integer column is an ``InvalidExpressionError``); dates and times are
              typed literals: ``day = date '2020-01-31'``,
              ``ts > timestamp '2020-01-01 13:00:00'``.

            Anything but exactly one expression (``1=0 UNION SELECT 3``, ``; DELETE``) is
            refused. A ``pyarrow.compute.Expression`` (``pc.field("id") > 2``,
            ``pc.field("st", "x") > 2``) is evaluated by Arrow. Either way the filter's
            columns are read first and the others only for the rows it keeps.
        limit, offset : int, optional
            Skip the first ``offset`` rows that pass the filter, then return at most
            ``limit`` rows (in table order).
        output_encodings : dict of str to str, optional
            The Arrow layout to return, by field path (``"name"``, nested ``"st.y"``, list
            items ``"l.item"``, map parts ``"m.key"`` / ``"m.value"``). For this read it
            takes precedence over the field's stored entry (recorded when the column was
            created from another layout, or by :meth:`set_output_encoding`), which takes
            precedence over the semantic type's default. The names:

            - string: ``utf8`` (default), ``large_utf8``, ``utf8_view``,
              ``dictionary:<key>:<value>``;
            - binary: ``binary`` (default), ``large_binary``, ``binary_view``,
              ``dictionary:<key>:<value>``;
            - list: ``list`` (default), ``large_list``;
            - decimal: ``decimal128`` (default up to precision 38), ``decimal256``;
            - json: ``arrow.json`` (default), ``lance.json`` (the JSONB bytes).

            ``<key>`` is ``int8`` ... ``int64`` or ``uint8`` ... ``uint64``, ``<value>`` a
            plain layout of the family (``utf8`` / ``large_utf8``, ``binary`` /
            ``large_binary``). Other types have one layout and take none, and so do
            legacy tables (without semantic types).
        batch_size : int, optional
            Rows per batch read (default 262,144); the result is the same table.
        **scanner_options
            Other :meth:`scanner` options (``with_row_id=True``, ...) pass through to a
            scanner, as in pylance.

        Returns
        -------
        pyarrow.Table

        Raises
        ------
        InvalidExpressionError
            The filter or a projection is not one valid expression, the filter is not
            boolean, or it compares a column with a literal of another type.
        ColumnNotFoundError
            A column or field path the table does not have.
        InvalidOutputEncodingError
            An output encoding invalid for its field, for a field that does not exist, or
            on a legacy table.
        OutputEncodingOverflowError
            A value the requested layout cannot hold (2 GiB of text as ``utf8``).
        TypeError, ValueError
            An argument of the wrong type, a negative ``limit`` or ``offset``,
            ``batch_size=0``.

        Examples
        --------
        >>> import datetime, pyarrow as pa, pyarrow.compute as pc, lance_semantic as ls
        >>> data = pa.table({
        ...     "id": [1, 2, 3, 4],
        ...     "name": ["ant", "bee", None, "cat"],
        ...     "day": [datetime.date(2020, 1, d) for d in (1, 15, 31, 31)],
        ...     "st": [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}],
        ... })
        >>> ds = ls.write_dataset(data, "t.lance", data_storage_version="2.3")
        >>> ds.to_table(columns=["id", "st.x"], filter="id > 2").to_pydict()
        {'id': [3, 4], 'st.x': [3, 4]}
        >>> ds.to_table(columns={"id": "id", "twice": "id * 2"}, limit=2).to_pydict()
        {'id': [1, 2], 'twice': [2, 4]}
        >>> def ids(f):
        ...     return ds.to_table(columns=["id"], filter=f)["id"].to_pylist()
        >>> ids("id >= 2 AND name <> 'cat'"), ids("id = 1 OR NOT (id < 4)")
        ([2], [1, 4])
        >>> ids("id IN (1, 3)"), ids("id BETWEEN 2 AND 3"), ids("name LIKE 'b%'")
        ([1, 3], [2, 3], [2])
        >>> ids("name IS NULL"), ids("st.x > 2"), ids("day = date '2020-01-31'")
        ([3], [3, 4], [3, 4])
        >>> ids(pc.field("id") > 2), ids(pc.field("st", "x") < 2)
        ([3, 4], [1])
        >>> ids("id > '3'")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidExpressionError: invalid SQL expression "id > '3'": \
the literal '3' (Utf8) cannot be compared with column 'id' of type int64 without changing \
its value; pylance refuses it too: use a literal of the column's type
        >>> ds.to_table(columns=["id"], offset=1, limit=2)["id"].to_pylist()
        [2, 3]
        >>> ds.to_table(batch_size=1).equals(ds.to_table())  # smaller reads, the same table
        True

        Output encodings: the type's default, the field's entry, the request's override.

        >>> data = pa.table({"s": pa.array(["a"], pa.large_string()), "t": ["b"]})
        >>> ds = ls.write_dataset(data, "enc.lance", data_storage_version="2.3")
        >>> ds.semantic_schema.field("s").output_encoding  # recorded from the input
        'large_utf8'
        >>> ds.to_table().schema.types
        [DataType(large_string), DataType(string)]
        >>> ds.to_table(output_encodings={"s": "utf8_view", "t": "dictionary:int8:utf8"}).schema
        s: string_view
        t: dictionary<values=string, indices=int8, ordered=0>
        >>> ds.to_table(output_encodings={"t": "large_list"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lance_semantic.errors.InvalidOutputEncodingError: field 't': invalid output encoding \
'large_list': large_list is an output encoding of list, not of string (valid: utf8, ...)
        """
        if scanner_options:
            return self.scanner(
                columns,
                filter,
                limit,
                offset,
                batch_size=batch_size,
                output_encodings=output_encodings,
                **scanner_options,
            ).to_table()
        request = scan_request(
            columns, filter, limit, offset, batch_size=batch_size, output_encodings=output_encodings
        )
        plan, batches = self._scan(request, default_batch=TABLE_BATCH)
        return pa.Table.from_batches(list(batches), schema=plan.output_schema)

    def take(
        self,
        indices: Sequence[int] | np.ndarray | pa.Array,
        columns: Columns | None = None,
        output_encodings: Mapping[str, str] | None = None,
    ) -> pa.Table:
        """Rows at ``indices`` (offsets among the live rows, in the order given), with
        ``columns`` and ``output_encodings`` as for :meth:`to_table`; a nested path keeps
        its enclosing struct (``st.y`` gives ``st: struct<y>``), as pylance's ``take``.

        Raises
        ------
        ReadError
            An index beyond the live rows.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> ds.take([2, 0]).to_pydict()
        {'id': [3, 1], 's': ['c', 'a']}
        >>> ds.take([1], columns=["s"]).to_pydict()
        {'s': ['b']}
        """
        idx = args.check_row_indices("indices", indices)
        if isinstance(columns, list | tuple):  # pylance's take keeps one of each
            columns = list(dict.fromkeys(columns))
        plan = self._plan(scan_request(columns, output_encodings=output_encodings))
        readers = [
            FragmentReader(self._store, self.semantic_schema, f, plan.top_fields, plan.read_schema)
            for f in self._manifest.fragments
        ]
        live = np.array([r.live_rows() for r in readers], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(live)])
        total = int(starts[-1])
        if len(idx) and (idx.min() < 0 or idx.max() >= total):
            bad = int(idx[(idx < 0) | (idx >= total)][0])
            raise ReadError(f"take index {bad} is out of range for {total} rows")
        return take_rows(readers, starts[:-1].tolist(), idx, plan)

    def take_blobs(
        self,
        blob_column: str,
        ids: Sequence[int] | np.ndarray | pa.Array | None = None,
        addresses: Sequence[int] | np.ndarray | pa.Array | None = None,
        indices: Sequence[int] | np.ndarray | pa.Array | None = None,
    ) -> list[BlobFile | None]:
        """Seekable, read-only file objects over the bytes of ``blob_column`` at ``indices``
        (offsets among the live rows), row ``ids`` or row ``addresses`` (the same thing
        without stable row ids), in the order given; None for null values (like pylance).

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> blob = pa.field("clip", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
        >>> data = pa.table({"clip": [b"hello world", None]}, schema=pa.schema([blob]))
        >>> ds = ls.write_dataset(data, "clips.lance")
        >>> first, missing = ds.take_blobs("clip", indices=[0, 1])
        >>> first.size(), first.read(5), missing
        (11, b'hello', None)
        >>> with ds.take_blobs("clip", ids=[0])[0] as f:
        ...     _ = f.seek(6)
        ...     f.read()
        b'world'
        """
        args.check_str("blob_column", blob_column)
        for name, value in (("ids", ids), ("addresses", addresses), ("indices", indices)):
            if value is not None:
                args.check_row_indices(name, value)
        return take_blobs(
            self._store,
            self._manifest,
            blob_column,
            indices=indices,
            addresses=addresses if addresses is not None else ids,
        )

    def sample(
        self, num_rows: int, columns: Columns | None = None, randomize_order: bool = True
    ) -> pa.Table:
        """``num_rows`` distinct random rows, drawn as pylance draws them (Python's
        ``random.sample``, so ``random.seed`` makes it repeatable); in row order when not
        ``randomize_order``.

        >>> import random, pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3, 4]}), "t.lance")
        >>> random.seed(1)
        >>> ds.sample(2, randomize_order=False).num_rows
        2
        >>> ds.sample(5)
        Traceback (most recent call last):
        ...
        ValueError: num_rows (5) is larger than the table's 4 rows
        """
        n = args.check_int("num_rows", num_rows)
        ordered = not args.check_bool("randomize_order", randomize_order)
        total = self.count_rows()
        if n > total:
            raise ValueError(f"num_rows ({n}) is larger than the table's {total} rows")
        indices = random.sample(range(total), n)
        return self.take(sorted(indices) if ordered else indices, columns)

    def _plan(self, request: ScanRequest) -> ScanPlan:
        """The plan of a checked request against this version."""
        return plan_scan(self.semantic_schema, request, flagged=self.semantic_types)

    def scanner(
        self,
        columns: Columns | None = None,
        filter: Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        batch_size: int | None = None,
        with_row_id: bool | None = False,
        with_row_address: bool | None = False,
        output_encodings: Mapping[str, str] | None = None,
        fragments: Sequence[LanceFragment] | None = None,
        nearest: Mapping[str, Any] | None = None,
        use_scalar_index: bool | None = None,
        full_text_query: str | Mapping[str, Any] | FullTextQuery | None = None,
        **options: Any,
    ) -> Scanner:
        """A :class:`~lance_semantic.Scanner` of this version: ``to_table()``,
        ``to_batches()``, ``to_reader()`` (streaming), ``count_rows()``, ``projected_schema``.

        ``with_row_id`` adds ``_rowid`` (uint64, ``fragment id << 32 | row offset``),
        ``with_row_address`` ``_rowaddr``. pylance's tuning options (``batch_readahead``,
        ``scan_in_order``, ...) are accepted and ignored; those of features not here
        (``order_by``, ...) raise ``NotSupportedYetError`` unless left at their
        default; other names are a ``TypeError``. ``columns``, ``filter``, ``limit``,
        ``offset``, ``batch_size`` and ``output_encodings`` are those of :meth:`to_table`;
        ``fragments`` restricts the scan to some fragments.

        A ``filter`` is answered through the table's BTREE / BITMAP / LABEL_LIST indices
        (pylance's) where they select few rows: only those rows are read, and the result is
        the same rows in the same order as a scan; ``use_scalar_index=False`` always scans.

        ``nearest`` is pylance's vector search dictionary (``column``, ``q``, ``k`` = 10,
        ``metric`` = ``"l2"`` | ``"cosine"`` | ``"dot"`` | ``"hamming"``, ``nprobes``,
        ``refine_factor``, ``distance_range``, ...; see
        :func:`~lance_semantic.vector.nearest_query`): the ``k`` nearest rows, nearest
        first, with a float32 ``_distance`` column after ``columns`` (``query_index``
        first for a 2-D ``q``: one result set per query). ``prefilter=True``: the ``k``
        nearest rows that pass ``filter``; ``prefilter=False`` (the default): the ``k``
        nearest, then the filter. ``limit`` / ``offset`` apply to the result. The search
        is exact (flat), also on a table with a vector index; ``fast_search=True`` (only
        indexed rows) returns no rows on a column without an index, as pylance.

        ``full_text_query`` searches the INVERTED indices (pylance's or ours) with BM25, as
        pylance scores: a string (its tokens over every indexed column; in double quotes a
        phrase), pylance's dict ``{"query": ..., "columns": [...]}``, or a query of
        :mod:`lance_semantic.fts` (``MatchQuery``, ``PhraseQuery``, ``MultiMatchQuery``,
        ``BooleanQuery``, ``BoostQuery``, with pylance's names and arguments). The matching
        rows come best first with a float32 ``_score`` after ``columns`` (every match
        without ``limit``); ``prefilter`` and ``fast_search`` as for ``nearest``; rows the
        index does not cover and columns without an index are searched flat, as pylance.
        ``to_table`` / ``to_batches`` take the same keywords.

        Examples
        --------
        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), "t.lance")
        >>> sc = ds.scanner(columns=["s"], filter="id > 1", with_row_id=True)
        >>> sc.projected_schema
        s: string
        _rowid: uint64
        >>> sc.to_table().to_pydict(), sc.count_rows()
        ({'s': ['b', 'c'], '_rowid': [1, 2]}, 2)

        Vector search:

        >>> vectors = pa.array([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]], pa.list_(pa.float32(), 2))
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3], "v": vectors}), "v.lance")
        >>> ds.scanner(columns=["id"], nearest={"column": "v", "q": [3.0, 3.0], "k": 2}).to_table()
        pyarrow.Table
        id: int64
        _distance: float
        ----
        id: [[3,2]]
        _distance: [[1,8]]
        >>> ds.to_table(columns=["id"], filter="id < 3", prefilter=True,
        ...             nearest={"column": "v", "q": [3.0, 3.0], "k": 1})["id"].to_pylist()
        [2]
        >>> ds.scanner(nearest={"column": "v", "q": [1.0], "k": 1})
        Traceback (most recent call last):
        ...
        ValueError: nearest q: query vector size 1 does not match the 2 dimensions of column 'v'
        """
        return make_scanner(
            self,
            columns,
            filter,
            limit,
            offset,
            batch_size=batch_size,
            with_row_id=with_row_id,
            with_row_address=with_row_address,
            output_encodings=output_encodings,
            fragments=fragments,
            nearest=nearest,
            use_scalar_index=use_scalar_index,
            full_text_query=full_text_query,
            **options,
        )

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.scanner().__arrow_c_stream__(requested_schema)

    def head(self, num_rows: int, **kwargs: Any) -> pa.Table:
        """The first ``num_rows`` rows (``kwargs`` as for :meth:`scanner`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance")
        >>> ds.head(2).to_pydict(), ds.head(1, filter="id > 1").to_pydict()
        ({'id': [1, 2]}, {'id': [2]})
        """
        return self.scanner(**kwargs).head(num_rows)
