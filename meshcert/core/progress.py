"""Progress is an observer the CLI passes in, so the core stays silent in tests and --json.

Two kinds: a byte (or item) count of one task (`ProgressObserver`: begin, advance, end), which
the CLI draws as a bar on a terminal, and the phases of a long piece of work ("parity: loading
the source model", "prompt 2/3 done"), which an observer that is also a `PhaseObserver` prints
as one line each, on a terminal or in a CI log alike. `report_phase` tells a phase to whichever
observer takes them and to no other.
"""

from __future__ import annotations

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
