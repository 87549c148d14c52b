"""Support for the legacy twin machine of ``test_stateful_twins.py``: deterministic rows for
any schema the machine's operations reach, the input layouts pylance 14 accepts for an
append to a legacy table, and the comparison of two twin tables through both libraries.

Every value is a function of the row's id, a tag (which write made it) and the column's
Arrow type, so both twins get equal inputs and the shrunk examples read well.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import lance
import pyarrow as pa

import lance_semantic as ls
from lance_semantic.errors import LanceSemanticError

__all__ = [
    "SEED_SCHEMA",
    "APPEND_LAYOUTS",
    "Outcome",
    "attempt",
    "rows_for",
    "shaped",
    "twin_layout",
    "leaf_paths",
    "top_level",
    "canonical_rows",
    "field_ids_of_pylance",
    "field_ids_of_ours",
    "fragments_of",
    "assert_library_error",
    "assert_twins_agree",
    "assert_version_agrees",
    "log_operation",
]

STRUCT = pa.struct([("x", pa.int32()), ("y", pa.string())])

#: the twins' first schema: a non-nullable key, a non-nullable int (merge sources may lack
#: it), and a nullable column of each kind the legacy operations rewrite
SEED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("n", pa.int32(), nullable=False),
        pa.field("a", pa.int32()),
        pa.field("s", pa.string()),
        pa.field("ls", pa.large_string()),
        pa.field("f", pa.float64()),
        pa.field("bn", pa.binary()),
        pa.field("st", STRUCT),
        pa.field("l", pa.list_(pa.int64())),
    ],
    metadata={"owner": "stateful"},
)

#: the shapes of one append's input that pylance 14 takes on a legacy table (same Arrow
#: types): a table, its columns in another order, without some nullable columns, struct
#: children in another order, a reader of small batches, one batch, a list of batches with
#: the schema, a table of several chunks, a schema calling the non-nullable fields nullable;
#: and ``mixed_order``, batches of one write in different column orders, which we take as one
#: write in the first batch's order (README, Compatibility) and pylance 14 refuses: its twin
#: gets the same batches in one order (``twin_layout``)
APPEND_LAYOUTS = (
    "table",
    "reordered",
    "subset",
    "struct_permuted",
    "reader",
    "batch",
    "batches",
    "chunked",
    "nullable_schema",
    "mixed_order",
)


# ---- values ------------------------------------------------------------------------------------


def _int_value(t: pa.DataType, i: int, tag: int, big: bool) -> int:
    width = t.bit_width
    if pa.types.is_unsigned_integer(t):
        top = 2**width - 1
        return top - (i % 50) if big else (i * 7 + tag * 3) % 200
    top = 2 ** (width - 1) - 1
    return top - (i % 50) if big else (i * 7 + tag * 13) % 97 - 40


def _scalar(t: pa.DataType, name: str, i: int, tag: int, big: bool) -> Any:
    if pa.types.is_integer(t):
        return _int_value(t, i, tag, big)
    if pa.types.is_floating(t):
        return (i % 50) * 0.25 + tag
    if pa.types.is_boolean(t):
        return (i + tag) % 3 == 0
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return f"{name}{tag}:{i}"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return f"{name}{tag}:{i}".encode()
    if pa.types.is_dictionary(t):
        return f"{name}{(i + tag) % 3}"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_scalar(t.value_type, name, i + k, tag, big) for k in range((i + tag) % 3)]
    if pa.types.is_struct(t):
        return {
            t.field(k).name: _value(t.field(k), i, tag, big, depth=1) for k in range(t.num_fields)
        }
    raise AssertionError(f"no values for {t}")


def _value(field: pa.Field, i: int, tag: int, big: bool, depth: int = 0) -> Any:
    # nulls on every fifth row (shifted per depth), only where the field allows them
    if pa.types.is_null(field.type):
        return None
    if field.nullable and (i + tag + depth * 2) % 5 == 0:
        return None
    return _scalar(field.type, field.name, i, tag, big)


def rows_for(
    schema: pa.Schema, ids: Iterable[int], tag: int, *, big: bool = False, struct_nulls: bool
) -> pa.Table:
    """Rows of ``schema`` for ``ids``; ``tag`` changes every non-key value, ``big`` puts
    integers near their type's maximum (a narrowing cast of them fails), ``struct_nulls``
    whether a nullable struct may be null itself (data storage 2.0 refuses that)."""
    ids = list(ids)
    columns: list[pa.Array] = []
    for field in schema:
        if field.name == "id":
            columns.append(pa.array(ids, field.type))
            continue
        values = [_value(field, i, tag, big) for i in ids]
        if pa.types.is_struct(field.type) and not struct_nulls:
            values = [
                v if v is not None else _scalar(field.type, field.name, i, tag, big)
                for i, v in zip(ids, values, strict=True)
            ]
        columns.append(pa.array(values, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


# ---- input shapes ------------------------------------------------------------------------------


def _permute_struct(arr: pa.Array, order: list[int]) -> pa.Array:
    t = arr.type
    fields = [t.field(k) for k in order]
    children = [arr.field(k) for k in order]
    mask = arr.is_null() if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def shaped(table: pa.Table, layout: str, seed: int) -> tuple[Callable[[], Any], dict[str, Any]]:
    """A factory of the input in ``layout`` (called once per library: readers are used up)
    and the keyword arguments the write needs with it (a schema for a list of batches)."""
    rng = random.Random(seed)
    names = table.column_names
    if layout == "reordered":
        order = names[:]
        rng.shuffle(order)
        t = table.select(order)
        return (lambda: t), {}
    if layout == "subset":
        keep = [
            n for n in names if not table.schema.field(n).nullable or rng.random() < 0.5
        ] or names[:1]
        t = table.select(keep)
        return (lambda: t), {}
    if layout == "struct_permuted":
        t = table
        for k, field in enumerate(table.schema):
            if pa.types.is_struct(field.type) and field.type.num_fields > 1:
                order = list(range(field.type.num_fields))[::-1]
                arr = _permute_struct(table.column(k).combine_chunks(), order)
                t = t.set_column(k, pa.field(field.name, arr.type, field.nullable), arr)
        return (lambda: t), {}
    if layout == "reader":
        batches = table.to_batches(max_chunksize=2)
        return (lambda: pa.RecordBatchReader.from_batches(table.schema, batches)), {}
    if layout == "batch":
        batch = table.combine_chunks().to_batches()[0] if table.num_rows else None
        if batch is None:
            return (lambda: table), {}
        return (lambda: batch), {}
    if layout == "batches":
        batches = table.to_batches(max_chunksize=3)
        return (lambda: list(batches)), {"schema": table.schema}
    if layout == "chunked":
        cut = table.num_rows // 2
        t = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
        return (lambda: t), {}
    if layout == "nullable_schema":
        loose = pa.schema(
            [f.with_nullable(True) for f in table.schema], metadata=table.schema.metadata
        )
        t = table.cast(loose)
        return (lambda: t), {}
    if layout == "mixed_order":
        cut = max(1, table.num_rows // 2)
        first = table.slice(0, cut).to_batches()
        rest = table.slice(cut).select(names[::-1]).to_batches()
        return (lambda: [*first, *rest]), {"schema": table.schema}
    assert layout == "table", layout
    return (lambda: table), {}


def twin_layout(layout: str) -> str:
    """The layout pylance's twin gets for an append we get in ``layout``."""
    return "batches" if layout == "mixed_order" else layout


# ---- schema walks ------------------------------------------------------------------------------


def leaf_paths(schema: pa.Schema) -> list[tuple[str, pa.Field]]:
    """(dotted path, field) of every top-level field and struct child, in pre-order."""
    out: list[tuple[str, pa.Field]] = []

    def walk(prefix: str, field: pa.Field) -> None:
        out.append((prefix + field.name, field))
        if pa.types.is_struct(field.type):
            for k in range(field.type.num_fields):
                walk(prefix + field.name + ".", field.type.field(k))

    for f in schema:
        walk("", f)
    return out


def top_level(schema: pa.Schema, accept: Callable[[pa.DataType], bool]) -> list[str]:
    """Top-level column names other than ``id`` whose type ``accept`` takes."""
    return [f.name for f in schema if f.name != "id" and accept(f.type)]


# ---- outcomes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one library's call did: its result or its exception."""

    result: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def __repr__(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {str(self.error)[:300]}"
        return f"returned {self.result!r}"[:300]


def log_operation(line: str) -> None:
    """``LANCE_SEMANTIC_STATEFUL_LOG=<file>`` records every operation and its outcome."""
    path = os.environ.get("LANCE_SEMANTIC_STATEFUL_LOG")
    if path:
        with open(path, "a") as log:
            log.write(line + "\n")


def attempt(call: Callable[[], Any]) -> Outcome:
    try:
        return Outcome(result=call())
    except Exception as e:  # noqa: BLE001 - the outcome is compared, not swallowed
        return Outcome(error=e)


def assert_library_error(error: BaseException, what: str) -> None:
    """An error reaching a caller is ours (or a plain TypeError / ValueError of a bad
    argument), never a raw Arrow error, an IndexError, a pylance panic or an error of
    pylance's file codec passed on as it came (its text names a Rust source file)."""
    assert not isinstance(error, pa.ArrowException), (what, error)
    assert ".rs:" not in str(error) or isinstance(error, LanceSemanticError), (what, error)
    assert isinstance(error, LanceSemanticError) or type(error) in (ValueError, TypeError), (
        what,
        type(error).__mro__,
        error,
    )


# ---- comparison --------------------------------------------------------------------------------


def canonical_rows(table: pa.Table) -> list[str]:
    """The rows as sorted reprs: a multiset, independent of fragment order (a merge may
    insert rows with repeated keys)."""
    return sorted(repr(row) for row in table.to_pylist())


def field_ids_of_pylance(fields: Any, prefix: str = "") -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for f in fields:
        path = prefix + f.name()
        out.append((f.id(), path))
        out += field_ids_of_pylance(f.children(), path + ".")
    return out


def field_ids_of_ours(ds: ls.Dataset) -> list[tuple[int, str]]:
    return [(f.id, f.path) for f in ds.semantic_schema]


def _deletions(d: Any) -> int:
    return 0 if d is None else int(d.num_deleted_rows)


def fragments_of(ds: Any) -> list[tuple[int, int, int, list[list[int]]]]:
    """(id, physical rows, deleted rows, data files' field ids) per fragment."""
    out = []
    for f in ds.get_fragments():
        m = f.metadata
        files = [list(df.fields) for df in m.files]
        out.append((f.fragment_id, m.physical_rows, _deletions(m.deletion_file), files))
    return out


def assert_version_agrees(ours_uri: str, theirs_uri: str, version: int | str) -> None:
    """One version (a number or a tag) of each twin, read by both libraries: same schema,
    field ids and rows."""
    readers = {
        "ours by us": ls.dataset(ours_uri, version=version),
        "theirs by pylance": lance.dataset(theirs_uri, version=version),
        "ours by pylance": lance.dataset(ours_uri, version=version),
        "theirs by us": ls.dataset(theirs_uri, version=version),
    }
    _assert_same_tables(readers)


def _assert_same_tables(readers: dict[str, Any]) -> None:
    want_name = "theirs by pylance"
    want = readers[want_name]
    want_table = want.to_table()
    want_rows = canonical_rows(want_table)
    want_ids = field_ids_of_pylance(want.lance_schema.fields())
    for name, ds in readers.items():
        assert ds.version == want.version, (name, ds.version, want.version)
        assert ds.schema.equals(want.schema, check_metadata=True), (name, ds.schema, want.schema)
        table = ds.to_table()
        assert table.schema.equals(want_table.schema, check_metadata=True), (name, table.schema)
        got_rows = canonical_rows(table)
        if got_rows != want_rows:
            again = canonical_rows(ds.to_table()) == want_rows
            missing = sorted(set(want_rows) - set(got_rows))[:5]
            extra = sorted(set(got_rows) - set(want_rows))[:5]
            raise AssertionError(
                f"{name}: rows differ (a second read agrees: {again}); "
                f"{len(got_rows)} rows, want {len(want_rows)}; missing {missing}; extra {extra}"
            )
        assert ds.count_rows() == want_table.num_rows, name
        if isinstance(ds, ls.Dataset):
            assert field_ids_of_ours(ds) == want_ids, name
        else:
            assert field_ids_of_pylance(ds.lance_schema.fields()) == want_ids, name


def assert_twins_agree(ours_uri: str, theirs_uri: str) -> None:
    """The latest versions of the twins agree, whichever library reads them: version and
    version list, schema with metadata, field ids, rows, row counts, fragments (ids,
    physical rows, deletions, data files' fields), tags; ``ls.check`` finds nothing."""
    readers = {
        "ours by us": ls.dataset(ours_uri),
        "theirs by pylance": lance.dataset(theirs_uri),
        "ours by pylance": lance.dataset(ours_uri),
        "theirs by us": ls.dataset(theirs_uri),
    }
    _assert_same_tables(readers)
    want = readers["theirs by pylance"]
    want_versions = [v["version"] for v in want.versions()]
    want_fragments = fragments_of(want)
    want_tags = {k: v["version"] for k, v in want.tags.list().items()}
    for name, ds in readers.items():
        assert [v["version"] for v in ds.versions()] == want_versions, name
        assert fragments_of(ds) == want_fragments, (name, fragments_of(ds), want_fragments)
        assert {k: v["version"] for k, v in ds.tags.list().items()} == want_tags, name
    for uri in (ours_uri, theirs_uri):
        report = ls.check(uri)
        assert report.ok, (uri, [(p.code, p.message) for p in report.problems])
