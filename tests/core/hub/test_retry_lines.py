"""A Hub that fails and is retried says so: one line on stderr per retry, naming the attempt
and the wait (an unreachable Hub was 17 s of silence), unless --quiet or --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.support.hub_packages import REPO, build_package
from tests.support.hub_server import FakeHub


@pytest.fixture
def sha(hub: FakeHub, tmp_path: Path) -> str:
    return hub.publish_dir(REPO, build_package(tmp_path).root)


def test_each_retry_is_a_line_naming_the_attempt_and_the_wait(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", status=503, times=2)
    done = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}",
                                    "--package-only"])
    assert done.exit_code == 0, done.output
    retries = [line for line in done.stderr.splitlines() if line.startswith("Hub: attempt")]
    assert len(retries) == 2, done.stderr
    assert retries[0].startswith("Hub: attempt 1 of 5 failed (model_info ")
    assert retries[0].endswith("; retrying in 1 s")
    assert retries[1].startswith("Hub: attempt 2 of 5 failed") and retries[1].endswith(
        "retrying in 2 s")
    assert hub.sleeps[:2] == [1.0, 2.0]  # the waits said are the waits taken


def test_json_keeps_stderr_silent_and_stdout_clean(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", status=503, times=2)
    done = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}",
                                    "--package-only", "--json"])
    assert done.exit_code == 0, done.output
    assert done.stderr == "" and json.loads(done.stdout)["status"] == "passed"
