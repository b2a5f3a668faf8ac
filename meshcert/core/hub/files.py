"""File content at one commit over HTTP: ranged reads, capped whole reads, SHA-256 streams.

Requests go to `{endpoint}/{repo}/resolve/{commit}/{path}`. The Hub answers LFS/Xet files with a
redirect to a storage host; redirects are followed by hand so that the Authorization header is
sent to the Hub's own origin only, never to the redirect target (as huggingface_hub does), and
the target of a cross-origin redirect is remembered per file, so later ranges of the same file
go straight to storage. Every attempt is counted; failures are retried with backoff.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import quote, urljoin

import httpx

from meshcert.core.http_budget import budget_transport, request_budget
from meshcert.core.hub.errors import (
    RETRYABLE_STATUS,
    UNREACHABLE,
    HubError,
    Redact,
    from_exception,
    from_status,
    parse_retry_after,
)
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.retry import Sleep, call_with_retries, default_sleep
from meshcert.core.hub.settings import HubSettings, url_origin
from meshcert.core.hub.stats import TransferCounter

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CONTENT_RANGE = re.compile(r"^bytes\s+(\d+)-(\d+)/(\d+|\*)$")
_MAX_ERROR_BODY = 64 * 1024


def hub_headers() -> tuple[dict[str, str], dict[str, str]]:
    """(common headers, auth headers) as huggingface_hub would send them (HF_TOKEN honoured)."""
    from huggingface_hub.utils import build_hf_headers

    from meshcert.core.version import __version__

    built = build_hf_headers(library_name="meshcert", library_version=__version__)
    common = {"User-Agent": built.get("user-agent", "meshcert"), "Accept-Encoding": "identity"}
    auth = {"Authorization": built["authorization"]} if "authorization" in built else {}
    return common, auth


def parse_content_range(value: str | None) -> tuple[int, int, int | None] | None:
    match = _CONTENT_RANGE.match(value.strip()) if value else None
    if match is None:
        return None
    total = match.group(3)
    return int(match.group(1)), int(match.group(2)), None if total == "*" else int(total)


MIN_BYTES_PER_S = 256 * 1024  # slower than this, a bounded read is abandoned and retried


def new_client(settings: HubSettings) -> httpx.Client:
    """The connection pool HubFiles reads through. Building it loads the TLS trust store
    (~50 ms), so a caller may build it while the first Hub call is in flight."""
    workers = min(settings.max_parallel_requests,
                  max(settings.header_workers, settings.stream_workers))
    limits = httpx.Limits(max_connections=workers * 2, max_keepalive_connections=workers)
    return httpx.Client(follow_redirects=False, timeout=httpx.Timeout(settings.timeout_s),
                        limits=limits, transport=budget_transport(limits))

class HubFiles:
    """Reads files of `repo` at `commit`. Thread-safe; close() when done."""

    def __init__(self, settings: HubSettings, *, repo: str, commit: str,
                 counter: TransferCounter, redact: Redact, sleep: Sleep = default_sleep,
                 headers: tuple[dict[str, str], dict[str, str]] | None = None,
                 gate: RequestGate | None = None, client: httpx.Client | None = None) -> None:
        common, auth = headers if headers is not None else hub_headers()
        self._settings = settings
        self._repo = repo
        self._commit = commit
        self._counter = counter
        self._redact = redact
        self._sleep = sleep
        self._auth = auth
        self._targets: dict[str, str] = {}
        self._lock = threading.Lock()
        self._own_gate = gate is None  # a gate handed in is closed by whoever made it
        self.gate = gate or RequestGate(settings.max_parallel_requests)
        self._client = client or new_client(settings)
        self._client.headers.update(common)

    def _budget_s(self, size: int) -> float:
        """Wall-clock budget of one bounded read: the timeout plus the size at a crawl
        (MIN_BYTES_PER_S), so a server trickling bytes cannot hold a header read forever."""
        return self._settings.timeout_s + size / MIN_BYTES_PER_S

    def close(self) -> None:
        if self._own_gate:
            self.gate.close()
        self._client.close()

    def url(self, path: str) -> str:
        return (f"{self._settings.endpoint}/{self._repo}/resolve/{self._commit}/"
                f"{quote(path, safe='/')}")

    # --- one attempt ----------------------------------------------------------------------
    def _follow(self, url: str, path: str, headers: dict[str, str], action: str
                ) -> httpx.Response:
        for _ in range(MAX_REDIRECTS + 1):
            sent = dict(headers)
            if url_origin(url) == self._settings.origin:
                sent.update(self._auth)  # the token goes to the Hub, never to storage hosts
            response = self._client.send(self._client.build_request("GET", url, headers=sent),
                                         stream=True)
            self._counter.request()
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                response.close()
                target = urljoin(url, location)
                if url_origin(target) != self._settings.origin:
                    with self._lock:
                        self._targets[path] = target
                url = target
                continue
            if response.status_code >= 400 and response.status_code != 416:  # 416: past EOF
                try:
                    body = b"".join(_limited(response.iter_raw(), _MAX_ERROR_BODY))
                except httpx.HTTPError:
                    body = b""
                finally:
                    response.close()
                if url_origin(url) == self._settings.origin:
                    raise from_status(response.status_code, response.headers, action=action,
                                      redact=self._redact, body=body)
                raise _storage_error(response, action)
            return response
        raise HubError(UNREACHABLE, f"{action}: more than {MAX_REDIRECTS} redirects")

    @contextmanager
    def _open(self, path: str, headers: dict[str, str], action: str
              ) -> Iterator[httpx.Response]:
        with self._lock:
            cached = self._targets.get(path)
        if cached is None:
            response = self._follow(self.url(path), path, headers, action)
        else:
            try:
                response = self._follow(cached, path, headers, action)
            except HubError as err:
                with self._lock:  # a failing storage URL: the next attempt asks the Hub again
                    self._targets.pop(path, None)
                if err.retryable:
                    raise
                # an expired or revoked storage URL (401/403/404...): ask the Hub right away
                response = self._follow(self.url(path), path, headers, action)
            except httpx.HTTPError:
                with self._lock:
                    self._targets.pop(path, None)
                raise
        try:
            yield response
        finally:
            response.close()

    def _retrying(self, action: str, attempt: Callable[[], bytes],
                  cancelled: Callable[[], bool] | None = None) -> bytes:
        """Each attempt holds one gate slot (at most max_parallel_requests at once). A failure
        is classified before the slot is let go, so a Retry-After pauses the other threads
        before any of them can take the slot (see gate.py)."""
        def classify(exc: BaseException) -> HubError:
            return from_exception(exc, action=action, redact=self._redact)

        def gated() -> bytes:
            with self.gate.slot():
                try:
                    return attempt()
                except Exception as exc:  # classified here, raised as the HubError
                    error = classify(exc)
                    if error.retryable and error.retry_after is not None:
                        self.gate.hold(min(error.retry_after, self._settings.max_retry_after_s))
                    raise error from exc

        return call_with_retries(gated, settings=self._settings, sleep=self._sleep,
                                 cancelled=cancelled, classify=classify)

    def _body(self, response: httpx.Response, *, skip: int = 0, limit: int | None = None,
              header: bool = False) -> bytes:
        out = bytearray()
        seen = 0
        for chunk in response.iter_bytes():  # as received: ~64 KiB reads
            self._counter.received(len(chunk), header=header)
            if seen + len(chunk) > skip:
                out += chunk[max(0, skip - seen):]
            seen += len(chunk)
            if limit is not None and len(out) >= limit:
                return bytes(out[:limit])
        return bytes(out)

    # --- public reads ---------------------------------------------------------------------
    def read_range(self, path: str, start: int, length: int, *, header: bool = False) -> bytes:
        """Bytes [start, start+length) (fewer only at end of file): `Range`, 206 expected."""
        if length <= 0 or start < 0:
            return b""
        end = start + length - 1
        action = f"reading bytes {start}-{end} of {path}"

        def attempt() -> bytes:
            with request_budget(self._budget_s(length)), \
                    self._open(path, {"Range": f"bytes={start}-{end}"}, action) as response:
                if response.status_code == 416:
                    return b""
                if response.status_code == 200:  # the server ignored Range: skip to start
                    return self._body(response, skip=start, limit=length, header=header)
                if response.status_code != 206:
                    raise HubError(UNREACHABLE, f"{action}: unexpected HTTP "
                                   f"{response.status_code} to a range request")
                answered = parse_content_range(response.headers.get("content-range"))
                if answered is not None and answered[0] != start:
                    raise HubError(UNREACHABLE, f"{action}: the server answered bytes "
                                   f"{answered[0]}-{answered[1]}")
                data = self._body(response, limit=length, header=header)
                total = answered[2] if answered is not None else None
                if len(data) < length and (total is None or start + len(data) < total):
                    raise HubError(UNREACHABLE, f"{action}: got {len(data)} of {length} bytes",
                                   retryable=True)
                return data

        return self._retrying(action, attempt)

    def read_all(self, path: str, cap: int, *,
                 check: Callable[[bytes], str | None] | None = None) -> bytes:
        """The whole file, reading at most cap+1 bytes (a longer result means "too large").

        `check(data)` names what is wrong with what arrived (e.g. not the size or hash the
        listing gives); such an answer is retried like a dropped one, then fails."""
        action = f"downloading {path}"

        def attempt() -> bytes:
            with request_budget(self._budget_s(cap)), \
                    self._open(path, {}, action) as response:
                if response.status_code != 200:
                    raise HubError(UNREACHABLE, f"{action}: unexpected HTTP "
                                   f"{response.status_code}")
                data = self._body(response, limit=cap + 1)
            problem = check(data) if check is not None and len(data) <= cap else None
            if problem is not None:
                raise HubError(UNREACHABLE, f"{action}: {problem}", retryable=True)
            return data

        return self._retrying(action, attempt)

    def sha256(self, path: str, *, on_bytes: Callable[[int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> tuple[str, int]:
        """Stream the file through SHA-256 without keeping it: (hex digest, bytes hashed).

        A broken transfer resumes where it stopped (`Range: bytes=N-`) with the digest state
        kept; a server that ignores the range restarts the digest from byte 0.
        """
        action = f"streaming {path}"
        state = _StreamState()

        def attempt() -> bytes:
            resume = state.done
            headers = {"Range": f"bytes={resume}-"} if resume else {}
            with self._open(path, headers, action) as response:
                status = response.status_code
                if resume and status == 200:
                    state.restart()
                elif resume and status == 206:
                    answered = parse_content_range(response.headers.get("content-range"))
                    if answered is None or answered[0] != resume:
                        state.restart()
                        raise HubError(UNREACHABLE, f"{action}: the server resumed at the "
                                       "wrong offset", retryable=True)
                elif status != 200:
                    raise HubError(UNREACHABLE, f"{action}: unexpected HTTP {status}")
                for chunk in response.iter_bytes():  # as received: ~64 KiB reads
                    if cancelled is not None and cancelled():
                        raise InterruptedError("cancelled")
                    state.update(chunk)
                    self._counter.received(len(chunk))
                    if on_bytes is not None:
                        on_bytes(len(chunk))
            return b""

        self._retrying(action, attempt, cancelled)
        return state.digest.hexdigest(), state.done


class _StreamState:
    """A digest and how many bytes it has seen, kept across resumed attempts."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.done = 0

    def restart(self) -> None:
        self.digest = hashlib.sha256()
        self.done = 0

    def update(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.done += len(chunk)


def _storage_error(response: httpx.Response, action: str) -> HubError:
    """A storage host (the LFS redirect target) failed: nothing is known about the package."""
    status = response.status_code
    return HubError(UNREACHABLE, f"{action}: the storage host answered HTTP {status}",
                    retryable=status in RETRYABLE_STATUS, status=status,
                    retry_after=parse_retry_after(response.headers.get("retry-after")))


def _limited(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    seen = 0
    for chunk in chunks:
        yield chunk[:max(0, cap - seen)]
        seen += len(chunk)
        if seen >= cap:
            return
