"""serve.toml `[hf_jobs]` on real material: SmolLM2-135M Q4_1 (from its PyPI wheel) split into
a v2 package with meshcert's writer, pushed to a watched repo of the in-repo Hub, and certified
by the service with every byte hashed in two real slice jobs. Then one byte of a layer's stored
bytes is flipped behind the Hub's listing and the same service catches it."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.serve.queue import Queue
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.support.real_models import smollm2_path
from tests.support.serve_rig import BOT_TOKEN, ServeRig
from tests.support.splits import split_v2

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")]
REPO = "meshllm/SmolLM2-135M-Instruct-layers"
ROOT = Path(__file__).resolve().parents[2]
ON_JOBS = 'stages = 2\nconfirm = true\nmax_cost_usd = 1.0\ninstall = "meshcert"\npoll_s = 0.5'


def test_smollm2_hashed_on_jobs_by_the_service_then_a_flipped_byte_caught(
        rig: ServeRig, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = split_v2(smollm2_path(), tmp_path / "pkg",
                       model_id="HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1").root
    layer = sorted(p.relative_to(package).as_posix()
                   for p in package.rglob("*.gguf") if "layer" in p.name)[3]
    rig.write_config(watch=["meshllm/*-layers"], extra=f"[hf_jobs]\n{ON_JOBS}\n")
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    with rig.running():
        rig.hook()
        good = hub.publish_dir(REPO, package)
        rig.settle()
        (package / "README.md").write_text("a new commit, the same artifacts\n")
        tampered = hub.publish_dir(REPO, package)
        hub.tamper(REPO, tampered, layer)
        rig.settle()
    verdicts = {v["commit"]: v for v in Queue(rig.config.parent / "state").verdicts()}

    first = verdicts[good]
    assert first["status"] == "passed", first
    assert str(first["sentence"]).startswith("certification passed: 0 errors")
    assert str(first["hashing"]).startswith("hashed on HF Jobs: 2 job(s)")
    assert first["attestation_url"]

    second = verdicts[tampered]
    assert second["status"] == "failed", second
    assert [f["path"] for f in second["findings"]
            if f["code"] == "artifact_sha256_mismatch"] == [layer]
    assert len(hub.jobs.jobs) == 4  # two slice jobs per commit
