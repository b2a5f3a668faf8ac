"""`meshcert models certify hf://ns/repo@<sha> --package-only` against the fake Hub."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.support.hub_packages import REPO, build_package
from tests.support.hub_server import FakeHub


@pytest.fixture
def sha(hub: FakeHub, tmp_path: Path) -> str:
    return hub.publish_dir(REPO, build_package(tmp_path).root)


def _certify(*args: str) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(app, ["models", "certify", *args, "--quiet"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report_out = args[args.index("--report-out") + 1]
    return result.exit_code, json.loads(Path(report_out).read_text())


def test_pinned_ref_passes(hub: FakeHub, sha: str, tmp_path: Path) -> None:
    out = tmp_path / "out" / "cert.json"
    code, report = _certify(f"hf://{REPO}@{sha}", "--package-only", "--report-out", str(out))
    assert code == 0, report
    assert report["status"] == "passed"
    assert report["resolved_package_ref"] == f"hf://{REPO}@{sha}"
    assert report["ref"] == {"kind": "hf", "repo": REPO, "requested_revision": sha,
                             "resolved_commit": sha, "pinned": True}
    assert report["verification"] == "hub-attested"  # the CLI default for hf:// refs
    transfer = report["transfer"]
    assert isinstance(transfer, dict) and transfer["requests"] == hub.count()


def test_branch_ref_fails_unless_allowed(hub: FakeHub, sha: str, tmp_path: Path) -> None:
    out = str(tmp_path / "cert.json")
    code, report = _certify(f"hf://{REPO}@main", "--package-only", "--report-out", out)
    assert code == 1 and report["status"] == "failed"
    code, report = _certify(f"hf://{REPO}@main", "--package-only", "--allow-unpinned",
                            "--report-out", out)
    assert code == 0 and report["status"] == "passed"


def test_verify_sha256_flag_streams(hub: FakeHub, sha: str, tmp_path: Path) -> None:
    hub.tamper(REPO, sha, "layers/layer-000.gguf")
    out = str(tmp_path / "cert.json")
    code, report = _certify(f"hf://{REPO}@{sha}", "--package-only", "--verify-sha256",
                            "--report-out", out)
    assert code == 1
    assert report["verification"] == "sha256-streamed"
    findings = report["findings"]
    assert isinstance(findings, list)
    errors = {f["code"] for f in findings if f["severity"] == "error"}
    assert errors == {"artifact_sha256_mismatch"}


def test_unreachable_hub_exits_3_with_a_report(hub: FakeHub, sha: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    out = str(tmp_path / "cert.json")
    code, report = _certify(f"hf://{REPO}@{sha}", "--package-only", "--report-out", out)
    assert code == 3
    assert report["status"] == "incomplete"
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["code"] for f in findings] == ["hub_unreachable"]


def test_token_never_in_cli_output(hub: FakeHub, sha: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    token = "hf_CliDistinctiveSecretValue77"
    monkeypatch.setenv("HF_TOKEN", token)
    hub.repos[REPO].required_token = "hf_not_this_one"
    out = tmp_path / "cert.json"
    result = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}",
                                      "--package-only", "--report-out", str(out), "--json"])
    assert result.exit_code == 1
    assert token not in result.output and token not in out.read_text()
    assert json.loads(out.read_text())["findings"][0]["code"] == "hub_unauthorized"
