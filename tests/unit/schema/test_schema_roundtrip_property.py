"""Property: TableSchema -> Arrow -> TableSchema is the identity; ids are pre-order."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from lance_semantic.schema.arrow import schema_from_arrow, schema_to_arrow
from lance_semantic.schema.field import TableSchema

LEAVES = [
    pa.null(),
    pa.bool_(),
    pa.int8(),
    pa.uint64(),
    pa.float16(),
    pa.float64(),
    pa.date32(),
    pa.date64(),
    pa.time32("ms"),
    pa.time64("ns"),
    pa.timestamp("s"),
    pa.timestamp("us", "UTC"),
    pa.timestamp("ns", "+05:30"),
    pa.duration("us"),
    pa.decimal128(7, 3),
    pa.decimal128(5, -2),
    pa.decimal256(50, 10),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.large_binary(),
    pa.string_view(),
    pa.binary(5),
    pa.list_(pa.float32(), 3),
    pa.list_(pa.list_(pa.int16(), 2), 2),
    pa.list_(pa.timestamp("ms", "America/New_York"), 2),
    pa.dictionary(pa.int16(), pa.string()),
    pa.dictionary(pa.uint8(), pa.int64(), ordered=True),
    pa.uuid(),
]
NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=4)
METADATA = st.one_of(
    st.none(),
    st.dictionaries(
        st.text(alphabet="kmé:", min_size=1, max_size=3), st.text(max_size=3), max_size=2
    ),
)


@st.composite
def fields(draw: st.DrawFn, types: st.SearchStrategy[pa.DataType]) -> pa.Field:
    dt = draw(types)
    nullable = pa.types.is_null(dt) or draw(st.booleans())  # null fields must be nullable
    return pa.field(draw(NAMES), dt, nullable, metadata=draw(METADATA))


def _nest(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    member_lists = st.lists(fields(children), max_size=3, unique_by=lambda f: f.name)
    structs = member_lists.map(pa.struct)
    return st.one_of(
        structs,
        fields(children).map(pa.list_),
        fields(children).map(pa.large_list),
        st.tuples(fields(structs), st.integers(1, 3)).map(lambda t: pa.list_(t[0], t[1])),
        st.tuples(st.sampled_from([pa.string(), pa.int32()]), children, st.booleans()).map(
            lambda t: pa.map_(t[0], pa.field("value", t[1], t[2] or pa.types.is_null(t[1])))
        ),
    )


TYPES = st.recursive(st.sampled_from(LEAVES), _nest, max_leaves=8)
SCHEMAS = st.builds(
    pa.schema,
    st.lists(fields(TYPES), min_size=1, max_size=4, unique_by=lambda f: f.name),
    METADATA,
)


@settings(max_examples=150, deadline=None)
@given(SCHEMAS)
def test_table_schema_survives_an_arrow_round_trip(schema: pa.Schema) -> None:
    ts = schema_from_arrow(schema)
    arrow = schema_to_arrow(ts)
    assert schema_from_arrow(arrow) == ts
    assert schema_to_arrow(schema_from_arrow(arrow)).equals(arrow, check_metadata=True)


@settings(max_examples=100, deadline=None)
@given(SCHEMAS, st.integers(0, 1000))
def test_ids_are_pre_order_and_parents_consistent(schema: pa.Schema, first_id: int) -> None:
    ts = schema_from_arrow(schema, first_id=first_id)
    flat = ts.flatten()
    assert [f.id for f in flat] == list(range(first_id, first_id + len(flat)))
    for f in flat:
        for child in f.children:
            assert child.parent_id == f.id
            assert child.path == f"{f.path}.{child.name}"
    assert all(f.parent_id == -1 and f.path == f.name for f in ts.fields)
    rebuilt = TableSchema.from_flat(flat, ts.metadata)
    assert rebuilt == ts
