"""Markdown summary of an evidence report (GitHub step summary)."""

from __future__ import annotations

import pytest

from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.markdown import render_evidence_markdown
from meshcert.reports.mdutil import code, text
from meshcert.reports.registry import render


@pytest.mark.parametrize("kind", ["example", "synthetic", "passed", "incomplete"])
def test_decisions_gates_and_estimate(evidence_reports: dict[str, EvidenceReport],
                                      kind: str) -> None:
    report = evidence_reports[kind]
    md = render_evidence_markdown(report)
    assert md == render("md", report)
    heading = md.splitlines()[0]
    # Issue 35: the heading states the headline's overall status; the gate is one item of it
    assert heading.startswith("## ") and f" {headline_of(report).status.upper()}: " in heading
    assert "| Phase E MoE gate (advisory) |" in md
    for d in report.decisions:
        row = next(line for line in md.splitlines()
                   if line.startswith(f"| {code(d.policy)}"))
        assert f"**{text(d.verdict)}**" in row
        for c in d.comparisons[:1]:
            assert f"{c.n_baseline} / {c.n_candidate}" in row
            if c.ci_low is not None and c.ci_high is not None:
                assert text(f"[{c.ci_low:.3f}, {c.ci_high:.3f}]") in row
    for check in report.gate.checks:
        assert text(check.title) in md
    for m in report.gate.missing_rows:
        assert f"missing: {text(m.title)}" in md
    if report.estimate is None:
        assert text(report.estimate_message or "") in md
    else:
        assert f"{report.estimate.total_us:,.2f} us" in md


def test_hostile_markdown_is_inert(evidence_reports: dict[str, EvidenceReport]) -> None:
    md = render_evidence_markdown(evidence_reports["hostile"])
    assert "<script>" not in md and "&lt;script&gt;" in md
