"""An S3 table is configured as pylance 14 configures it: the same
``storage_options`` (every alias, any case, unknown keys ignored, ``aws_allow_http``) and the
same environment variables (``AWS_ENDPOINT``, ``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_S3``,
``AWS_ALLOW_HTTP``, ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the credentials, and the names
without ``AWS_`` that pylance reads too) make the same first request: to the same server, with
the same access key, region and session token, for the same key prefix. Configurations
pylance refuses are refused with library errors, and nothing panics.

The oracle is pylance itself, against two tiny local HTTP servers that record requests and
answer an object listing with "empty" (so opening a table says "not found" at once).
"""

from __future__ import annotations

import http.server
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import lance
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.storage.options import _CLIENT_KEYS
from lance_semantic.storage.remote_store import RemoteObjectStore

_EMPTY_LISTING = (
    b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult '
    b'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name><KeyCount>0</KeyCount>'
    b"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>"
)


class _Recorder(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.server.seen.append((self.path, dict(self.headers)))  # type: ignore[attr-defined]
        listing = self.command == "GET" and "list-type=2" in self.path
        body = _EMPTY_LISTING if listing else b""
        self.send_response(200 if listing else 404)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, http.server.ThreadingHTTPServer]]:
    """Two recording servers: A (where a case means to go) and B (where it must not)."""
    out = {}
    for name in "AB":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        server.seen = []  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out[name] = server
    yield out
    for server in out.values():
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Request:
    """What the first request of an open says about the configuration."""

    server: str | None  # "A", "B", or None: no request was made
    access_key: str | None
    region: str | None
    token: str | None
    prefix: str | None


def _first_request(servers: dict[str, http.server.ThreadingHTTPServer]) -> Request:
    for name, server in servers.items():
        seen = server.seen  # type: ignore[attr-defined]
        if seen:
            path, headers = seen[0]
            auth = headers.get("Authorization") or headers.get("authorization") or ""
            scope = re.search(r"Credential=([^/]+)/\d+/([^/]+)/", auth)
            prefix = re.search(r"[?&]prefix=([^&]*)", path)
            return Request(
                name,
                scope.group(1) if scope else None,
                scope.group(2) if scope else None,
                headers.get("x-amz-security-token"),
                prefix.group(1) if prefix else None,
            )
    return Request(None, None, None, None, None)


#: every variable either library reads, cleared before each case
_CLEARED = re.compile(r"(AWS_|OBJECT_STORE_|AZURE_STORAGE_)|(ENDPOINT|REGION|TOKEN|ALLOW_HTTP)$")

KEYS = {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}
OPTION_KEYS = {"aws_access_key_id": "AKID", "aws_secret_access_key": "secret"}

#: (options, environment) by case id; "{A}" / "{B}" stand for the servers' URLs
CASES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    # configured by the environment alone
    "env-endpoint": ({}, {**KEYS, "AWS_ENDPOINT": "{A}", "AWS_ALLOW_HTTP": "true"}),
    "env-endpoint-url": ({}, {**KEYS, "AWS_ENDPOINT_URL": "{A}", "AWS_ALLOW_HTTP": "1"}),
    "env-endpoint-url-s3-wins": (
        {},
        {**KEYS, "AWS_ENDPOINT_URL_S3": "{A}", "AWS_ENDPOINT": "{B}", "AWS_ALLOW_HTTP": "yes"},
    ),
    "env-region": (
        {},
        {**KEYS, "AWS_ENDPOINT": "{A}", "AWS_ALLOW_HTTP": "true", "AWS_REGION": "eu-west-3"},
    ),
    "env-default-region": (
        {},
        {**KEYS, "AWS_ENDPOINT": "{A}", "AWS_ALLOW_HTTP": "true", "AWS_DEFAULT_REGION": "ap-1"},
    ),
    "env-session-token": (
        {},
        {**KEYS, "AWS_ENDPOINT": "{A}", "AWS_ALLOW_HTTP": "on", "AWS_SESSION_TOKEN": "tok"},
    ),
    "env-names-without-aws": (
        {},
        {**KEYS, "ENDPOINT": "{A}", "ALLOW_HTTP": "true", "REGION": "eu-north-1", "TOKEN": "t"},
    ),
    "env-without-allow-http": ({}, {**KEYS, "AWS_ENDPOINT": "{A}"}),
    # the environment's AWS_ALLOW_HTTP replaces the option; options win over the rest
    "env-allow-http-beats-option": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "false"},
        {"AWS_ALLOW_HTTP": "true"},
    ),
    "env-no-http-beats-option": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true"},
        {"AWS_ALLOW_HTTP": "false"},
    ),
    "option-endpoint-beats-env": (
        {**OPTION_KEYS, "endpoint": "{A}", "allow_http": "true"},
        {"AWS_ENDPOINT": "{B}"},
    ),
    "option-region-beats-env": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true", "region": "sa-east-1"},
        {"AWS_REGION": "eu-west-1"},
    ),
    "option-keys-beat-env": (
        {"access_key_id": "OPTIONKEY", "secret_access_key": "s", "endpoint": "{A}"},
        {**KEYS, "AWS_ALLOW_HTTP": "true"},
    ),
    # options by every spelling pylance takes
    "aws-allow-http": ({**OPTION_KEYS, "aws_endpoint": "{A}", "aws_allow_http": "true"}, {}),
    "aws-endpoint-url": ({**OPTION_KEYS, "aws_endpoint_url": "{A}", "allow_http": "TRUE"}, {}),
    "endpoint-url": ({**OPTION_KEYS, "endpoint_url": "{A}", "allow_http": "y"}, {}),
    "aws-endpoint-url-s3": (
        {**OPTION_KEYS, "aws_endpoint_url_s3": "{A}", "aws_endpoint": "{B}", "allow_http": "1"},
        {},
    ),
    "upper-case-keys": (
        {
            "AWS_ACCESS_KEY_ID": "UP",
            "Aws_Secret_Access_Key": "s",
            "AWS_ENDPOINT": "{A}",
            "Allow_Http": "true",
            "REGION": "us-east-2",
        },
        {},
    ),
    "aliases": (
        {
            "access_key_id": "AL",
            "secret_access_key": "s",
            "token": "tk",
            "endpoint": "{A}",
            "region": "eu-central-1",
            "allow_http": "true",
        },
        {},
    ),
    "default-region-option": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true", "default_region": "x-1"},
        {},
    ),
    "unknown-keys-ignored": (
        {
            **OPTION_KEYS,
            "aws_endpoint": "{A}",
            "allow_http": "true",
            "foo": "bar",
            "aws_foo": "x",
            "download_retry_count": "3",
            "google_service_account": "g",
            "client_max_retries": "2",
            "new_table_enable_stable_row_ids": "true",
        },
        {},
    ),
    "client-keys-with-aws-prefix": (
        {
            **OPTION_KEYS,
            "aws_endpoint": "{A}",
            "aws_allow_http": "true",
            "aws_timeout": "30s",
            "aws_user_agent": "me",
            "aws_connect_timeout": "5s",
        },
        {},
    ),
    "option-allow-http-false": ({**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "no"}, {}),
    "bad-boolean": ({**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "banana"}, {}),
    "bad-boolean-other-key": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true", "http1_only": "maybe"},
        {},
    ),
    "bad-duration": (
        {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true", "timeout": "soon"},
        {},
    ),
}


_PREFIX = "some%2Ftable.lance%2F_versions%2F"
_NONE = Request(None, None, None, None, None)
#: what pylance's first request is, for the cases that show each rule
EXPECTED = {
    "env-endpoint": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "env-endpoint-url-s3-wins": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "env-region": Request("A", "AKID", "eu-west-3", None, _PREFIX),
    "env-default-region": Request("A", "AKID", "ap-1", None, _PREFIX),
    "env-session-token": Request("A", "AKID", "us-west-2", "tok", _PREFIX),
    "env-names-without-aws": Request("A", "AKID", "eu-north-1", "t", _PREFIX),
    "env-without-allow-http": _NONE,
    "env-allow-http-beats-option": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "env-no-http-beats-option": _NONE,
    "option-endpoint-beats-env": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "option-region-beats-env": Request("A", "AKID", "sa-east-1", None, _PREFIX),
    "option-keys-beat-env": Request("A", "OPTIONKEY", "us-west-2", None, _PREFIX),
    "aws-allow-http": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "aws-endpoint-url-s3": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "upper-case-keys": Request("A", "UP", "us-east-2", None, _PREFIX),
    "aliases": Request("A", "AL", "eu-central-1", "tk", _PREFIX),
    "default-region-option": Request("A", "AKID", "us-west-2", None, _PREFIX),
    "option-allow-http-false": _NONE,
    "bad-boolean": _NONE,
}


def _open(
    library: object,
    uri: str,
    options: dict[str, str],
    environment: dict[str, str],
    servers: dict[str, http.server.ThreadingHTTPServer],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Request, BaseException]:
    urls = {name: f"http://127.0.0.1:{s.server_address[1]}" for name, s in servers.items()}
    fill = lambda v: v.format(**urls)  # noqa: E731
    for name in list(os.environ):
        if _CLEARED.search(name):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, fill(value))
    for server in servers.values():
        server.seen.clear()  # type: ignore[attr-defined]
    with pytest.raises(BaseException) as raised:  # noqa: PT011 -- compared below
        library.dataset(uri, storage_options={k: fill(v) for k, v in options.items()})  # type: ignore[attr-defined]
    return _first_request(servers), raised.value


@pytest.mark.parametrize("case", list(CASES))
def test_the_first_request_is_pylances(
    case: str,
    servers: dict[str, http.server.ThreadingHTTPServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options, environment = CASES[case]
    uri = "s3://bkt/some/table.lance"
    theirs, their_error = _open(lance, uri, options, environment, servers, monkeypatch)
    ours, our_error = _open(ls, uri, options, environment, servers, monkeypatch)
    assert ours == theirs
    if case in EXPECTED:  # the oracle is not vacuous: pylance does what the case means
        assert theirs == EXPECTED[case]
    if theirs.server is not None:  # pylance got its answer: no table there
        assert "not found" in str(their_error)
        assert isinstance(our_error, ls.DatasetNotFoundError)
    else:  # pylance failed to configure or to make the request: a library error here
        assert isinstance(their_error, OSError | ValueError), their_error
        assert isinstance(our_error, ls.StorageError) and isinstance(our_error, OSError)
        if case.startswith("bad-"):
            assert isinstance(our_error, ls.InvalidStorageOptionError)


#: table names whose key pylance decodes from the URI: escapes, "#" and "?" end it
NAMES = ["a b", "é ü", "a%20b", "a%2Fb", "a%25b", "a#b", "a%23b", "a?b", "a:b", "x/../y", "%2e%2e"]


@pytest.mark.parametrize("name", NAMES)
def test_the_key_prefix_is_pylances(
    name: str, servers: dict[str, http.server.ThreadingHTTPServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {**OPTION_KEYS, "aws_endpoint": "{A}", "allow_http": "true"}
    uri = f"s3://bkt/p/{name}.lance"
    theirs, _ = _open(lance, uri, options, {}, servers, monkeypatch)
    ours, our_error = _open(ls, uri, options, {}, servers, monkeypatch)
    assert theirs.server == "A" and ours == theirs
    assert isinstance(our_error, ls.DatasetNotFoundError)


@pytest.mark.parametrize("key", sorted(_CLIENT_KEYS))
@pytest.mark.parametrize("spelling", ["{}", "aws_{}", "AWS_{}"])
def test_no_http_client_key_panics(key: str, spelling: str) -> None:
    """obstore panics on an HTTP client key given with the store's keys; each one, in each
    spelling pylance takes, configures the client instead (values pylance takes)."""
    values = {
        "proxy_url": "http://127.0.0.1:9",
        "pool_max_idle_per_host": "2",
        "http2_max_frame_size": "16384",
        "default_content_type": "a/b",
        "proxy_ca_certificate": "",
        "proxy_excludes": "",
        "user_agent": "me",
    }
    value = values.get(key, "true" if "timeout" not in key and "interval" not in key else "5s")
    store = RemoteObjectStore("s3://bkt/t.lance", {spelling.format(key): value, "region": "x"})
    assert store.codec_root == "s3://bkt/t.lance"


#: endpoints pylance 14 panics on (its HTTP client cannot make a request URI of them)
BAD_ENDPOINTS = [
    "localhost:9000",
    "",
    "not a url",
    "http://",
    "http://[::1",
    "http:/h:9",
    "http://h:99999",
    " http://h:9",
    "http://bk t:9",
    "http://é.x:9",
]


@pytest.mark.parametrize("endpoint", BAD_ENDPOINTS)
@pytest.mark.parametrize("given", ["endpoint", "aws_endpoint_url_s3", "AWS_ENDPOINT"])
def test_an_endpoint_pylance_panics_on_is_refused_naming_it(
    endpoint: str, given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if _CLEARED.search(name):
            monkeypatch.delenv(name)
    options = {**OPTION_KEYS, "allow_http": "true", "client_max_retries": "0"}
    if given.isupper():
        monkeypatch.setenv(given, endpoint)
    else:
        options[given] = endpoint
    uri = "s3://bkt/t.lance"
    with pytest.raises(BaseException) as theirs:  # noqa: PT011 -- a panic: BaseException
        lance.dataset(uri, storage_options=options)
    assert type(theirs.value).__name__ == "PanicException"
    for call in (
        lambda: ls.dataset(uri, storage_options=options),
        lambda: ls.write_dataset(pa.table({"id": [1]}), uri, storage_options=options),
    ):
        with pytest.raises(ls.InvalidStorageOptionError) as ours:
            call()
        assert ours.value.key == given and ours.value.value == repr(endpoint)


@pytest.mark.parametrize("uri", ["s3:///t.lance", "s3:bkt/t.lance", "s3://", "S3:/bkt/t"])
def test_an_s3_uri_without_bucket_is_refused_as_by_pylance(uri: str) -> None:
    options = {**OPTION_KEYS, "aws_endpoint": "http://127.0.0.1:9", "allow_http": "true"}
    with pytest.raises(ValueError, match="did not match any known pattern"):
        lance.dataset(uri, storage_options=options)
    with pytest.raises(ls.InvalidUriError) as ours:
        ls.dataset(uri, storage_options=options)
    assert ours.value.uri == uri and isinstance(ours.value, ValueError)
