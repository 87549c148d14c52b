"""A fault-injecting HTTP proxy in front of the S3 test server (tests/s3/seaweed.py).

The proxy listens on a loopback port and forwards every request, byte for byte, to the
server; a table whose ``storage_options["aws_endpoint"]`` names the proxy sends all its
traffic through it: our metadata IO (obstore) and pylance's data-file IO alike. Requests
are forwarded unchanged (the Host header included), so their SigV4 signatures stay valid.

It records every request (method, key, query, the headers that matter: ``Range``,
``If-None-Match``, ``If-Match``) and, when armed, injects one :class:`Fault` at the
``at``-th request (0-based) that matches a predicate:

- ``lost_answer``: forward, let the server apply the request, then reset the client's
  connection without the answer;
- ``late_answer``: forward, hold the answer longer than the client's timeout, then send it
  (the client has given up by then);
- ``error_5xx``: answer 500 without forwarding (nothing applied);
- ``applied_5xx``: forward (the server applies it), then answer 503 instead;
- ``reset``: reset the connection before forwarding (nothing applied);
- ``delay``: forward after a pause shorter than the client's timeout;
- ``truncated_body``: forward, then send the answer's head and half its body and close;
- ``late_apply``: reset the client's connection at once, and forward the request only once
  the next request of the client has been answered (or at :meth:`FaultyProxy.settle`): the
  server applies it after the client has given up and looked for its effect, as a request
  still in flight when its connection broke.

Apart from the one armed fault, :meth:`FaultyProxy.refusing` answers every request that
matches a predicate 403 AccessDenied without forwarding it (a store that refuses deletes).

:meth:`FaultyProxy.settle` waits until no request is being handled (a late answer held, a
late request not yet forwarded), so that the table can be judged as it will stay.

Stdlib only: one thread per client connection, each paired with its own connection to the
server (HTTP/1.1 keep-alive on both sides).
"""

from __future__ import annotations

import enum
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Fault", "ProxiedRequest", "FaultyProxy", "Predicate", "any_request"]


class Fault(enum.Enum):
    """What the proxy does to the one request it is armed for."""

    LOST_ANSWER = "lost_answer"
    LATE_ANSWER = "late_answer"
    ERROR_5XX = "error_5xx"
    APPLIED_5XX = "applied_5xx"
    RESET = "reset"
    DELAY = "delay"
    TRUNCATED_BODY = "truncated_body"
    LATE_APPLY = "late_apply"

    @property
    def reaches_server(self) -> bool:
        """Whether the server sees (and applies) the request."""
        return self not in (Fault.ERROR_5XX, Fault.RESET)


@dataclass
class ProxiedRequest:
    """One request as the proxy saw it. ``bucket`` and ``key`` come from the path-style
    URL (``/bucket/key``), percent-decoded; ``headers`` has lower-case names. ``status``
    and ``answer_size`` (the body's bytes) are the server's answer, once it came (None for
    a request the proxy did not forward)."""

    index: int
    method: str
    bucket: str
    key: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body_size: int
    status: int | None = None
    answer_size: int | None = None

    @property
    def range(self) -> str | None:
        return self.headers.get("range")

    @property
    def if_none_match(self) -> str | None:
        return self.headers.get("if-none-match")

    def describe(self) -> str:
        """``METHOD bucket/key?query [Range: ...] [If-None-Match: ...]``."""
        out = f"{self.method} {self.bucket}/{self.key}"
        if self.query:
            out += "?" + "&".join(f"{k}={v}" if v else k for k, v in sorted(self.query.items()))
        for name in ("range", "if-none-match", "if-match"):
            if name in self.headers:
                out += f" [{name}: {self.headers[name]}]"
        return out


Predicate = Callable[[ProxiedRequest], bool]


def any_request(_: ProxiedRequest) -> bool:
    return True


@dataclass
class _Arming:
    fault: Fault
    at: int
    when: Predicate
    seen: int = 0


class _Link:
    """One client connection and the server connection its requests are forwarded on."""

    def __init__(self, client: socket.socket) -> None:
        self.client = client
        self.reader = _Reader(client)
        self.upstream: socket.socket | None = None


class _Closed(Exception):
    """The peer closed its connection before a whole message arrived."""


class _Reader:
    """Buffered reads of whole HTTP/1.1 messages from a socket, raw bytes kept."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise _Closed
        self.buf += chunk

    def head(self) -> bytes:
        """Bytes up to and including the blank line that ends the head."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n\r\n") + 4
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def chunked(self) -> bytes:
        """A chunked body, raw (chunk heads, data and trailers)."""
        parts: list[bytes] = []
        while True:
            size_line = self.line()
            parts.append(size_line)
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while True:  # trailers, then the blank line
                    trailer = self.line()
                    parts.append(trailer)
                    if trailer == b"\r\n":
                        return b"".join(parts)
            parts.append(self.exactly(size + 2))

    def rest(self) -> bytes:
        """Everything until the peer closes (a body without a length)."""
        parts = [self.buf]
        self.buf = b""
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)


def _parse_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    fields = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            fields.append((name.strip().lower(), value.strip()))
    return lines[0], fields


def _body(reader: _Reader, headers: Mapping[str, str], *, until_close: bool) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return reader.chunked()
    if "content-length" in headers:
        return reader.exactly(int(headers["content-length"]))
    return reader.rest() if until_close else b""


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP reset (SO_LINGER 0) rather than an orderly FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def _error_answer(status: int, reason: str, code: str) -> bytes:
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
        f"<Message>injected by the test proxy</Message></Error>"
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


#: what :meth:`FaultyProxy.refusing` does to a request it matches (not an armed fault)
_REFUSED: Any = object()


@dataclass
class FaultyProxy:
    """The proxy; :meth:`start` it (or use it as a context manager), point a table's
    ``aws_endpoint`` at :attr:`endpoint`, :meth:`arm` a fault, run, read :attr:`requests`
    and :attr:`injected`.

    ``hold`` is how long ``late_answer`` keeps an answer (longer than the clients'
    ``timeout``), ``pause`` how long ``delay`` waits (shorter)."""

    upstream: str
    hold: float = 3.0
    pause: float = 0.2
    endpoint: str = ""
    #: every request since the last :meth:`reset`, in arrival order
    requests: list[ProxiedRequest] = field(default_factory=list)
    #: the request the armed fault was applied to (None while it has not fired)
    injected: ProxiedRequest | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _arming: _Arming | None = None
    #: every request this matches is refused with 403 AccessDenied (never forwarded)
    _refused: Predicate | None = None
    _listener: socket.socket | None = None
    _clients: set[socket.socket] = field(default_factory=set)
    _pending: int = 0
    #: the request ``late_apply`` holds back, and its raw bytes
    _held: tuple[ProxiedRequest, bytes] | None = None
    _settled: threading.Condition = field(default_factory=threading.Condition)

    def start(self) -> FaultyProxy:
        parsed = urllib.parse.urlsplit(self.upstream)
        self._target = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, name="faulty-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._lock:
            clients = list(self._clients)
        for sock in clients:
            _reset(sock)

    def __enter__(self) -> FaultyProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def storage_options(self, options: Mapping[str, str]) -> dict[str, str]:
        """``options`` of the server with the endpoint replaced by the proxy's."""
        return {**options, "aws_endpoint": self.endpoint}

    def reset(self) -> None:
        """Forget the recorded requests and any armed fault."""
        with self._lock:
            self.requests = []
            self.injected = None
            self._arming = None

    def arm(self, fault: Fault, at: int, when: Predicate = any_request) -> None:
        """Inject ``fault`` at the ``at``-th (0-based) request from now matching ``when``."""
        with self._lock:
            self.injected = None
            self._arming = _Arming(fault, at, when)

    def disarm(self) -> None:
        with self._lock:
            self._arming = None

    @contextmanager
    def refusing(self, when: Predicate) -> Iterator[None]:
        """Answer every request matching ``when`` with 403 AccessDenied (a store whose
        credentials may not, say, DELETE) while the block runs."""
        with self._lock:
            self._refused = when
        try:
            yield
        finally:
            with self._lock:
                self._refused = None

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until every request received so far has been handled (answered, dropped or
        forwarded late)."""
        self._release()
        with self._settled:
            if not self._settled.wait_for(lambda: self._pending == 0, timeout):
                raise TimeoutError(f"the proxy still handles {self._pending} request(s)")

    @contextmanager
    def recording(self) -> Iterator[list[ProxiedRequest]]:
        """Record from a clean slate; yields the list the requests are appended to."""
        self.reset()
        yield self.requests

    # -- serving ---------------------------------------------------------------------------

    def _accept(self) -> None:
        listener = self._listener
        assert listener is not None
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _record(
        self, request_line: str, fields: list[tuple[str, str]], size: int
    ) -> tuple[ProxiedRequest, Fault | None]:
        method, target, _ = request_line.split(" ", 2)
        split = urllib.parse.urlsplit(target)
        path = urllib.parse.unquote(split.path).lstrip("/")
        bucket, _, key = path.partition("/")
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        with self._lock:
            request = ProxiedRequest(
                len(self.requests), method, bucket, key, query, dict(fields), size
            )
            self.requests.append(request)
            with self._settled:
                self._pending += 1
            if self._refused is not None and self._refused(request):
                return request, _REFUSED
            arming = self._arming
            if arming is None or not arming.when(request):
                return request, None
            arming.seen += 1
            if arming.seen - 1 != arming.at:
                return request, None
            self._arming = None
            self.injected = request
            return request, arming.fault

    def _serve(self, client: socket.socket) -> None:
        link = _Link(client)
        try:
            while self._one(link):
                pass
        except (OSError, _Closed):
            pass
        finally:
            with self._lock:
                self._clients.discard(client)
            if link.upstream is not None:
                link.upstream.close()
            try:
                client.close()
            except OSError:
                pass

    def _one(self, link: _Link) -> bool:
        """Serve one request of ``link``'s client; False when the connection is done."""
        try:
            head = link.reader.head()
        except (_Closed, OSError):
            return False
        request_line, fields = _parse_head(head)
        body = _body(link.reader, dict(fields), until_close=False)
        request, fault = self._record(request_line, fields, len(body))
        try:
            return self._apply(link, request, fault, head + body)
        finally:
            if fault is not Fault.LATE_APPLY:
                self._done()
                self._release()

    def _done(self) -> None:
        with self._settled:
            self._pending -= 1
            self._settled.notify_all()

    def _release(self) -> None:
        """Forward the request ``late_apply`` holds, if any (its answer goes nowhere)."""
        with self._lock:
            held, self._held = self._held, None
        if held is None:
            return
        request, raw = held
        try:
            upstream, answer, _ = self._forward(None, raw, request.method)
            if upstream is not None:
                upstream.close()
            self._answered(request, answer)
        finally:
            self._done()

    def _apply(self, link: _Link, request: ProxiedRequest, fault: Fault | None, raw: bytes) -> bool:
        client = link.client
        if fault is _REFUSED:
            answer = _error_answer(403, "Forbidden", "AccessDenied")
            self._answered(request, answer)
            client.sendall(answer)
            return True
        if fault is Fault.RESET:
            _reset(client)
            return False
        if fault is Fault.ERROR_5XX:
            client.sendall(_error_answer(500, "Internal Server Error", "InternalError"))
            return True
        if fault is Fault.LATE_APPLY:
            with self._lock:
                self._held = (request, raw)
            _reset(client)
            return False
        if fault is Fault.DELAY:
            time.sleep(self.pause)
        link.upstream, answer, close_after = self._forward(link.upstream, raw, request.method)
        self._answered(request, answer)
        if fault is Fault.LOST_ANSWER:
            _reset(client)
            return False
        if fault is Fault.APPLIED_5XX:
            answer = _error_answer(503, "Service Unavailable", "SlowDown")
        if fault is Fault.LATE_ANSWER:
            time.sleep(self.hold)
        if fault is Fault.TRUNCATED_BODY:  # (no body: half the head)
            end = answer.index(b"\r\n\r\n") + 4
            cut = end + (len(answer) - end) // 2 if len(answer) > end else end // 2
            client.sendall(answer[:cut])
            return False
        client.sendall(answer)
        return not close_after

    def _answered(self, request: ProxiedRequest, answer: bytes) -> None:
        end = answer.index(b"\r\n\r\n") + 4
        with self._lock:
            request.status = int(answer.split(b" ", 2)[1])
            request.answer_size = len(answer) - end

    def _forward(
        self, upstream: socket.socket | None, raw: bytes, method: str
    ) -> tuple[socket.socket | None, bytes, bool]:
        """(the server connection to use next, the raw answer, whether to close after)."""
        for attempt in range(2):
            fresh = upstream is None
            if upstream is None:
                upstream = socket.create_connection(self._target, timeout=60)
            try:
                upstream.sendall(raw)
                answer, close_after = self._answer(_Reader(upstream), method)
            except (_Closed, OSError):
                upstream.close()
                upstream = None
                if fresh or attempt:  # a kept-alive connection the server closed: retry once
                    raise
                continue
            if close_after:
                upstream.close()
                upstream = None
            return upstream, answer, close_after
        raise AssertionError("unreachable")

    @staticmethod
    def _answer(reader: _Reader, method: str) -> tuple[bytes, bool]:
        while True:
            head = reader.head()
            status_line, fields = _parse_head(head)
            status = int(status_line.split(" ", 2)[1])
            if status != 100:
                break
        headers = dict(fields)
        if method == "HEAD" or status in (204, 304):
            body = b""
        else:
            body = _body(reader, headers, until_close=True)
        close = "close" in headers.get("connection", "").lower() or (
            "content-length" not in headers
            and "chunked" not in headers.get("transfer-encoding", "").lower()
            and method != "HEAD"
            and status not in (204, 304)
        )
        # any bytes left over would belong to no request: a reused reader would be wrong
        return head + body, close
