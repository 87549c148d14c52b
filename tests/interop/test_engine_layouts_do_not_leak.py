"""The SQL engine's layouts never reach a table.

DataFusion 55 computes many expressions in layouts of its own: views (``md5``, ``regexp_*``,
``CAST(x AS VARCHAR)``, ``arrow_cast(x, 'Utf8View')``, ``nvl`` ..., also as list items and
struct members) and, for ``upper`` / ``lower`` / the trims / ``initcap`` / ``reverse`` /
``length`` / ``ascii`` ... of a dictionary, a dictionary of the results. pylance 14 (whose
engine is DataFusion 54) stores such columns as plain ``string`` / ``binary`` / values.

* ``add_columns``: on a legacy table the new column has pylance's Arrow type and values
  (its ``add_columns`` twin); on a flagged table it reads back as that same type (no view
  output encoding recorded) and no data file holds a view.
* ``update``: a value the engine computes as a view goes into a column of any layout, as
  in pylance (Arrow has no cast from a view to a dictionary).
* ``alter_columns``: pylance 14 casts to no view layout; on a legacy table neither do we
  (``SchemaEvolutionError`` naming the path, nothing committed). On a flagged table a view
  of the column's own semantic type is an accepted input layout and an output encoding:
  the alteration records it as the output encoding (metadata only, same field id); a
  dictionary over views is no layout of the contract and is refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import lance
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.types.arrow_names import has_view

pytestmark = pytest.mark.interop


def _base() -> pa.Table:
    return pa.table(
        {
            "a": pa.array([1, 2, None, 4], pa.int32()),
            "s": ["x", "yy", None, "x,z"],
            "ls": pa.array(["x", "yy", None, "q"], pa.large_string()),
            "b": pa.array([b"q", b"rr", None, b"x"]),
            "d": pa.array(["x", "Yy", "x", " t "]).dictionary_encode(),
            "l": pa.array([["a"], ["b", None], None, []], pa.list_(pa.string())),
            "st": pa.array(
                [{"x": "a"}, {"x": "b"}, None, {"x": None}], pa.struct([("x", pa.string())])
            ),
        }
    )


#: expressions DataFusion 55 computes in a view (at some depth) or keeps a dictionary for
ENGINE_LAYOUTS = [
    "md5(s)",
    "md5(ls)",
    "md5(b)",
    "md5(d)",
    "md5(st.x)",
    "md5(s) || 'x'",
    "upper(md5(s))",
    "arrow_cast(s, 'Utf8View')",
    "arrow_cast(b, 'BinaryView')",
    "arrow_cast(d, 'Utf8View')",
    "regexp_replace(s, 'x', 'y')",
    "regexp_replace(d, 'x', 'y')",
    "regexp_match(s, 'x')",
    "substr_index(s, 'x', 1)",
    "translate(d, 'x', 'y')",
    "left(d, 1)",
    "right(b, 1)",
    "nvl(s, 'z')",
    "ifnull(ls, 'z')",
    "nvl(d, 'z')",
    "make_array(md5(s))",
    "named_struct('k', md5(s), 'n', a)",
    "upper(d)",
    "lower(d)",
    "btrim(d)",
    "ltrim(d)",
    "rtrim(d)",
    "initcap(d)",
    "reverse(d)",
    "length(d)",
    "octet_length(d)",
    "ascii(d)",
    "coalesce(upper(d), 'x')",
    "upper(d) || 'x'",
]
#: expressions of plain layouts, including those that keep a column's own large or
#: dictionary layout as pylance does (they must stay as they are)
PLAIN = [
    "upper(s)",
    "s || 'z'",
    "concat(s, 'z')",
    "'lit'",
    "X'00ff'",
    "sha256(s)",
    "digest(s, 'md5')",
    "upper(ls)",
    "ls || 'z'",
    "coalesce(ls, s)",
    "d",
    "coalesce(d, 'q')",
    "nullif(d, 'x')",
    "d || 'z'",
    "l",
    "l[1]",
    "make_array(s, s)",
    "string_to_array(s, ',')",
    "st",
    "st.x",
    "named_struct('k', s)",
    "to_hex(a)",
]


def _pylance_add(tmp_path: Path, sql: str) -> tuple[pa.DataType, list[Any]]:
    ds = lance.write_dataset(_base(), str(tmp_path / "pylance.lance"))
    ds.add_columns({"n": sql})
    return ds.schema.field("n").type, ds.to_table().column("n").to_pylist()


def _data_file_types(uri: str) -> list[pa.DataType]:
    out = []
    for name in os.listdir(os.path.join(uri, "data")):
        schema = lance.file.LanceFileReader(os.path.join(uri, "data", name)).metadata().schema
        out += [f.type for f in schema]
    return out


@pytest.mark.parametrize("sql", ENGINE_LAYOUTS + PLAIN)
def test_add_columns_sql_records_what_pylance_records(tmp_path: Path, sql: str) -> None:
    want_type, want_values = _pylance_add(tmp_path, sql)
    for flagged in (False, True):
        uri = str(tmp_path / f"ours-{flagged}.lance")
        ds = ls.write_dataset(_base(), uri, semantic_types=flagged)
        ds.add_columns({"n": sql})
        assert ds.schema.field("n").type == want_type, (flagged, ds.schema.field("n"))
        assert ds.to_table().column("n").to_pylist() == want_values
        assert not any(has_view(t) for t in _data_file_types(uri))
        if not flagged:  # pylance reads it so too
            assert lance.dataset(uri).schema.field("n").type == want_type
        else:
            encodings = [f.output_encoding for f in ds.semantic_schema.field("n").walk()]
            assert not any(e in ("utf8_view", "binary_view") for e in encodings)


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("CAST(a AS VARCHAR)", pa.string()),  # DataFusion: Utf8View; pylance refuses VARCHAR
        ("CAST(a AS STRING)", pa.string()),
        ("CAST(s AS BYTEA)", pa.binary()),
        ("CASE WHEN a > 1 THEN md5(s) ELSE 'no' END", pa.string()),  # pylance refuses CASE
        ("CASE WHEN a > 1 THEN upper(d) ELSE d END", pa.string()),
        ("CASE WHEN a > 1 THEN arrow_cast(b, 'BinaryView') END", pa.binary()),
        ("CAST(NULL AS VARCHAR)", pa.string()),  # all-null: a metadata-only add
    ],
)
def test_add_columns_sql_pylance_refuses_stores_no_engine_layout(
    tmp_path: Path, sql: str, want: pa.DataType
) -> None:
    """Expressions pylance 14 does not take (CAST to SQL string types, CASE): the column
    gets the plain layout too, on both kinds of table."""
    for flagged in (False, True):
        ds = ls.write_dataset(_base(), str(tmp_path / f"t{flagged}"), semantic_types=flagged)
        ds.add_columns({"n": sql})
        assert ds.schema.field("n").type == want
        assert ds.semantic_schema.field("n").output_encoding is None
        assert len(ds.to_table().column("n")) == 4


def test_add_columns_sql_on_view_encoded_columns_stores_plain_layouts(tmp_path: Path) -> None:
    """Flagged: a column read as utf8_view / binary_view feeds views to the engine; what it
    computes from them is stored, and read, in the plain layout (a view is an output
    choice of the source column, not of the new one)."""
    ds = ls.write_dataset(_base(), str(tmp_path / "t"), semantic_types=True)
    ds.set_output_encoding("s", "utf8_view")
    ds.set_output_encoding("b", "binary_view")
    ds.add_columns({"u": "upper(s)", "c": "s", "bb": "b", "cat": "s || 'z'", "m": "md5(b)"})
    for name, want in [
        ("u", pa.string()),
        ("c", pa.string()),
        ("bb", pa.binary()),
        ("cat", pa.string()),
        ("m", pa.string()),
    ]:
        assert ds.schema.field(name).type == want
        assert ds.semantic_schema.field(name).output_encoding is None
    assert ds.to_table(columns=["u"]).column(0).to_pylist() == ["X", "YY", None, "X,Z"]


#: (column, expression) pairs whose value the engine computes as a view
UPDATES = [
    ("s", "md5(s)"),
    ("s", "arrow_cast(s, 'Utf8View')"),
    ("ls", "md5(s)"),
    ("d", "md5(s)"),
    ("d", "arrow_cast(s, 'Utf8View')"),
    ("d", "regexp_replace(s, 'x', 'y')"),
    ("b", "arrow_cast(b, 'BinaryView')"),
    ("l", "make_array(md5(s))"),
    ("l", "regexp_match(s, 'x')"),
    ("st", "named_struct('x', md5(s))"),
    ("s", "upper(d)"),
    ("a", "length(d)"),
]


@pytest.mark.parametrize(("column", "sql"), UPDATES)
def test_update_takes_values_the_engine_computes_as_views(
    tmp_path: Path, column: str, sql: str
) -> None:
    theirs = lance.write_dataset(_base(), str(tmp_path / "pylance.lance"))
    theirs.update({column: sql}, where="a > 1")
    want = theirs.to_table()
    for flagged in (False, True):
        uri = str(tmp_path / f"ours-{flagged}.lance")
        ds = ls.write_dataset(_base(), uri, semantic_types=flagged)
        before = ds.schema
        assert ds.update({column: sql}, where="a > 1").num_rows_updated == 2
        assert ds.schema == before
        assert ds.to_table().to_pylist() == want.to_pylist()
        if not flagged:
            assert ds.schema == want.schema
            assert lance.dataset(uri).to_table().to_pylist() == want.to_pylist()
        assert not any(has_view(t) for t in _data_file_types(uri))


#: (column, target type) on a legacy table; pylance 14 refuses every one
VIEW_TARGETS = [
    ("s", pa.string_view()),
    ("ls", pa.string_view()),
    ("d", pa.string_view()),
    ("b", pa.binary_view()),
    ("s", pa.dictionary(pa.int32(), pa.string_view())),
    ("b", pa.dictionary(pa.int8(), pa.binary_view())),
    ("l", pa.list_(pa.string_view())),
    ("l", pa.large_list(pa.string_view())),
    ("l.item", pa.string_view()),
    ("st", pa.struct([("x", pa.string_view())])),
    ("st.x", pa.string_view()),
]


@pytest.mark.parametrize(("path", "target"), VIEW_TARGETS)
def test_legacy_alter_to_a_view_is_refused_as_pylance_refuses_it(
    tmp_path: Path, path: str, target: pa.DataType
) -> None:
    theirs = lance.write_dataset(_base(), str(tmp_path / "pylance.lance"))
    with pytest.raises(OSError, match="Cannot cast"):
        theirs.alter_columns({"path": path, "data_type": target})
    uri = str(tmp_path / "ours.lance")
    ds = ls.write_dataset(_base(), uri)
    files = sorted(os.listdir(os.path.join(uri, "data")))
    with pytest.raises(ls.SchemaEvolutionError) as e:
        ds.alter_columns({"path": path, "data_type": target})
    assert e.value.field_path == path
    assert ls.dataset(uri).version == 1
    assert sorted(os.listdir(os.path.join(uri, "data"))) == files


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("s", pa.large_string()),
        ("ls", pa.string()),
        ("s", pa.dictionary(pa.int16(), pa.string())),
        ("a", pa.int64()),
        ("a", pa.int16()),
        ("a", pa.float64()),
        ("a", pa.string()),
        ("b", pa.large_binary()),
        ("b", pa.string()),
        ("s", pa.binary()),
        ("l", pa.large_list(pa.string())),
        ("l", pa.list_(pa.large_string())),
    ],
)
def test_legacy_alter_accepts_and_refuses_the_casts_pylance_does(
    tmp_path: Path, path: str, target: pa.DataType
) -> None:
    theirs = lance.write_dataset(_base(), str(tmp_path / "pylance.lance"))
    ours = ls.write_dataset(_base(), str(tmp_path / "ours.lance"))
    try:
        theirs.alter_columns({"path": path, "data_type": target})
    except OSError:
        with pytest.raises(ls.SchemaEvolutionError):
            ours.alter_columns({"path": path, "data_type": target})
        return
    ours.alter_columns({"path": path, "data_type": target})
    assert ours.schema == theirs.schema
    assert ours.to_table().to_pylist() == theirs.to_table().to_pylist()


@pytest.mark.parametrize(
    ("path", "target", "encoding"),
    [
        ("s", pa.string_view(), "utf8_view"),
        ("ls", pa.string_view(), "utf8_view"),
        ("d", pa.string_view(), "utf8_view"),
        ("b", pa.binary_view(), "binary_view"),
        ("l.item", pa.string_view(), "utf8_view"),
        ("st.x", pa.string_view(), "utf8_view"),
    ],
)
def test_flagged_alter_to_a_view_records_it_as_the_output_encoding(
    tmp_path: Path, path: str, target: pa.DataType, encoding: str
) -> None:
    uri = str(tmp_path / "t.lance")
    ds = ls.write_dataset(_base(), uri, semantic_types=True)
    before = ds.semantic_schema.field(path)
    files = sorted(os.listdir(os.path.join(uri, "data")))
    values = ds.to_table().to_pylist()
    ds.alter_columns({"path": path, "data_type": target})
    after = ds.semantic_schema.field(path)
    assert (after.id, after.logical_type) == (before.id, str(before.semantic_type))
    assert after.output_encoding == encoding
    assert sorted(os.listdir(os.path.join(uri, "data"))) == files  # metadata only
    assert ds.to_table().to_pylist() == values
    field = ds.schema.field(path.split(".")[0])
    assert has_view(field.type)


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("s", pa.dictionary(pa.int32(), pa.string_view())),
        ("b", pa.dictionary(pa.int8(), pa.binary_view())),
        ("st.x", pa.dictionary(pa.int16(), pa.string_view())),
    ],
)
def test_flagged_alter_to_a_dictionary_of_views_is_refused_naming_the_field(
    tmp_path: Path, path: str, target: pa.DataType
) -> None:
    ds = ls.write_dataset(_base(), str(tmp_path / "t.lance"), semantic_types=True)
    with pytest.raises(ls.UnsupportedInputTypeError) as e:
        ds.alter_columns({"path": path, "data_type": target})
    assert e.value.field_path == path
    assert ds.version == 1


def test_flagged_add_of_a_dictionary_of_integers_names_the_field(tmp_path: Path) -> None:
    ds = ls.write_dataset(_base(), str(tmp_path / "t.lance"), semantic_types=True)
    with pytest.raises(ls.UnsupportedTypeError) as e:
        ds.add_columns(pa.field("n", pa.dictionary(pa.int32(), pa.int32())))
    assert e.value.field_path == "n"
