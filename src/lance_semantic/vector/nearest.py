"""pylance's ``nearest`` dictionary, checked once into a frozen :class:`NearestQuery` (layer
L3).

The keys are those of pylance 14's ``ScannerBuilder.nearest``: ``column``, ``q``, ``k``
(default 10), ``metric`` (default ``l2``; ``hamming`` for ``uint8`` vectors), ``nprobes``,
``minimum_nprobes``, ``maximum_nprobes``, ``refine_factor``, ``use_index``, ``ef``,
``query_parallelism``, ``approx_mode``, ``search_effort`` and ``distance_range``; the scan
options ``prefilter`` and ``fast_search`` travel with them. Each bad value gets pylance's
error class (measured against pylance 14.0.2) and a message naming the argument.

>>> import pyarrow as pa
>>> schema = pa.schema([("id", pa.int64()), ("v", pa.list_(pa.float32(), 2))])
>>> query = nearest_query({"column": "v", "q": [1.0, 0.0], "k": 3}, schema)
>>> query.k, query.metric, query.queries.shape, query.batch
(3, 'l2', (1, 2), False)
>>> nearest_query({"column": "v", "q": [1.0], "k": 3}, schema)
Traceback (most recent call last):
...
ValueError: nearest q: query vector size 1 does not match the 2 dimensions of column 'v'
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import NotSupportedYetError
from .metrics import Metric, canonical_metric

__all__ = ["NearestQuery", "nearest_query", "QUERY_INDEX", "DISTANCE", "NEAREST_KEYS"]

#: the column a 2-D ``q`` adds first (int32, not null): which query a row answers
QUERY_INDEX = "query_index"
#: the distance column (float32) every nearest result has
DISTANCE = "_distance"
#: the keys pylance 14's ``nearest`` takes
NEAREST_KEYS = (
    "column",
    "q",
    "k",
    "metric",
    "nprobes",
    "minimum_nprobes",
    "maximum_nprobes",
    "refine_factor",
    "use_index",
    "ef",
    "query_parallelism",
    "approx_mode",
    "distance_range",
    "search_effort",
)
_APPROX_MODES = ("fast", "normal", "accurate")
_ELEMENTS = {"halffloat": "float16", "float": "float32", "double": "float64", "uint8": "uint8"}


@dataclass(frozen=True, slots=True, eq=False)
class NearestQuery:
    """One checked ``nearest`` request.

    ``queries`` holds the query vectors as a read-only ``(n, dim)`` array (float32, or
    uint8 for hamming); ``batch`` says ``q`` was 2-D (one result set per query, with a
    ``query_index`` column), as pylance. ``column`` is the vector column's name,
    ``element`` its values' type (``float16`` / ``float32`` / ``float64`` / ``uint8``).
    The IVF / HNSW knobs (``nprobes`` ... ``search_effort``) are kept for index search;
    an exact (flat) search does not need them."""

    column: str
    queries: np.ndarray
    batch: bool
    element: str
    k: int = 10
    metric: Metric = "l2"
    nprobes: int | None = None
    minimum_nprobes: int | None = None
    maximum_nprobes: int | None = None
    refine_factor: int | None = None
    use_index: bool = True
    ef: int | None = None
    query_parallelism: int | None = None
    approx_mode: str = "normal"
    search_effort: float | None = None
    distance_range: tuple[float | None, float | None] | None = None
    prefilter: bool = False
    fast_search: bool = False
    #: ``metric`` was given: without it a search through an index uses the index's metric
    #: (pylance's), with it another metric than the index's searches flat
    metric_given: bool = False

    @property
    def dim(self) -> int:
        """The vectors' dimension."""
        return int(self.queries.shape[1])


def nearest_query(
    nearest: object, schema: pa.Schema, *, prefilter: object = None, fast_search: object = None
) -> NearestQuery:
    """Check pylance's ``nearest`` dictionary against the table's Arrow ``schema`` (as reads
    return it) and the scan's ``prefilter`` / ``fast_search``.

    Raises
    ------
    TypeError
        ``nearest`` not a dict, an unknown or missing key, a value of the wrong type, a
        column that is not a vector.
    ValueError
        A column the table does not have, ``q`` of the wrong dimension, ``k <= 0``,
        ``nprobes <= 0``, an unknown metric or one the vectors' type has not, ...
    NotSupportedYetError
        A multivector column (``list<fixed_size_list>``).
    """
    if not isinstance(nearest, Mapping):
        raise TypeError(f"nearest must be a dict of pylance's nearest keys, got {nearest!r}")
    for key in nearest:
        if key not in NEAREST_KEYS:
            raise TypeError(
                f"nearest got an unexpected key {key!r} (valid: {', '.join(NEAREST_KEYS)})"
            )
    for key in ("column", "q"):
        if key not in nearest:
            raise TypeError(f"nearest is missing the required key {key!r}")
    opts: Mapping[str, Any] = nearest
    queries, batch = _coerce_q(opts["q"])
    column = opts["column"]
    if not isinstance(column, str):
        raise TypeError(f"nearest column must be a column name (str), got {column!r}")
    element, dim = _vector_column(schema, column, batch)
    if queries.shape[1] != dim:
        raise ValueError(
            f"nearest q: query vector size {queries.shape[1]} does not match the {dim} "
            f"dimensions of column {column!r}"
        )
    k = _int("k", opts.get("k"), minimum=1, default=10) or 10
    search_effort = _effort(opts.get("search_effort"))
    nprobes = _int("nprobes", opts.get("nprobes"), minimum=1 if search_effort is None else None)
    min_np = _int("minimum_nprobes", opts.get("minimum_nprobes"), minimum=1)
    max_np = _int("maximum_nprobes", opts.get("maximum_nprobes"), minimum=0)
    if min_np is not None and max_np is not None and min_np > max_np:
        raise ValueError(
            f"nearest minimum_nprobes must be <= maximum_nprobes, got {min_np} > {max_np}"
        )
    refine = _int("refine_factor", opts.get("refine_factor"), minimum=1)
    ef = _int("ef", opts.get("ef"), minimum=1)
    parallelism = _int("query_parallelism", opts.get("query_parallelism"), minimum=-1)
    approx = opts.get("approx_mode", "normal")
    if approx not in _APPROX_MODES:
        raise ValueError(f"nearest approx_mode must be one of {_APPROX_MODES}, got {approx!r}")
    use_index = opts.get("use_index", True)
    if not isinstance(use_index, bool):
        raise TypeError(f"nearest use_index must be a bool, got {use_index!r}")
    metric = _metric(opts.get("metric"), element)
    if element == "uint8":
        queries = queries.astype(np.uint8)
    queries.setflags(write=False)
    return NearestQuery(
        column=column,
        queries=queries,
        batch=batch,
        element=element,
        k=k,
        metric=metric,
        nprobes=nprobes,
        minimum_nprobes=min_np,
        maximum_nprobes=max_np,
        refine_factor=refine,
        use_index=use_index,
        ef=ef,
        query_parallelism=parallelism,
        approx_mode=str(approx),
        search_effort=search_effort,
        distance_range=_distance_range(opts.get("distance_range")),
        prefilter=_flag("prefilter", prefilter),
        fast_search=_flag("fast_search", fast_search),
        metric_given=opts.get("metric") is not None,
    )


def _coerce_q(q: Any, inner: bool = False) -> tuple[np.ndarray, bool]:
    """``q`` as a float32 ``(n, dim)`` array and whether it was 2-D (pylance's rules: a
    list / tuple / array / Arrow array of numbers, or a sequence of them; ``inner``: one
    vector of a batch, which cannot be a batch itself)."""
    if isinstance(q, pa.ChunkedArray):
        q = q.combine_chunks()
    if isinstance(q, pa.Scalar):
        if isinstance(q, pa.ExtensionScalar):
            q = q.value
        if not isinstance(q, pa.FixedSizeListScalar | pa.ListScalar):
            raise TypeError(f"nearest q must be a vector of numbers, got the scalar {q!r}")
        q = q.values
    if isinstance(q, pa.Array):
        if isinstance(q, pa.ExtensionArray):
            q = q.storage
        if pa.types.is_fixed_size_list(q.type) or pa.types.is_list(q.type):
            q = q.to_pylist()
        elif pa.types.is_floating(q.type) or pa.types.is_integer(q.type):
            if q.null_count:
                raise ValueError("nearest q must not hold nulls")
            q = q.to_numpy(zero_copy_only=False)
        else:
            raise TypeError(f"nearest q must be a vector of numbers, got Arrow type {q.type}")
    if isinstance(q, str | bytes) or not isinstance(q, list | tuple | np.ndarray):
        raise TypeError(
            f"nearest q must be a vector (list, numpy or Arrow array of numbers) or a 2-D "
            f"batch of them, got {type(q).__name__}"
        )
    if len(q) == 0:
        raise ValueError("nearest q is empty: give a vector, or a 2-D batch of vectors")
    first = q[0]
    batch = isinstance(first, list | tuple | np.ndarray | pa.Array)
    if batch and inner:
        raise ValueError("nearest q must be one vector or a 2-D batch of vectors, not deeper")
    if batch:
        rows = [_coerce_q(v, inner=True)[0][0] for v in q]
        dims = {len(r) for r in rows}
        if len(dims) > 1:
            raise ValueError(f"nearest q: all query vectors must have the same length, got {dims}")
        return np.stack(rows).astype(np.float32), True
    try:
        arr = np.asarray(q)
    except ValueError as e:
        raise ValueError(f"nearest q: {e}") from None
    if arr.ndim != 1 or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"nearest q must be a vector of numbers, got {arr.dtype} values")
    return arr.astype(np.float32).reshape(1, -1), False


def _vector_column(schema: pa.Schema, column: str, batch: bool) -> tuple[str, int]:
    """The element type and dimension of the vector column ``column`` of ``schema``."""
    if column not in schema.names:
        raise ValueError(f"nearest column {column!r} is not in the dataset")
    if batch and QUERY_INDEX in schema.names:
        raise ValueError(
            f"nearest q: a batch (2-D) search cannot be used on a table with a column named "
            f"{QUERY_INDEX!r} (as pylance)"
        )
    t = schema.field(column).type
    if isinstance(t, pa.ExtensionType):
        t = t.storage_type
    if pa.types.is_list(t) and pa.types.is_fixed_size_list(t.value_type):
        raise NotSupportedYetError(f"multivector search (nearest on column {column!r})")
    if not pa.types.is_fixed_size_list(t):
        raise TypeError(
            f"nearest column {column!r} must be a vector (fixed_size_list), got "
            f"{schema.field(column).type}"
        )
    value = t.value_type
    if isinstance(value, pa.ExtensionType):
        value = value.storage_type
    element = _ELEMENTS.get(str(value))
    if element is None:
        raise TypeError(
            f"nearest column {column!r} must hold float16, float32, float64 or uint8 "
            f"values, got {t.value_type}"
        )
    return element, int(t.list_size)


def _metric(metric: object, element: str) -> Metric:
    if metric is None:  # pylance's default: l2, hamming for binary vectors
        return "hamming" if element == "uint8" else "l2"
    name = canonical_metric(metric, argument="nearest metric")
    if (name == "hamming") != (element == "uint8"):
        raise ValueError(
            f"nearest metric: distance type {name} does not support {element} vectors"
            + (" (hamming takes uint8 vectors)" if name == "hamming" else "")
        )
    return name


def _int(
    name: str, value: object, *, minimum: int | None, default: int | None = None
) -> int | None:
    """An integer option: None is ``default``; pylance's classes for other values (a string
    that is no number: ValueError; a float: TypeError; below ``minimum``: ValueError)."""
    if value is None:
        return default
    if isinstance(value, str):
        raise ValueError(f"nearest {name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"nearest {name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ValueError(f"nearest {name} must be >= {minimum} but got {number}")
    return int(number)


def _effort(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"nearest search_effort must be a number in [0, 1], got {value!r}")
    effort = float(value)
    if not math.isfinite(effort) or not 0 <= effort <= 1:
        raise ValueError(f"nearest search_effort must be finite and in [0, 1], got {value!r}")
    return effort


def _distance_range(value: object) -> tuple[float | None, float | None] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise TypeError(
            f"nearest distance_range must be a tuple of (lower_bound, upper_bound), got {value!r}"
        )
    if len(value) != 2:
        raise ValueError("nearest distance_range must be a tuple of (lower_bound, upper_bound)")
    bounds: list[float | None] = []
    for b in value:
        if b is not None and (isinstance(b, bool) or not isinstance(b, int | float | np.number)):
            raise TypeError(f"nearest distance_range bounds must be numbers or None, got {b!r}")
        bounds.append(None if b is None else float(b))
    return bounds[0], bounds[1]


def _flag(name: str, value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return value
