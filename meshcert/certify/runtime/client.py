"""The HTTP side of the runtime gates: one httpx client with auth, timeouts and bounded bodies.

Every request, streamed or not, is read incrementally so that
- the body never exceeds `max_body_bytes` in memory (a bigger body is a `too_large` failure);
- a request is abandoned once its wall-clock budget is spent: every socket read and write
  (the response headers included) waits at most what is left of the budget (`_BudgetBackend`),
  so a server that trickles bytes (slow loris) or keep-alives forever cannot hold a gate;
- the budget of each request is `min(timeout_s, what is left of the overall deadline)`.

Transport failures are classified (`Failure.kind`) so that gates can tell "the endpoint is
broken" (failed) from "we could not find out" (incomplete). Failure text never holds the API
key: it is scrubbed by the client's `Redactor`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.http_budget import budget_transport, request_budget
from meshcert.core.redact import Redactor

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_DEADLINE_S = 600.0

FailureKind = Literal[
    "unreachable",  # connection refused, DNS, connect timeout: nobody answered
    "timeout",  # connected, but no complete answer within the request budget
    "deadline",  # the overall deadline ran out
    "client",  # the request could not be sent as asked (bad URL, bad header value)
    "transport",  # another transport error
    "dropped",  # the server closed or reset the connection mid-answer
    "too_large",  # the body went past the cap
    "protocol",  # the answer could not be decoded (e.g. a broken gzip body)
]
_INCOMPLETE_KINDS = frozenset({"unreachable", "timeout", "deadline", "client", "transport"})


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    message: str

    @property
    def gate_status(self) -> Literal["failed", "incomplete"]:
        """A server that answered badly fails the gate; one we could not hear out leaves it
        incomplete."""
        return "incomplete" if self.kind in _INCOMPLETE_KINDS else "failed"


class TransportFailure(MeshcertError):
    """Raised by the streaming interface; carries a scrubbed `Failure` (of kind incomplete when
    the server could not be heard out, else a failure)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure
        if failure.gate_status == "incomplete":
            self.kind = ErrorKind.INCOMPLETE


class Deadline:
    """An overall wall-clock budget shared by every gate."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = clock() + seconds

    def remaining(self) -> float:
        return self._ends - self._clock()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


@dataclass
class Exchange:
    """One request/answer pair as far as it got."""

    method: str
    path: str
    status: int | None = None
    content_type: str | None = None
    body: bytes = b""
    latency_ms: float | None = None
    failure: Failure | None = None

    @property
    def ok_2xx(self) -> bool:
        return self.failure is None and self.status is not None and 200 <= self.status < 300

    def json(self) -> tuple[Any, str | None]:
        """(value, None) or (None, why the body is not JSON)."""
        try:
            return json.loads(self.body), None
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            return None, f"{type(exc).__name__}: {exc}"[:160]

    def snippet(self, scrub: Callable[[str], str], limit: int = 200) -> str:
        """The body on one line, scrubbed BEFORE it is cut (a cut key would escape `scrub`)."""
        text = scrub(" ".join(self.body.decode("utf-8", errors="replace").split()))
        return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class OpenStream:
    """A response whose headers arrived; read the body with `chunks()`."""

    response: httpx.Response
    started: float  # time.perf_counter() just before the request was sent
    headers_at: float
    ends: float  # wall-clock limit (perf_counter scale)
    budget_s: float
    clipped_by_deadline: bool
    max_body_bytes: int
    client: RuntimeClient

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def content_type(self) -> str:
        return self.response.headers.get("content-type", "")

    def chunks(self) -> Iterator[tuple[bytes, float]]:
        """(bytes, arrival perf_counter) as they come; raises TransportFailure on a dropped
        connection, a blown budget or a body past the cap."""
        total = 0
        stream = self.response.iter_bytes()
        while True:
            try:
                chunk = next(stream)
            except StopIteration:
                return
            except (httpx.HTTPError, httpx.StreamError) as exc:
                raise TransportFailure(self.client.classify(
                    exc, self.budget_s, self.clipped_by_deadline, mid_body=True)) from None
            now = time.perf_counter()
            total += len(chunk)
            if total > self.max_body_bytes:
                raise TransportFailure(Failure(
                    "too_large", f"response body exceeds the {self.max_body_bytes} byte cap "
                    f"({self.max_body_bytes // (1024 * 1024)} MiB); stopped reading"))
            if now > self.ends:
                raise TransportFailure(self.client.budget_failure(
                    self.budget_s, self.clipped_by_deadline, "the response body"))
            yield chunk, now


class RuntimeClient:
    """httpx client for one endpoint: Bearer auth (only), timeouts, bounded bodies."""

    def __init__(
        self,
        api_base: str,
        *,
        api_key: str | None,
        timeout_s: float,
        deadline: Deadline,
        redactor: Redactor,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_connections: int = 8,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        from meshcert.core.version import __version__

        headers = {"User-Agent": f"meshcert/{__version__}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.timeout_s = timeout_s
        self.deadline = deadline
        self.redactor = redactor
        self.max_body_bytes = max_body_bytes
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        self._http = httpx.Client(
            base_url=api_base.rstrip("/"), headers=headers,
            transport=transport if transport is not None else budget_transport(limits),
            follow_redirects=True, max_redirects=5, limits=limits,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RuntimeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- budgets and failures ---------------------------------------------------------------
    def budget(self) -> tuple[float, bool]:
        """(seconds this request may take, whether the overall deadline clipped it)."""
        left = self.deadline.remaining()
        return (left, True) if left < self.timeout_s else (self.timeout_s, False)

    def budget_failure(self, budget_s: float, clipped: bool, waiting_for: str) -> Failure:
        if clipped:
            return Failure("deadline", f"overall deadline of {self.deadline.seconds:g} s "
                           f"reached while waiting for {waiting_for}")
        return Failure("timeout", f"timed out after {budget_s:g} s waiting for {waiting_for}")

    def classify(self, exc: BaseException, budget_s: float, clipped: bool, *,
                 mid_body: bool = False) -> Failure:
        """Map an httpx exception to a Failure with a scrubbed, one-line message."""
        text = self.redactor.scrub(" ".join(str(exc).split()) or type(exc).__name__)
        if isinstance(exc, httpx.ConnectTimeout):
            if clipped:
                return self.budget_failure(budget_s, clipped, "a connection")
            return Failure("unreachable", f"cannot connect: no connection within "
                           f"{budget_s:g} s")
        if isinstance(exc, httpx.TimeoutException):
            what = "the rest of the response body" if mid_body else "the response"
            return self.budget_failure(budget_s, clipped, what)
        if isinstance(exc, httpx.ConnectError):
            return Failure("unreachable", f"cannot connect: {text}")
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            where = "mid-body" if mid_body else "before a complete response"
            return Failure("dropped", f"connection dropped {where}: {text}")
        if isinstance(exc, httpx.DecodingError):
            return Failure("protocol", f"response could not be decoded: {text}")
        if isinstance(exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol
                      | httpx.InvalidURL | httpx.TooManyRedirects):
            return Failure("client", f"request could not be sent: {type(exc).__name__}: "
                           f"{text}")
        return Failure("transport", f"{type(exc).__name__}: {text}")

    # -- requests ---------------------------------------------------------------------------
    @contextmanager
    def open(self, method: str, path: str, body: dict[str, Any] | None = None, *,
             accept: str = "application/json") -> Iterator[OpenStream]:
        """Send a request and yield once the response headers are in (body unread).

        Raises TransportFailure when no response could be had."""
        budget_s, clipped = self.budget()
        if budget_s <= 0:
            raise TransportFailure(Failure(
                "deadline", f"overall deadline of {self.deadline.seconds:g} s reached before "
                f"{method} {path} was sent"))
        started = time.perf_counter()
        with request_budget(budget_s):
            try:
                request = self._http.build_request(
                    method, path, json=body, headers={"Accept": accept},
                    timeout=httpx.Timeout(budget_s))
                response = self._http.send(request, stream=True)
            except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
                raise TransportFailure(self.classify(exc, budget_s, clipped)) from None
            except (UnicodeError, ValueError) as exc:  # e.g. a header value httpx can't encode
                raise TransportFailure(Failure("client", "request could not be sent: "
                                               f"{type(exc).__name__}: "
                                               f"{self.redactor.scrub(str(exc))}")) from None
            try:
                yield OpenStream(response=response, started=started,
                                 headers_at=time.perf_counter(), ends=started + budget_s,
                                 budget_s=budget_s, clipped_by_deadline=clipped,
                                 max_body_bytes=self.max_body_bytes, client=self)
            finally:
                response.close()

    def request(self, method: str, path: str, body: dict[str, Any] | None = None
                ) -> Exchange:
        """A whole request/response, body read within the cap and the budget."""
        exchange = Exchange(method=method, path=path)
        started = time.perf_counter()
        try:
            with self.open(method, path, body) as opened:
                started = opened.started
                exchange.status = opened.status
                exchange.content_type = opened.content_type
                parts: list[bytes] = []
                try:
                    for chunk, _ in opened.chunks():
                        parts.append(chunk)
                finally:
                    exchange.body = b"".join(parts)
        except TransportFailure as failure:
            exchange.failure = failure.failure
        exchange.latency_ms = round((time.perf_counter() - started) * 1000, 3)
        return exchange

    def get(self, path: str) -> Exchange:
        return self.request("GET", path)

    def post(self, path: str, body: dict[str, Any]) -> Exchange:
        return self.request("POST", path, body)
