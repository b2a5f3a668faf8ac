"""`meshcert models certify <dir> --api-base ...` end to end, in process (typer's CliRunner)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.certify.runtime.conftest import free_port
from tests.conftest import PackageFactory
from tests.support.fake_openai import FakeOpenAI

FakeFactory = Callable[..., FakeOpenAI]
KEY = "sk-meshcert-CLI-SECRET-5e4d3c2b1a"


def certify(package_dir: Path, base: str, report: Path, *extra: str,
            env: dict[str, str] | None = None) -> tuple[int, str, str, dict[str, object]]:
    result = CliRunner().invoke(app, [
        "models", "certify", str(package_dir), "--api-base", base,
        "--report-out", str(report), "--timeout", "5", *extra], env=env)
    assert report.exists(), result.output
    return result.exit_code, result.stdout, result.stderr, json.loads(report.read_text())


def gate_statuses(data: dict[str, object]) -> dict[str, str]:
    return {g["name"]: g["status"] for g in data["runtime_gates"]}  # type: ignore[attr-defined]


def test_all_gates_pass_exit_0(fake_server: FakeFactory, packages: PackageFactory,
                               tmp_path: Path) -> None:
    info = packages.build("llama")
    fake = fake_server()
    code, out, _, data = certify(info.root, fake.base_url, tmp_path / "r.json",
                                 "--served-model", fake.model_id)
    assert code == 0, out
    assert data["status"] == "passed"
    assert set(gate_statuses(data).values()) == {"passed"}
    assert "passed  v1_chat_completions_stream  (warning)" in out.splitlines()


def test_the_package_ref_is_the_model_id_by_default(fake_server: FakeFactory,
                                                   packages: PackageFactory,
                                                   tmp_path: Path) -> None:
    info = packages.build("llama")
    fake = fake_server(model_id=str(info.root))
    code, _, _, data = certify(info.root, fake.base_url + "/", tmp_path / "r.json")
    assert code == 0
    assert gate_statuses(data)["v1_models"] == "passed"


def test_a_failed_mesh_gate_exits_1(fake_server: FakeFactory, packages: PackageFactory,
                                    tmp_path: Path) -> None:
    info = packages.build("llama")
    fake = fake_server(faults=["responses_404"])
    code, _, _, data = certify(info.root, fake.base_url, tmp_path / "r.json",
                               "--served-model", fake.model_id)
    assert code == 1
    assert data["status"] == "failed"
    assert gate_statuses(data)["v1_responses"] == "failed"


def test_a_failed_warning_gate_passes_unless_strict(fake_server: FakeFactory,
                                                    packages: PackageFactory,
                                                    tmp_path: Path) -> None:
    info = packages.build("llama")
    fake = fake_server(faults=["unknown_model_accepted"])
    args = ("--served-model", fake.model_id)
    assert certify(info.root, fake.base_url, tmp_path / "a.json", *args)[0] == 0
    assert certify(info.root, fake.base_url, tmp_path / "b.json", *args, "--strict")[0] == 1


def test_an_unreachable_endpoint_exits_3(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    code, _, _, data = certify(info.root, f"http://127.0.0.1:{free_port()}",
                               tmp_path / "r.json")
    assert code == 3
    assert data["status"] == "incomplete"
    assert set(gate_statuses(data).values()) == {"incomplete"}


def test_deadline_must_be_positive(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    result = CliRunner().invoke(app, ["models", "certify", str(info.root), "--api-base",
                                      "http://127.0.0.1:9", "--deadline", "0"])
    assert result.exit_code == 2


@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.parametrize("faults", [(), ("http_500", "echo_headers")])
def test_the_api_key_is_sent_but_never_written(
        fake_server: FakeFactory, packages: PackageFactory, tmp_path: Path, how: str,
        faults: tuple[str, ...]) -> None:
    info = packages.build("llama")
    fake = fake_server(api_key=KEY, faults=faults)
    extra = ["--served-model", fake.model_id]
    env = {"MESH_LLM_API_KEY": KEY} if how == "env" else {"MESH_LLM_API_KEY": ""}
    if how == "option":
        extra += ["--api-key", KEY]
    report = tmp_path / "r.json"
    code, out, err, data = certify(info.root, fake.base_url, report, *extra, env=env)
    assert code == (0 if not faults else 1)
    for text in (report.read_text(), out, err, json.dumps(data)):
        assert KEY not in text
        assert KEY[:12] not in text
    assert fake.requests
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in fake.requests)
    # the same run printing the report on stdout
    result = CliRunner().invoke(app, ["models", "certify", str(info.root), "--api-base",
                                      fake.base_url, "--json", "--timeout", "5", *extra],
                                env=env)
    assert result.stdout.startswith("{")
    assert KEY not in result.stdout and KEY not in result.stderr
