"""The fault-injecting proxy (tests/s3/faulty_proxy.py) does what each fault says, seen by
an obstore client that does not retry: whether the client gets an answer, and whether the
server applied the request."""

from __future__ import annotations

import time
from datetime import timedelta

import obstore
import pytest
from obstore.store import S3Store
from tests.s3.faulty_proxy import Fault, FaultyProxy, ProxiedRequest
from tests.s3.seaweed import ACCESS_KEY, BUCKET, SECRET_KEY, SeaweedServer


def _raw_store(endpoint: str, prefix: str) -> S3Store:
    """An obstore client through ``endpoint`` that does not retry (to see each fault)."""
    return S3Store(
        BUCKET,
        prefix=prefix,
        config={
            "aws_endpoint": endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": "us-east-1",
        },
        client_options={"allow_http": True, "timeout": timedelta(seconds=1)},
        retry_config={
            "max_retries": 0,
            "retry_timeout": timedelta(seconds=1),
            "backoff": {"init_backoff": timedelta(0), "max_backoff": timedelta(0), "base": 2},
        },
    )


def _put_only(r: ProxiedRequest) -> bool:
    return r.method == "PUT"


@pytest.mark.parametrize(
    "fault", [f for f in Fault if f not in (Fault.TRUNCATED_BODY,)], ids=lambda f: f.value
)
def test_the_proxy_injects_each_fault_into_a_put(
    s3_proxy: FaultyProxy, s3_server: SeaweedServer, fault: Fault
) -> None:
    prefix = s3_server.uri().rsplit("/", 1)[1]
    through, direct = (
        _raw_store(s3_proxy.endpoint, prefix),
        _raw_store(s3_server.endpoint, prefix),
    )
    s3_proxy.reset()
    s3_proxy.arm(fault, 0, _put_only)
    start = time.monotonic()
    try:
        obstore.put(through, "k", b"value", mode="create")
        failed = False
    except Exception:  # noqa: BLE001 -- what the client sees of the fault
        failed = True
    took = time.monotonic() - start
    if fault is Fault.LATE_APPLY:  # the client's next request is answered first
        with pytest.raises(FileNotFoundError):
            obstore.get(through, "k")
    s3_proxy.settle()
    assert s3_proxy.injected is not None and s3_proxy.injected.key == f"{prefix}/k"
    assert s3_proxy.injected.if_none_match == "*"
    assert failed is (fault is not Fault.DELAY)
    if fault is Fault.DELAY:
        assert took >= s3_proxy.pause
    if fault is Fault.LATE_ANSWER:
        assert 1.0 <= took < s3_proxy.hold
    stored = True
    try:
        obstore.get(direct, "k").bytes()
    except FileNotFoundError:
        stored = False
    assert stored is fault.reaches_server


def test_the_proxy_counts_and_truncates_gets(
    s3_proxy: FaultyProxy, s3_server: SeaweedServer
) -> None:
    prefix = s3_server.uri().rsplit("/", 1)[1]
    store = _raw_store(s3_proxy.endpoint, prefix)
    payload = bytes(range(256)) * 64
    with s3_proxy.recording() as requests:
        obstore.put(store, "k", payload)
        assert bytes(obstore.get_range(store, "k", start=10, length=5)) == payload[10:15]
    assert [(r.method, r.key, r.range, r.status) for r in requests] == [
        ("PUT", f"{prefix}/k", None, 200),
        ("GET", f"{prefix}/k", "bytes=10-14", 206),
    ]
    assert requests[0].body_size == len(payload) and requests[1].answer_size == 5
    s3_proxy.arm(Fault.TRUNCATED_BODY, 0)
    with pytest.raises(Exception):  # noqa: B017 -- the client's own error for a short body
        obstore.get(store, "k").bytes()
    assert s3_proxy.injected is not None and s3_proxy.injected.method == "GET"
    s3_proxy.arm(Fault.ERROR_5XX, 1)  # the second request from now
    assert bytes(obstore.get(store, "k").bytes()) == payload
    with pytest.raises(Exception):  # noqa: B017
        obstore.get(store, "k").bytes()
    assert s3_proxy.injected is not None
