"""`meshcert package job` with publisher metadata, as mesh-llm's job adds it: the five files
present at the source commit are checked in the pre-flight and passed to the job's writer from
the mount; a local `--generation-defaults` file is validated first and reaches the job as the
plain env value GENERATION_DEFAULTS_JSON (never a secret)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.hubjobs.package_job import job_spec, plan_package_job, write_command
from meshcert.testing import llama_spec, write_source_gguf
from tests.hubjobs.conftest import TOKEN
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.writer.test_write_publisher import request_defaults

SOURCE_REPO = "alice/tiny-llama-GGUF"
TARGET = "meshllm/tiny-llama-layers"
ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"model_type": "llama", "num_hidden_layers": 6, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 256,
          "torch_dtype": "bfloat16"}


def publish_source(hub: FakeHub, tmp_path: Path, config: dict[str, Any]) -> tuple[str, str]:
    folder = tmp_path / "source-repo"
    write_source_gguf(llama_spec(block_count=6), folder / "tiny-llama-F32.gguf")
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "generation_config.json").write_text('{"temperature": 0.6}\n')
    (folder / "README.md").write_text("# tiny llama\n")
    sha = hub.publish_dir(SOURCE_REPO, folder)
    hub.commit("meshllm/catalog", {"README.md": b"# catalog\n"}, repo_type="dataset")
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)
    return f"{SOURCE_REPO}@{sha}:F32", sha


def defaults_file(tmp_path: Path, sha: str) -> Path:
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(request_defaults(SOURCE_REPO, sha)))
    return path


def job(*args: str) -> Any:
    return CliRunner().invoke(app, ["package", "job", *args], catch_exceptions=False)


def test_the_plan_passes_the_files_at_the_commit_and_the_defaults_as_plain_env(
        hub: FakeHub, tmp_path: Path) -> None:
    coordinate, sha = publish_source(hub, tmp_path, CONFIG)
    defaults = defaults_file(tmp_path, sha)
    done = job(coordinate, "--target", TARGET, "--generation-defaults", str(defaults), "--json")
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["publisher_metadata"] == ["config.json", "generation_config.json"]
    assert plan["publisher_defaults"] == {"compute_dtype": {
        "dtype": "bf16", "artifact_id": "publisher-config-json", "json_path": "/torch_dtype"}}
    assert plan["generation_defaults"] is True and hub.jobs.jobs == {}
    assert "publisher metadata: /source/config.json" in done.stderr


def test_the_job_command_forwards_the_flags(hub: FakeHub, tmp_path: Path) -> None:
    coordinate, sha = publish_source(hub, tmp_path, CONFIG)
    from meshcert.hubjobs.hardware import Flavor

    flavor = Flavor(name="cpu-basic", cpus=2, ram_bytes=16 * 10**9, disk_bytes=50 * 10**9,
                    unit_cost_usd=0.0002, unit_seconds=60, accelerated=False)
    whoami = {"name": "alice", "auth": {"accessToken": {"role": "write"}},
              "orgs": [{"name": "meshllm", "roleInOrg": "write"}]}
    defaults = defaults_file(tmp_path, sha)
    plan = plan_package_job(coordinate, target=TARGET, model_id=None, fmt="v2",
                            flavors=[flavor], flavor_name="auto", timeout_s=None,
                            install="meshcert", catalog=None, experimental=False,
                            whoami=whoami, generation_defaults=str(defaults))
    script = write_command(plan)[-1]
    assert "--publisher-metadata /source/config.json" in script
    assert "--publisher-metadata /source/generation_config.json" in script
    assert "--generation-defaults \"$defaults\"" in script
    assert "printf '%s' \"$GENERATION_DEFAULTS_JSON\" > \"$defaults\"" in script
    spec = job_spec(plan, TOKEN)
    assert spec.env["GENERATION_DEFAULTS_JSON"] == defaults.read_text()
    assert set(spec.secrets) == {"HF_TOKEN"}
    bare = plan_package_job(coordinate, target=TARGET, model_id=None, fmt="v2",
                            flavors=[flavor], flavor_name="auto", timeout_s=None,
                            install="meshcert", catalog=None, experimental=False,
                            whoami=whoami, no_publisher_metadata=True)
    assert "--publisher-metadata" not in write_command(bare)[-1]
    assert "GENERATION_DEFAULTS_JSON" not in job_spec(bare, TOKEN).env


def test_a_config_that_contradicts_the_gguf_is_refused_before_paying(hub: FakeHub,
                                                                     tmp_path: Path) -> None:
    coordinate, _ = publish_source(hub, tmp_path, {**CONFIG, "hidden_size": 4096})
    done = job(coordinate, "--target", TARGET, "--confirm")
    assert done.exit_code == 2
    assert "publisher config hidden_size=4096 conflicts with GGUF llama.embedding_length=64" \
        in done.output
    assert hub.jobs.jobs == {}


@pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")
def test_a_confirmed_job_publishes_the_publisher_files_and_defaults(hub: FakeHub,
                                                                    tmp_path: Path) -> None:
    coordinate, sha = publish_source(hub, tmp_path, CONFIG)
    defaults = defaults_file(tmp_path, sha)
    done = job(coordinate, "--target", TARGET, "--confirm", "--follow", "--catalog", "none",
               "--install", "meshcert", "--generation-defaults", str(defaults))
    assert done.exit_code == 0, done.output
    commit = hub.repos[TARGET].branches["main"]
    assert f"package: hf://{TARGET}@{commit}; certification: passed" in done.stdout
    manifest = json.loads(hub.file_bytes(TARGET, commit, "model-package.json"))
    assert [(e["source_path"], e["source_repo"], e["source_revision"])
            for e in manifest["publisher_metadata"]] == [
        ("config.json", SOURCE_REPO, sha), ("generation_config.json", SOURCE_REPO, sha)]
    assert manifest["generation"]["request_defaults"]["selection"]["default"] == "recommended"
    assert hub.file_bytes(TARGET, commit, "metadata/config.json") == \
        hub.file_bytes(SOURCE_REPO, sha, "config.json")
