"""Session fixtures: one SeaweedFS server for every S3 test (tests/s3/seaweed.py), and one
fault-injecting proxy in front of it (tests/s3/faulty_proxy.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.s3.faulty_proxy import FaultyProxy
from tests.s3.seaweed import SeaweedServer, start


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedServer]:
    server = start(tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_uri(s3_server: SeaweedServer) -> str:
    """A fresh table location in the test bucket."""
    return s3_server.uri()


@pytest.fixture
def s3_options(s3_server: SeaweedServer) -> dict[str, str]:
    return s3_server.storage_options


@pytest.fixture(scope="session")
def s3_proxy(s3_server: SeaweedServer) -> Iterator[FaultyProxy]:
    """The proxy in front of the server; a late answer is held 2.6 s (the fault tests give
    the clients a 2 s timeout), a delay is 0.3 s. Each test arms it afresh."""
    with FaultyProxy(s3_server.endpoint, hold=2.6, pause=0.3) as proxy:
        yield proxy
