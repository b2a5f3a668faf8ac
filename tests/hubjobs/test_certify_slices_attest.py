"""`models certify hf://... --hf-job --stages N --attest-key`: the jobs' merged result is
signed on the launching machine; the key never goes to a job (not as a secret either)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.attestations import keypair
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.support.splits import split_v2

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
REPO = "alice/tiny-llama-layers"
ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_the_merged_result_is_signed_here(hub: FakeHub, tmp_path: Path) -> None:
    source = write_source_gguf(llama_spec(block_count=4), tmp_path / "src" / "tiny.gguf")
    package = tmp_path / "pkg"
    split_v2(source, package, model_id="meshcert/tiny-llama-GGUF:F32")
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    sha = hub.publish_dir(REPO, package)
    pair = keypair(tmp_path / "keys")
    out = tmp_path / "cert.json"
    done = cli("models", "certify", f"hf://{REPO}@{sha}", "--package-only", "--hf-job",
               "--stages", "2", "--confirm", "--install", "meshcert", "--report-out",
               str(out), "--attest-key", str(pair.private_path))
    assert done.exit_code == 0, done.output
    att = tmp_path / "cert.intoto.jsonl"
    assert json.loads(out.read_text())["attestation"]["result"] == "PASSED"
    secret = "".join(pair.private_path.read_text().splitlines()[1:-1])
    for submitted in hub.jobs.jobs.values():
        shown = json.dumps(submitted.info())
        assert secret not in shown and "attest" not in shown.lower()
        assert secret not in "\n".join(line for _, line in submitted.logs)
    verify = cli("attest", "verify", f"hf://{REPO}@{sha}", "--attestation", str(att),
                 "--trusted-key", str(pair.public_path))
    assert verify.exit_code == 0, verify.output
