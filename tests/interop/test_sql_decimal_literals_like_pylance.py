"""An integer literal beside a decimal column takes the column's type when its value fits,
as pylance 14 resolves it (``d * 2`` over ``decimal128(10, 2)`` is ``decimal128(21, 4)``);
a value the column's precision cannot hold is refused by both. Arrow's own cast asks the
precision of every int64 (21 here), so every such literal was refused."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import InvalidExpressionError

pytestmark = pytest.mark.interop

_TABLE = pa.table(
    {
        "id": pa.array([1, 2, 3], pa.int64()),
        "d": pa.array([1, 2, 3], pa.decimal128(10, 2)),
        "e": pa.array([1, 2, 3], pa.decimal128(4, 0)),
        "g": pa.array([1, 2, 3], pa.decimal256(40, 3)),
    }
)

_FITS = ["d * 2", "2 * d", "d + 1", "d - 99999999", "d > 1", "d = 1", "e * 9999", "g * 2", "g - 5"]
_TOO_LARGE = ["e * 99999", "e + 123456", "d * 100000000000"]


def _added(lib: object, uri: str, expression: str) -> pa.Table:
    lib.write_dataset(_TABLE, uri)  # type: ignore[attr-defined]
    lib.dataset(uri).add_columns({"c": expression})  # type: ignore[attr-defined]
    return lib.dataset(uri).to_table(columns=["id", "c"])  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("expression", _FITS)
def test_integer_literals_take_the_decimal_column_type(tmp_path: Path, expression: str) -> None:
    ours = _added(ls, str(tmp_path / "ours"), expression)
    theirs = _added(lance, str(tmp_path / "theirs"), expression)
    assert ours.schema == theirs.schema
    assert ours.to_pylist() == theirs.to_pylist()


@pytest.mark.parametrize("expression", _TOO_LARGE)
def test_integer_literals_the_decimal_cannot_hold_are_refused(
    tmp_path: Path, expression: str
) -> None:
    with pytest.raises(OSError):  # pylance: "Received literal ... and could not convert"
        _added(lance, str(tmp_path / "theirs"), expression)
    with pytest.raises(InvalidExpressionError):
        _added(ls, str(tmp_path / "ours"), expression)


@pytest.mark.parametrize("predicate", ["d > 1", "d = 2", "d * 2 > 3", "g <= 2"])
def test_decimal_filters_with_integer_literals(tmp_path: Path, predicate: str) -> None:
    ls.write_dataset(_TABLE, tmp_path / "ours")
    lance.write_dataset(_TABLE, tmp_path / "theirs")
    got = ls.dataset(tmp_path / "ours").to_table(filter=predicate)
    want = lance.dataset(str(tmp_path / "theirs")).to_table(filter=predicate)
    assert got.to_pylist() == want.to_pylist()
