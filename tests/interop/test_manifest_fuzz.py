"""Issue 12 item 3: 1,000 single-byte mutations of real manifests never return wrong rows.

Four real tables (pylance-written with deletions and several fragments; ours legacy and
flagged with deletions; one with bitmap deletion files) each get 250 mutations (fixed
seed). Each mutation either reads identically (same rows and count) or raises a
``LanceSemanticError``; nothing raises a raw exception.

One class of mutation cannot be detected by any reader, because the Lance format carries
no checksum: a field *name* or a field *id* changed into another valid value gives a
manifest that a legitimate sequence of commits could have written (a rename; a drop
followed by a metadata-only add_columns). pylance reads those the same way. The test
recognises exactly that class by diffing the decoded manifests and counts it; any other
silent difference fails.
"""

from __future__ import annotations

import collections
import difflib
import random
import re
import shutil
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from google.protobuf import text_format
from tests.integrity_support import latest_manifest

import lance_semantic as ls
from lance_semantic.manifest._pb import lance_table_pb2 as tpb
from lance_semantic.manifest.codec import manifest_region

pytestmark = pytest.mark.interop

SEED = 12
PER_TABLE = 250

#: decoded-manifest lines a relabelling mutation may change (see the module docstring)
_RELABEL = re.compile(r"^[-+]\s*(name|id|fields): ")


def _tables(root: Path) -> list[Path]:
    rows = pa.table(
        {
            "id": pa.array(range(100), pa.int64()),
            "s": [f"v{i}" for i in range(100)],
            "st": [{"a": i, "b": float(i)} for i in range(100)],
        }
    )
    lance.write_dataset(rows, str(root / "pylance"), max_rows_per_file=30)
    lance.dataset(str(root / "pylance")).delete("id % 7 = 0")
    ls.write_dataset(rows, str(root / "legacy"), max_rows_per_file=40).delete("id % 5 = 1")
    flagged = ls.write_dataset(
        rows, str(root / "flagged"), data_storage_version="2.3", max_rows_per_file=25
    )
    flagged.delete("id > 90 or id < 3")
    big = pa.table({"id": pa.array(range(20_000), pa.int64())})
    ls.write_dataset(big, str(root / "bitmap"), max_rows_per_file=10_000).delete("id % 2 = 0")
    return [root / n for n in ("pylance", "legacy", "flagged", "bitmap")]


def _decoded(data: bytes) -> list[str]:
    start, end = manifest_region(data)
    pb = tpb.Manifest()
    pb.ParseFromString(data[start:end])
    return text_format.MessageToString(pb, print_unknown_fields=True).splitlines()


def _is_relabel(before: bytes, after: bytes) -> bool:
    changed = [
        line
        for line in difflib.unified_diff(_decoded(before), _decoded(after), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return bool(changed) and all(_RELABEL.match(line) for line in changed)


def _read(uri: str) -> tuple[list[str], list[tuple[object, ...]], int]:
    ds = ls.dataset(uri)
    table = ds.to_table()
    return table.schema.names, [tuple(r.values()) for r in table.to_pylist()], ds.count_rows()


def test_single_byte_manifest_mutations_read_identically_or_raise_a_library_error(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    outcomes: collections.Counter[str] = collections.Counter()
    wrong: list[str] = []
    for table in _tables(tmp_path / "pristine"):
        expected = _read(str(table))
        path = latest_manifest(table)
        original = path.read_bytes()
        for _ in range(PER_TABLE):
            pos = rng.randrange(len(original))
            value = rng.choice([b for b in range(256) if b != original[pos]])
            mutated = bytearray(original)
            mutated[pos] = value
            path.write_bytes(bytes(mutated))
            try:
                got = _read(str(table))
            except ls.LanceSemanticError as e:
                outcomes[type(e).__name__] += 1
                continue
            except Exception as e:  # noqa: BLE001 - the rule under test
                wrong.append(f"{table.name} byte {pos} -> {value}: raw {type(e).__name__}: {e}")
                continue
            if got == expected:
                outcomes["identical"] += 1
            elif _is_relabel(original, bytes(mutated)):
                outcomes["relabelled field (undetectable)"] += 1
            else:
                diff = difflib.unified_diff(
                    _decoded(original), _decoded(bytes(mutated)), lineterm="", n=0
                )
                wrong.append(
                    f"{table.name} byte {pos} -> {value}: different rows, no error: "
                    + " | ".join(list(diff)[2:])
                )
        path.write_bytes(original)
        shutil.rmtree(table)
    print(dict(outcomes))  # the figures quoted in the README (pytest -s shows them)
    assert not wrong, "\n".join(wrong)
    assert sum(outcomes.values()) == 4 * PER_TABLE
    # the mutations are not vacuous: most are caught, many are harmless
    assert outcomes["CorruptManifestError"] > 300 and outcomes["identical"] > 300
