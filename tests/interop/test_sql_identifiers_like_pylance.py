"""SQL names columns as pylance 14's dialect does, on every path that takes SQL.

pylance resolves an unquoted column name exactly, else case-insensitively (``USERID`` is
``userId``); a struct member after ``.`` and a name in backticks exactly; and text in double
quotes is a string literal. DataFusion's own parser lower-cases unquoted names, so a column
with a capital letter could not be named at all (every filter, update, delete, add_columns
and projection over it failed) and ``"v"`` named a column. Each case runs through pylance
and through us on twin tables: the same rows, values and columns, or both refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import LanceSemanticError

pytestmark = pytest.mark.interop

_TABLE = pa.table(
    {
        "userId": pa.array([1, 2, 3], pa.int64()),
        "a": pa.array([10, 20, 30], pa.int64()),
        "A": pa.array([1, 2, 3], pa.int64()),
        "St": pa.array([{"InN": 1, "low": 7}, {"InN": 2, "low": 8}, {"InN": 3, "low": 9}]),
        "has space": pa.array([5, 6, 7], pa.int64()),
        "x": pa.array(["u", "v", "w"]),
    }
)

#: predicates over the table, in every spelling of a name pylance accepts or refuses
_PREDICATES = [
    "userId > 1",  # exact
    "USERID > 1",  # another case: the only column equal but for case
    "userid >= 2 AND userId < 3",
    "`userId` > 1",  # backticks: exact
    "`userid` > 1",  # backticks in another case: no column (both refuse)
    "a > 15",  # 'a' and 'A' both exist: each exactly
    "A > 1",
    "`A` > 1 AND `a` < 30",
    "St.InN > 1",  # member, exact
    "ST.InN > 1",  # the column in another case, the member exact
    "`St`.`InN` = 2",
    "St.inn > 1",  # member in another case: no member (both refuse)
    "`has space` > 5",
    'x = "v"',  # double quotes: a string literal
    "\"x\" = 'v'",  # ... also on the left: 'x' = 'v' holds for no row
    "x IN ('u', \"w\")",
    "CAST(userId AS string) = '2'",
    "userId BETWEEN 1 AND 2",
    "userId IS NOT NULL AND St.low IS NOT NULL",
    "USERID + A > 3",
]


def _twins(tmp_path: Path) -> tuple[str, str]:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ls.write_dataset(_TABLE, ours)
    lance.write_dataset(_TABLE, theirs)
    return ours, theirs


def _outcome(call: Callable[[], Any]) -> Any:
    """The call's value, or ``"refused"`` when it raises (ours must raise a library
    error, never DataFusion's or Arrow's)."""
    try:
        return call()
    except LanceSemanticError:
        return "refused"
    except (ValueError, OSError) as e:  # pylance's errors
        if type(e).__module__.startswith("lance_semantic"):
            raise
        return "refused"


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["userId"])


def _same(ours: Callable[[Any], Any], theirs: Callable[[Any], Any], tmp_path: Path) -> None:
    our_uri, their_uri = _twins(tmp_path)
    got = _outcome(lambda: ours(ls.dataset(our_uri)))
    want = _outcome(lambda: theirs(lance.dataset(their_uri)))
    assert got == want
    if want != "refused":  # and the tables hold the same rows and schema afterwards
        assert _rows(ls.dataset(our_uri).to_table()) == _rows(lance.dataset(their_uri).to_table())
        assert ls.dataset(our_uri).schema == lance.dataset(their_uri).schema


@pytest.mark.parametrize("predicate", _PREDICATES)
def test_filters_name_columns_as_pylance(tmp_path: Path, predicate: str) -> None:
    def read(ds: Any) -> Any:
        return (_rows(ds.to_table(filter=predicate)), ds.count_rows(filter=predicate))

    _same(read, read, tmp_path)


@pytest.mark.parametrize("predicate", _PREDICATES)
def test_deletes_name_columns_as_pylance(tmp_path: Path, predicate: str) -> None:
    def delete(ds: Any) -> Any:
        ds.delete(predicate)
        return None

    _same(delete, delete, tmp_path)


@pytest.mark.parametrize("predicate", _PREDICATES)
def test_update_conditions_name_columns_as_pylance(tmp_path: Path, predicate: str) -> None:
    def update(ds: Any) -> Any:
        ds.update({"a": "a + 100"}, where=predicate)
        return None

    _same(update, update, tmp_path)


#: value expressions: new columns and updated values
_VALUES = [
    "USERID * 2",
    "`userId` + A",
    "St.InN + St.low",
    "ST.InN * 10",
    '"constant"',
    'x || "q"',
    "A * a - USERID",
    "`has space` - 1",
]


@pytest.mark.parametrize("expression", _VALUES)
def test_add_columns_name_columns_as_pylance(tmp_path: Path, expression: str) -> None:
    def add(ds: Any) -> Any:
        ds.add_columns({"c": expression})
        return None

    _same(add, add, tmp_path)


@pytest.mark.parametrize("expression", [e for e in _VALUES if "x" not in e and '"' not in e])
def test_update_values_name_columns_as_pylance(tmp_path: Path, expression: str) -> None:
    def update(ds: Any) -> Any:
        ds.update({"a": expression}, where="USERID <> 2")
        return None

    _same(update, update, tmp_path)


@pytest.mark.parametrize("expression", _VALUES)
def test_sql_projections_name_columns_as_pylance(tmp_path: Path, expression: str) -> None:
    def project(ds: Any) -> Any:
        return ds.to_table(columns={"id": "userId", "c": expression}).to_pylist()

    _same(project, project, tmp_path)


@pytest.mark.parametrize("condition", ["source.A <> target.A", "target.userId = 2"])
def test_merge_conditions_name_columns_as_pylance(tmp_path: Path, condition: str) -> None:
    source = _TABLE.slice(0, 2).set_column(2, "A", pa.array([1, 5], pa.int64()))

    def merge(ds: Any) -> Any:
        ds.merge_insert("userId").when_matched_update_all(condition).execute(source)
        return None

    _same(merge, merge, tmp_path)


@pytest.mark.parametrize("predicate", ["USERID = 3", "St.InN = 3", "`A` = 3"])
def test_merge_delete_by_source_names_columns_as_pylance(tmp_path: Path, predicate: str) -> None:
    def merge(ds: Any) -> Any:
        ds.merge_insert("userId").when_matched_update_all().when_not_matched_by_source_delete(
            predicate
        ).execute(_TABLE.slice(0, 1))
        return None

    _same(merge, merge, tmp_path)


_DOTTED = pa.table(
    {
        "id": pa.array([1, 2], pa.int64()),
        "s": pa.array([{"x.y": 1, "z": 2}, {"x.y": 3, "z": 4}]),
        "has space": pa.array([5, 6], pa.int64()),
        "l": pa.array([[1], [2]]),
    }
)


@pytest.mark.parametrize(
    "column",
    ["s.`x.y`", "`s`.z", "`s`.`x.y`", "`has space`", "s.z"]
    + ["s.x.y", "s.", "`s", "s.`z`x", "l.item"],
)
def test_column_paths_read_backticks_as_pylance(tmp_path: Path, column: str) -> None:
    """A column path is split at every '.' outside backticks, a part in backticks taken as
    written (a member named 'x.y'); anything else is refused by both, ours with
    ColumnNotFoundError or ReadError (s.x.y was a raw KeyError)."""
    ls.write_dataset(_DOTTED, tmp_path / "ours")
    lance.write_dataset(_DOTTED, tmp_path / "theirs")
    ours = ls.dataset(tmp_path / "ours")
    theirs = lance.dataset(str(tmp_path / "theirs"))
    got = _outcome(lambda: ours.to_table(columns=[column]).to_pydict())
    want = _outcome(lambda: theirs.to_table(columns=[column]).to_pydict())
    assert got == want
    if want != "refused":
        batches = ours.scanner(columns=["id", column], batch_size=1).to_batches()
        assert [b.column(1).to_pylist() for b in batches] == [[v] for v in want[column]]


@pytest.mark.parametrize("on", ["USERID", ["userid"], "UserId", "userId", "nosuch"])
def test_merge_keys_name_columns_as_pylance(tmp_path: Path, on: str | list[str]) -> None:
    """A merge key is the column of exactly that name, else the one equal to it but for
    case, as pylance takes it ('userid' was refused as 'not a column of the table')."""
    source = _TABLE.slice(1, 2).set_column(5, "x", pa.array(["V", "W"]))

    def merge(ds: Any) -> Any:
        result = ds.merge_insert(on).when_matched_update_all().execute(source)
        return (
            result.num_updated_rows
            if hasattr(result, "num_updated_rows")
            else result["num_updated_rows"]
        )

    _same(merge, merge, tmp_path)
