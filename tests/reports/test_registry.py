"""The report-format registry: every format of every kind is one lookup, and the writers write
exactly the formats asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.outputs import (
    DECISIONS_LABEL,
    SUMMARY_LABEL,
    write_decisions,
    write_reports,
)
from meshcert.reports.registry import KINDS, REPORT_FORMATS, kind_of, render, renderer
from tests.reports.catalog_fixture import CatalogOut


@pytest.mark.parametrize(("fmt", "kind"), [(f, k) for f, kinds in REPORT_FORMATS.items()
                                           for k in kinds])
def test_every_registered_renderer_resolves(fmt: str, kind: str) -> None:
    assert kind in KINDS.values()
    assert callable(renderer(fmt, kind).load())


def test_each_report_model_has_its_kind(passed_report: CertReport,
                                        example_evidence: EvidenceReport,
                                        catalog_out: CatalogOut) -> None:
    assert kind_of(passed_report) == "certification"
    assert kind_of(example_evidence) == "evidence"
    assert kind_of(catalog_out.report) == "catalog"
    with pytest.raises(TypeError, match="not a meshcert report: dict"):
        kind_of({})


def test_a_format_a_kind_does_not_have_is_refused(passed_report: CertReport) -> None:
    with pytest.raises(ValueError, match="the summary format does not render a certification"):
        render("summary", passed_report)
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        render("pdf", passed_report)
    with pytest.raises(ValueError, match="unknown report format"):
        write_reports(passed_report, pdf="x.pdf")


def test_write_reports_writes_the_formats_asked_for_in_the_registry_order(
        tmp_path: Path, passed_report: CertReport) -> None:
    written = write_reports(passed_report, sarif=tmp_path / "c.sarif", md=tmp_path / "c.md",
                            html=None, junit=tmp_path / "c.xml")
    assert list(written) == ["md", "junit", "sarif"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.md", "c.sarif", "c.xml"]
    assert written["md"].read_text() == render("md", passed_report)
    assert written["junit"].read_text() == render("junit", passed_report)


def test_write_decisions_writes_the_pair(tmp_path: Path,
                                         example_evidence: EvidenceReport) -> None:
    written = write_decisions(example_evidence, tmp_path)
    assert written == {DECISIONS_LABEL: tmp_path / "decisions.json",
                       SUMMARY_LABEL: tmp_path / "summary.md"}
    assert EvidenceReport.model_validate_json(
        (tmp_path / "decisions.json").read_text()) == example_evidence
    assert (tmp_path / "summary.md").read_text().startswith("# GLM-5.2 Benchmark Evidence")


def test_a_md_report_at_summary_md_replaces_the_summary(tmp_path: Path,
                                                        example_evidence: EvidenceReport
                                                        ) -> None:
    written = write_decisions(example_evidence, tmp_path, md=tmp_path / "." / "summary.md")
    assert list(written) == [DECISIONS_LABEL]
    assert not (tmp_path / "summary.md").exists()  # the caller writes the --md there


def test_a_certification_s_formats_never_load_the_evidence_models(
        tmp_path: Path, passed_report: CertReport) -> None:
    source = tmp_path / "cert.json"
    source.write_text(passed_report.to_json())
    code = ("import sys\n"
            "from meshcert.certify.report import CertReport\n"
            "from meshcert.reports.outputs import write_reports\n"
            f"report = CertReport.model_validate_json(open({str(source)!r}).read())\n"
            f"write_reports(report, md={str(tmp_path / 'c.md')!r}, "
            f"junit={str(tmp_path / 'c.xml')!r}, sarif={str(tmp_path / 'c.sarif')!r})\n"
            "print(sorted(m for m in sys.modules if m.startswith('meshcert.evidence')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "c.sarif").is_file()
