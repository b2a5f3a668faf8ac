"""`package job --attest-key`: the job signs the published commit's certification and commits
the attestation; the key reaches it as an HF Jobs secret only, never in its env, its command
or its logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.attest.package_state import ATTESTATION_PATH
from meshcert.cli import app
from meshcert.hubjobs.package_job import ATTEST_KEY_SECRET
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.attestations import keypair
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
SOURCE_REPO = "alice/tiny-llama-GGUF"
TARGET = "meshllm/tiny-llama-layers"
ROOT = Path(__file__).resolve().parents[2]


def job(*args: str) -> Any:
    return CliRunner().invoke(app, ["package", "job", *args], catch_exceptions=False)


def test_the_job_signs_with_a_key_it_gets_as_a_secret_only(hub: FakeHub,
                                                           tmp_path: Path) -> None:
    folder = tmp_path / "source-repo"
    write_source_gguf(llama_spec(block_count=4), folder / "tiny-llama-F32.gguf")
    sha = hub.publish_dir(SOURCE_REPO, folder)
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    pair = keypair(tmp_path / "keys")
    secret = "".join(pair.private_path.read_text().splitlines()[1:-1])
    done = job(f"{SOURCE_REPO}@{sha}:F32", "--target", TARGET, "--catalog", "none",
               "--confirm", "--follow", "--install", "meshcert", "--attest-key",
               str(pair.private_path))
    assert done.exit_code == 0, done.output
    [submitted] = hub.jobs.jobs.values()
    info = submitted.info()
    shown = json.dumps(info)
    assert secret not in shown and secret not in done.output
    assert ATTEST_KEY_SECRET not in (info.get("environment") or {})
    assert f"env:{ATTEST_KEY_SECRET}" in shown  # the command names the secret, not the key
    assert secret not in "\n".join(line for _, line in submitted.logs)
    head = hub.repos[TARGET].branches["main"]
    assert ATTESTATION_PATH in hub.paths_at(TARGET, head)
    verify = CliRunner().invoke(app, ["attest", "verify", f"hf://{TARGET}@{head}",
                                      "--trusted-key", str(pair.public_path)])
    assert verify.exit_code == 0, verify.output


def test_a_bad_key_is_refused_before_any_job(hub: FakeHub, tmp_path: Path) -> None:
    pair = keypair(tmp_path / "keys")
    done = job("alice/none@main:F32", "--target", TARGET, "--confirm", "--attest-key",
               str(pair.public_path))
    assert done.exit_code == 2 and "holds a public key" in done.output
    assert hub.jobs.jobs == {}
