"""The SQLite queue: a delivery recorded once, a newer task superseding a pending one, one
running task per repo, leases, a restart taking back what a killed process ran, and job
checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.serve.config import ConfigError
from meshcert.serve.queue import DONE, Queue
from meshcert.serve.routing import PACKAGE, PACKAGE_PR, TaskSpec


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def spec(repo: str = "ns/a-layers", ref: str = "refs/heads/main", kind: str = PACKAGE
         ) -> TaskSpec:
    return TaskSpec(kind, repo, "model", ref)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(tmp_path: Path, clock: Clock) -> Queue:
    return Queue(tmp_path / "state", clock=clock)


def test_a_delivery_is_recorded_once_and_forgotten_after_its_retention(
        queue: Queue, clock: Clock) -> None:
    assert not queue.accept("d1", [spec()], "queued").replay
    again = queue.accept("d1", [spec()], "queued")
    assert again.replay and again.queued == 0
    assert queue.counts()["pending"] == 1
    clock.now += 8 * 86400
    assert not queue.accept("d2", [], "ignored").replay  # sweeps d1
    assert not queue.accept("d1", [], "ignored").replay


def test_a_newer_task_on_a_ref_supersedes_the_pending_one(queue: Queue) -> None:
    queue.accept("d1", [spec()], "queued")
    second = queue.accept("d2", [spec()], "queued")
    queue.accept("d3", [spec(ref="refs/pr/1", kind=PACKAGE_PR)], "queued")
    assert second.superseded == 1
    counts = queue.counts()
    assert counts["pending"] == 2 and counts["superseded"] == 1


def test_one_task_runs_per_repo_and_a_lease_run_out_is_not_taken_while_its_process_lives(
        queue: Queue, clock: Clock) -> None:
    """A lease that ran out in the process that owns the folder is a stalled heartbeat, not a
    dead worker: taking the task again would run it twice (a restart takes it back)."""
    queue.accept("d1", [spec(), spec(ref="refs/pr/1", kind=PACKAGE_PR)], "queued")
    queue.accept("d2", [spec("ns/b-layers")], "queued")
    first = queue.claim(60)
    second = queue.claim(60)
    assert first is not None and second is not None
    assert (first.repo, second.repo) == ("ns/a-layers", "ns/b-layers")
    assert queue.claim(60) is None  # a-layers' second task waits for its first
    clock.now += 61  # the first worker's heartbeat stalled: its lease ran out
    assert queue.claim(60) is None  # neither the task again nor a second one of its repo
    queue.finish(first.id, DONE, "ok")
    third = queue.claim(60)
    assert third is not None and third.ref == "refs/pr/1"


def test_a_restart_takes_back_what_a_killed_process_ran(tmp_path: Path, clock: Clock) -> None:
    queue = Queue(tmp_path / "state", clock=clock)
    queue.accept("d1", [spec()], "queued")
    assert queue.claim(600) is not None
    queue.close()  # as if killed: the task is still marked running, its lease far away
    restarted = Queue(tmp_path / "state", clock=clock)
    assert restarted.requeued_at_start == 1
    assert restarted.claim(600) is not None


def test_one_process_owns_a_state_folder(queue: Queue, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="another meshcert serve uses the state folder"):
        Queue(tmp_path / "state")


def test_a_job_is_checkpointed_and_a_published_one_is_reused(queue: Queue) -> None:
    job = queue.job("k", "ns/a", "c" * 40)
    assert job.state == "running" and job.result is None
    queue.job_certified("k", {"status": "passed"}, "line\n")
    assert queue.job("k", "ns/a", "c" * 40).envelope == "line\n"
    queue.job_published("k", {"status": "passed", "attestation_url": "u"})
    done = queue.job("k", "ns/a", "c" * 40)
    assert (done.state, done.runs, done.result) == ("published", 1,
                                                    {"status": "passed", "attestation_url": "u"})


def test_deliveries_recorded_together_are_recorded_as_if_one_by_one(queue: Queue) -> None:
    """Group commit: one transaction, each delivery in order (an id twice is a replay the
    second time, a later push supersedes an earlier one of the same batch)."""
    got = queue.accept_many([("d1", [spec()], "queued", "x"), ("d2", [spec()], "queued", "y"),
                             ("d1", [spec()], "queued", "z"), ("d3", [], "ignored", None)])
    assert [(a.replay, a.queued, a.superseded, a.altered) for a in got] == [
        (False, 1, 0, False), (False, 1, 1, False), (True, 0, 0, True), (False, 0, 0, False)]
    counts = queue.counts()
    assert (counts["deliveries"], counts["pending"], counts["superseded"]) == (3, 1, 1)
