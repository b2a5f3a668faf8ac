"""What the runtime gates are asked to do: one endpoint, one prompt, the limits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RuntimeRequest:
    """One endpoint to smoke-test (`meshcert.certify.service` re-exports this)."""

    api_base: str
    model_id: str
    prompt: str = "Say ok."
    max_tokens: int = 2
    api_key: str | None = None
    timeout_s: float = 120.0
    concurrency: int = 4
    strict: bool = False
    deadline_s: float | None = None
