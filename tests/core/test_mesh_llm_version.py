"""One constant says which mesh-llm release meshcert implements (shared/spec/mesh-llm-0.79.md:
v0.79.0): the attestation's "mesh-llm-rules", cert.json's tool.mesh_llm_version and the HTML's
provenance all state it, and nothing states the v0.76.2 meshcert once followed."""

from __future__ import annotations

from pathlib import Path

from meshcert.attest.statement import build_statement
from meshcert.core.version import MESH_LLM_VERSION
from meshcert.reports.certification.html import render_cert_html
from tests.conftest import PackageFactory, certify_dir
from tests.reports.dom import parse

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "mesh-llm-0.79.md"


def test_the_constant_is_the_newest_release_the_spec_reads() -> None:
    assert MESH_LLM_VERSION == "0.79.0"
    if SPEC.is_file():  # the spec sits beside the repository on a developer's machine
        assert "v0.79.0 (2026-11-10)" in SPEC.read_text(encoding="utf-8")


def test_attestation_report_and_html_state_the_same_version(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("llama").root)
    assert report.tool.mesh_llm_version == MESH_LLM_VERSION
    statement = build_statement(report, report_sha256="cd" * 32, verifier_id="urn:x")
    assert statement["predicate"]["verifier"]["version"]["mesh-llm-rules"] == MESH_LLM_VERSION
    section = parse(render_cert_html(report)).find("section", id="provenance")
    facts = {f.find("dt").text(): f.find("dd").text() for f in section.find_all(cls="fact")}
    assert facts["mesh-llm rules"].startswith(f"v{MESH_LLM_VERSION}")
    assert "0.76.2" not in str(statement)
