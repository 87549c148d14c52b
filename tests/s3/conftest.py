"""Session fixture: one SeaweedFS server for every S3 test (tests/s3/seaweed.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
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
