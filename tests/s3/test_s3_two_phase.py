"""Two-phase writes on S3: fragments written in spawned
processes to an ``s3://`` table and pickled back, one commit; a flagged create whose
workers feed one column different layouts; a stale ``read_version`` append that rebases;
pylance reads the legacy result."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import lance
import pyarrow as pa
from lance.file import LanceFileReader

import lance_semantic as ls

LAYOUTS = {
    "utf8": pa.string(),
    "large_utf8": pa.large_string(),
    "dictionary": pa.dictionary(pa.int32(), pa.string()),
}


def _rows(start: int, layout: str = "utf8") -> pa.Table:
    ids = list(range(start, start + 5))
    names = pa.array([f"n{i}" for i in ids]).cast(LAYOUTS[layout])
    return pa.table({"id": pa.array(ids, pa.int64()), "s": names})


def _worker(uri: str, options: dict, start: int, layout: str, flagged: bool) -> bytes:
    frags = ls.fragment.write_fragments(
        _rows(start, layout), uri, mode="overwrite" if flagged else "append",
        semantic_types=flagged or None, storage_options=options,
    )  # fmt: skip
    return pickle.dumps(frags)


def _ids(ds) -> list[int]:
    return sorted(ds.to_table(columns=["id"]).column("id").to_pylist())


def test_workers_write_fragments_to_s3_and_the_driver_commits_once(
    s3_uri: str, s3_options: dict
) -> None:
    o = s3_options
    ls.write_dataset(_rows(0), s3_uri, storage_options=o)
    with mp.get_context("spawn").Pool(2) as pool:
        parts = pool.starmap(
            _worker, [(s3_uri, o, 100, "utf8", False), (s3_uri, o, 200, "utf8", False)]
        )
    fragments = [f for p in parts for f in pickle.loads(p)]
    ds = ls.Dataset.commit(
        s3_uri, ls.LanceOperation.Append(fragments), read_version=1, storage_options=o
    )
    assert ds.version == 2 and _ids(ds) == [*range(5), *range(100, 105), *range(200, 205)]
    theirs = lance.dataset(s3_uri, storage_options=o)
    assert sorted(theirs.to_table(columns=["id"]).column("id").to_pylist()) == _ids(ds)
    # a stale read version: another commit came first, ours rebases onto it
    late = ls.fragment.write_fragments(_rows(300), s3_uri, storage_options=o)
    ls.write_dataset(_rows(400), s3_uri, mode="append", storage_options=o)
    ds = ls.Dataset.commit(
        s3_uri, ls.LanceOperation.Append(late), read_version=2, storage_options=o
    )
    assert ds.version == 4 and 300 in _ids(ds) and 400 in _ids(ds)


def test_a_flagged_create_on_s3_keeps_each_workers_layout(s3_uri: str, s3_options: dict) -> None:
    o = s3_options
    with mp.get_context("spawn").Pool(2) as pool:
        parts = pool.starmap(
            _worker, [(s3_uri, o, k * 10, layout, True) for k, layout in enumerate(LAYOUTS)]
        )
    fragments = [f for p in parts for f in pickle.loads(p)]
    schema = _rows(0).schema
    op = ls.LanceOperation.Overwrite(schema, fragments)
    ds = ls.Dataset.commit(s3_uri, op, storage_options=o, semantic_types=True)
    assert ds.semantic_types
    assert ds.semantic_schema.field("s").logical_type == "string"
    stored = [
        LanceFileReader(f"{s3_uri}/data/{f.files[0].path}", storage_options=o)
        .metadata()
        .schema.field("s")
        .type
        for f in ds.manifest.fragments
    ]
    assert stored == list(LAYOUTS.values())
    got = ds.to_table(output_encodings={"s": "large_utf8"})
    assert got.schema.field("s").type == pa.large_string()
    assert sorted(got.column("id").to_pylist()) == [k * 10 + i for k in range(3) for i in range(5)]
