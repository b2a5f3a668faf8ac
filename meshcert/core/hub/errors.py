"""Every way a Hub call can fail, mapped to one finding code (and never leaking a token).

`HubError` is what the rest of meshcert.core.hub raises; `from_exception` turns huggingface_hub's
errors, HTTP status codes and transport exceptions (httpx2.ConnectError leaks through the
client unwrapped) into it. Gated is tested before "repository not found": GatedRepoError is a
subclass of RepositoryNotFoundError.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.findings import Finding, finding
from meshcert.core.redact import Redactor

__all__ = ["HubError", "Redactor", "from_exception", "from_status", "parse_retry_after",
           "upload_cause"]

UNREACHABLE = "hub_unreachable"
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
DISABLED_MESSAGE = "Access to this resource is disabled."
_MAX_DETAIL = 300

Redact = Callable[[str], str]


def _transport_errors() -> tuple[type[BaseException], ...]:
    kinds: list[type[BaseException]] = [httpx.TransportError, OSError, TimeoutError]
    # huggingface_hub 2.x talks through httpx2 (a declared dependency), whose errors leak
    # unwrapped
    import httpx2

    kinds.append(httpx2.TransportError)
    kinds.append(httpx2.TooManyRedirects)
    return tuple(kinds)


TRANSPORT_ERRORS = _transport_errors()
# OSErrors raised on this machine, not by the network: retrying cannot fix them
LOCAL_ERRORS: tuple[type[BaseException], ...] = (
    FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError, NotADirectoryError)
NO_TOKEN_MESSAGE = ("no Hugging Face token: set HF_TOKEN, or run `hf auth login`")


class HubError(MeshcertError):
    """A Hub failure with its finding code. `retryable` failures may succeed if tried again.
    Of kind incomplete: a command a Hub failure stops cannot finish (exit 3); `incomplete`
    below tells an unreachable Hub from a definite answer about the ref, for findings."""

    kind = ErrorKind.INCOMPLETE

    def __init__(self, code: str, message: str, *, retryable: bool = False,
                 retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status

    @property
    def incomplete(self) -> bool:
        """Could not tell (the Hub failed us), as opposed to a definite answer about the ref."""
        return self.code == UNREACHABLE

    def to_finding(self, path: str | None = None) -> Finding:
        return finding(self.code, self.message, path=path)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delay-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    from datetime import UTC, datetime

    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(UTC)).total_seconds())


def _short(text: str, redact: Redact) -> str:
    text = " ".join(redact(text).split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL - 3] + "..."


def _server_message(headers: Mapping[str, str], body: bytes | None) -> str | None:
    message = headers.get("X-Error-Message")
    if message:
        return message
    if not body:
        return None
    try:
        data = json.loads(body[:4096])
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, str) else None


def from_status(status: int, headers: Mapping[str, str], *, action: str, redact: Redact,
                body: bytes | None = None) -> HubError:
    """Map an HTTP error answer (status, X-Error-Code, X-Error-Message) to a HubError."""
    code_header = headers.get("X-Error-Code")
    server = _server_message(headers, body)
    detail = f" ({_short(server, redact)})" if server else ""
    prefix = f"{action}: HTTP {status}"
    if code_header == "GatedRepo":
        return HubError("hub_gated", f"{prefix}, the repository is gated and this token has no "
                        f"access{detail}", status=status)
    if server == DISABLED_MESSAGE:
        return HubError("hub_disabled", f"{prefix}, the repository is disabled{detail}",
                        status=status)
    if code_header == "RevisionNotFound":
        return HubError("hub_revision_not_found", f"{prefix}, revision not found{detail}",
                        status=status)
    if code_header == "RepoNotFound":
        return HubError("hub_repo_not_found", f"{prefix}, repository not found (or private "
                        f"and not visible to this token){detail}", status=status)
    if code_header == "EntryNotFound":
        return HubError(UNREACHABLE, f"{prefix}, a file the listing names is not served at "
                        f"this commit{detail}", status=status)
    if status in (401, 403):
        return HubError("hub_unauthorized", f"{prefix}, not authorized{detail}", status=status)
    if status == 404:
        return HubError("hub_repo_not_found", f"{prefix}, not found{detail}", status=status)
    retryable = status in RETRYABLE_STATUS
    return HubError(UNREACHABLE, f"{prefix}{detail}", retryable=retryable, status=status,
                    retry_after=parse_retry_after(headers.get("Retry-After")))


def _response_parts(exc: BaseException) -> tuple[int | None, Mapping[str, str], bytes | None]:
    response: Any = getattr(exc, "response", None)
    if response is None:
        return None, {}, None
    status = getattr(response, "status_code", None)
    headers = getattr(response, "headers", None) or {}
    try:
        body = response.content
    except Exception:  # a streamed response that was never read
        body = None
    return status, headers, body if isinstance(body, bytes) else None


def upload_cause(exc: BaseException) -> BaseException:
    """huggingface_hub wraps a failed LFS upload in RuntimeError('Error while uploading ...');
    the HTTP or transport error that decides retrying is its cause."""
    from huggingface_hub.errors import HfHubHTTPError

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (HfHubHTTPError, HubError, *TRANSPORT_ERRORS)):
            return seen
        seen = seen.__cause__
    return exc


def from_exception(exc: BaseException, *, action: str, redact: Redact) -> HubError:
    """Classify anything a Hub call raised. Never raises itself."""
    if isinstance(exc, HubError):
        return exc
    from huggingface_hub import errors as hf

    status, headers, body = _response_parts(exc)
    if isinstance(exc, hf.GatedRepoError):  # before RepositoryNotFoundError: a subclass
        return from_status(status or 403, {**headers, "X-Error-Code": "GatedRepo"},
                           action=action, redact=redact, body=body)
    if isinstance(exc, hf.DisabledRepoError):
        return HubError("hub_disabled", f"{action}: the repository is disabled", status=status)
    if isinstance(exc, hf.RevisionNotFoundError):
        return from_status(status or 404, {**headers, "X-Error-Code": "RevisionNotFound"},
                           action=action, redact=redact, body=body)
    if isinstance(exc, hf.RepositoryNotFoundError):
        if status == 401 and headers.get("X-Error-Code") != "RepoNotFound":
            return from_status(401, headers, action=action, redact=redact, body=body)
        return from_status(status or 404, {**headers, "X-Error-Code": "RepoNotFound"},
                           action=action, redact=redact, body=body)
    if isinstance(exc, hf.LocalTokenNotFoundError):  # an OSError, but nothing to retry
        return HubError("hub_unauthorized", f"{action}: {NO_TOKEN_MESSAGE}")
    if isinstance(exc, hf.OfflineModeIsEnabled):
        return HubError(UNREACHABLE, f"{action}: HF_HUB_OFFLINE is set, the Hub cannot be asked")
    if isinstance(exc, hf.HfHubHTTPError) and status is not None:
        return from_status(status, headers, action=action, redact=redact, body=body)
    if isinstance(exc, LOCAL_ERRORS):
        return HubError(UNREACHABLE, f"{action}: {type(exc).__name__} on this machine: "
                        f"{_short(str(exc), redact)}")
    if isinstance(exc, TRANSPORT_ERRORS):
        return HubError(UNREACHABLE, f"{action}: {type(exc).__name__}: {_short(str(exc), redact)}",
                        retryable=True)
    return HubError(UNREACHABLE, f"{action}: unexpected {type(exc).__name__}: "
                    f"{_short(str(exc), redact)}")
