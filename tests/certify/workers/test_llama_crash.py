"""A llama.cpp that dies never takes the certifier with it: the report is written, the gate is
incomplete, and the finding `llama_cpp_crashed` says what died, how, and on which model.

The stand-in (tests/certify/workers/standin_llama.py) is the real llama-cpp-python with a
decode, or llama.cpp's GGUF parser, that dies on one model path: by SIGSEGV (what a native
build does on a VM that advertises AMX but faults on it), by SIGABRT (a GGML_ASSERT), or by
hanging past the wall clock the request sets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.split_parity import ParityRequest
from meshcert.certify.workers.llama_gguf import spare_worker
from meshcert.testing import llama_spec, write_source_gguf
from tests.certify.workers import standin_llama
from tests.support.splits import split_v1, split_v2

MODEL_ID = "meshcert/tiny-llama-GGUF:F32"
HOW = {"segv": "killed by SIGSEGV", "abort": "killed by SIGABRT",
       "hang": "outlived its 3 s wall clock"}


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("standin-llama")
    return root, standin_llama.build(root)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("tiny-llama")
    source = write_source_gguf(llama_spec(block_count=4), base / "source" / "tiny-src.gguf")
    split_v1(source, base / "v1", model_id=MODEL_ID)
    split_v2(source, base / "v2", model_id=MODEL_ID)
    return {"source": source, "v1": base / "v1", "v2": base / "v2"}


@pytest.fixture
def dying(standin: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
          ) -> pytest.MonkeyPatch:
    """The stand-in on every path a worker or the certifier looks llama_cpp up on."""
    root, env = standin
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.syspath_prepend(str(root))
    spare_worker().discard()  # a spare started before the stand-in would use the real library
    return monkeypatch


def crashed(report: CertReport) -> list[str]:
    return [f.message for f in report.findings if f.code == "llama_cpp_crashed"]


@pytest.mark.parametrize("fmt", ["v1", "v2"])
@pytest.mark.parametrize("mode", ["segv", "abort", "hang"])
def test_a_decode_that_dies_leaves_parity_incomplete_with_how_it_died(
        tiny: dict[str, Path], dying: pytest.MonkeyPatch, tmp_path: Path, fmt: str,
        mode: str) -> None:
    dying.setenv(standin_llama.MODE_ENV, mode)
    dying.setenv(standin_llama.MATCH_ENV, "tiny-src")  # the source model's first decode
    parity = ParityRequest(source=str(tiny["source"]), prompts=["Hello"], tokens=2,
                           temp_dir=str(tmp_path), timeout_s=3)
    report = certify_package(CertRequest(model=str(tiny[fmt]), parity=parity))
    assert report.status == "incomplete"
    gate = next(g for g in report.runtime_gates if g.name == "split_parity")
    assert gate.status == "incomplete"
    [message] = crashed(report)
    assert "llama.cpp decode (source)" in message and HOW[mode] in message
    assert str(tiny["source"]) in message
    if mode != "hang":
        assert "stand-in native fault" in message  # the tail of its stderr
    assert list(tmp_path.iterdir()) == []  # the reassembled model is gone


def test_a_decode_that_dies_on_the_reassembled_package_is_incomplete_not_failed(
        tiny: dict[str, Path], dying: pytest.MonkeyPatch, tmp_path: Path) -> None:
    dying.setenv(standin_llama.MODE_ENV, "segv")
    dying.setenv(standin_llama.MATCH_ENV, "reassembled")
    parity = ParityRequest(source=str(tiny["source"]), prompts=["Hello"], tokens=2,
                           temp_dir=str(tmp_path), timeout_s=60)
    report = certify_package(CertRequest(model=str(tiny["v2"]), parity=parity))
    assert report.status == "incomplete"
    [message] = crashed(report)
    assert "reassembled package" in message and "killed by SIGSEGV" in message
    assert "this CPU advertises AMX" in message  # the stderr names ggml's AMX kernel
    assert not [f for f in report.findings if f.code == "split_parity_mismatch"]


def test_a_parser_that_dies_on_the_reassembled_model_is_incomplete_too(
        tiny: dict[str, Path], dying: pytest.MonkeyPatch, tmp_path: Path) -> None:
    dying.setenv(standin_llama.MODE_ENV, "abort")
    dying.setenv(standin_llama.PARSER_MATCH_ENV, "reassembled")
    parity = ParityRequest(source=str(tiny["source"]), prompts=["Hello"], tokens=2,
                           temp_dir=str(tmp_path), timeout_s=60)
    report = certify_package(CertRequest(model=str(tiny["v1"]), parity=parity))
    assert report.status == "incomplete"
    [message] = crashed(report)
    assert "re-opening the reassembled model" in message and "killed by SIGABRT" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["v1", "v2"])
@pytest.mark.parametrize("mode", ["segv", "abort", "hang"])
def test_a_parser_that_dies_on_a_stage_leaves_it_undecided(
        tiny: dict[str, Path], dying: pytest.MonkeyPatch, tmp_path: Path, fmt: str,
        mode: str) -> None:
    dying.setenv(standin_llama.MODE_ENV, mode)
    dying.setenv(standin_llama.PARSER_MATCH_ENV, "cert-stage-1")
    report = certify_package(CertRequest(model=str(tiny[fmt]), materialize=True,
                                         materialize_dir=str(tmp_path / "stages"),
                                         llama_timeout_s=3))
    assert report.status == "incomplete" and report.package_gate.status == "incomplete"
    [message] = crashed(report)
    assert message.startswith("stage cert-stage-1 undecided: llama.cpp's GGUF parser")
    assert HOW[mode] in message
    assert not [f for f in report.findings if f.code == "stage_materialization_failed"]
    assert not list((tmp_path / "stages").rglob("cert-stage-1*.gguf"))  # nothing half-made
    assert list((tmp_path / "stages").rglob("cert-stage-0*.gguf"))  # the other stage built


def _cli(args: list[str], env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "meshcert", "models", "certify", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize(("flag", "match_env", "match"), [
    ("--parity", standin_llama.MATCH_ENV, "tiny-src"),
    ("--materialize", standin_llama.PARSER_MATCH_ENV, "cert-stage-0")])
def test_the_cli_exits_3_with_a_report_never_a_signal(
        tiny: dict[str, Path], standin: tuple[Path, dict[str, str]], tmp_path: Path,
        flag: str, match_env: str, match: str) -> None:
    root, env = standin
    extra = [str(tiny["source"])] if flag == "--parity" else [
        "--materialize-dir", str(tmp_path / "stages")]
    report_path = tmp_path / "cert.json"
    done = _cli([str(tiny["v2"]), "--package-only", flag, *extra, "--report-out",
                 str(report_path)],
                {**env, "PYTHONPATH": str(root), standin_llama.MODE_ENV: "segv",
                 match_env: match})
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(report_path.read_text())
    assert report["status"] == "incomplete"
    assert [f["code"] for f in report["findings"] if f["code"] == "llama_cpp_crashed"] == [
        "llama_cpp_crashed"]
    assert "llama_cpp_crashed" in done.stdout  # the summary names it too
