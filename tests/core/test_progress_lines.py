"""Progress off a terminal (a CI log, a pipe): `PeriodicLines` says a task in a few plain
lines: when it starts, every few seconds or each tenth of it, and when it ends."""

from __future__ import annotations

from meshcert.core.progress import PeriodicLines


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_task_is_a_start_line_a_line_each_tenth_and_an_end_line() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = PeriodicLines(lines.append, every_s=5.0, step=0.1, clock=clock)
    progress.begin("sha256", 1000)
    for _ in range(1000):  # a thousand small reads in no time: one line per tenth only
        progress.advance(1)
    progress.end()
    assert lines[0] == "sha256: started, 1.00 KB to do"
    assert len(lines) == 1 + 9 + 1, lines  # 10%..90%, then done
    assert lines[1].startswith("sha256: 100 B of 1.00 KB (10%)")
    assert lines[-1].startswith("sha256: done, 1.00 KB in ")


def test_a_slow_task_of_unknown_size_says_something_every_few_seconds() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = PeriodicLines(lines.append, every_s=5.0, clock=clock)
    progress.begin("streaming", None)
    for _ in range(12):
        clock.now += 1.0
        progress.advance(1_000_000)
    progress.end()
    assert lines == ["streaming: started", "streaming: 5.00 MB, 1.00 MB/s",
                     "streaming: 10.00 MB, 1.00 MB/s", "streaming: done, 12.00 MB in 12.0 s"]


def test_phases_are_one_line_each_and_nothing_follows_an_end() -> None:
    lines: list[str] = []
    progress = PeriodicLines(lines.append, clock=Clock())
    progress.phase("materialize cert-stage-0 (layers 0..2): assembling")
    progress.end()  # no task: nothing to say
    progress.advance(5)
    assert lines == ["materialize cert-stage-0 (layers 0..2): assembling"]
