"""`models certify hf://ns/pkg@sha --package-only --hf-job --stages N` on a package that carries
publisher metadata and request defaults (as `package write` writes it): every declared
artifact, the small `metadata/*` files included, is verified by the slice jobs and the merged
verdict is the local one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.cli import app
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.writer.builders import write_package
from tests.writer.test_write_publisher import REPO as SOURCE_REPO
from tests.writer.test_write_publisher import REV, inputs

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
REPO = "alice/tiny-llama-layers"
ROOT = Path(__file__).resolve().parents[2]
NAMES = ("config.json", "generation_config.json", "tokenizer_config.json",
         "chat_template.jinja")


def certify_cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["models", "certify", *args], catch_exceptions=False)


def test_slice_jobs_verify_the_publisher_files_and_merge_to_the_local_verdict(
        hub: FakeHub, tmp_path: Path) -> None:
    source = write_source_gguf(llama_spec(block_count=4), tmp_path / "src" / "tiny.gguf")
    given = inputs(tmp_path / "inputs")
    result = write_package(source, tmp_path / "pkg", model_id="meshcert/tiny-llama-GGUF:F32",
                           source_repo=SOURCE_REPO, source_revision=REV,
                           publisher_metadata=[str(given[n]) for n in NAMES],
                           generation_defaults=str(given["defaults.json"]))
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    sha = hub.publish_dir(REPO, result.root)
    out = tmp_path / "cert.json"
    done = certify_cli(f"hf://{REPO}@{sha}", "--package-only", "--hf-job", "--stages", "2",
                       "--confirm", "--install", "meshcert", "--report-out", str(out))
    merged = CertReport.model_validate_json(out.read_text())
    assert done.exit_code == 0, (done.output, [(f.code, f.message) for f in merged.findings
                                               if f.severity != "info"])
    local = certify_package(CertRequest(model=str(result.root)))
    assert merged.status == local.status == "passed"
    assert merged.merge is not None
    assert merged.merge.verified_artifacts == merged.merge.declared_artifacts
    assert {f"metadata/{n}" for n in NAMES} <= set(merged.digests)
