"""On S3 (a real SeaweedFS server): a table configured as pylance
users configure it, by the environment alone or by any spelling of the options, and tables
whose keys hold characters a URI treats specially, both ways (pylance creates, we read,
append data files and blob sidecars, delete, check; we create, pylance appends and reads),
every key where pylance puts it. A few cases each: the matching rules themselves are tested
against pylance in tests/interop/test_s3_configuration_like_pylance.py."""

from __future__ import annotations

import os
import re
import urllib.parse

import lance
import obstore
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from obstore.store import S3Store
from tests.s3.seaweed import ACCESS_KEY, BUCKET, SECRET_KEY, SeaweedServer

import lance_semantic as ls

#: inline (8 B), packed (40 B) and dedicated (100 B) blobs under small thresholds
PAYLOADS = [b"x" * 8, b"y" * 40, b"z" * 100]


def _table(start: int) -> pa.Table:
    clip = blob_field("clip")
    clip = clip.with_metadata(
        {
            **(clip.metadata or {}),
            b"lance-encoding:blob-inline-size-threshold": b"16",
            b"lance-encoding:blob-dedicated-size-threshold": b"64",
        }
    )
    schema = pa.schema([pa.field("id", pa.int64()), clip])
    ids = pa.array(range(start, start + len(PAYLOADS)), pa.int64())
    return pa.table({"id": ids, "clip": blob_array(PAYLOADS)}, schema=schema)


def _ids(ds: lance.LanceDataset | ls.Dataset) -> list[int]:
    return sorted(ds.to_table(columns=["id"]).column("id").to_pylist())


def _blobs(ds: lance.LanceDataset | ls.Dataset, ids: list[int]) -> list[bytes]:
    order = ds.to_table(columns=["id"]).column("id").to_pylist()
    return [f.read() for f in ds.take_blobs("clip", indices=[order.index(i) for i in ids])]


def _round_trip(uri: str, again: str, options: dict[str, str] | None) -> None:
    """pylance creates ``uri`` and we write to it, we create ``again`` and pylance writes
    to it: every file kind written by each library, read by both."""
    kw = {} if options is None else {"storage_options": options}
    lance.write_dataset(_table(0), uri, data_storage_version="2.2", **kw)
    ours = ls.dataset(uri, **kw)
    assert _ids(ours) == [0, 1, 2] and _blobs(ours, [0, 1, 2]) == PAYLOADS
    ours.insert(_table(3))  # our data file and sidecars
    ours.delete("id = 1")  # our deletion file
    assert ls.check(uri, **kw).ok
    theirs = lance.dataset(uri, **kw)
    assert _ids(theirs) == [0, 2, 3, 4, 5] and _blobs(theirs, [3, 4, 5]) == PAYLOADS

    ls.write_dataset(_table(0), again, data_storage_version="2.2", **kw)
    theirs = lance.write_dataset(_table(3), again, mode="append", **kw)
    assert _ids(theirs) == list(range(6)) and _blobs(theirs, [0, 1, 2]) == PAYLOADS
    assert _blobs(ls.dataset(again, **kw), [3, 4, 5]) == PAYLOADS
    assert ls.check(again, **kw).ok


#: every variable either library reads, cleared before each case
_CLEARED = re.compile(r"(AWS_|OBJECT_STORE_|AZURE_STORAGE_)|(ENDPOINT|REGION|TOKEN|ALLOW_HTTP)$")


def _only_environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name in list(os.environ):
        if _CLEARED.search(name):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("endpoint_var", ["AWS_ENDPOINT", "AWS_ENDPOINT_URL"])
def test_a_table_configured_by_the_environment_alone(
    s3_server: SeaweedServer, monkeypatch: pytest.MonkeyPatch, endpoint_var: str
) -> None:
    """No storage options at all: the endpoint, HTTP, the region and the keys come from the
    environment, as pylance takes them (it was 'builder error': no endpoint, no HTTP)."""
    _only_environment(
        monkeypatch,
        {
            endpoint_var: s3_server.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        },
    )
    _round_trip(s3_server.uri(), s3_server.uri(), None)


def test_options_in_other_spellings_and_the_environment_together(
    s3_server: SeaweedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Aliases and upper-case keys (``endpoint``, ``aws_allow_http``, ``ACCESS_KEY_ID``),
    the secret from the environment, an unknown key and pylance's retry options: accepted
    as pylance accepts them (``aws_allow_http`` was a Rust panic, the retry options an
    UnknownConfigurationKey error)."""
    _only_environment(monkeypatch, {"AWS_SECRET_ACCESS_KEY": SECRET_KEY})
    options = {
        "endpoint": s3_server.endpoint,
        "aws_allow_http": "true",
        "Region": "us-east-1",
        "ACCESS_KEY_ID": ACCESS_KEY,
        "client_max_retries": "2",
        "client_retry_timeout": "30",
        "download_retry_count": "2",
        "no_such_option": "x",
    }
    _round_trip(s3_server.uri(), s3_server.uri(), options)


#: table names with characters a URI treats specially: pylance decodes escapes (``%20`` is
#: a space, ``%2F`` a ``/``), ``#`` and ``?`` end the key; the rest are taken as they are
NAMES = ["a b", "é ü", "a%20b", "a%2Fb", "a%25b", "a#b", "a?b", "a:b", "a+b;c"]


def _keys(server: SeaweedServer, prefix: str) -> set[str]:
    o = server.storage_options
    store = S3Store(
        BUCKET,
        config={k: v for k, v in o.items() if k != "allow_http"},
        client_options={"allow_http": True},
    )
    return {m["path"] for batch in obstore.list(store, prefix=prefix) for m in batch}


def _pylance_key(uri: str) -> str:
    """The key prefix pylance 14 gives ``s3://bucket/...``: the path, ended by ``#`` or
    ``?``, its escapes decoded."""
    path = re.sub(r"[#?].*", "", uri.split("/", 3)[3])
    return urllib.parse.unquote(path)


@pytest.mark.parametrize("name", NAMES)
def test_a_table_whose_key_holds_special_characters(
    s3_server: SeaweedServer, s3_options: dict[str, str], name: str
) -> None:
    base = s3_server.uri()
    uris = [f"{base}/{name}.lance", f"{base}/2{name}.lance"]
    _round_trip(*uris, s3_options)
    top = base.removeprefix(f"s3://{BUCKET}/")
    keys = _keys(s3_server, top)
    roots = {k.split("/_versions/")[0] for k in keys if "/_versions/" in k}
    assert roots == {_pylance_key(u) for u in uris}
    # every other object (data files, sidecars, deletion files) under those prefixes too
    assert all(any(k.startswith(f"{r}/") for r in roots) for k in keys)
    assert any("/data/" in k and k.endswith(".blob") for k in keys)
