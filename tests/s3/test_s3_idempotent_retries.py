"""Our metadata IO (storage/remote_store.py) tries an idempotent request again when it fails
in a way that may not last: a fault at any such request
(GET, ranged GET, HEAD, LIST with and without delimiter, PUT, DELETE, which S3 makes a bulk
``POST ?delete``) gives the caller what a clean request gives, whether the client retries
it itself or not (it does not retry a LIST whose body is cut short, nor a DELETE whose
answer is lost). A delete whose answer was lost was applied: the object is gone, and that is
success. A failure that lasts is a StorageError naming the operation and the object."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.s3.faulty_proxy import Fault, FaultyProxy, ProxiedRequest
from tests.s3.seaweed import SeaweedServer

import lance_semantic as ls
from lance_semantic.storage.remote_store import RemoteObjectStore

_VALUE = b"0123456789"

#: each idempotent request: what it is called with, and what a clean request gives
_REQUESTS: dict[str, tuple[Callable[[RemoteObjectStore], object], object]] = {
    "get": (lambda s: s.get("dir/k"), _VALUE),
    "read_range": (lambda s: s.read_range("dir/k", 2, 3), b"234"),
    "read_range_past_the_end": (lambda s: s.read_range("dir/k", len(_VALUE), 3), b""),
    "exists": (lambda s: s.exists("dir/k"), True),
    "size": (lambda s: s.size("dir/k"), len(_VALUE)),
    "list": (lambda s: s.list("dir"), ["k"]),
    "walk": (lambda s: [f.path for f in s.walk("dir")], ["dir/k"]),
    "put": (lambda s: s.put("dir/k", _VALUE), None),
    "delete": (lambda s: s.delete("dir/k"), None),
}

_FAULTS = [Fault.LOST_ANSWER, Fault.RESET, Fault.TRUNCATED_BODY, Fault.LATE_APPLY]


def _first(r: ProxiedRequest) -> bool:
    return True


@pytest.fixture
def through_proxy(s3_proxy: FaultyProxy, s3_server: SeaweedServer) -> RemoteObjectStore:
    options = {**s3_proxy.storage_options(s3_server.storage_options), "timeout": "2s"}
    return RemoteObjectStore(s3_server.uri(), options)


@pytest.mark.parametrize("fault", _FAULTS, ids=lambda f: f.value)
@pytest.mark.parametrize("request_name", list(_REQUESTS))
def test_a_fault_at_an_idempotent_request_is_tried_again(
    s3_proxy: FaultyProxy, through_proxy: RemoteObjectStore, request_name: str, fault: Fault
) -> None:
    call, clean = _REQUESTS[request_name]
    through_proxy.put("dir/k", _VALUE)
    s3_proxy.reset()
    s3_proxy.arm(fault, 0, _first)
    got = call(through_proxy)
    s3_proxy.settle()
    assert s3_proxy.injected is not None
    assert got == clean
    s3_proxy.disarm()
    if request_name == "delete":
        assert not through_proxy.exists("dir/k")
        through_proxy.delete("dir/k")  # an object already gone is deleted
    else:
        assert through_proxy.get("dir/k") == _VALUE


def test_a_delete_whose_answer_comes_too_late_is_deleted(
    s3_proxy: FaultyProxy, through_proxy: RemoteObjectStore
) -> None:
    through_proxy.put("dir/k", _VALUE)
    s3_proxy.reset()
    s3_proxy.arm(Fault.LATE_ANSWER, 0, lambda r: r.method == "POST")
    through_proxy.delete("dir/k")
    s3_proxy.settle()
    assert s3_proxy.injected is not None
    assert not through_proxy.exists("dir/k")


@pytest.mark.parametrize("request_name", ["get", "list", "walk", "delete", "put"])
def test_a_failure_that_lasts_is_a_storage_error_naming_the_request(
    s3_server: SeaweedServer, request_name: str
) -> None:
    closed = "http://127.0.0.1:9"  # discard port: nothing listens
    options = {
        **s3_server.storage_options,
        "aws_endpoint": closed,
        "client_max_retries": "0",
        "timeout": "1s",
    }
    store = RemoteObjectStore(s3_server.uri(), options)
    operation = {"get": "read", "put": "write", "walk": "list"}.get(request_name, request_name)
    with pytest.raises(ls.StorageError) as caught:
        _REQUESTS[request_name][0](store)
    assert caught.value.operation == operation
    assert caught.value.path.startswith(store.root)
