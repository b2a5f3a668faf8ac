"""Report fixtures built by really certifying generated packages (real GGUF files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.report import CertReport, Gate, RuntimeGate, TransferStats
from meshcert.certify.report_ref import RefInfo
from meshcert.core.findings import finding
from meshcert.evidence.report import EvidenceReport
from tests.conftest import PackageFactory, certify_dir
from tests.reports.catalog_fixture import catalog_out  # noqa: F401  (a fixture)
from tests.reports.evidence_fixture import build_evidence_report

HOSTILE = '<script>alert(1)</script>"onload=x'


@pytest.fixture(scope="session")
def factory(tmp_path_factory: pytest.TempPathFactory) -> PackageFactory:
    return PackageFactory(tmp_path_factory.mktemp("report-packages"))


@pytest.fixture(scope="session")
def passed_report(factory: PackageFactory) -> CertReport:
    """A clean GLM-DSA-style package with a 3-stage plan."""
    info = factory.build("glm", layers=4)
    report = certify_dir(info.root, stages=3)
    assert report.status == "passed", [f.code for f in report.findings]
    return report


def _break_many(manifest: dict[str, Any]) -> None:
    del manifest["activation_width"]
    manifest["layers"][1]["sha256"] = "0" * 64
    manifest["layers"][2]["artifact_bytes"] += 5
    manifest["layers"][3]["layer_index"] = 2
    manifest["layers"][4]["path"] = "layers/missing.gguf"
    manifest["shared"]["output"]["sha256"] = "xyz"


@pytest.fixture(scope="session")
def failed_report(factory: PackageFactory) -> CertReport:
    """A package broken in many ways: errors in several checks, warnings, notes."""
    info = factory.build("llama", layers=6)
    (info.root / "stray.gguf").write_bytes(b"GGUF")
    factory.edit_manifest(info, _break_many)
    report = certify_dir(info.root, stages=2)
    assert report.status == "failed"
    assert len({f.severity for f in report.findings}) >= 2
    assert len({f.check for f in report.findings if f.severity == "error"}) >= 2
    return report


@pytest.fixture(scope="session")
def hostile_report(factory: PackageFactory) -> CertReport:
    """Markup in the model id, a source path and an artifact path (so in finding messages)."""
    info = factory.build("llama", layers=3)

    def edit(manifest: dict[str, Any]) -> None:
        manifest["model_id"] = HOSTILE
        manifest["source_model"]["path"] = HOSTILE + ".gguf"
        manifest["layers"][1]["path"] = f"layers/{HOSTILE}.gguf"

    factory.edit_manifest(info, edit)
    report = certify_dir(info.root, stages=2)
    assert any(HOSTILE in f.message for f in report.findings), report.findings
    return report


def _gate(name: str, status: str, **kw: Any) -> RuntimeGate:
    return RuntimeGate(name=name, status=status, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def runtime_report(passed_report: CertReport) -> CertReport:
    """The passed report as an hf:// certification with measured runtime gates."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    gates = [
        _gate("v1_models", "passed", http_status=200, latency_ms=12.5),
        _gate("v1_chat_completions", "passed", http_status=200, latency_ms=843.2,
              completion_tokens=2),
        _gate("v1_responses", "passed", http_status=200, latency_ms=790.0),
        _gate("v1_chat_completions_stream", "passed", severity="warning", http_status=200,
              latency_ms=910.4, ttft_ms=188.7, completion_tokens=16, tokens_per_s=41.3,
              measurements={"inter_token_ms_p50": 23.9, "events": 18}),
        _gate("deterministic_at_temperature_0", "failed", severity="warning",
              http_status=200, latency_ms=1500.0, details="the two answers differ"),
        _gate("concurrent_requests", "passed", severity="warning", latency_ms=2100.0,
              measurements={"latency_p50_ms": 1020.4, "latency_p95_ms": 2040.9,
                            "requests": 4}),
    ]
    return passed_report.model_copy(update={
        "input": "hf://meshcert/tiny-glm-dsa-layers@" + sha,
        "resolved_package_ref": "hf://meshcert/tiny-glm-dsa-layers@" + sha,
        "local_package_dir": None,
        "ref": RefInfo(kind="hf", repo="meshcert/tiny-glm-dsa-layers", requested_revision=sha,
                       resolved_commit=sha, pinned=True),
        "verification": "hub-attested",
        "transfer": TransferStats(requests=17, bytes_transferred=183_422, header_bytes=65_536),
        "runtime_gates": gates,
    })


@pytest.fixture(scope="session")
def incomplete_report(passed_report: CertReport) -> CertReport:
    """The Hub went away half-way: a finding outside the check groups, gate incomplete."""
    unreachable = finding("hub_unreachable", "GET /api/models/ns/repo: connection reset")
    return passed_report.model_copy(update={
        "status": "incomplete",
        "package_gate": Gate(name="package_materialization", status="incomplete",
                             details="could not check everything: hub_unreachable"),
        "findings": [unreachable, *passed_report.findings],
        "ref": RefInfo(kind="hf", repo="ns/repo", requested_revision="main",
                       resolved_commit=None, pinned=False),
    })


@pytest.fixture(scope="session")
def cert_reports(passed_report: CertReport, failed_report: CertReport,
                 hostile_report: CertReport, runtime_report: CertReport,
                 incomplete_report: CertReport) -> dict[str, CertReport]:
    return {"passed": passed_report, "failed": failed_report, "hostile": hostile_report,
            "runtime": runtime_report, "incomplete": incomplete_report}


def write_json(path: Path, report: CertReport) -> Path:
    path.write_text(report.to_json(), encoding="utf-8")
    return path


# ---- evidence reports -----------------------------------------------------------------------
@pytest.fixture(scope="session")
def example_evidence() -> EvidenceReport:
    """The evidence engineer's bundled example (published GLM-5.2 Metal numbers), ingested and
    decided for real."""
    from meshcert.evidence.examplegen import example_files
    from meshcert.evidence.service import report_files
    from meshcert.evidence.settings import EvidenceSettings

    return report_files(example_files(), settings=EvidenceSettings()).report


@pytest.fixture(scope="session")
def evidence_reports(example_evidence: EvidenceReport) -> dict[str, EvidenceReport]:
    """Every verdict, a failed / passed / incomplete gate, and hostile text."""
    reports = {
        "example": example_evidence,
        "synthetic": build_evidence_report(),
        "passed": build_evidence_report(all_pass=True),
        "incomplete": build_evidence_report(missing_rows=True, all_pass=True),
        "hostile": build_evidence_report(hostile=True),
    }
    assert reports["passed"].gate.passed, reports["passed"].gate.errors
    assert not reports["incomplete"].gate.passed
    assert not any(c.status == "failed" for c in reports["incomplete"].gate.checks)
    return reports
