"""A wall-clock budget for whole HTTP requests, which httpx's per-read timeouts are not.

httpx's timeouts apply to each socket read: a server sending one header byte every second (slow
loris) never trips them. Clients built on `budget_transport` run every socket read and write with
at most what is left of the budget set by `request_budget(seconds)` on the calling thread, so
no request can outlive its budget, response headers included. Used by the runtime gates and by
the Hub file reads.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

_budget = threading.local()  # .ends: perf_counter limit of the request this thread is making


def _clamp(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` cut to what is left of the current request's wall-clock budget."""
    ends: float | None = getattr(_budget, "ends", None)
    if ends is None:
        return timeout
    left = ends - time.perf_counter()
    if left <= 0:
        raise error("the request's time budget is spent")
    return left if timeout is None else min(timeout, left)


class _BudgetStream(httpcore.NetworkStream):
    """A socket whose every read/write waits at most the rest of the request's budget.

    httpx's timeouts are per read: a server sending one header byte every second never trips
    them, and the response headers are read before any code of ours runs again."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _BudgetStream(self._inner.start_tls(
            ssl_context, server_hostname, _clamp(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BudgetBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _BudgetStream(self._inner.connect_tcp(
            host, port, _clamp(timeout, httpcore.ConnectTimeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _BudgetStream(self._inner.connect_unix_socket(
            path, _clamp(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


_HTTPCORE_TO_HTTPX: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    # Most specific first: the first match wins.
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's exceptions raised as the httpx ones callers catch (same names, same text)."""
    try:
        yield
    except Exception as exc:
        for core_error, httpx_error in _HTTPCORE_TO_HTTPX:
            if isinstance(exc, core_error):
                raise httpx_error(str(exc)) from exc
        raise


class _BudgetResponseStream(httpx.SyncByteStream):
    def __init__(self, inner: Iterable[bytes]) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            with _as_httpx_errors():
                close()


class BudgetTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore connection pool whose sockets are `_BudgetStream`s.

    Built from public APIs only: httpcore's `ConnectionPool(network_backend=...)` and its
    `Request`/`Response`, mapped to and from httpx's like httpx's own transport does. Direct
    connections only (no proxy), as before: a client given a transport ignores proxy settings.
    """

    def __init__(self, limits: httpx.Limits) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_BudgetBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.SyncByteStream):  # pragma: no cover - async use
            raise TypeError("BudgetTransport sends synchronous requests only")
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            core_response = self._pool.handle_request(core_request)
        stream = core_response.stream
        if not isinstance(stream, Iterable):  # pragma: no cover - httpcore's sync pool streams
            raise TypeError("httpcore returned an asynchronous stream to a synchronous pool")
        return httpx.Response(
            status_code=core_response.status,
            headers=core_response.headers,
            stream=_BudgetResponseStream(stream),
            extensions=core_response.extensions,
        )

    def close(self) -> None:
        with _as_httpx_errors():
            self._pool.close()


def budget_transport(limits: httpx.Limits) -> BudgetTransport:
    """A transport whose every socket read/write is bounded by `request_budget`."""
    return BudgetTransport(limits)


@contextmanager
def request_budget(seconds: float) -> Iterator[float]:
    """Bound every socket operation on this thread for `seconds` from now; yields the end time
    (perf_counter). Nested budgets restore the outer one on exit."""
    outer = getattr(_budget, "ends", None)
    ends = time.perf_counter() + seconds
    _budget.ends = ends if outer is None else min(ends, outer)
    try:
        yield _budget.ends
    finally:
        _budget.ends = outer
