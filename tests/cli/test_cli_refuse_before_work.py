"""Commands that write to the Hub or run jobs ask first (issue 34): without a usable token, with
a token that cannot write the target, or with the Hub unreachable, `package publish`,
`package write --publish`, `package job` and `meshcert job ...` refuse with one clear line and
exit 2, before anything is hashed, certified, written or submitted. Run as users run them,
against the in-repo Hub and the real huggingface_hub client; attempts are counted, not timed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.core.hub.access import PREFLIGHT_SETTINGS
from meshcert.testing import PackageInfo, llama_spec, write_package, write_source_gguf
from tests.core.hub.test_access import closed_port_url
from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub

WRITER = "hf_alice_writes_0123456789"
READER = "hf_alice_reads_0123456789"
runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        fake.add_token(WRITER, user="alice", orgs={"meshllm": "write"})
        fake.add_token(READER, user="alice", orgs={"meshllm": "write"}, role="read")
        yield fake


@pytest.fixture
def package(tmp_path: Path) -> PackageInfo:
    return write_package(llama_spec(block_count=3), tmp_path / "pkg")


def run(*args: str):
    return runner.invoke(app, list(args))


def publish(package: PackageInfo, *more: str):
    return run("package", "publish", str(package.root), "--target", "meshllm/tiny", *more)


def assert_refused(result, says: str) -> None:
    assert result.exit_code == 2, result.output
    refusals = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refusals) == 1 and says in refusals[0], result.stderr  # one clear line
    assert "Traceback" not in result.output and "LocalTokenNotFoundError" not in result.output
    assert "certifying" not in result.stderr  # refused before any hashing


# --- package publish -------------------------------------------------------------------------
def test_publish_without_a_token(hub: FakeHub, package: PackageInfo) -> None:
    result = publish(package)
    assert_refused(result, "no Hugging Face token: set HF_TOKEN, or run `hf auth login`")
    assert "nothing certified or uploaded" in result.stderr
    assert hub.count() == 0 and hub.sleeps == []  # nothing asked, nothing retried


def test_publish_with_an_hf_token_of_blanks(hub: FakeHub, package: PackageInfo,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "   ")
    assert_refused(publish(package), "HF_TOKEN is set but holds only blanks")
    assert hub.count() == 0


def test_publish_with_an_empty_token_file(hub: FakeHub, package: PackageInfo) -> None:
    from huggingface_hub import constants

    Path(constants.HF_TOKEN_PATH).write_text("")
    assert_refused(publish(package), "is empty: run `hf auth login`, or set HF_TOKEN")
    assert hub.count() == 0


def test_publish_with_a_read_token_asks_the_hub_and_certifies_nothing(
        hub: FakeHub, package: PackageInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", READER)
    result = publish(package, "--verify-cache", str(package.root.parent / "digests.json"))
    assert_refused(result, "the read token of 'alice' cannot create repos in 'meshllm'")
    assert hub.only_access_checks() and hub.count("whoami") == 1
    assert not (package.root.parent / "digests.json").exists()  # nothing was hashed
    assert READER not in result.output


def test_publish_with_the_hub_unreachable(hub: FakeHub, package: PackageInfo,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", WRITER)
    url = closed_port_url()
    monkeypatch.setenv("HF_ENDPOINT", url)
    result = publish(package)
    assert_refused(result, f"the Hub at {url} cannot be reached")
    assert f"gave up after {PREFLIGHT_SETTINGS.max_retries + 1} attempts" in result.stderr
    assert len(hub.sleeps) == PREFLIGHT_SETTINGS.max_retries  # a few seconds, not minutes
    assert WRITER not in result.output


def test_publish_with_the_right_token_still_says_what_it_checked(
        hub: FakeHub, package: PackageInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", WRITER)
    result = publish(package)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[:2] == ["checking the token and the right to write meshllm/tiny",
                         "token of 'alice' may write meshllm/tiny"]
    assert lines[2].startswith("certifying ")  # only then the hashing


# --- package write --publish -----------------------------------------------------------------
def test_write_and_publish_without_a_token_writes_nothing(hub: FakeHub, tmp_path: Path) -> None:
    source = tmp_path / "tiny-F32.gguf"
    write_source_gguf(llama_spec(block_count=4), source)
    out = tmp_path / "out"
    result = run("package", "write", str(source), "--out-dir", str(out), "--model-id",
                 "meshllm/tiny-GGUF:F32", "--publish", "meshllm/tiny", "--json")
    assert_refused(result, "no Hugging Face token")
    assert "nothing written or uploaded" in result.stderr and result.stdout == ""
    assert not out.exists() or not any(out.iterdir())
    assert hub.count() == 0


# --- package job and the job group -----------------------------------------------------------
def test_package_job_without_a_token_submits_nothing(hub: FakeHub) -> None:
    result = run("package", "job", "alice/tiny-GGUF:F32", "--target", "meshllm/tiny",
                 "--confirm")
    assert_refused(result, "no Hugging Face token")
    assert hub.count() == 0 and hub.jobs.jobs == {}


def test_package_job_with_the_hub_unreachable(hub: FakeHub,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", WRITER)
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    result = run("package", "job", "alice/tiny-GGUF:F32", "--target", "meshllm/tiny")
    assert_refused(result, "cannot be reached")
    assert len(hub.sleeps) == PREFLIGHT_SETTINGS.max_retries


@pytest.mark.parametrize("command", [["list"], ["status", "job-1"], ["logs", "job-1"],
                                     ["cancel", "job-1"]])
def test_the_job_group_without_a_token_fails_at_once(hub: FakeHub, command: list[str]) -> None:
    """It retried the local LocalTokenNotFoundError for 15.7 s and printed its name."""
    result = run("job", *command)
    assert_refused(result, "no Hugging Face token: set HF_TOKEN, or run `hf auth login`")
    assert hub.sleeps == [] and hub.count() == 0


def test_the_job_group_with_a_revoked_token(hub: FakeHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_revoked_0123456789")
    result = run("job", "list")
    assert_refused(result, "does not accept this token")
    assert hub.count("whoami") == 1 and hub.sleeps == []
    assert "hf_revoked_0123456789" not in result.output


def test_the_job_group_with_the_hub_unreachable(hub: FakeHub,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", WRITER)
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    result = run("job", "status", "job-1")
    assert_refused(result, "cannot be reached")
    assert len(hub.sleeps) == PREFLIGHT_SETTINGS.max_retries
