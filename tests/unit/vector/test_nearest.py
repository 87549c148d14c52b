"""The nearest query: one frozen value of pylance's ``nearest`` keys, with pylance 14's
keys and defaults, and carried by the scan request (pickled with it)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import numpy as np
import pyarrow as pa
import pytest
from lance.dataset import ScannerBuilder

from lance_semantic.read import ScanRequest
from lance_semantic.vector import NEAREST_KEYS, NearestQuery, nearest_query

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("v", pa.list_(pa.float32(), 3)),
        ("h", pa.list_(pa.float16(), 3)),
        ("b", pa.list_(pa.uint8(), 2)),
        ("l", pa.list_(pa.float32())),
    ]
)


def test_the_keys_are_pylances() -> None:
    params = inspect.signature(ScannerBuilder.nearest).parameters
    assert sorted(NEAREST_KEYS) == sorted(n for n in params if n != "self")


def test_the_defaults_are_pylances() -> None:
    query = nearest_query({"column": "v", "q": [1, 2, 3]}, SCHEMA)
    params = inspect.signature(ScannerBuilder.nearest).parameters
    assert query.k == 10 and query.metric == "l2"
    for name in NEAREST_KEYS:
        if name in ("column", "q", "k", "metric"):
            continue
        assert getattr(query, name) == params[name].default, name
    assert query.prefilter is False and query.fast_search is False
    assert nearest_query({"column": "b", "q": [1, 2]}, SCHEMA).metric == "hamming"


def test_the_query_is_frozen_and_its_vectors_read_only() -> None:
    query = nearest_query({"column": "h", "q": np.array([[1, 2, 3], [4, 5, 6]])}, SCHEMA)
    assert query.batch and query.queries.shape == (2, 3) and query.dim == 3
    assert query.queries.dtype == np.float32 and query.element == "float16"
    with pytest.raises(dataclasses.FrozenInstanceError):
        query.k = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        query.queries[0, 0] = 9
    assert isinstance(query, NearestQuery) and not hasattr(query, "__dict__")


@pytest.mark.parametrize(
    "q",
    [
        [1.0, 2.0, 3.0],
        (1, 2, 3),
        np.array([1.0, 2.0, 3.0]),
        pa.array([1.0, 2.0, 3.0], pa.float64()),
        pa.array([1, 2, 3], pa.int32()),
        pa.scalar([1.0, 2.0, 3.0], pa.list_(pa.float32(), 3)),
    ],
)
def test_the_shapes_of_one_query(q: object) -> None:
    query = nearest_query({"column": "v", "q": q}, SCHEMA)
    assert not query.batch and query.queries.tolist() == [[1.0, 2.0, 3.0]]


def test_a_batch_of_queries_and_the_request() -> None:
    query = nearest_query(
        {"column": "v", "q": [[1, 2, 3], np.array([4, 5, 6])], "k": np.int64(2)},
        SCHEMA,
        prefilter=True,
    )
    assert query.batch and query.k == 2 and query.prefilter
    request = ScanRequest(columns=["id"], nearest=query)
    again = pickle.loads(pickle.dumps(request))
    assert again.nearest is not None and again.nearest.queries.tolist() == query.queries.tolist()
    assert ScanRequest().nearest is None


def test_a_list_column_is_not_a_vector() -> None:
    with pytest.raises(TypeError, match="'l' must be a vector"):
        nearest_query({"column": "l", "q": [1.0]}, SCHEMA)
