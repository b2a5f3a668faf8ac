"""`meshcert package publish` as users run it: what it prints, its exit statuses (0 published
and certified, 1 failed, 2 refused or usage, 3 incomplete), and no secret in its output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from meshcert.cli import app  # noqa: E402
from meshcert.testing import PackageInfo, llama_spec, write_package  # noqa: E402
from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_publisher_0123456789abcdef"
OTHER = "hf_someone_else_0123456789"
runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        fake.add_token(TOKEN, user="alice", orgs={"meshllm": "write"})
        fake.add_token(OTHER, user="bob")
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake


@pytest.fixture
def package(tmp_path: Path) -> PackageInfo:
    return write_package(llama_spec(block_count=3), tmp_path / "pkg")


def publish(*args: str):
    return runner.invoke(app, ["package", "publish", *args])


def test_published_prints_the_immutable_ref_and_the_serve_command(
        hub: FakeHub, package: PackageInfo) -> None:
    result = publish(str(package.root), "--target", "meshllm/tiny", "--max-files-per-commit",
                     "2", "--commit-message", "Tiny package")
    assert result.exit_code == 0, result.output
    sha = hub.repos["meshllm/tiny"].branches["main"]
    lines = result.stdout.splitlines()
    assert lines[0] == f"published and certified: hf://meshllm/tiny@{sha}"
    assert f"  immutable ref: hf://meshllm/tiny@{sha}" in lines
    assert f"  run it: mesh-llm serve --model hf://meshllm/tiny@{sha} --split" in lines
    assert "  4 commit(s), 6 file(s) uploaded, 0 already there" in lines
    # the certification of the published commit, in the one sentence `models certify` ends
    # with (issue 45), its coverage said: the Hub's digests at that commit
    [said] = [x for x in lines if x.startswith("  certification ")]
    assert said.startswith("  certification passed (digests: Hub-attested (LFS SHA-256), "
                           "not re-hashed): 0 errors, ") and said.endswith("package gate passed")
    assert "certifying" in result.stderr  # progress goes to stderr
    assert TOKEN not in result.output
    assert hub.repos["meshllm/tiny"].commits[sha].title == "Tiny package (manifest and model card)"


def test_a_package_that_does_not_certify_exits_2(hub: FakeHub, package: PackageInfo) -> None:
    (package.root / "layers" / "layer-001.gguf").write_bytes(b"GGUF?")
    result = publish(str(package.root), "--target", "meshllm/tiny", "-q")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("refused: ")
    assert "nothing uploaded" in result.stderr and hub.only_access_checks()
    # the local certification that refused it, in the sentence `models certify` ends with
    said = [x for x in result.stderr.splitlines() if x.startswith("  certification ")]
    assert len(said) == 1 and said[0].startswith("  certification failed: ")
    assert said[0].endswith("package gate failed")


def test_usage_errors_exit_2(hub: FakeHub, package: PackageInfo, tmp_path: Path) -> None:
    assert publish(str(package.root), "--target", "no-namespace").exit_code == 2
    assert publish(str(tmp_path / "nowhere"), "--target", "meshllm/x").exit_code == 2
    assert publish(str(package.root)).exit_code == 2  # --target is required
    assert hub.records == []


def test_a_hub_that_keeps_failing_exits_3_and_a_refusing_one_exits_1(
        hub: FakeHub, package: PackageInfo) -> None:
    hub.inject("commit", 503, times=None)
    incomplete = publish(str(package.root), "--target", "meshllm/tiny", "-q")
    assert incomplete.exit_code == 3, incomplete.output
    assert incomplete.stderr.startswith("incomplete: ")
    hub.clear_faults()
    hub.inject("commit", 403, times=None)  # the Hub refuses the upload itself, for good
    failed = publish(str(package.root), "--target", "meshllm/tiny", "-q")
    assert failed.exit_code == 1, failed.output
    assert TOKEN not in failed.output and TOKEN not in incomplete.output


def test_a_token_that_cannot_write_the_target_exits_2_before_certifying(
        hub: FakeHub, package: PackageInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 34: this was exit 1, after hashing and certifying the whole package
    hub.commit("meshllm/tiny", {"README.md": b"# tiny\n"})  # there, and not bob's
    hub.reset_counters()
    monkeypatch.setenv("HF_TOKEN", OTHER)
    refused = publish(str(package.root), "--target", "meshllm/tiny", "-q")
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.startswith("refused: the write token of 'bob' cannot write to "
                                     "meshllm/tiny (the Hub answered HTTP 403)")
    assert "certifying" not in refused.stderr and hub.only_access_checks()
    assert OTHER not in refused.output


def test_the_command_publishes_over_lfs_with_hf_xet_installed_and_nothing_set(
        hub: FakeHub, package: PackageInfo) -> None:
    """`meshcert package publish` as a process, HF_HUB_DISABLE_XET unset and hf_xet importable:
    the entry point switches Xet off before huggingface_hub is imported, so the upload is LFS
    (this Hub refuses Xet tokens: an Xet upload would fail)."""
    pytest.importorskip("hf_xet")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_XET"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "meshcert", "package", "publish",
                           str(package.root), "--target", "meshllm/tiny", "-q"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert hub.count("lfs_upload") > 0 and hub.count("xet_token") == 0


def test_a_user_who_asks_for_xet_is_refused_before_anything_is_spent(
        hub: FakeHub, package: PackageInfo, tmp_path: Path) -> None:
    pytest.importorskip("hf_xet")
    env = {**os.environ, "HF_HUB_DISABLE_XET": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "meshcert", "package", "publish",
                           str(package.root), "--target", "meshllm/tiny", "-q"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "HF_HUB_DISABLE_XET=1" in done.stderr and hub.count() == 0


def test_the_package_group_lists_publish() -> None:
    result = runner.invoke(app, ["package", "--help"])
    assert result.exit_code == 0 and "publish" in result.output


def test_in_a_ci_log_the_hub_clients_bars_give_way_to_one_line_per_artifact_and_commit(
        hub: FakeHub, package: PackageInfo) -> None:
    """stderr a pipe, HF_HUB_DISABLE_PROGRESS_BARS unset (as in a CI job): huggingface_hub's
    tqdm bars (~130 lines with cursor escapes on a real package) are switched off; meshcert's
    own lines say what was sent."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "meshcert", "package", "publish",
                           str(package.root), "--target", "meshllm/tiny",
                           "--max-files-per-commit", "4"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stderr and "\r" not in done.stderr and "it/s" not in done.stderr
    lines = done.stderr.splitlines()
    uploaded = sorted(line.split()[1] for line in lines if line.startswith("  uploaded "))
    assert uploaded == sorted(str(p.relative_to(package.root)) for p in package.files.values())
    assert [line.split(": ")[0] for line in lines if ": committed " in line] == [
        "artifacts 1/2", "artifacts 2/2", "manifest and model card"]
