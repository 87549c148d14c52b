"""Tag files (commit/refs.py) without pylance: the layout, tolerant reads, name rules,
timestamps, and the verbs over a local store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lance_semantic.commit import refs
from lance_semantic.errors import (
    CorruptTableError,
    InvalidTagNameError,
    TagExistsError,
    TagNotFoundError,
    VersionNotFoundError,
)
from lance_semantic.storage.object_store import LocalObjectStore
from lance_semantic.storage.paths import VERSIONS_DIR, manifest_name


def test_the_layout_is_serde_jsons_pretty_printing() -> None:
    contents = refs.TagContents(
        version=2,
        manifest_size=422,
        created_at_ns=1_796_144_387_100_938_011,
        updated_at_ns=1_796_144_405_026_573_397,
    )
    assert refs.encode_tag(contents) == (
        b'{\n  "branch": null,\n  "version": 2,\n'
        b'  "createdAt": "2026-12-01T16:59:47.100938011Z",\n'
        b'  "updatedAt": "2026-12-01T17:00:05.026573397Z",\n'
        b'  "manifestSize": 422,\n  "metadata": {}\n}'
    )
    with_metadata = refs.encode_tag(
        refs.TagContents(1, 368, metadata={"a": "b", "é": "ü"}, created_at_ns=0, updated_at_ns=0)
    )
    assert with_metadata.endswith(
        b'"metadata": {\n    "a": "b",\n    "\xc3\xa9": "\xc3\xbc"\n  }\n}'
    )
    assert refs.decode_tag(with_metadata).metadata == {"a": "b", "é": "ü"}


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (1_767_225_600_000_000_000, "2026-01-01T00:00:00Z"),
        (1_767_225_600_500_000_000, "2026-01-01T00:00:00.500Z"),
        (1_767_225_600_000_123_000, "2026-01-01T00:00:00.000123Z"),
        (1_767_225_600_000_000_001, "2026-01-01T00:00:00.000000001Z"),
    ],
)
def test_timestamps_use_the_fewest_exact_fraction_digits(ns: int, text: str) -> None:
    assert refs.format_timestamp(ns) == text
    assert refs.parse_timestamp(text) == ns


@given(st.integers(min_value=0, max_value=4_102_444_800 * 10**9))
def test_timestamps_round_trip(ns: int) -> None:
    assert refs.parse_timestamp(refs.format_timestamp(ns)) == ns


def test_offsets_and_short_fractions_parse() -> None:
    assert refs.parse_timestamp("2026-01-01T01:00:00.5+01:00") == 1_767_225_600_500_000_000
    with pytest.raises(ValueError):
        refs.parse_timestamp("yesterday")


def test_older_tag_files_read_without_times_or_metadata() -> None:
    old = refs.decode_tag(b'{"branch":null,"version":3,"manifestSize":10}')
    assert (old.version, old.manifest_size, old.created_at_ns, dict(old.metadata)) == (
        3,
        10,
        None,
        {},
    )


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b'{"version": 1}', b'{"version": -1, "manifestSize": 1}', b"\xff"],
)
def test_what_is_not_a_tag_file_is_named(data: bytes) -> None:
    with pytest.raises(CorruptTableError) as info:
        refs.decode_tag(data, "/t/_refs/tags/x.json")
    assert info.value.path == "/t/_refs/tags/x.json"


@pytest.mark.parametrize("name", ["v1.2.3-rc4", "A_b", "123", "main", "é", "ñ1"])
def test_good_names(name: str) -> None:
    assert refs.check_tag_name(name) == name


@pytest.mark.parametrize("name", ["", ".x", "x.", "a..b", "x.lock", "a/b", "a b", "a%b", "a\\b"])
def test_bad_names(name: str) -> None:
    with pytest.raises(InvalidTagNameError) as info:
        refs.check_tag_name(name)
    assert info.value.tag == name


def _table(tmp_path: Path, versions: int) -> LocalObjectStore:
    store = LocalObjectStore(str(tmp_path))
    for v in range(1, versions + 1):
        store.put(f"{VERSIONS_DIR}/{manifest_name(v)}", b"m" * (100 + v))
    return store


def test_the_verbs_on_a_store(tmp_path: Path) -> None:
    store = _table(tmp_path, 2)
    made = refs.create_tag(store, "é", 1)
    assert made.manifest_size == 101 and made.created_at_ns == made.updated_at_ns
    assert (tmp_path / "_refs/tags/%C3%A9.json").exists()
    assert list(refs.list_tags(store)) == ["é"]
    with pytest.raises(TagExistsError):
        refs.create_tag(store, "é", 2)
    with pytest.raises(VersionNotFoundError):
        refs.create_tag(store, "other", 3)
    refs.replace_tag_metadata(store, "é", {"k": "v"})
    moved = refs.update_tag(store, "é", 2)
    assert (moved.version, moved.manifest_size, dict(moved.metadata)) == (2, 102, {"k": "v"})
    assert moved.created_at_ns == made.created_at_ns and moved.updated_at_ns is not None
    assert moved.updated_at_ns >= made.created_at_ns  # type: ignore[operator]
    assert refs.read_tag(store, "é") == moved
    refs.delete_tag(store, "é")
    assert refs.list_tags(store) == {}
    for verb in (lambda: refs.read_tag(store, "é"), lambda: refs.delete_tag(store, "é")):
        with pytest.raises(TagNotFoundError):
            verb()


def test_listing_skips_other_files(tmp_path: Path) -> None:
    store = _table(tmp_path, 1)
    refs.create_tag(store, "a", 1)
    (tmp_path / "_refs/tags/notes.txt").write_text("x")
    (tmp_path / "_refs/tags/dir.json").mkdir()
    assert list(refs.list_tags(store)) == ["a"]
    assert json.loads((tmp_path / "_refs/tags/a.json").read_text())["version"] == 1
