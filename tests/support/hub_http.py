"""The fake Hub's HTTP plumbing: the stdlib server and handler, answers (whole or streamed),
request bodies (Content-Length or chunked), faults and request records.

Kept apart from what the routes mean (hub_server.py, hub_uploads.py, hub_jobs.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tests.support.hub_auth import HubToken
    from tests.support.hub_server import FakeHub

FaultMode = Literal["status", "drop", "truncate", "delay"]
MAX_BODY = 1 << 34  # a request body larger than this is refused (413)


@dataclass
class Fault:
    route: str  # a route name (see FakeHub.ROUTES), or "any"
    status: int = 503
    times: int | None = 1  # None: forever
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    mode: FaultMode = "status"
    delay_s: float = 0.0
    path_contains: str | None = None
    without_range: bool = False  # only requests with no Range header (whole-file GETs)
    hits: int = 0
    after: int = 0  # let this many matching requests through first
    seen: int = 0  # matching requests so far, let through or not
    method: str | None = None  # only requests with this method

    def matches(self, route: str, path: str, has_range: bool = False) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.route not in ("any", route) or (self.without_range and has_range):
            return False
        return self.path_contains is None or self.path_contains in path


@dataclass(frozen=True)
class RequestRecord:
    method: str
    route: str
    path: str  # raw request target
    host: str
    status: int
    body_bytes: int  # answer body bytes sent
    range: str | None
    authorization: str | None
    arrived: float = 0.0  # time.monotonic() when the request came in
    bytes_in: int = 0  # request body bytes received


@dataclass
class Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamAnswer:
    """An answer whose body is produced while it is sent (chunked), e.g. server-sent events."""

    status: int
    chunks: Iterator[bytes]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    """One request as the route handlers see it."""

    method: str
    route: str
    segments: list[str]
    query: dict[str, list[str]]
    body: bytes
    headers: Mapping[str, str]
    host: str
    token: HubToken | None  # the caller, when its bearer token is in the hub's token table
    bearer: str | None  # the bearer token sent, known or not

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops the SYNs of a burst of new connections, which
    # the client then resends after 1 s: a real Hub does not stall concurrent clients so
    request_queue_size = 256
    hub: FakeHub

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # clients hanging up mid-answer are expected (timeouts, drops)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server
    timeout = 30
    arrived = 0.0
    bytes_in = 0  # the current request's body size
    counted = False  # whether FakeHub.in_flight counts this request now

    def do_GET(self) -> None:
        self.server.hub._handle(self, "GET")

    def do_HEAD(self) -> None:
        self.server.hub._handle(self, "HEAD")

    def do_POST(self) -> None:
        self.server.hub._handle(self, "POST")

    def do_PUT(self) -> None:
        self.server.hub._handle(self, "PUT")

    def do_DELETE(self) -> None:
        self.server.hub._handle(self, "DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        return None


def read_body(handler: BaseHTTPRequestHandler) -> bytes | None:
    """The request body, whether sized by Content-Length or sent chunked; None when it is
    too large or malformed."""
    if "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower():
        parts: list[bytes] = []
        total = 0
        while True:
            line = handler.rfile.readline(1 << 16)
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                return None
            if size == 0:
                while handler.rfile.readline(1 << 16) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            total += size
            if total > MAX_BODY:
                return None
            parts.append(handler.rfile.read(size))
            handler.rfile.readline(4)  # the CRLF after each chunk
    length = int(handler.headers.get("Content-Length") or 0)
    if length > MAX_BODY:
        return None
    return handler.rfile.read(length) if length else b""


def json_answer(data: Any, status: int = 200, headers: Mapping[str, str] | None = None,
                content_type: str = "application/json") -> Answer:
    return Answer(status, json.dumps(data).encode(),
                  {"Content-Type": content_type, **(headers or {})})


def error(status: int, code: str | None, message: str) -> Answer:
    """An error as the Hub sends it: the client classifies it by X-Error-Code."""
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return json_answer({"error": message}, status, headers)


def truthy(query: dict[str, list[str]], name: str) -> bool:
    return (query.get(name) or ["false"])[0].lower() in {"1", "true", "yes"}


def send_stream(handler: Handler, answer: StreamAnswer, on_chunk: Callable[[int], None]) -> None:
    """Headers, then each chunk as it is produced (chunked transfer), then the last chunk.
    Stops quietly when the client hangs up."""
    try:
        handler.send_response(answer.status)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.flush()
        for chunk in answer.chunks:
            if chunk:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
                on_chunk(len(chunk))
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
    except OSError:
        handler.close_connection = True
    finally:
        close = getattr(answer.chunks, "close", None)
        if close is not None:
            close()


def parse_range(value: str | None, size: int) -> tuple[int, int] | str | None:
    """One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; None when absent or not understood."""
    if not value or not value.startswith("bytes=") or "," in value:
        return None
    first, _, last = value[6:].strip().partition("-")
    try:
        if first == "":
            n = int(last)
            start, end = max(0, size - n), size - 1
        else:
            start = int(first)
            end = min(int(last), size - 1) if last else size - 1
    except ValueError:
        return None
    if start >= size or start > end:
        return "unsatisfiable"
    return start, end


def iso_time(timestamp: float) -> str:
    """The Hub's timestamp format (`2024-05-01T12:00:00.123Z`), the one the client parses."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
