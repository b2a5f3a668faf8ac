"""The provenance's source rows name the model the package was split from (the manifest's
source_model repo, revision and file), never the package's own carrier (which is what mesh-llm's
source_model_path holds for a v2 package), and say "none" when the manifest records no source."""

from __future__ import annotations

from pathlib import Path

from meshcert.certify.report import CertReport
from meshcert.reports.certification.html import render_cert_html
from tests.certify.v2_packages import build_v2
from tests.conftest import certify_dir
from tests.reports.dom import parse


def provenance(report: CertReport) -> dict[str, str]:
    section = parse(render_cert_html(report)).find("section", id="provenance")
    return {f.find("dt").text(): f.find("dd").text() for f in section.find_all(cls="fact")}


def test_a_v2_package_shows_its_real_source_not_its_carrier(tmp_path: Path) -> None:
    package = build_v2(tmp_path)
    report = certify_dir(package.root)
    assert report.source_model_path and report.source_model_path.endswith("metadata.gguf")
    source = package.manifest["source_model"]
    facts = provenance(report)
    assert facts["source model"] == f"{source['repo']}@{source['revision']}"
    assert facts["source file"] == Path(source["primary_file"]).name
    assert not any("metadata.gguf" in value for value in facts.values() if value)
    assert report.source_model is not None and report.source_model.repo == source["repo"]


def test_a_manifest_without_a_source_says_none(tmp_path: Path) -> None:
    report = certify_dir(build_v2(tmp_path).root).model_copy(update={"source_model": None})
    assert provenance(report)["source model"].startswith("none")
