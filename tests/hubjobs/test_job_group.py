"""`meshcert job list|status|logs|cancel JOB` and the `package job` pre-flight of the catalog,
against the in-repo Hub whose Jobs API runs each job for real."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.hubjobs.test_package_job import CATALOG, TARGET, job, source
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
__all__ = ["source"]  # the fixture, shared with test_package_job.py


def group(*args: str) -> Any:
    return CliRunner().invoke(app, ["job", *args], catch_exceptions=False)


def submitted(source: tuple[str, str]) -> str:
    done = job(source[0], "--target", TARGET, "--confirm", "--install", "meshcert", "--json")
    assert done.exit_code == 0, done.output
    job_id: str = json.loads(done.stdout)["job_id"]
    return job_id


def test_a_job_is_listed_shown_logged_and_cancelled(hub: FakeHub,
                                                    source: tuple[str, str]) -> None:
    job_id = submitted(source)
    listed = group("list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [j["job_id"] for j in json.loads(listed.stdout)] == [job_id]
    [shown] = json.loads(group("status", job_id, "--json").stdout)
    assert shown["job_id"] == job_id and shown["labels"]["meshcert-task"] == "package-write"
    cancelled = group("cancel", job_id, "--json")
    assert cancelled.exit_code == 0, cancelled.output
    assert json.loads(cancelled.stdout)[0]["stage"] in ("CANCELED", "COMPLETED")
    logs = group("logs", job_id, "--follow")
    assert logs.exit_code == 0 and logs.stderr == ""
    plain = group("status", job_id)
    assert plain.stdout.startswith(job_id) and plain.stderr == ""


@pytest.mark.parametrize(("old", "new"), [(["--list"], "meshcert job list"),
                                          (["--status"], "meshcert job status ID"),
                                          (["--cancel"], "meshcert job cancel ID"),
                                          (["--logs"], "meshcert job logs ID")])
def test_the_old_mode_flags_still_work_with_a_deprecation_warning(
        hub: FakeHub, source: tuple[str, str], old: list[str], new: str) -> None:
    job_id = submitted(source)
    done = job(*old, *([] if old == ["--list"] else [job_id]), *(
        [] if old == ["--logs"] else ["--json"]))
    assert done.exit_code == 0, done.output
    assert done.stderr == f"warning: `package job {old[0]}` is deprecated; use `{new}`\n"
    if old != ["--logs"]:
        assert [j["job_id"] for j in json.loads(done.stdout)] == [job_id]


def test_an_unknown_job_is_incomplete(hub: FakeHub) -> None:
    done = group("status", "no-such-job")
    assert done.exit_code == 3 and done.stderr.startswith("error: ")


def test_a_missing_catalog_is_refused_before_anything_is_submitted(
        hub: FakeHub, source: tuple[str, str]) -> None:
    done = job(source[0], "--target", TARGET, "--catalog", "meshllm/no-such-catalog",
               "--confirm")
    assert done.exit_code == 2, done.output
    assert done.stderr.splitlines()[-1] == (
        "refused: --catalog meshllm/no-such-catalog: the dataset does not exist or this token "
        "cannot read it; create it, fix the name, or give --catalog none")
    assert hub.jobs.jobs == {}
    assert TARGET not in hub.repos  # nothing published either


def test_a_catalog_the_token_can_only_read_gets_a_pull_request(
        hub: FakeHub, source: tuple[str, str]) -> None:
    """A write token that may not push to the catalog's namespace may still open a pull
    request there: planned, with a note, not refused."""
    hub.commit("carol/catalog", {"README.md": b"# catalog\n"}, repo_type="dataset")
    done = job(source[0], "--target", TARGET, "--catalog", "carol/catalog", "--dry-run")
    assert done.exit_code == 0, done.output  # a write token: the entry becomes a pull request
    assert "its entry is proposed as a pull request" in done.stderr
    assert hub.jobs.jobs == {}


def test_a_bad_catalog_name_is_refused(hub: FakeHub, source: tuple[str, str]) -> None:
    done = job(source[0], "--target", TARGET, "--catalog", "not a repo", "--confirm")
    assert done.exit_code == 2 and "is not a dataset repo id" in done.stderr
    assert hub.jobs.jobs == {}


def test_the_default_catalog_exists_here_and_passes(hub: FakeHub,
                                                    source: tuple[str, str]) -> None:
    done = job(source[0], "--target", TARGET, "--catalog", CATALOG)
    assert done.exit_code == 0, done.output
