"""Fixtures for the runtime gates: the in-repo fake server, and a real llama.cpp server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.report import RuntimeGate
from meshcert.certify.runtime.gates import run_runtime_gates
from meshcert.certify.service import RuntimeRequest
from meshcert.testing import llama_spec, write_package
from meshcert.testing.writer import write_source_gguf
from tests.support.fake_openai import FakeOpenAI
from tests.support.server_process import stop, wait_until_ready

LLAMA_READY_TIMEOUT_S = 120.0


def free_port() -> int:
    """A port nothing listens on (bound then released: connecting to it is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeOpenAI]]:
    """Factory: `fake_server(faults=[...], ...)` starts a FakeOpenAI, stopped at teardown."""
    started: list[FakeOpenAI] = []

    def start(**kwargs: Any) -> FakeOpenAI:
        fake = FakeOpenAI(**kwargs).start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()


def gate_map(gates: list[RuntimeGate]) -> dict[str, RuntimeGate]:
    return {g.name: g for g in gates}


def run_against(base: str, model_id: str, **kwargs: Any) -> dict[str, RuntimeGate]:
    """Run every gate with short test timeouts; gates by name."""
    max_body = kwargs.pop("max_body_bytes", None)
    request = RuntimeRequest(api_base=base, model_id=model_id,
                             **{"timeout_s": 5.0, "deadline_s": 60.0} | kwargs)
    extra = {"max_body_bytes": max_body} if max_body else {}
    return gate_map(run_runtime_gates(request, **extra))


@dataclass
class LlamaServer:
    base_url: str
    alias: str  # the package ref it serves (the package directory)
    package_dir: Path
    gguf: Path
    process: subprocess.Popen[bytes]
    stderr_path: Path


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI server on a tiny random-weight llama GGUF written by
    meshcert.testing, serving the package directory's path as model alias.

    Fails loudly (with the server's stderr) when the server cannot start; never skips."""
    work = tmp_path_factory.mktemp("llama-live")
    spec = llama_spec()
    gguf = write_source_gguf(spec, work / spec.source_file)
    package = write_package(spec, work / "package")
    alias = str(package.root)
    port = free_port()
    stdout_path, stderr_path = work / "server.stdout", work / "server.stderr"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
               "--host", "127.0.0.1", "--port", str(port), "--model_alias", alias,
               "--n_ctx", "256", "--n_batch", "64", "--n_threads", "1", "--seed", "1234"]
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   env=os.environ | {"PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}"
    server = LlamaServer(base, alias, package.root, gguf, process, stderr_path)
    try:
        _wait_ready(server)
        yield server
    finally:
        stop(process)


def _wait_ready(server: LlamaServer) -> None:
    wait_until_ready(f"{server.base_url}/v1/models", server.process, server.stderr_path,
                     name="llama_cpp.server", timeout_s=LLAMA_READY_TIMEOUT_S)
