"""`models certify hf://ns/pkg@sha --package-only --hf-job --stages N`, against the in-repo Hub
whose Jobs API runs each job for real: the package repo mounted read-only at the commit, the
slice hashed there, the report handed back through the logs and merged.

Every job pip-installs `meshcert` (already installed here, so pip only checks) and runs
`python -m meshcert models certify /package --stage I/N --verify-sha256 --mounted-from ...`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.cli import app
from meshcert.testing import llama_spec, write_source_gguf
from tests.hubjobs.conftest import TOKEN
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.support.splits import split_v2

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
REPO = "alice/tiny-llama-layers"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def published(hub: FakeHub, tmp_path: Path) -> tuple[Path, str]:
    source = write_source_gguf(llama_spec(block_count=8), tmp_path / "src" / "tiny.gguf")
    package = tmp_path / "pkg"
    split_v2(source, package, model_id="meshcert/tiny-llama-GGUF:F32")
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)  # the jobs run this checkout's meshcert
    return package, hub.publish_dir(REPO, package)


def certify_cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["models", "certify", *args], catch_exceptions=False)


def job_runs(hub: FakeHub) -> int:
    return len(hub.jobs.jobs)


def test_a_dry_run_prints_the_plan_and_its_cost_and_submits_nothing(
        hub: FakeHub, published: tuple[Path, str]) -> None:
    _, sha = published
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "4",
                       "--json")
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["source_commit"] == sha and plan["stages"] == 4
    assert plan["flavor"] == "cpu-basic"  # the cheapest flavor of the Hub's list that fits
    assert [s["slice"] for s in plan["slices"]] == ["0/4", "1/4", "2/4", "3/4"]
    assert [(s["layer_start"], s["layer_end"]) for s in plan["slices"]] == [
        (0, 2), (2, 4), (4, 6), (6, 8)]
    per_minute = hub.jobs.hardware[0]["unitCostUSD"]
    minutes = sum(s["timeout_seconds"] for s in plan["slices"]) // 60
    assert plan["max_cost_usd"] == pytest.approx(minutes * per_minute)
    assert plan["job_ids"] == [] and job_runs(hub) == 0


def test_a_plan_over_budget_is_refused_before_anything_is_submitted(
        hub: FakeHub, published: tuple[Path, str]) -> None:
    _, sha = published
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "4",
                       "--confirm", "--max-cost-usd", "0.0001")
    assert done.exit_code == 2
    assert "refused: the maximum cost" in done.output
    assert job_runs(hub) == 0


def test_four_jobs_merge_to_the_verdict_of_a_local_certification(
        hub: FakeHub, published: tuple[Path, str], tmp_path: Path) -> None:
    package, sha = published
    out = tmp_path / "cert.json"
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "4",
                       "--confirm", "--install", "meshcert", "--report-out", str(out))
    assert done.exit_code == 0, done.output
    merged = CertReport.model_validate_json(out.read_text())
    local = certify_package(CertRequest(model=str(package)))
    assert merged.status == local.status == "passed"
    assert sorted({f.code for f in merged.findings}) == sorted({f.code for f in local.findings})
    assert merged.resolved_package_ref == f"hf://{REPO}@{sha}"
    assert merged.verification == "local-sha256"  # every byte hashed, inside the jobs
    assert merged.merge is not None
    assert merged.merge.verified_artifacts == merged.merge.declared_artifacts
    assert merged.digests == local.digests
    # --hash-once: shared/common.gguf is loaded by every slice but hashed by one of them
    assert sum(s.artifacts for s in merged.merge.slices) == merged.merge.declared_artifacts
    assert [(j.slice, j.stage, j.report) for j in merged.hf_jobs] == [
        (f"{i}/4", "COMPLETED", True) for i in range(4)]
    job = next(iter(hub.jobs.jobs.values()))
    assert "--hash-once" in json.dumps(job.info())  # each job hashes its share only
    assert TOKEN not in json.dumps(job.info())  # the token went as a secret only
    assert [v["mountPath"] for v in job.info()["volumes"]] == ["/package"]


def test_a_tampered_artifact_is_caught_by_exactly_the_slice_that_holds_it(
        hub: FakeHub, published: tuple[Path, str], tmp_path: Path) -> None:
    _, sha = published
    hub.tamper(REPO, sha, "layers/layer-00005.gguf")  # storage corrupted behind the listing
    out = tmp_path / "cert.json"
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "4",
                       "--confirm", "--install", "meshcert", "--report-out", str(out))
    assert done.exit_code == 1, done.output
    merged = CertReport.model_validate_json(out.read_text())
    mismatches = [f for f in merged.findings if f.code == "artifact_sha256_mismatch"]
    assert [f.path for f in mismatches] == ["layers/layer-00005.gguf"]
    failed = [f.message for f in merged.findings if f.code == "slice_failed"]
    assert len(failed) == 1 and "slice 2/4" in failed[0]


def test_a_cancelled_job_leaves_the_result_incomplete_naming_its_slice(
        hub: FakeHub, published: tuple[Path, str]) -> None:
    from meshcert.certify.view import CertOptions
    from meshcert.core.hub.settings import HubSettings
    from meshcert.hubjobs.certify_slices import Launch, plan_certify_jobs, run_certify_jobs
    from meshcert.hubjobs.jobs_api import HubJobs

    _, sha = published
    preflight = certify_package(CertRequest(model=f"hf://{REPO}@{sha}",
                                            options=CertOptions(stages=4)))
    jobs = HubJobs(HubSettings.from_env(), token=TOKEN)
    plan = plan_certify_jobs(preflight, jobs.hardware(), flavor_name="auto",
                             install="meshcert")

    def cancel_slice_2(item: Any, state: Any) -> None:
        if item.index == 2 and state.stage == "RUNNING":
            jobs.cancel(state.job_id)

    report = run_certify_jobs(plan, preflight, jobs, token=TOKEN,
                              launch=Launch(on_state=cancel_slice_2, poll_s=0.2))
    assert report.status == "incomplete"
    [failed] = [f.message for f in report.findings if f.code == "hf_job_failed"]
    assert failed.startswith("slice 2/4 (layers 4..6, job ") and "ended CANCELED" in failed
    coverage = [f.message for f in report.findings if f.code == "coverage_missing"]
    assert coverage and "no slice verified layers 4..6" in coverage[0]
    assert [j.stage for j in report.hf_jobs].count("CANCELED") == 1


def test_a_package_that_fails_its_preflight_submits_nothing(
        hub: FakeHub, published: tuple[Path, str], tmp_path: Path) -> None:
    package, _ = published
    manifest = json.loads((package / "model-package.json").read_text())
    manifest["layer_count"] = 9  # the header-only certification catches it
    (package / "model-package.json").write_text(json.dumps(manifest))
    sha = hub.publish_dir(REPO, package)
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "4",
                       "--confirm", "--report-out", str(tmp_path / "cert.json"))
    assert done.exit_code == 1
    assert "pre-flight failed: nothing was submitted" in done.output
    assert job_runs(hub) == 0


def test_a_hub_that_fails_while_jobs_run_cancels_them_and_ends_incomplete(
        hub: FakeHub, published: tuple[Path, str]) -> None:
    _, sha = published
    # every look at a job's state fails (after the door's retries): the jobs are running
    hub.inject("jobs_inspect", 500, times=None)
    done = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}", "--package-only",
                                    "--hf-job", "--stages", "2", "--confirm", "--install",
                                    "meshcert"])
    assert done.exit_code == 3, done.output
    last = done.stderr.splitlines()[-1]
    assert last.startswith("error: ") and last.endswith(" (submitted jobs were cancelled)")
    assert "Traceback" not in done.output
    # each submitted job was asked to stop (whatever state the Hub's failure hid)
    assert len(hub.requests("jobs_cancel")) == len(hub.jobs.jobs) == 2


def test_a_hub_that_refuses_the_first_job_cancels_nothing_and_says_only_its_failure(
        hub: FakeHub, published: tuple[Path, str]) -> None:
    _, sha = published
    hub.inject("jobs_run", 500, times=None)  # no job is ever created
    done = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}", "--package-only",
                                    "--hf-job", "--stages", "2", "--confirm", "--install",
                                    "meshcert"])
    assert done.exit_code == 3, done.output
    last = done.stderr.splitlines()[-1]
    assert last.startswith("error: ") and "cancelled" not in last  # nothing was submitted
    assert hub.jobs.jobs == {} and hub.requests("jobs_cancel") == []
