"""Deep filters do not kill the process.

A left-deep chain of ~9,000 ``OR`` terms used to overflow the stack inside DataFusion's
parser (a segfault). Long ``AND`` / ``OR`` chains are now parsed in runs and joined as a
balanced tree; anything too large or too deep is an ``InvalidExpressionError``. The
crash-prone cases run in a subprocess, so a segfault fails the test instead of pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls

pytestmark = pytest.mark.interop

N = 20_000
ROWS = pa.table({"id": pa.array(range(N), pa.int64()), "v": pa.array(range(N), pa.int32())})


def test_a_filter_of_10000_or_terms_gives_pylances_rows(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(ROWS, uri)
    wanted = list(range(0, N, 2))  # 10,000 terms, every other row
    sql = " OR ".join(f"id = {i}" for i in wanted)
    ours = ls.dataset(uri).to_table(filter=sql, columns=["id"]).column("id").to_pylist()
    theirs = lance.dataset(uri).to_table(filter=sql, columns=["id"]).column("id").to_pylist()
    assert ours == theirs == wanted


def test_a_filter_of_10000_and_terms_inside_brackets_works(tmp_path: Path) -> None:
    ds = ls.write_dataset(
        pa.table({"id": pa.array([3, 9_999, 10_000, 12_000])}), str(tmp_path / "t")
    )
    sql = "(" + " AND ".join(f"id >= {i}" for i in range(10_000)) + ") OR id = 3"
    assert ds.to_table(filter=sql).column("id").to_pylist() == [3, 9_999, 10_000, 12_000]


_CHILD = """
import sys
import lance_semantic as ls
from lance_semantic.errors import InvalidExpressionError
ds = ls.dataset(sys.argv[1])
sql = {sql}
try:
    ds.{call}
except InvalidExpressionError as e:
    print("refused:", e.reason)
else:
    print("answered")
"""

DEEP = {
    "one_million_or_terms": '" OR ".join(f"id = {i}" for i in range(1_000_000))',
    "100000_nested_parens": '"(" * 100_000 + "id = 1" + ")" * 100_000',
    "a_chain_of_20000_additions": '"id" + " + 1" * 20_000 + " > 0"',
    "or_terms_inside_not": '"NOT (" + " OR ".join(f"id = {i}" for i in range(20_000)) + ")"',
}
CALLS = {
    "filter": "count_rows(filter=sql)",
    "update_value": 'update({"v": sql})',
    "merge_condition": 'merge_insert("id").when_matched_update_all(sql).execute(ds.to_table())',
}


CASES = [("one_million_or_terms", "filter")] + [
    (name, call) for name in list(DEEP)[1:] for call in CALLS
]


@pytest.mark.parametrize("name, call", CASES)
def test_too_deep_an_expression_is_refused_without_crashing(
    tmp_path: Path, name: str, call: str
) -> None:
    uri = str(tmp_path / "t")
    ls.write_dataset(ROWS.slice(0, 10), uri)
    child = textwrap.dedent(_CHILD).format(sql=DEEP[name], call=CALLS[call])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", child, uri], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]  # -11: a segfault
    assert done.stdout.startswith("refused:"), done.stdout
    assert ls.dataset(uri).version == 1
