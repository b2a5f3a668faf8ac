"""Bounded retries with exponential backoff that honour Retry-After."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from meshcert.core.hub.errors import HubError
from meshcert.core.hub.progress import retry_notices
from meshcert.core.hub.settings import HubSettings

T = TypeVar("T")
Sleep = Callable[[float], None]


def default_sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up per call, so tests can patch time.sleep


def call_with_retries(
    attempt: Callable[[], T],
    *,
    classify: Callable[[BaseException], HubError],
    settings: HubSettings,
    sleep: Sleep = default_sleep,
    cancelled: Callable[[], bool] | None = None,
) -> T:
    """Run `attempt` until it succeeds, fails for good, or the retries run out.

    Only retryable failures (429, 5xx, timeouts, dropped connections) are retried; the wait is
    Retry-After when the Hub gives one (capped), else 1, 2, 4, 8 s. The last failure is raised
    as a HubError whose message says how many attempts were made.
    """
    wait = settings.backoff_base_s
    tries = 0
    while True:
        tries += 1
        try:
            return attempt()
        except Exception as exc:  # classified below; the last one is raised
            error = classify(exc)
            if not error.retryable or tries > settings.max_retries or (
                    cancelled is not None and cancelled()):
                if error.retryable and tries > 1:
                    error.message = f"{error.message} (gave up after {tries} attempts)"
                    error.args = (error.message,)
                raise error from None
            delay = wait if error.retry_after is None else min(
                max(error.retry_after, settings.backoff_base_s), settings.max_retry_after_s)
            for notice in retry_notices():
                notice(f"Hub: attempt {tries} of {settings.max_retries + 1} failed "
                       f"({error.message}); retrying in {delay:g} s")
            sleep(delay)
            wait = min(settings.backoff_cap_s, wait * 2)
