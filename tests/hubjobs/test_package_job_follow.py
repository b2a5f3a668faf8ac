"""`package job --confirm --follow` as a person watches it (issue 34): the job's own progress
lines, no blank lines, the report channel decoded rather than printed as base64, and the
current commands named. Against the in-repo Hub whose Jobs API runs the job for real."""

from __future__ import annotations

import pytest

from meshcert.hubjobs.report_channel import PREFIX
from tests.hubjobs.test_package_job import TARGET, job, source
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
__all__ = ["source"]  # the fixture, shared with test_package_job.py


def test_follow_shows_the_jobs_progress_and_decodes_its_report(
        hub: FakeHub, source: tuple[str, str]) -> None:
    done = job(source[0], "--target", TARGET, "--confirm", "--follow", "--install", "meshcert")
    assert done.exit_code == 0, done.output
    err = done.stderr.splitlines()
    assert all(line.strip() for line in err), "no blank lines"
    assert PREFIX not in done.output  # the channel is decoded, never shown
    job_lines = [line for line in err if line.startswith("[job] ")]
    # the job's own progress: the writer's uploads and the publish, as they happened
    assert any("uploaded layers/" in line for line in job_lines), job_lines
    assert any("committing the manifest and the model card" in line for line in job_lines)
    assert "[job] (its certification report is coming back through the logs; decoded " \
        "below)" in err
    [submitted] = hub.jobs.jobs
    assert f"its logs: `meshcert job logs {submitted} --follow`" in done.stderr
    assert "package job --logs" not in done.output  # the deprecated mode is not recommended
    commit = hub.repos[TARGET].branches["main"]
    assert done.stdout.splitlines()[-2:] == [
        f"package: hf://{TARGET}@{commit}; certification: passed",
        f"run it: mesh-llm serve --model hf://{TARGET}@{commit} --split"]
