"""Where the Hub is and how patient to be with it (read from the environment at call time)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
TIMEOUT_ENV = "MESHCERT_HUB_TIMEOUT"


@dataclass(frozen=True)
class HubSettings:
    """Connection settings for one certification run.

    huggingface_hub reads HF_ENDPOINT once, at import; meshcert reads it here, per run, and
    passes `endpoint=` explicitly everywhere.
    """

    endpoint: str = DEFAULT_ENDPOINT
    timeout_s: float = 30.0  # per request (connect and each read)
    max_retries: int = 4  # retries after the first attempt, for 429/5xx/transport failures
    backoff_base_s: float = 1.0  # 1, 2, 4, 8 ... seconds between attempts
    backoff_cap_s: float = 8.0
    max_retry_after_s: float = 60.0  # a longer Retry-After is not waited for in full
    # Header reads are a few small ranges per fragment, each a redirect and a 206: 32 at once
    # keep a 94-layer package within ~10 round trips of wall time. max_parallel_requests caps
    # the requests in flight to the Hub and its storage, whatever the worker counts.
    header_workers: int = 32  # parallel GGUF header reads
    stream_workers: int = 4  # parallel streamed SHA-256 downloads
    max_parallel_requests: int = 32

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HubSettings:
        env = os.environ if environ is None else environ
        endpoint = (env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).strip().rstrip("/")
        return cls(endpoint=endpoint or DEFAULT_ENDPOINT,
                   timeout_s=_positive_float(env.get(TIMEOUT_ENV), cls.timeout_s))

    @property
    def origin(self) -> tuple[str, str, int]:
        return url_origin(self.endpoint)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def _positive_float(text: str | None, default: float) -> float:
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if value > 0 else default
