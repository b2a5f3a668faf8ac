"""SIGTERM ends a certification that did not finish in `drain_s`: what it returns then is no
verdict, so nothing is recorded or posted and the task is pending again for the next start."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest.keys import generate, load_private
from meshcert.serve.certifier import Certified, failed_result
from meshcert.serve.config import load_config
from meshcert.serve.hub_side import ServeHub
from meshcert.serve.queue import PENDING, Queue, QueueClosed
from meshcert.serve.routing import PACKAGE, TaskSpec
from meshcert.serve.worker import Workers


class Resolving(ServeHub):
    def resolve(self, repo: str, repo_type: str, revision: str | None) -> str:
        return "c" * 40


def test_a_certification_cut_short_by_sigterm_records_and_posts_nothing(
        tmp_path: Path) -> None:
    pair = generate(tmp_path / "release")
    config_path = tmp_path / "serve.toml"
    config_path.write_text('[signing]\nkey = "release.key"\n[attestations]\nrepo = "a/b"\n'
                           '[[watch]]\nrepo = "meshllm/*-layers"\n[budgets]\nmax_attempts = 1\n')
    config = load_config(config_path)
    queue = Queue(tmp_path / "state")
    workers: Workers

    def certify(repo: str, commit: str) -> Certified:
        workers._stopping.set()  # noqa: SLF001  (SIGTERM while it runs: the pool is ended)
        return Certified(failed_result(repo, commit, "the certification worker died"), None)

    workers = Workers(config, queue, Resolving(), load_private(pair.private_path),
                      certify=certify)
    queue.accept("d1", [TaskSpec(PACKAGE, "meshllm/a-layers", "model",
                                 "refs/heads/main")], "queued")
    task = queue.claim(60)
    assert task is not None
    with pytest.raises(QueueClosed, match="stopped with the service"):
        workers.run(task)  # the worker's loop ends quietly on this
    assert queue.counts()["certifications"] == 0  # no verdict recorded, none posted
    queue.release(task.id, "requeued at shutdown")  # what stop() does with it
    assert queue.tasks((PENDING,))[0]["id"] == task.id
    queue.close()
