"""Local table locations are read as pylance 14 reads them: a plain path
literally (``%20``, ``#``, ``?``, ``:``, ``%2F`` are characters of its name, relative to the
working directory), a ``file:`` URI decoded as a URL (escapes, ``?`` / ``#`` end the path,
``\\`` is ``/``). Every name with such characters, in every form, both ways: pylance creates
and we read, append (data files and blob sidecars), delete and check; we create and pylance
reads. Where pylance refuses a location, we refuse it too, with a library error."""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field

import lance_semantic as ls
from lance_semantic.storage.uris import parse_location

#: names with every character a location treats specially somewhere
NAMES = ["a b", "é ü", "a%20b", "a#b", "a?b", "a:b", "a%2Fb", "a%b", "a\\b", "a+b;c"]

#: how a test spells the location of table ``name`` under ``root`` (the working directory)
FORMS: dict[str, Callable[[Path, str], str]] = {
    "absolute": lambda root, name: f"{root}/{name}.lance",
    "relative": lambda root, name: f"{name}.lance",
    "dot-relative": lambda root, name: f"./{name}.lance",
    "file-uri": lambda root, name: f"file://{root}/{name}.lance",
    "file-uri-encoded": lambda root, name: "file://" + urllib.parse.quote(f"{root}/{name}.lance"),
    "file-single-slash": lambda root, name: f"file:{root}/{name}.lance",
}

#: (name, form) pylance refuses: "a:b.lance" is a URI of the scheme "a"
REFUSED = {("a:b", "relative")}


def _blob_schema() -> pa.Schema:
    """A blob v2 column whose small values are inline (8 B), packed (40 B) or dedicated
    (100 B): every kind of sidecar, cheaply."""
    clip = blob_field("clip")
    clip = clip.with_metadata(
        {
            **(clip.metadata or {}),
            b"lance-encoding:blob-inline-size-threshold": b"16",
            b"lance-encoding:blob-dedicated-size-threshold": b"64",
        }
    )
    return pa.schema([pa.field("id", pa.int64()), clip])


PAYLOADS = [b"x" * 8, b"y" * 40, b"z" * 100]


def _table(start: int) -> pa.Table:
    ids = pa.array(range(start, start + len(PAYLOADS)), pa.int64())
    return pa.table({"id": ids, "clip": blob_array(PAYLOADS)}, schema=_blob_schema())


def _tables(root: Path) -> list[str]:
    """The table directories (holding ``_versions``) anywhere under ``root``."""
    return sorted(d for d, dirs, _ in os.walk(root) if "_versions" in dirs)


def _blobs(ds: lance.LanceDataset | ls.Dataset, ids: list[int]) -> list[bytes]:
    """The blobs of the rows whose id is in ``ids``, read through ``ds``."""
    order = ds.to_table(columns=["id"]).column("id").to_pylist()
    return [f.read() for f in ds.take_blobs("clip", indices=[order.index(i) for i in ids])]


def _ids(ds: lance.LanceDataset | ls.Dataset) -> list[int]:
    return sorted(ds.to_table(columns=["id"]).column("id").to_pylist())


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("name", NAMES)
def test_a_table_is_where_pylance_puts_it_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, form: str
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    monkeypatch.chdir(root)
    uri = FORMS[form](root, name)
    if (name, form) in REFUSED:
        _pylance_refuses(uri)
        with pytest.raises(ls.InvalidUriError):
            ls.write_dataset(_table(0), uri)
        return
    lance.write_dataset(_table(0), uri)  # pylance creates
    where = _tables(tmp_path)
    assert len(where) == 1
    assert parse_location(uri).path == where[0]

    ours = ls.dataset(uri)
    assert _ids(ours) == [0, 1, 2] and _blobs(ours, [0, 1, 2]) == PAYLOADS
    ours.insert(_table(3))  # our data file and sidecars, where pylance looks for them
    ours.delete("id = 1")
    assert ls.check(uri).ok
    theirs = lance.dataset(uri)
    assert _ids(theirs) == [0, 2, 3, 4, 5]
    assert _blobs(theirs, [3, 4, 5]) == PAYLOADS

    shutil.rmtree(where[0])
    ls.write_dataset(_table(0), uri)  # we create
    assert _tables(tmp_path) == where
    theirs = lance.write_dataset(_table(3), uri, mode="append")
    assert _ids(theirs) == list(range(6)) and _blobs(theirs, [0, 1, 2]) == PAYLOADS
    assert _blobs(ls.dataset(uri), [3, 4, 5]) == PAYLOADS


def _pylance_refuses(uri: str) -> None:
    with pytest.raises(OSError):
        lance.write_dataset(pa.table({"id": [1]}), uri)


@pytest.mark.parametrize(
    "spelt",
    [
        "ab:{name}",  # a URI of scheme "ab" (pylance: no store for it)
        "a1+b.c-d:{name}",
        "  ab:{name}",  # leading spaces are trimmed before the scheme is read
        "file://{root}/a%FF{name}",  # escapes that are no UTF-8
        "file://{root}/a%00{name}",  # control characters, escaped or not
        "file://{root}/a%1F{name}",
        "{root}/a\x01{name}",
        "a\x7f{name}",
    ],
)
def test_locations_pylance_refuses_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelt: str
) -> None:
    monkeypatch.chdir(tmp_path)
    uri = spelt.format(root=tmp_path, name="t.lance")
    _pylance_refuses(uri)
    with pytest.raises(ls.InvalidUriError) as error:
        ls.write_dataset(pa.table({"id": [1]}), uri)
    assert error.value.uri == uri and isinstance(error.value, OSError)
    with pytest.raises(ls.InvalidUriError):
        ls.dataset(uri)
    assert _tables(tmp_path) == []


@pytest.mark.parametrize(
    "spelt",
    [
        "file://localhost{root}/{name}",  # the host is ignored
        "file://elsewhere{root}/{name}",
        "file://[::1]{root}/{name}",
        "FILE://{root}/{name}",
        "file:///{root}/x/../{name}",  # dot segments, also escaped
        "file://{root}/x/%2e%2E/{name}",
        "file://{root}/%2e/{name}",
        "file://{root}/{name}?version=3#frag",  # query and fragment
        "file://{root}/{name}/",
        "file:////{root}/{name}",
        "file://{root}/na\tme",  # tabs and newlines dropped, outer spaces trimmed
        "  file://{root}/{name}  ",
        "file:\\\\{root}\\{name}",  # backslashes are slashes
        "file://h:80{root}/{name}",  # no URL (a port on a file URL): a relative path
        "file://u@h{root}/{name}",
        "1a:{name}",  # no scheme (it starts with a digit): a relative path
        "_a:{name}",
        "sub/ab:{name}",
        " {root}/{name}",  # a plain path is literal, its spaces included
        "s3://bk t/{name}",  # no URL's authority, whatever the scheme: a local path
        "ab://bk t/{name}",
        "s3://bk\\t/{name}",
        "gs://b<k/{name}",
        "s3://[zz]/{name}",
        "s3://bkt:99999/{name}",
        "s3://bkt:x/{name}",
        "s3://u@/{name}",
        "s3://:9/{name}",
    ],
)
def test_unusual_spellings_name_the_directory_pylance_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelt: str
) -> None:
    monkeypatch.chdir(tmp_path)
    uri = spelt.format(root=tmp_path, name="t.lance")
    lance.write_dataset(pa.table({"id": [1, 2]}), uri)
    where = _tables(tmp_path)
    assert len(where) == 1 and parse_location(uri).path == where[0]
    assert ls.dataset(uri).count_rows() == 2
    shutil.rmtree(where[0])
    ls.write_dataset(pa.table({"id": [1, 2, 3]}), uri)
    assert _tables(tmp_path) == where and lance.dataset(uri).count_rows() == 3


def test_a_scheme_pylance_serves_and_we_do_not_is_not_supported_yet() -> None:
    with pytest.raises(ls.NotSupportedYetError):
        ls.dataset("memory://t.lance")
