"""A politeness gate shared by every thread that talks to one Hub: at most N requests at once,
and when the Hub answers "429, Retry-After: S", no thread starts a request for S seconds.

Without it each worker would honour Retry-After for its own request only while the others kept
asking (and collecting 429s). `slot()` is held for one attempt (a redirect and its answer
included); `hold(seconds)` makes every later `slot()` of the other threads wait until the time
has passed. The thread that got the 429 is not held for its retry of that request: its own
retry backoff (which honours the same Retry-After) already waited. Waiting uses an Event, not
time.sleep, so it is real time even where a test records sleeps instead of sleeping; `close()`
releases every waiter.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class RequestGate:
    def __init__(self, max_parallel: int, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be >= 1")
        self.max_parallel = max_parallel
        self._slots = threading.BoundedSemaphore(max_parallel)
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._clock = clock
        self._resume_at = 0.0
        self._holder: int | None = None  # the thread whose 429 set the hold
        self.in_use = 0
        self.most_in_use = 0  # the most attempts in flight at once
        self.holds = 0  # how many Retry-After answers paused the gate

    def hold(self, seconds: float) -> None:
        """No other thread starts an attempt for `seconds` from now (a later end is kept)."""
        if seconds <= 0:
            return
        with self._lock:
            until = self._clock() + seconds
            if until > self._resume_at:
                self._resume_at = until
                self._holder = threading.get_ident()
            self.holds += 1

    def _pause_left(self, *, entering: bool = False) -> float:
        with self._lock:
            if self._holder == threading.get_ident():
                if entering:  # the told thread's retry, once: it has waited in its backoff
                    self._holder = None
                return 0.0
            return self._resume_at - self._clock()

    def close(self) -> None:
        self._closed.set()

    @contextmanager
    def slot(self) -> Iterator[None]:
        while True:
            while (left := self._pause_left()) > 0 and not self._closed.is_set():
                self._closed.wait(left)
            self._slots.acquire()
            if self._pause_left(entering=True) <= 0 or self._closed.is_set():
                break
            self._slots.release()  # a hold began while this thread queued for a slot
        with self._lock:
            self.in_use += 1
            self.most_in_use = max(self.most_in_use, self.in_use)
        try:
            yield
        finally:
            with self._lock:
                self.in_use -= 1
            self._slots.release()
