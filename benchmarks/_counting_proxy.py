"""A counting HTTP reverse proxy for S3 benchmarks (stdlib only).

Run it as a process of its own (so its threads never compete for the benchmark's GIL)::

    python benchmarks/_counting_proxy.py http://127.0.0.1:8333

It binds 127.0.0.1 on a free port and prints ``port <N>`` on its first line of output. Every
request is forwarded to the upstream server as it came: the same method, path and query, the
same headers (``Host`` included, which SigV4 signs) and the same body bytes; the upstream's
status, headers and body are streamed back. One upstream connection is kept per client
connection.

Each forwarded request is logged (:class:`Request`: method, path and query, ``Range`` header,
status, body bytes each way, whether it was resent (once, on a new upstream connection, when a
kept-alive one had closed before any answer) and whether it opened its client connection, which
counts the connections a client made). Two paths are answered by the proxy itself and
never forwarded:

- ``GET /__proxy__/log``: the log since the last reset, as JSON, once no request is in flight
  (a client can have its answer a moment before the proxy has logged it);
- ``POST /__proxy__/reset``: empties the log.

:class:`CountingProxy` starts the process and reads the log; :func:`kind` classifies a request
(``LIST`` is a ``GET`` with ``list-type`` in the query).
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CONTROL = "/__proxy__/"
_CHUNK = 1 << 16
#: responses that never have a body
_NO_BODY = {204, 304}


def kind(method: str, target: str) -> str:
    """``LIST`` for a bucket listing (``GET ...?list-type=2``), else the method."""
    query = urllib.parse.urlsplit(target).query
    if method == "GET" and "list-type" in urllib.parse.parse_qs(query, keep_blank_values=True):
        return "LIST"
    return method


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the S3 clients expect
    server: _Server
    upstream: http.client.HTTPConnection | None = None
    used = False  # whether a request was forwarded on this client connection

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- quiet
        pass

    # ---- control paths -------------------------------------------------------------------
    def _control(self) -> None:
        if self.command == "GET" and self.path == CONTROL + "log":
            with self.server.idle:  # a client may have its answer before it is logged
                self.server.idle.wait_for(lambda: not self.server.in_flight, timeout=30)
                body = json.dumps(self.server.log).encode()
        elif self.command == "POST" and self.path == CONTROL + "reset":
            self._read_body()
            with self.server.idle:
                self.server.log.clear()
            body = b"{}"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # ---- forwarding ----------------------------------------------------------------------
    def _read_body(self) -> bytes:
        """The request body as raw bytes (chunked framing kept as it came)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw = bytearray()
            while True:
                line = self.rfile.readline()
                raw += line
                size = int(line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while True:  # trailers, up to the empty line
                        trailer = self.rfile.readline()
                        raw += trailer
                        if trailer in (b"\r\n", b"\n", b""):
                            return bytes(raw)
                raw += self.rfile.read(size + 2)  # data and its CRLF
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _connection(self, fresh: bool) -> http.client.HTTPConnection:
        if fresh or self.upstream is None:
            if self.upstream is not None:
                self.upstream.close()
            host, port = self.server.upstream
            self.upstream = http.client.HTTPConnection(host, port, timeout=300)
        return self.upstream

    def _send_upstream(self, body: bytes) -> tuple[http.client.HTTPResponse, int]:
        """Sends the request as it came, and the number of resends: once more on a fresh
        connection when a kept-alive one turns out to be closed before any answer."""
        for attempt in (0, 1):
            conn = self._connection(fresh=attempt == 1)
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    conn.putheader(name, value)
                conn.endheaders()
                if body:
                    conn.send(body)
                return conn.getresponse(), attempt
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _forward(self) -> None:
        if self.path.startswith(CONTROL):
            self._control()
            return
        with self.server.idle:
            self.server.in_flight += 1
        entry: list[Any] = [self.command, self.path, self.headers.get("Range"), 0, 0, 0, 0]
        entry.append(0 if self.used else 1)  # the first request of its client connection
        self.used = True
        try:
            body = self._read_body()
            entry[4] = len(body)
            resp, entry[6] = self._send_upstream(body)
            entry[3] = resp.status
            entry[5] = self._answer(resp)
        finally:  # logged once answered (or failed: status 0), before it counts as done
            with self.server.idle:
                self.server.log.append(entry)
                self.server.in_flight -= 1
                self.server.idle.notify_all()

    def _answer(self, resp: http.client.HTTPResponse) -> int:
        """Streams the upstream's answer back; returns the body bytes."""
        self.send_response_only(resp.status, resp.reason)
        chunked = False
        for name, value in resp.getheaders():
            if name.lower() == "transfer-encoding" and "chunked" in value.lower():
                chunked = True  # http.client undoes the framing: it is redone below
            self.send_header(name, value)
        self.end_headers()
        sent = 0
        if self.command != "HEAD" and resp.status not in _NO_BODY:
            while data := resp.read(_CHUNK):  # read(), not read1(): it closes at the end
                if chunked:
                    self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
                else:
                    self.wfile.write(data)
                sent += len(data)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        else:
            resp.read()
        resp.close()  # the connection takes the next request only once this one is closed
        self.wfile.flush()
        if resp.will_close:
            self.close_connection = True
            self._connection(fresh=True)
        return sent

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.log: list[list[Any]] = []
        self.in_flight = 0
        self.idle = threading.Condition()
        super().__init__(("127.0.0.1", 0), _Handler)


@dataclass(frozen=True)
class Request:
    """One forwarded request."""

    method: str
    target: str  # path and query, as sent (``/bucket/key?...``)
    range: str | None  # the Range header
    status: int  # 0: no answer (the upstream failed)
    sent: int  # request body bytes
    received: int  # response body bytes
    resent: int  # 1 when it was sent a second time on a new upstream connection
    new_connection: int  # 1 when it was the first request on its client connection

    @property
    def kind(self) -> str:
        return kind(self.method, self.target)


class CountingProxy:
    """The proxy process in front of ``upstream``; :attr:`endpoint` is what a client uses."""

    def __init__(self, upstream: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), upstream],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if len(line) != 2 or line[0] != "port":
            self.stop()
            raise RuntimeError(f"the counting proxy did not start: {line}")
        self.endpoint = f"http://127.0.0.1:{line[1]}"

    def _call(self, method: str, what: str) -> Any:
        req = urllib.request.Request(f"{self.endpoint}{CONTROL}{what}", method=method, data=None)
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def reset(self) -> None:
        self._call("POST", "reset")

    def log(self) -> list[Request]:
        """The requests forwarded since the last :meth:`reset`, in the order they ended."""
        return [Request(*entry) for entry in self._call("GET", "log")]

    def counts(self) -> Counter[str]:
        """Requests per :func:`kind` since the last :meth:`reset`."""
        return Counter(r.kind for r in self.log())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def main(argv: list[str]) -> None:
    server = _Server(argv[0])
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
