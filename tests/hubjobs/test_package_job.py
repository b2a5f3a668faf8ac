"""`meshcert package job SOURCE --target ns/repo`, against the in-repo Hub whose Jobs API runs
each job for real: the source repo mounted read-only at the resolved commit, meshcert
pip-installed (already here, so pip only checks), `package write --publish` run inside, the
package's certification read back from the logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.testing import llama_spec, write_source_gguf
from tests.hubjobs.conftest import TOKEN
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
SOURCE_REPO = "alice/tiny-llama-GGUF"
TARGET = "meshllm/tiny-llama-layers"
CATALOG = "meshllm/catalog"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def source(hub: FakeHub, tmp_path: Path) -> tuple[str, str]:
    """The source repo on the Hub (a GGUF per quant, as GGUF repos are), and its commit."""
    folder = tmp_path / "source-repo"
    write_source_gguf(llama_spec(block_count=6), folder / "tiny-llama-F32.gguf")
    (folder / "README.md").write_text("# tiny llama\n")
    sha = hub.publish_dir(SOURCE_REPO, folder)
    hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)  # the jobs run this checkout's meshcert
    return f"{SOURCE_REPO}@{sha}:F32", sha


def job(*args: str) -> Any:
    return CliRunner().invoke(app, ["package", "job", *args], catch_exceptions=False)


def test_a_dry_run_plans_from_the_hub_and_submits_nothing(hub: FakeHub,
                                                          source: tuple[str, str]) -> None:
    coordinate, sha = source
    done = job(coordinate.replace(f"@{sha}", "@main"), "--target", TARGET, "--json")
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["source_commit"] == sha  # a branch resolved to its commit, before anything
    [file] = plan["files"]
    assert file["path"] == "tiny-llama-F32.gguf" and file["bytes"] > 0
    assert plan["flavor"] == "cpu-basic" and plan["job_id"] is None
    per_minute = hub.jobs.hardware[0]["unitCostUSD"]
    assert plan["max_cost_usd"] == pytest.approx(-(-plan["timeout_seconds"] // 60) * per_minute)
    assert plan["disk_bytes_needed"] < 50 * 10**9 * 0.8
    assert hub.jobs.jobs == {}
    assert plan["catalog"] is None  # a shared catalog is changed only when asked


@pytest.mark.parametrize(("args", "why"), [
    (["--model-id", "not a coordinate!"], "is not a model coordinate"),
    (["--target", "no-namespace"], "is not a repo id"),
    (["--max-cost-usd", "0.000001"], "above --max-cost-usd"),
    (["--flavor", "cpu-gigantic"], "not in the Hub's hardware list"),
])
def test_bad_requests_are_refused_before_anything_is_submitted(
        hub: FakeHub, source: tuple[str, str], args: list[str], why: str) -> None:
    coordinate, _ = source
    options = {"--target": TARGET, **dict(zip(args[::2], args[1::2], strict=True))}
    flat = [x for pair in options.items() for x in pair]
    done = job(coordinate, *flat, "--confirm")
    assert done.exit_code == 2 and why in done.output
    assert hub.jobs.jobs == {}


def test_a_token_that_cannot_push_to_the_target_is_refused_before_paying(
        hub: FakeHub, source: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    hub.add_token("hf_bob_0123456789", user="bob")
    monkeypatch.setenv("HF_TOKEN", "hf_bob_0123456789")
    done = job(source[0], "--target", TARGET, "--confirm")
    assert done.exit_code == 2 and "cannot create or push repos in 'meshllm'" in done.output
    assert hub.jobs.jobs == {}


def test_a_confirmed_job_writes_publishes_certifies_and_pins_a_catalog_pr(
        hub: FakeHub, source: tuple[str, str]) -> None:
    coordinate, sha = source
    done = job(coordinate, "--target", TARGET, "--confirm", "--follow", "--experimental",
               "--install", "meshcert", "--catalog", CATALOG)
    assert done.exit_code == 0, done.output
    [submitted] = hub.jobs.jobs.values()
    info = submitted.info()
    assert info["status"]["stage"] == "COMPLETED"
    [volume] = info["volumes"]
    assert (volume["source"], volume["revision"], volume["mountPath"]) == (
        SOURCE_REPO, sha, "/source")  # at the commit, never at main
    assert TOKEN not in json.dumps(info) and "HF_TOKEN" not in (info.get("environment") or {})
    assert info["labels"]["meshcert-task"] == "package-write"
    commit = hub.repos[TARGET].branches["main"]
    assert "model-package.json" in hub.paths_at(TARGET, commit)
    assert f"package: hf://{TARGET}@{commit}; certification: passed" in done.stdout
    assert f"mesh-llm serve --model hf://{TARGET}@{commit} --split" in done.stdout
    entry_path = "entries/alice/tiny-llama-GGUF.json"
    pulls = hub.datasets[CATALOG].pulls
    assert pulls, "--experimental proposes the catalog entry as a pull request"
    entry = json.loads(hub.file_bytes(CATALOG, f"refs/pr/{max(pulls)}", entry_path,
                                      repo_type="dataset"))
    [variant] = entry["variants"].values()
    [package] = variant["packages"]
    assert (package["repo"], package["revision"]) == (TARGET, commit)  # pinned


def test_a_job_is_listed_shown_and_cancelled(hub: FakeHub, source: tuple[str, str]) -> None:
    done = job(source[0], "--target", TARGET, "--confirm", "--install", "meshcert", "--json")
    assert done.exit_code == 0, done.output
    job_id = json.loads(done.stdout)["job_id"]
    cancelled = job("--cancel", job_id, "--json")
    assert cancelled.exit_code == 0
    assert json.loads(cancelled.stdout)[0]["stage"] in ("CANCELED", "COMPLETED")
    listed = job("--list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [j["job_id"] for j in json.loads(listed.stdout)] == [job_id]
    shown = job("--status", job_id)
    assert job_id in shown.stdout


def test_management_and_planning_do_not_mix() -> None:
    done = job("alice/x:Q4_0", "--status", "abc")
    assert done.exit_code == 2 and "give SOURCE --target" in done.output
