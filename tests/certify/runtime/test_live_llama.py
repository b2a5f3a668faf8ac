"""The gates against a real llama.cpp server (llama-cpp-python) on a tiny random-weight GGUF.

Facts this pins down about llama-cpp-python's server: it serves /v1/models and (streamed) chat
completions, has no /v1/responses (404), accepts any model id, and may report more
usage.completion_tokens than max_tokens (byte-fallback tokens).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.certify.report import RuntimeGate
from meshcert.cli import app
from tests.certify.runtime.conftest import LlamaServer, run_against

pytestmark = [pytest.mark.live, pytest.mark.slow]


@pytest.fixture(scope="module")
def live_gates(llama_server: LlamaServer) -> dict[str, RuntimeGate]:
    # max_tokens 8: a random-weight model's 2 tokens can be blank byte pieces
    return run_against(llama_server.base_url, llama_server.alias, max_tokens=8,
                       timeout_s=60.0, deadline_s=300.0, concurrency=3)


def test_mesh_gates_against_llama_cpp(live_gates: dict[str, RuntimeGate]) -> None:
    models = live_gates["v1_models"]
    assert models.status == "passed", models.details
    assert models.http_status == 200 and models.latency_ms and models.latency_ms > 0
    chat = live_gates["v1_chat_completions"]
    assert chat.status == "passed", chat.details
    assert chat.http_status == 200 and chat.latency_ms and chat.latency_ms > 0
    assert chat.completion_tokens is not None
    responses = live_gates["v1_responses"]
    assert responses.status == "failed"
    assert responses.http_status == 404
    assert (responses.details or "").startswith("HTTP 404")


def test_extended_gates_against_llama_cpp_have_numbers(
        live_gates: dict[str, RuntimeGate]) -> None:
    stream = live_gates["v1_chat_completions_stream"]
    assert stream.status == "passed", stream.details
    assert stream.ttft_ms is not None and stream.ttft_ms > 0
    assert stream.completion_tokens is not None and stream.completion_tokens > 0
    assert stream.tokens_per_s is not None and stream.tokens_per_s > 0
    assert stream.measurements["events"] > 0  # type: ignore[operator]
    assert "itl_p50_ms" in stream.measurements

    max_tokens = live_gates["max_tokens_respected"]
    assert max_tokens.status in {"passed", "failed"}  # reported, never a crash
    assert max_tokens.measurements["max_tokens"] == 8
    if max_tokens.status == "failed":
        assert "exceeds max_tokens 8" in (max_tokens.details or "")

    deterministic = live_gates["deterministic_at_temperature_0"]
    assert deterministic.status == "passed", deterministic.details
    assert deterministic.latency_ms is not None

    unknown = live_gates["unknown_model_rejected"]
    assert unknown.status == "failed" and unknown.http_status == 200
    assert "was accepted" in (unknown.details or "")

    concurrent = live_gates["concurrent_requests"]
    assert concurrent.status == "passed", concurrent.details
    assert concurrent.measurements["requests"] == 3
    assert concurrent.measurements["failures"] == 0
    assert all(concurrent.measurements[k] is not None for k in ("p50_ms", "p95_ms", "max_ms"))
    for gate in live_gates.values():
        assert gate.severity == ("required" if gate.name.startswith("v1_") and
                                 gate.name != "v1_chat_completions_stream" else "warning")


def test_cli_against_llama_cpp_serving_the_package_ref(llama_server: LlamaServer,
                                                       tmp_path: Path) -> None:
    report = tmp_path / "cert.json"
    result = CliRunner().invoke(app, [
        "models", "certify", str(llama_server.package_dir), "--api-base",
        llama_server.base_url, "--report-out", str(report), "--max-tokens", "8",
        "--timeout", "60", "--concurrency", "2", "--quiet"])
    data = json.loads(report.read_text())
    gates = {g["name"]: g for g in data["runtime_gates"]}
    assert data["package_gate"]["status"] == "passed"
    assert gates["v1_models"]["status"] == "passed"
    assert gates["v1_responses"]["status"] == "failed"
    assert gates["v1_responses"]["details"].startswith("HTTP 404")
    assert result.exit_code == 1  # /v1/responses is a required gate
