"""SIGTERM in a certification worker process (the service stopping: CertifyPool.close).

An idle worker exits at once. A busy one unwinds its certification (`Terminated`), so the HF
Jobs it submitted are cancelled on the way out (certify_slices.run_certify_jobs cancels them on
any exception) instead of running, and billing, to their timeouts. While jobs are being
submitted the signal is held (`submitting`) and acted on once the last job's id is known: a job
the Hub created but whose answer had not arrived could not be cancelled. A second SIGTERM
(the pool's own clean-up) never interrupts the unwinding's cancel requests.

These are the worker process's own handlers (its entry, like a CLI's): they may end it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any


class Terminated(BaseException):
    """The service is stopping: unwind the certification running in this worker."""


_STATE = {"busy": False, "holding": False, "pending": False}


def install() -> None:
    """In the worker process, at its start."""
    signal.signal(signal.SIGTERM, _on_term)


def _on_term(_signum: int, _frame: object) -> None:
    if not _STATE["busy"]:
        os._exit(0)  # idle: nothing to unwind
    if _STATE["holding"]:
        _STATE["pending"] = True
        return
    _unwind()


def _unwind() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the unwinding's requests go out
    raise Terminated


@contextlib.contextmanager
def busy() -> Iterator[None]:
    """A certification runs: SIGTERM unwinds it; the worker ends when it has unwound."""
    _STATE["busy"] = True
    try:
        yield
    except Terminated:
        os._exit(143)  # the service requeued the task
    finally:
        _STATE["busy"] = False


@contextlib.contextmanager
def submitting(count: int) -> Iterator[Callable[[Any, Any], None]]:
    """SIGTERM held while `count` jobs are submitted; the yielded `on_state` (a Launch's)
    counts the submissions and releases it after the last."""
    seen: set[int] = set()

    def release() -> None:
        if _STATE["holding"]:
            _STATE["holding"] = False
            if _STATE["pending"]:
                _STATE["pending"] = False
                _unwind()

    def on_state(item: Any, _state: Any) -> None:
        seen.add(item.index)
        if len(seen) >= count:
            release()

    _STATE["holding"] = _STATE["busy"]  # only a worker's certification is held
    try:
        yield on_state
    finally:
        release()
