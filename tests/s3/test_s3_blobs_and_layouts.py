"""On S3 (a real SeaweedFS server): blob columns (v1 and v2, every storage kind), flagged
tables whose data files hold different layouts, output encodings, and writers in three
processes (two of ours, one pylance) appending at once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from lance.file import LanceFileReader

import lance_semantic as ls
from lance_semantic.storage.object_store import open_store

#: inline (small), packed (between the limits) and dedicated (large) blob v2 payloads
PAYLOADS = [b"tiny", None, bytes(range(256)) * 800, b"", b"\xff" * 5_000_000, b"mid" * 30_000]


def _blob_v2_table(start: int = 0) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("clip")])
    ids = list(range(start, start + len(PAYLOADS)))
    return pa.table({"id": pa.array(ids), "clip": blob_array(PAYLOADS)}, schema=schema)


def _blob_v1_table() -> pa.Table:
    blob = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    values = [b"x" * 10, None, b"y" * 100_000, b""]
    schema = pa.schema([pa.field("id", pa.int64()), blob])
    return pa.table({"id": pa.array(range(4)), "b": pa.array(values, pa.large_binary())}, schema)


def _read(files: list) -> list:
    return [None if f is None else f.read() for f in files]


def test_blob_v1_columns_on_s3_read_like_pylance(s3_uri: str, s3_options: dict) -> None:
    o = s3_options
    table = _blob_v1_table()
    ls.write_dataset(table, s3_uri, data_storage_version="2.2", storage_options=o)
    ours, theirs = ls.dataset(s3_uri, storage_options=o), lance.dataset(s3_uri, storage_options=o)
    assert ours.to_table().equals(theirs.to_table())  # descriptors, as pylance returns them
    want = table.column("b").to_pylist()
    assert _read(ours.take_blobs("b", indices=[0, 1, 2, 3])) == want
    assert _read(theirs.take_blobs("b", indices=[0, 2, 3])) == [want[0], want[2], want[3]]
    ours.delete("id = 0")
    assert _read(ls.dataset(s3_uri, storage_options=o).take_blobs("b", indices=[1])) == [want[2]]


@pytest.mark.parametrize("flagged", [False, True], ids=["legacy", "flagged"])
def test_blob_v2_sidecars_on_s3_survive_rewrites(
    s3_uri: str, s3_options: dict, flagged: bool
) -> None:
    """Inline, packed and dedicated blobs written to S3; take_blobs before and after an
    update and a compaction (which read the blobs back and store them afresh)."""
    o = s3_options
    ls.write_dataset(
        _blob_v2_table(),
        s3_uri,
        data_storage_version="2.3",
        semantic_types=flagged,
        storage_options=o,
    )
    ls.write_dataset(_blob_v2_table(100), s3_uri, mode="append", storage_options=o)
    store = open_store(s3_uri, o)
    sidecars = [n for d in store.list("data") if "." not in d for n in store.list(f"data/{d}")]
    assert sidecars and all(n.endswith(".blob") for n in sidecars)
    ds = ls.dataset(s3_uri, storage_options=o)
    n = len(PAYLOADS)
    assert _read(ds.take_blobs("clip", indices=list(range(2 * n)))) == PAYLOADS * 2
    if not flagged:  # pylance reads the sidecars we wrote
        theirs = lance.dataset(s3_uri, storage_options=o)
        assert _read(theirs.take_blobs("clip", indices=list(range(n)))) == PAYLOADS
    ds.update({"id": "id + 1000"}, where="id >= 100")
    ds = ls.dataset(s3_uri, storage_options=o)
    ds.optimize.compact_files()
    ds = ls.dataset(s3_uri, storage_options=o)
    assert ds.count_rows() == 2 * n
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    assert ids == [*range(n), *range(1100, 1100 + n)]
    assert _read(ds.take_blobs("clip", indices=list(range(2 * n)))) == PAYLOADS * 2
    assert ls.check(s3_uri, storage_options=o).ok


def test_we_read_blobs_pylance_wrote_on_s3(s3_uri: str, s3_options: dict) -> None:
    o = s3_options
    lance.write_dataset(_blob_v2_table(), s3_uri, data_storage_version="2.3", storage_options=o)
    ours = ls.dataset(s3_uri, storage_options=o)
    assert _read(ours.take_blobs("clip", indices=list(range(len(PAYLOADS))))) == PAYLOADS
    assert ours.to_table(columns=["id"]).equals(
        lance.dataset(s3_uri, storage_options=o).to_table(columns=["id"])
    )


LAYOUTS = {
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string_view(),
    "dictionary": pa.dictionary(pa.int16(), pa.string()),
}
STORED = {  # what each input layout is written as (views are converted; facts sheet)
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "utf8_view": pa.string(),
    "dictionary": pa.dictionary(pa.int16(), pa.string()),
}


def _names(start: int, layout: str) -> pa.Table:
    ids = list(range(start, start + 4))
    names = pa.array([f"n{i}" for i in ids]).cast(LAYOUTS[layout])
    return pa.table({"id": pa.array(ids, pa.int64()), "name": names})


def test_flagged_appends_of_every_layout_and_output_encodings_on_s3(
    s3_uri: str, s3_options: dict
) -> None:
    o = s3_options
    order = ["utf8", "large_utf8", "utf8_view", "dictionary", "utf8"]
    for k, layout in enumerate(order):
        mode = "create" if k == 0 else "append"
        ls.write_dataset(
            _names(4 * k, layout), s3_uri, mode=mode, semantic_types=True, storage_options=o
        )
    ds = ls.dataset(s3_uri, storage_options=o)
    files = [f.files[0].path for f in ds.manifest.fragments]
    stored = [
        LanceFileReader(f"{s3_uri}/data/{name}", storage_options=o).metadata().schema
        for name in files
    ]
    assert [s.field("name").type for s in stored] == [STORED[x] for x in order]
    want = [f"n{i}" for i in range(4 * len(order))]
    assert ds.to_table().column("name").to_pylist() == want
    for encoding, arrow in (("large_utf8", pa.large_string()), ("utf8_view", pa.string_view())):
        got = ds.to_table(output_encodings={"name": encoding}).column("name")
        assert got.type == arrow and got.to_pylist() == want
    ds.set_output_encoding("name", "large_utf8")
    again = ls.dataset(s3_uri, storage_options=o)
    assert again.schema.field("name").type == pa.large_string()
    assert again.to_table(filter="id % 5 = 1").column("name").to_pylist() == [
        w for i, w in enumerate(want) if i % 5 == 1
    ]
    with pytest.raises(ls.UnsupportedInputTypeError):
        bad = pa.table({"id": pa.array([99]), "name": pa.array([b"x"], pa.binary())})
        ls.write_dataset(bad, s3_uri, mode="append", storage_options=o)
    assert ls.dataset(s3_uri, storage_options=o).version == again.version


_WRITER = textwrap.dedent(
    """
    import json, sys
    uri, options, engine, first, rounds = json.loads(sys.argv[1])
    import pyarrow as pa
    for r in range(rounds):
        ids = list(range(first + 10 * r, first + 10 * r + 10))
        t = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"w{i}" for i in ids]})
        if engine == "pylance":
            import lance
            lance.write_dataset(t, uri, mode="append", storage_options=options)
        else:
            import lance_semantic as ls
            ls.write_dataset(t, uri, mode="append", storage_options=options)
    """
)


def test_three_processes_append_at_once_nothing_lost_or_doubled(
    s3_uri: str, s3_options: dict
) -> None:
    """Two processes of ours and one of pylance's append 3 times each to one table on
    S3; every row arrives once and both libraries read every version."""
    o = s3_options
    ls.write_dataset(
        pa.table({"id": pa.array([0], pa.int64()), "name": ["w0"]}), s3_uri, storage_options=o
    )
    rounds = 3
    writers = [("ours", 1000), ("ours", 2000), ("pylance", 3000)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, json.dumps([s3_uri, o, engine, first, rounds])],
            stderr=subprocess.PIPE,
            text=True,
        )
        for engine, first in writers
    ]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    want = [0] + sorted(
        first + 10 * r + k for _, first in writers for r in range(rounds) for k in range(10)
    )
    ours = ls.dataset(s3_uri, storage_options=o)
    assert ours.version == 1 + len(writers) * rounds
    got = ours.to_table(columns=["id"]).column("id").to_pylist()
    assert sorted(got) == want  # nothing lost, nothing twice
    theirs = lance.dataset(s3_uri, storage_options=o)
    assert sorted(theirs.to_table(columns=["id"]).column("id").to_pylist()) == want
    for v in range(1, ours.version + 1):
        a = ls.dataset(s3_uri, version=v, storage_options=o).count_rows()
        b = lance.dataset(s3_uri, version=v, storage_options=o).count_rows()
        assert a == b
    assert ls.check(s3_uri, storage_options=o).ok
