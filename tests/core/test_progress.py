"""Phases of long work go only to observers that take them (meshcert.core.progress)."""

from __future__ import annotations

from meshcert.core.progress import NullProgress, PhaseObserver, report_phase


class Recorder:
    def __init__(self) -> None:
        self.phases: list[str] = []
        self.advanced = 0

    def begin(self, label: str, total: int | None) -> None:
        return None

    def advance(self, amount: int) -> None:
        self.advanced += amount

    def end(self) -> None:
        return None

    def phase(self, text: str) -> None:
        self.phases.append(text)


class BarsOnly:
    def begin(self, label: str, total: int | None) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def end(self) -> None:
        return None


def test_a_phase_reaches_an_observer_that_takes_phases_only() -> None:
    recorder = Recorder()
    report_phase(recorder, "parity: loading the source model")
    report_phase(BarsOnly(), "nobody hears this")  # an older observer: nothing breaks
    report_phase(NullProgress(), "silent")
    assert recorder.phases == ["parity: loading the source model"]
    assert isinstance(NullProgress(), PhaseObserver) and not isinstance(BarsOnly(),
                                                                        PhaseObserver)
