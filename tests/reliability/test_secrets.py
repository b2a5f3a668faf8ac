"""Secrets: HF_TOKEN and the endpoint API key never reach a report, HTML, Markdown, JUnit,
stdout, stderr (progress included), logs or exception text, even when the servers echo them.

Distinctive secrets are set; the real CLI runs in a subprocess (so stdout and stderr are the
real ones) against the fake Hub (which demands the token) and the fake OpenAI server (which
demands the key), on success and on error paths where both servers echo the credential back
in their error answers. Then every artefact is grepped for each secret and for its first 8
characters: zero hits. The servers' own logs prove the secrets were really sent, so a test
that leaked nothing because nothing was sent would fail.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.cli import app
from tests.reliability.hub_faults import FaultyHub
from tests.support.fake_openai import FakeOpenAI
from tests.support.hub_packages import REPO, build_package

HF_TOKEN = "hf_SeCrEtMeshcertHubToken8q3ZkR2"
API_KEY = "sk-MeSh-SeCrEt-ApiKey-7Yh2Lp9QwX"
SECRETS = {"HF_TOKEN": HF_TOKEN, "API_KEY": API_KEY}
NEEDLES = {f"{name}{suffix}": needle for name, secret in SECRETS.items()
           for suffix, needle in (("", secret), ("[:8]", secret[:8]))}
REPO_ROOT = Path(__file__).resolve().parents[2]
HUB_ECHO = f"token {HF_TOKEN} (Bearer {HF_TOKEN}) is not allowed"  # what the Hub could know


@dataclass
class Scan:
    """Greps artefacts for every needle; counts what it looked at."""

    artefacts: int = 0
    hits: list[str] = field(default_factory=list)

    def text(self, where: str, content: str | bytes) -> None:
        self.artefacts += 1
        data = content if isinstance(content, bytes) else content.encode("utf-8", "replace")
        for name, needle in NEEDLES.items():
            if needle.encode() in data:
                self.hits.append(f"{name} in {where}")

    def tree(self, root: Path, skip: Path | None = None) -> None:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink() and (
                    skip is None or skip not in path.parents):
                self.text(str(path.relative_to(root)), path.read_bytes())


@pytest.fixture
def scan(figures: Callable[..., None]) -> Iterator[Scan]:
    found = Scan()
    yield found
    figures(artefacts_scanned=found.artefacts, secrets_leaked=len(found.hits))


@pytest.fixture
def published(hub: FaultyHub, tmp_path: Path) -> str:
    info = build_package(tmp_path / "src")
    sha = hub.publish_dir(REPO, info.root)
    hub.repos[REPO].required_token = HF_TOKEN  # without the token: 401
    return sha


def _child_env(hub: FaultyHub, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE",
                                                                     "MESH_LLM_"))}
    env |= {"HF_ENDPOINT": hub.url, "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_TOKEN": HF_TOKEN, "COLUMNS": "200",
            "PYTHONUNBUFFERED": "1"}
    return env | extra


def _run_cli(args: list[str], env: dict[str, str], out: Path, scan: Scan) -> dict[str, object]:
    """Run `meshcert models certify ...` with every report format; scan what it produced."""
    out.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "meshcert", "models", "certify", *args,
         "--report-out", str(out / "cert.json"), "--html", str(out / "cert.html"),
         "--md", str(out / "cert.md"), "--junit", str(out / "cert.xml")],
        cwd=REPO_ROOT, env=env, capture_output=True, timeout=120)
    assert done.returncode in (0, 1, 3), done.stderr.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    scan.text(f"{out.name}: stdout", done.stdout)
    scan.text(f"{out.name}: stderr", done.stderr)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["cert.html", "cert.json", "cert.md", "cert.xml"], names
    scan.tree(out)
    report: dict[str, object] = json.loads((out / "cert.json").read_text())
    report["exit_code"] = done.returncode
    return report


def _sent(hub: FaultyHub, fake: FakeOpenAI) -> None:
    """The secrets really went out, each to its own server only."""
    assert any(r.authorization == f"Bearer {HF_TOKEN}" for r in hub.requests())
    assert any(r.headers.get("authorization") == f"Bearer {API_KEY}" for r in fake.requests)
    assert not [r for r in fake.requests if HF_TOKEN in json.dumps(r.headers)]
    assert not [r for r in hub.requests() if r.authorization and API_KEY in r.authorization]


@pytest.mark.timeout(180)
def test_no_secret_in_any_artefact_on_success_and_on_error_paths(
        hub: FaultyHub, published: str, tmp_path: Path, scan: Scan) -> None:
    ref = f"hf://{REPO}@{published}"
    home = tmp_path / "hf-home"
    with FakeOpenAI(api_key=API_KEY) as good, \
            FakeOpenAI(api_key=API_KEY, faults=["http_500", "echo_headers"]) as leaky:
        # 1. all good: the token and the key are needed, and accepted (key from the env)
        env = _child_env(hub, home, MESH_LLM_API_KEY=API_KEY)
        report = _run_cli([ref, "--api-base", good.base_url, "--served-model", good.model_id,
                           "--timeout", "5"], env, tmp_path / "run-ok", scan)
        assert report["status"] == "passed", report
        _sent(hub, good)
        # 2. the Hub refuses the token and echoes it; the endpoint 500s echoing every request
        #    header (the key too); the key given on the command line this time
        hub.inject("model_info", 401, times=None, headers={"X-Error-Message": HUB_ECHO},
                   body=json.dumps({"error": HUB_ECHO}).encode())
        report = _run_cli([ref, "--api-base", leaky.base_url, "--served-model", leaky.model_id,
                           "--api-key", API_KEY, "--timeout", "5"],
                          _child_env(hub, home), tmp_path / "run-errors", scan)
        assert report["status"] == "failed"
        _sent(hub, leaky)
        gates: list[dict[str, object]] = report["runtime_gates"]  # type: ignore[assignment]
        assert any("Bearer ***" in str(g.get("details")) for g in gates), (
            "the endpoint's echo did reach the gate details, scrubbed")
        # 3. the manifest download refused with the token echoed (a 404 EntryNotFound and a
        #    403 on the file), --json on stdout
        hub.clear_faults()
        hub.inject("resolve", 403, times=None, path_contains="model-package.json",
                   headers={"X-Error-Message": HUB_ECHO, "X-Error-Code": "GatedRepo"},
                   body=json.dumps({"error": HUB_ECHO}).encode())
        report = _run_cli([ref, "--api-base", leaky.base_url, "--served-model", leaky.model_id,
                           "--json"], env, tmp_path / "run-json", scan)
        assert report["status"] == "failed"
        findings: list[dict[str, object]] = report["findings"]  # type: ignore[assignment]
        assert "hub_gated" in {f["code"] for f in findings}
    scan.tree(home)  # huggingface_hub's own files: no token stored either
    assert scan.artefacts >= 3 * 6
    assert scan.hits == [], "\n".join(scan.hits)


def test_no_secret_in_logs_or_contained_exceptions(
        hub: FaultyHub, published: str, tmp_path: Path, scan: Scan,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """In process, with every logger at DEBUG (meshcert's, httpx, huggingface_hub), and with
    crashes whose exception text quotes the secrets (contained into the report).

    httpcore's own DEBUG trace is left out of the scan: it prints the raw response headers,
    so a server that echoes a token in a header shows it there. meshcert configures no logging
    (nothing below WARNING is ever printed by the CLI); RELIABILITY.md names this limit."""
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    monkeypatch.setenv("MESH_LLM_API_KEY", API_KEY)
    ref = f"hf://{REPO}@{published}"
    with caplog.at_level(logging.DEBUG), FakeOpenAI(
            api_key=API_KEY, faults=["http_500", "echo_headers"]) as leaky:
        hub.inject("resolve", 401, times=None, headers={"X-Error-Message": HUB_ECHO},
                   path_contains="README.md")
        result = CliRunner().invoke(app, [
            "models", "certify", ref, "--api-base", leaky.base_url, "--served-model",
            leaky.model_id, "--timeout", "5", "--report-out", str(tmp_path / "cli.json")])
        assert result.exit_code == 1, result.output
        scan.text("cli output", result.output)
        scan.text("cli report", (tmp_path / "cli.json").read_text())
        _sent(hub, leaky)

        def crash(*args: object, **kwargs: object) -> None:
            raise RuntimeError(f"exploded: Bearer {HF_TOKEN} {HUB_ECHO} key={API_KEY}")

        monkeypatch.setattr("meshcert.certify.sources.hub.load_hub_package", crash)
        monkeypatch.setattr("meshcert.certify.runtime.gates.run_runtime_gates", crash)
        report = certify_package(CertRequest(
            model=ref, options=CertOptions(verify_sha256=False),
            runtime=RuntimeRequest(api_base=leaky.base_url, model_id=leaky.model_id,
                                   api_key=API_KEY, timeout_s=5)))
        assert report.status == "incomplete"
        assert "internal_error" in {f.code for f in report.findings}
        scan.text("contained exception report", report.to_json())
    assert caplog.records, "nothing was logged: the log scan would prove nothing"
    for record in caplog.records:
        if record.name.startswith("httpcore") and record.levelno < logging.INFO:
            continue  # httpcore's DEBUG trace dumps raw response headers: see RELIABILITY.md
        scan.text(f"log {record.name}: {record.getMessage()[:300]}", record.getMessage())
    assert scan.hits == [], "\n".join(scan.hits)
