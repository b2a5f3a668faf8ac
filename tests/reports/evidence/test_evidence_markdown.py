"""The evidence report's one Markdown document: `--md FILE` (e.g. a GitHub step summary) and
summary.md beside decisions.json are the same text, with the headline's verdict, every
decision, gate and the estimate, and no live HTML or remote image from the report's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.markdown import render_evidence_summary
from meshcert.reports.mdutil import inert_document
from meshcert.reports.outputs import write_decisions, write_reports
from meshcert.reports.registry import render


@pytest.mark.parametrize("kind", ["example", "synthetic", "passed", "incomplete"])
def test_decisions_gates_and_estimate(evidence_reports: dict[str, EvidenceReport],
                                      kind: str) -> None:
    report = evidence_reports[kind]
    md = render("md", report)
    assert md == render_evidence_summary(report) == render("summary", report)
    head = headline_of(report)
    assert f"Verdict: **{head.status.upper()}** ({head.summary})" in md
    assert "| Phase E MoE gate (" in md
    for d in report.decisions:
        row = next(line for line in md.splitlines() if line.startswith(f"| `{d.policy}`"))
        assert f"| {d.verdict} |" in row
        for c in d.comparisons[:1]:
            assert f"{c.n_baseline}/{c.n_candidate}" in row
            if c.speedup is not None and c.ci_low is not None and c.ci_high is not None:
                assert f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" in row
    for check in report.gate.checks:
        assert check.title in md
    for m in report.gate.missing_rows:
        assert f"- {m.title}: `{m.pattern}`" in md
    if report.estimate is None:
        assert (report.estimate_message or "Missing rows prevented") in md
    else:
        assert f"Estimated routed FFN decode layer: {report.estimate.total_us:.2f} us" in md


def test_md_and_summary_md_are_one_document(evidence_reports: dict[str, EvidenceReport],
                                            tmp_path: Path) -> None:
    report = evidence_reports["example"]
    write_decisions(report, tmp_path / "out")
    written = write_reports(report, md=tmp_path / "step-summary.md")
    assert written["md"].read_text() == (tmp_path / "out" / "summary.md").read_text()


def test_hostile_markdown_is_inert(evidence_reports: dict[str, EvidenceReport]) -> None:
    md = render("md", evidence_reports["hostile"])
    prose = [part for line in md.split("```")[::2] for part in line.split("`")[::2]]
    assert not any("<script>" in part for part in prose)
    assert "&lt;script>" in md


def test_inert_document_leaves_code_as_written() -> None:
    text = ("a <b> </i> <!-- c --> ![x](http://t/p.png) `<kept>`\n```\n<also kept>\n```\n"
            "x > y, 1.32x <= 1.5")
    assert inert_document(text) == ("a &lt;b> &lt;/i> &lt;!-- c --> !\\[x](http://t/p.png) "
                                    "`<kept>`\n```\n<also kept>\n```\nx > y, 1.32x <= 1.5")
