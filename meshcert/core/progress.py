"""Progress is an observer the CLI passes in, so the core stays silent in tests and --json."""

from __future__ import annotations

from typing import Protocol


class ProgressObserver(Protocol):
    def begin(self, label: str, total: int | None) -> None:
        """A long task starts; `total` in bytes (or items) when known."""

    def advance(self, amount: int) -> None:
        """Some of the task is done (may be called from worker threads)."""

    def end(self) -> None:
        """The task finished (or was abandoned)."""


class NullProgress:
    def begin(self, label: str, total: int | None) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def end(self) -> None:
        return None
