"""`meshcert package write|plan --publisher-metadata FILE... --generation-defaults FILE` as users
run them: the written package certifies `passed` with `--source` and `--parity`, refusals exit
2 naming mesh-llm's reason, and `package plan` shows the publisher files and defaults."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub
from tests.writer.builders import MODEL_ID, moe_sources, tiny_source
from tests.writer.test_write_publisher import REPO, REV, inputs

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[2] / "docs"
needs_llama_cpp = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                     reason="llama-cpp-python (the live extra) is missing")


def cli(*args: str):
    return runner.invoke(app, list(args))


def publisher_args(given: dict[str, Path], *names: str) -> list[str]:
    out = ["--source-repo", REPO, "--source-revision", REV]
    for name in names:
        out += ["--publisher-metadata", str(given[name])]
    return out


@needs_llama_cpp
def test_a_written_package_with_publisher_files_and_defaults_certifies_with_parity(
        tmp_path: Path) -> None:
    source, given = tiny_source(tmp_path), inputs(tmp_path / "inputs")
    out = tmp_path / "pkg"
    done = cli("package", "write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID,
               *publisher_args(given, "config.json", "generation_config.json",
                               "tokenizer_config.json", "chat_template.jinja"),
               "--generation-defaults", str(given["defaults.json"]))
    assert done.exit_code == 0, done.output
    assert any(line.startswith("certification passed") and "; package gate passed" in line
               for line in done.stdout.splitlines())
    report = tmp_path / "cert.json"
    certified = cli("models", "certify", str(out), "--package-only", "--source", str(source),
                    "--parity", str(source), "--report-out", str(report), "--quiet")
    data = json.loads(report.read_text())
    assert certified.exit_code == 0, (certified.output, [
        (f["code"], f["message"]) for f in data["findings"] if f["severity"] != "info"])
    assert data["status"] == "passed"
    parity = next(g for g in data["runtime_gates"] if g["name"] == "split_parity")
    assert parity["status"] == "passed"


@pytest.mark.parametrize(("extra", "words"), [
    (["--publisher-metadata", "special_tokens_map.json"],
     "refused (publisher_metadata): unsupported publisher metadata filename"),
    (["--source-revision", "main"], "40-character immutable Hugging Face commit revision"),
    (["--generation-defaults", "bogus.json"], "--generation-defaults bogus.json"),
])
def test_refusals_exit_2_and_leave_nothing_written(tmp_path: Path, extra: list[str],
                                                   words: str) -> None:
    source, given = tiny_source(tmp_path), inputs(tmp_path / "inputs")
    out = tmp_path / "pkg"
    done = cli("package", "write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID,
               *publisher_args(given, "config.json"), *extra)
    assert done.exit_code == 2 and words in done.stderr
    assert not out.exists()


def test_plan_shows_the_publisher_files_defaults_and_profiles(tmp_path: Path) -> None:
    model, _ = moe_sources(tmp_path)
    given = inputs(tmp_path / "inputs", {"num_hidden_layers": 3, "torch_dtype": "bfloat16",
                                         "kv_cache_dtype": "fp8"})
    args = ["package", "plan", str(model), "--stages", "2",
            *publisher_args(given, "config.json", "chat_template.jinja"),
            "--generation-defaults", str(given["defaults.json"])]
    table = cli(*args)
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "publisher metadata: config.json (model_config) -> metadata/config.json" in lines
    assert ("publisher metadata: chat_template.jinja (chat_template) -> "
            "metadata/chat_template.jinja") in lines
    assert ("publisher defaults: compute_dtype bf16 (publisher-config-json /torch_dtype), "
            "kv_cache_dtype fp8 (publisher-config-json /kv_cache_dtype)") in lines
    assert ("request defaults: profiles direct, recommended; default recommended; "
            "reasoning off direct") in lines
    assert "speculative decoding: native-mtp, layer 3 (kept beside request_defaults)" in lines
    data = json.loads(cli(*args, "--json").stdout)
    jsonschema.validate(data, json.loads((DOCS / "package-plan.schema.json").read_text()))
    assert [(a["id"], a["role"]) for a in data["artifacts"][-2:]] == [
        ("publisher-config-json", "publisher"), ("publisher-chat-template-jinja", "publisher")]
    assert data["publisher_metadata"][0]["sha256"] and not data["publisher_metadata"][0][
        "picked_up"]
    for stage in data["stages"]:  # nodes never fetch publisher files
        assert not any(p.startswith("metadata/") for p in stage["artifacts"])
    assert data["request_defaults"]["profiles"] == ["direct", "recommended"]
    refused = cli("package", "plan", str(model), "--stages", "2",
                  "--publisher-metadata", str(given["config.json"]))
    assert refused.exit_code == 2 and "requires a source repo" in refused.stderr


def test_plan_of_a_hub_source_shows_the_files_picked_up_at_its_revision(
        hub: FakeHub, tmp_path: Path) -> None:  # noqa: F811
    model, _ = moe_sources(tmp_path)
    (model.parent / "mmproj-tiny-F16.gguf").unlink()
    (model.parent / "generation_config.json").write_text('{"temperature": 0.6}\n')
    hub.publish_dir("meshcert/tiny-moe-mtp-GGUF", model.parent)
    picked = cli("package", "plan", "meshcert/tiny-moe-mtp-GGUF@main:Q3_K", "--stages", "2")
    assert picked.exit_code == 0, picked.output
    assert ("publisher metadata: generation_config.json (generation_config) -> "
            "metadata/generation_config.json [picked up from the source revision]"
            ) in picked.stdout.splitlines()
    assert "publisher defaults" not in picked.stdout  # no config.json: none derived
    opted_out = cli("package", "plan", "meshcert/tiny-moe-mtp-GGUF@main:Q3_K", "--stages", "2",
                    "--no-publisher-metadata")
    assert opted_out.exit_code == 0 and "publisher metadata" not in opted_out.stdout
