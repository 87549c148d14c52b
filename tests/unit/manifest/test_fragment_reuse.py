"""Issue 13 "fast commits and opens": fragments decoded once per process and reused by later
versions (``manifest._fragments``, the caches in ``manifest._convert``) must give exactly the
manifest a fresh decode gives, for every version of tables changed in every way, written by
either library, and whatever the order the versions are opened in."""

from __future__ import annotations

import random
from pathlib import Path

import lance
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import lance_semantic as ls
from lance_semantic.commit.committer import list_versions
from lance_semantic.manifest import _convert, _fragments
from lance_semantic.manifest.codec import decode_manifest_file, encode_manifest_file
from lance_semantic.storage.object_store import LocalObjectStore


@given(st.binary(max_size=9000), st.binary(max_size=9000), st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_common_prefix_is_the_length_of_the_shared_start(a: bytes, b: bytes, c: bytes) -> None:
    for x, y in ((a, b), (c + a, c + b), (c + a, c), (a, a)):
        n = _fragments.common_prefix(x, y)
        assert x[:n] == y[:n]
        assert n == min(len(x), len(y)) or x[n] != y[n]


def _fresh(data: bytes):  # type: ignore[no-untyped-def]
    """The manifest decoded with every cache empty."""
    saved = (dict(_convert._DECODED), dict(_convert._ENCODED), dict(_fragments._LAST))
    for cache in (_convert._DECODED, _convert._ENCODED, _fragments._LAST):
        cache.clear()
    try:
        return decode_manifest_file(data)
    finally:
        _convert._DECODED.update(saved[0])
        _convert._ENCODED.update(saved[1])
        _fragments._LAST.update(saved[2])


def _versions(uri: str) -> list[bytes]:
    store = LocalObjectStore(uri)
    names = list_versions(store)
    return [store.get(f"_versions/{names[v]}") for v in sorted(names)]


def _history(tmp_path: Path) -> list[str]:
    """Tables whose versions change fragments in every way our writers and pylance's do."""
    ours = str(tmp_path / "ours")
    rows = pa.table({"id": list(range(40)), "s": [str(i) for i in range(40)]})
    ds = ls.write_dataset(rows, ours, max_rows_per_file=10)
    for k in range(3):
        ds.insert(pa.table({"id": [100 + k], "s": ["x"]}))
    ds.delete("id % 7 = 0")
    ds.update({"s": "'u'"}, where="id < 12")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        pa.table({"id": [3, 200], "s": ["m", "n"]})
    )
    ds.add_columns({"k": "id * 2"})
    ds.optimize.compact_files(target_rows_per_fragment=25)
    ds.delete("id = 13")
    ds.checkout_version(3).restore()
    ds.insert(pa.table({"id": [300], "s": ["y"]}))
    theirs = str(tmp_path / "theirs")
    pds = lance.write_dataset(rows, theirs, max_rows_per_file=10)
    for k in range(3):
        pds = lance.write_dataset(pa.table({"id": [100 + k], "s": ["x"]}), pds, mode="append")
    pds.delete("id % 5 = 1")
    pds.update({"s": "'v'"}, where="id > 30")
    ls.dataset(theirs).insert(pa.table({"id": [400], "s": ["z"]}))
    return [ours, theirs]


def test_fragment_reuse_every_version_decodes_as_a_fresh_decode(tmp_path: Path) -> None:
    manifests = [data for uri in _history(tmp_path) for data in _versions(uri)]
    assert len(manifests) >= 20
    orders = [list(range(len(manifests))), list(reversed(range(len(manifests))))]
    orders += [random.Random(seed).sample(range(len(manifests)), len(manifests)) for seed in (1, 2)]
    for order in orders:
        for i in order:
            cached = decode_manifest_file(manifests[i])
            assert cached == _fresh(manifests[i]), i
            # and what the caches encode decodes back to the same manifest
            assert _fresh(encode_manifest_file(cached)) == cached


def test_fragment_reuse_a_changed_entry_in_the_middle_is_decoded_again(tmp_path: Path) -> None:
    """Versions whose fragments differ before the end (a delete in fragment 0) reuse only
    the fragments before the first changed byte."""
    uri = _history(tmp_path)[0]
    data = _versions(uri)
    for a, b in zip(data, data[1:], strict=False):
        decode_manifest_file(a)
        assert decode_manifest_file(b) == _fresh(b)
