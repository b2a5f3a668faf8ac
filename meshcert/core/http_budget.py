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


def budget_transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """httpx's own transport, its connection pool on `_BudgetBackend` sockets."""
    transport = httpx.HTTPTransport(limits=limits)
    pool = getattr(transport, "_pool", None)
    if not hasattr(pool, "_network_backend"):  # pragma: no cover - another httpx layout
        raise RuntimeError("httpx transport layout changed: cannot bound request time")
    pool._network_backend = _BudgetBackend()  # type: ignore[union-attr]
    return transport



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
