"""The demo job: build a small real package, certify it, and write the reports (no network)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from meshcert.certify.report import CertReport, RuntimeGate
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.split_parity import ParityRequest
from meshcert.certify.view import CertOptions
from meshcert.core.atomic import write_atomic
from meshcert.evidence.report import EvidenceReport
from meshcert.evidence.service import example_evidence
from meshcert.reports.outputs import write_decisions, write_reports
from meshcert.testing import glm_dsa_spec, llama_spec, write_package
from meshcert.writer.write import write_file


@dataclass
class DemoResult:
    out_dir: Path
    package_dir: Path
    cert_report: CertReport
    outputs: dict[str, Path] = field(default_factory=dict)  # label -> written file
    evidence_report: EvidenceReport | None = None  # the bundled benchmark example
    v2_package_dir: Path | None = None  # the same model as a package v2
    v2_report: CertReport | None = None
    parity_gate: RuntimeGate | None = None  # split parity of a tiny llama package
    parity_note: str | None = None  # why parity was not run


def run_demo(out_dir: str | Path) -> DemoResult:
    """Write the example package under out_dir/package (fresh each run) and certify it."""
    out = Path(out_dir).resolve()
    package_dir = out / "package"
    v2_dir = out / "package-v2"
    for old in (package_dir, v2_dir):
        if old.exists():
            shutil.rmtree(old)
    out.mkdir(parents=True, exist_ok=True)
    spec = glm_dsa_spec()
    info = write_package(spec, package_dir, source_dir=out / "source")
    request = CertRequest(model=str(package_dir),
                          options=CertOptions(verify_sha256=True, stages=2),
                          source_gguf=None)
    report = certify_package(request)
    cert_json = out / "cert.json"
    write_atomic(cert_json, report.to_json())
    result = DemoResult(out, package_dir, report, {"certification report (JSON)": cert_json})
    result.outputs["certification report (HTML)"] = write_reports(
        report, html=out / "cert.html")["html"]
    assert info.source_path is not None
    write_file(info.source_path, v2_dir, model_id=spec.model_id, source_repo=spec.source_repo,
               source_revision="main")  # what `meshcert package write` writes
    v2_report = certify_package(CertRequest(model=str(v2_dir),
                                            options=CertOptions(verify_sha256=True, stages=2)))
    result.v2_package_dir, result.v2_report = v2_dir, v2_report
    cert_v2 = out / "cert-v2.json"
    write_atomic(cert_v2, v2_report.to_json())
    result.outputs["package v2 certification report (JSON)"] = cert_v2
    evidence_run = example_evidence()
    result.evidence_report = evidence_run.report
    result.outputs.update(write_decisions(evidence_run.report, out / "evidence"))
    result.outputs["evidence report (HTML)"] = write_reports(
        evidence_run.report, html=out / "evidence" / "evidence.html")["html"]
    result.parity_gate, result.parity_note = run_demo_parity(out)
    return result


def run_demo_parity(out: Path) -> tuple[RuntimeGate | None, str | None]:
    """Split parity on a tiny llama package (the GLM-DSA example is an architecture the
    bundled llama.cpp cannot load): the model reassembled from the package must compute
    exactly what its source does. Needs llama-cpp-python (the `live` extra)."""
    from meshcert.certify.workers import llama_library

    if not llama_library.installed():
        return None, f"not run: {llama_library.NOT_INSTALLED}"
    spec = llama_spec()
    package_dir = out / "parity-package"
    if package_dir.exists():
        shutil.rmtree(package_dir)
    write_package(spec, package_dir, source_dir=out / "parity-source")
    request = CertRequest(model=str(package_dir), parity=ParityRequest(
        source=str(out / "parity-source" / spec.source_file), tokens=8))
    report = certify_package(request)
    return next((g for g in report.runtime_gates if g.name == "split_parity"), None), None
