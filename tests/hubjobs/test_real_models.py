"""The whole flow on a real model, on the in-repo Hub's jobs: SmolLM2-135M Q4_1 from a source
repo to a published, pinned, certified package (`package job`), then that package certified
by four slice jobs (`models certify --hf-job --stages 4`) to the verdict a local
certification of the same files gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.cli import app
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.support.real_models import smollm2_path

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")]
SOURCE_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
TARGET = "meshllm/SmolLM2-135M-Instruct-layers"
ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_smollm2_from_a_source_repo_to_a_certified_package_and_four_slice_jobs(
        hub: FakeHub, tmp_path: Path) -> None:
    folder = tmp_path / "source-repo"
    folder.mkdir()
    shutil.copy(smollm2_path(), folder / "SmolLM2-135M-Instruct.Q4_1.gguf")
    sha = hub.publish_dir(SOURCE_REPO, folder)
    hub.commit("meshllm/catalog", {"README.md": b"# catalog\n"}, repo_type="dataset")
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    done = cli("package", "job", f"{SOURCE_REPO}@{sha}:Q4_1", "--target", TARGET,
               "--confirm", "--follow", "--experimental", "--install", "meshcert",
               "--catalog", "meshllm/catalog")
    assert done.exit_code == 0, done.output
    commit = hub.repos[TARGET].branches["main"]
    ref = f"hf://{TARGET}@{commit}"
    assert f"package: {ref}; certification: passed" in done.stdout
    pulls = hub.datasets["meshllm/catalog"].pulls  # --experimental: a catalog pull request
    entry = json.loads(hub.file_bytes("meshllm/catalog", f"refs/pr/{max(pulls)}",
                                      f"entries/{SOURCE_REPO}.json", repo_type="dataset"))
    [variant] = entry["variants"].values()
    assert variant["packages"][0]["revision"] == commit  # the catalog entry is pinned

    out = tmp_path / "merged.json"
    merged = cli("models", "certify", ref, "--package-only", "--hf-job", "--stages", "4",
                 "--confirm", "--install", "meshcert", "--report-out", str(out))
    assert merged.exit_code == 0, merged.output
    report = CertReport.model_validate_json(out.read_text())
    local_copy = tmp_path / "local"
    for path in hub.paths_at(TARGET, commit):
        (local_copy / path).parent.mkdir(parents=True, exist_ok=True)
        (local_copy / path).write_bytes(hub.file_bytes(TARGET, commit, path))
    local = certify_package(CertRequest(model=str(local_copy)))
    assert report.status == local.status == "passed"
    assert sorted({f.code for f in report.findings}) == sorted({f.code for f in local.findings})
    assert report.merge is not None
    assert report.merge.verified_artifacts == report.merge.declared_artifacts
