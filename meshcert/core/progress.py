"""Progress is an observer the CLI passes in, so the core stays silent in tests and --json.

Two kinds: a byte (or item) count of one task (`ProgressObserver`: begin, advance, end), which
the CLI draws as a bar on a terminal, and the phases of a long piece of work ("parity: loading
the source model", "prompt 2/3 done"), which an observer that is also a `PhaseObserver` prints
as one line each, on a terminal or in a CI log alike. `report_phase` tells a phase to whichever
observer takes them and to no other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable


class ProgressObserver(Protocol):
    def begin(self, label: str, total: int | None) -> None:
        """A long task starts; `total` in bytes (or items) when known."""

    def advance(self, amount: int) -> None:
        """Some of the task is done (may be called from worker threads)."""

    def end(self) -> None:
        """The task finished (or was abandoned)."""


@runtime_checkable
class PhaseObserver(Protocol):
    def phase(self, text: str) -> None:
        """One step of a long piece of work has started or ended (one line in a log)."""


def report_phase(progress: object, text: str) -> None:
    """Tell `progress` about a phase when it takes phases (a bare ProgressObserver does not)."""
    if isinstance(progress, PhaseObserver):
        progress.phase(text)


class NullProgress:
    def begin(self, label: str, total: int | None) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def end(self) -> None:
        return None

    def phase(self, text: str) -> None:
        return None


def _amount(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


class PeriodicLines:
    """A ProgressObserver (and PhaseObserver) for a stream that is not a terminal (a CI log, a
    pipe): plain lines through `emit`, never rewritten in place. A task says when it starts,
    then at most one line every `every_s` seconds or each `step` of its total (whichever comes
    first), and when it ends; a phase is one line. Thread-safe."""

    def __init__(self, emit: Callable[[str], None], *, every_s: float = 5.0,
                 step: float = 0.1, clock: Callable[[], float] = time.monotonic) -> None:
        self._emit, self._every, self._step, self._clock = emit, every_s, step, clock
        self._lock = threading.Lock()
        self._label, self._total, self._done = "", 0, 0
        self._started = self._shown = 0.0
        self._next_mark = 0
        self._active = False

    def begin(self, label: str, total: int | None) -> None:
        with self._lock:
            self._label, self._total, self._done = label, total or 0, 0
            self._started = self._shown = self._clock()
            self._next_mark = int(self._total * self._step)
            self._active = True
            self._emit(f"{label}: started" + (f", {_amount(self._total)} to do"
                                              if self._total else ""))

    def advance(self, amount: int) -> None:
        with self._lock:
            if not self._active:
                return
            self._done += amount
            now = self._clock()
            if now - self._shown >= self._every or (
                    self._total and self._done >= self._next_mark and self._done < self._total):
                self._shown = now
                while self._total and self._next_mark <= self._done:
                    self._next_mark += max(1, int(self._total * self._step))
                self._emit(self._line(now))

    def end(self) -> None:
        with self._lock:
            if not self._active:
                return
            self._active = False
            seconds = self._clock() - self._started
            self._emit(f"{self._label}: done, {_amount(self._done)} in {seconds:.1f} s")

    def phase(self, text: str) -> None:
        with self._lock:
            self._emit(text)

    def _line(self, now: float) -> str:
        line = f"{self._label}: {_amount(self._done)}"
        if self._total:
            line += f" of {_amount(self._total)} ({100 * self._done / self._total:.0f}%)"
        elapsed = now - self._started
        if elapsed > 0:
            rate = self._done / elapsed
            line += f", {_amount(rate)}/s"
            if rate > 0 and self._total > self._done:
                line += f", about {(self._total - self._done) / rate:.0f} s left"
        return line
