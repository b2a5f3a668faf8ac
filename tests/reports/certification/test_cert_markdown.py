"""Markdown summary of a certification (GitHub step summary)."""

from __future__ import annotations

from meshcert.certify.report import CertReport
from meshcert.reports.certification.markdown import render_cert_markdown
from meshcert.reports.mdutil import code, text


def test_heading_states_the_verdict(failed_report: CertReport, passed_report: CertReport) -> None:
    assert render_cert_markdown(failed_report).startswith("## \u274c Certification failed")
    assert render_cert_markdown(passed_report).startswith("## \u2705 Certification passed")


def test_lists_every_finding_and_section(failed_report: CertReport) -> None:
    md = render_cert_markdown(failed_report)
    for f in failed_report.findings:
        assert code(f.code) in md
        assert text(f.message) in md
    for heading in ("### Findings", "#### Errors", "#### Warnings", "### Checks",
                    "### Certification stages", "### Runtime gates", "Provenance"):
        assert heading in md
    table_lines = [line for line in md.splitlines() if line.startswith("|")]
    widths = {line.count(" | ") for line in table_lines if "\\|" not in line}
    assert widths  # tables are present


def test_runtime_measurements(runtime_report: CertReport) -> None:
    md = render_cert_markdown(runtime_report)
    row = next(line for line in md.splitlines() if code("v1_chat_completions_stream") in line)
    assert "188.7 ms" in row and "41.3" in row


def test_markup_is_escaped(hostile_report: CertReport) -> None:
    md = render_cert_markdown(hostile_report)
    assert "<script>" not in md
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;\"onload=x</code>" in md


def test_escape_helpers() -> None:
    assert text("a|b<i>*x*") == "a\\|b&lt;i&gt;\\*x\\*"
    assert code("a`b|c") == "<code>a\\`b\\|c</code>"
    assert text("two\nlines") == "two lines"
