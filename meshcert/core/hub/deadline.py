"""A wall-clock limit for a client call that takes no timeout argument."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run_with_deadline(fn: Callable[[], T], seconds: float) -> T:
    """Run a client call that takes no timeout argument, giving up after `seconds`.

    The call runs on a daemon thread, so a Hub that accepts a connection and then stalls cannot
    hang the certification (nor keep the process alive at exit).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="meshcert-hub-call", daemon=True).start()
    if not done.wait(seconds):
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
