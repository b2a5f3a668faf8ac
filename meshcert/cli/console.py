"""Terminal output helpers for the CLI: a rich progress observer on stderr, its bars drawn only
on a terminal, its phase lines printed everywhere (a terminal or a CI log), quiet when asked."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshcert.core.progress import PeriodicLines

if TYPE_CHECKING:  # rich.progress loads when a bar is first drawn, not at `import meshcert.cli`
    from rich.console import Console
    from rich.progress import Progress, TaskID


class RichProgress:
    """ProgressObserver drawing one byte-progress bar per task on stderr (thread-safe), and a
    PhaseObserver printing each phase of long work as one line on stderr."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._lock = threading.Lock()
        # a pipe or a CI log: plain lines, a few per task, instead of a bar
        self._lines: PeriodicLines | None = None

    def begin(self, label: str, total: int | None) -> None:
        from meshcert.cli.terminal import plain_stream

        if self._console is None and plain_stream(sys.stderr):
            # no bar, and no rich to import to find that out: a line now and then instead
            self._lines = self._lines or PeriodicLines(_stderr_line)
            self._lines.begin(label, total)
            return
        from rich.console import Console

        if self._console is None:
            self._console = Console(stderr=True)
        if not self._console.is_terminal:  # a pipe or a CI log gets no bar (and no stray lines)
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
            TransferSpeedColumn(), TimeRemainingColumn(), console=self._console, transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def phase(self, text: str) -> None:
        with self._lock:
            if self._progress is not None:  # above the live bar, which stays at the bottom
                self._progress.console.print(text, markup=False, highlight=False)
                return
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def advance(self, amount: int) -> None:
        if self._lines is not None:
            self._lines.advance(amount)
            return
        with self._lock:
            if self._progress is not None and self._task is not None:
                self._progress.advance(self._task, amount)

    def end(self) -> None:
        if self._lines is not None:
            self._lines.end()
            return
        with self._lock:
            if self._progress is not None:
                self._progress.stop()
            self._progress = None
            self._task = None


def _stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


@contextlib.contextmanager
def hub_retry_lines(enabled: bool) -> Iterator[None]:
    """While inside: each retry of a Hub request is one line on stderr (which attempt failed,
    why, how long the wait is), unless `enabled` is False (--quiet, --json)."""
    from meshcert.core.hub.progress import announce_retries

    announce_retries(_stderr_line if enabled else None)
    try:
        yield
    finally:
        announce_retries(None)
