"""Structure of the evidence HTML, checked on the parsed DOM."""

from __future__ import annotations

import pytest

from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.html import render_evidence_html
from meshcert.reports.evidence.view import gate_status
from tests.reports.checks_html import (
    assert_inert,
    assert_responsive_and_printable,
    assert_self_contained,
)
from tests.reports.dom import Node, parse
from tests.reports.evidence_fixture import HOSTILE

KINDS = ["example", "synthetic", "passed", "incomplete"]


def dom(report: EvidenceReport) -> Node:
    return parse(render_evidence_html(report))


def test_gate_status_rule(evidence_reports: dict[str, EvidenceReport]) -> None:
    assert gate_status(evidence_reports["passed"].gate) == "passed"
    assert gate_status(evidence_reports["synthetic"].gate) == "failed"
    assert gate_status(evidence_reports["incomplete"].gate) == "incomplete"


@pytest.mark.parametrize("kind", KINDS)
def test_banner(evidence_reports: dict[str, EvidenceReport], kind: str) -> None:
    # Issue 35: the banner states the headline (every decision the evidence supports, the
    # Phase E gate among them when it applies), no longer the gate alone.
    report = evidence_reports[kind]
    banner = dom(report).find("header", id="verdict")
    status = headline_of(report).status
    assert banner.attrs["data-status"] == status and f"banner-{status}" in banner.classes
    assert banner.find(cls="verdict-text").text() == status.upper()
    for line in report.gate.errors:
        assert line in banner.text()
    items = banner.find("table", cls="headline-items").find_all(
        "tr", where=lambda n: "data-verdict" in n.attrs)
    assert [(i.attrs["data-kind"], i.attrs["data-verdict"]) for i in items] == [
        ("phase-e-gate", gate_status(report.gate))] + [("decision", d.verdict)
                                                       for d in report.decisions]
    present = len(report.gate.required_rows) - len(report.gate.missing_rows)
    assert f"{present}/{len(report.gate.required_rows)}" in banner.find(cls="stats").text()


@pytest.mark.parametrize("kind", KINDS)
def test_gate_tables(evidence_reports: dict[str, EvidenceReport], kind: str) -> None:
    report = evidence_reports[kind]
    section = dom(report).find("section", id="gate")
    rows = section.find("table", cls="gate-checks").find_all("tr", where=lambda n: "data-gate"
                                                             in n.attrs)
    assert [r.attrs["data-gate"] for r in rows] == [c.name for c in report.gate.checks]
    for row, check in zip(rows, report.gate.checks, strict=True):
        assert row.find(cls="badge").text() == check.status
        if check.value is not None:
            assert row.find(cls="value").text() != "\u2014"
        if check.threshold is not None:
            assert f"{check.threshold:g}" in row.find(cls="threshold").text() or (
                check.unit == "share" and f"{check.threshold:.0%}" in row.text())
        if check.status == "failed":
            assert "row-fail" in row.classes
            assert (check.error or check.message) in row.text()
    required = section.find("table", cls="required-rows").find_all(
        "tr", where=lambda n: "data-row" in n.attrs)
    assert {r.attrs["data-row"] for r in required} == set(report.gate.required_rows)
    missing = {r.attrs["data-row"] for r in required if r.attrs["data-status"] == "missing"}
    assert missing == {m.label for m in report.gate.missing_rows}
    for r in required:
        if r.attrs["data-status"] == "missing":
            assert r.find(cls="badge").text() == "missing"


def test_estimate_stacked_bars(evidence_reports: dict[str, EvidenceReport]) -> None:
    report = evidence_reports["synthetic"]
    assert report.estimate is not None
    section = dom(report).find("section", id="estimate")
    terms = section.find("figure", data_chart="terms").find("svg")
    keys = [s.attrs["data-key"] for s in terms.find_all("rect", cls="segment")]
    assert keys == [t.label for t in report.estimate.terms]
    widths = {s.attrs["data-key"]: float(s.attrs["width"] or 0)
              for s in terms.find_all("rect", cls="segment")}
    biggest = max(report.estimate.terms, key=lambda t: t.contribution_us)
    assert widths[biggest.label] == max(widths.values())
    legend = terms.text()
    for t in report.estimate.terms:
        assert f"{t.share:.1%}" in legend
    shares = section.find("figure", data_chart="shares").find("svg")
    assert [s.attrs["data-key"] for s in shares.find_all("rect", cls="segment")] == list(
        report.estimate.shares)
    assert f"{report.estimate.total_us:,.2f} us" in section.find(cls="estimate-total").text()


def test_missing_estimate_says_why(evidence_reports: dict[str, EvidenceReport]) -> None:
    report = evidence_reports["incomplete"]
    assert report.estimate is None and report.estimate_message
    section = dom(report).find("section", id="estimate")
    assert section.find(cls="estimate-missing").text() == report.estimate_message
    assert not section.find_all("svg")


@pytest.mark.parametrize("kind", ["example", "synthetic"])
def test_decision_cards(evidence_reports: dict[str, EvidenceReport], kind: str) -> None:
    report = evidence_reports[kind]
    page = dom(report)
    cards = page.find("section", id="decisions").find_all("article", cls="card")
    assert [c.attrs["data-policy"] for c in cards] == [d.policy for d in report.decisions]
    for card, d in zip(cards, report.decisions, strict=True):
        assert card.attrs["data-verdict"] == d.verdict
        assert card.find("h3").find(cls="badge").text() == d.verdict
        assert f"card-{d.verdict}" in card.classes
        assert d.reason in card.find(cls="reason").text()
        assert d.rule in card.find(cls="rule").text()
        assert f"{d.threshold:g}" in card.find(cls="threshold").text()
        chart = card.find("svg")
        forest = chart.find_all("g", cls="forest-row")
        assert len(forest) == len(d.comparisons)
        assert all(row.find_all("line", cls="threshold") for row in forest)
        table_rows = card.find("table", cls="comparisons").find_all(
            "tr", where=lambda n: "data-comparison" in n.attrs)
        for i, (row, c) in enumerate(zip(table_rows, d.comparisons, strict=True)):
            assert row.find(cls="samples").text() == f"{c.n_baseline} / {c.n_candidate}"
            if c.ci_low is not None and c.ci_high is not None:
                assert row.find(cls="interval").text() == f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"
            if c.speedup is not None:
                assert row.find(cls="speedup").text() == f"{c.speedup:.3f}\u00d7"
                assert forest[i].find_all("circle", cls="estimate")
        missing = [li.text() for li in card.find_all("ul", cls="missing-list")
                   for li in li.find_all("li")]
        assert missing == d.missing_evidence
        files = {s.file for c in d.comparisons for r in (*c.baseline, *c.candidate)
                 for s in r.sources} | {s.file for s in d.sources}
        listed = card.find(cls="sources").text()
        for name in files:
            assert name in listed


def test_overview_chart_has_every_comparison(evidence_reports: dict[str, EvidenceReport]
                                             ) -> None:
    report = evidence_reports["synthetic"]
    overview = dom(report).find("figure", cls="overview-figure").find("svg")
    rows = overview.find_all("g", cls="forest-row")
    assert len(rows) == sum(len(d.comparisons) for d in report.decisions)
    assert overview.find_all("line", cls="reference")


@pytest.mark.parametrize("kind", ["example", "synthetic"])
def test_timing_charts_cover_every_row(evidence_reports: dict[str, EvidenceReport],
                                       kind: str) -> None:
    report = evidence_reports[kind]
    section = dom(report).find("section", id="timings")
    figures = section.find_all("figure", cls="spread-figure")
    assert figures
    rows = [r for f in figures for r in f.find("svg").find_all("g", cls="spread-row")]
    assert len(rows) == len(report.rows)
    keys = {r.attrs["data-key"] for r in rows}
    assert keys == {f"{r.op}({r.params})#{r.variant}" for r in report.rows}
    with_median = [r for r in rows if r.find_all("rect", cls="median")]
    assert len(with_median) == sum(r.median_us is not None for r in report.rows)
    variants = {r.variant for r in report.rows}
    if len(variants) > 1:  # sweep variants are drawn next to the default
        assert any(v != "default" and v in section.text() for v in variants)


def test_inputs_and_settings(evidence_reports: dict[str, EvidenceReport]) -> None:
    report = evidence_reports["example"]
    section = dom(report).find("section", id="inputs")
    text = section.text()
    for f in report.inputs.files:
        assert f.path in text
    for s in report.settings:
        assert s.name in text
    assert report.tool.version in text


@pytest.mark.parametrize("kind", [*KINDS, "hostile"])
def test_self_contained(evidence_reports: dict[str, EvidenceReport], kind: str) -> None:
    html = render_evidence_html(evidence_reports[kind])
    page = assert_self_contained(html)
    assert_responsive_and_printable(page, html)


def test_hostile_text_is_inert(evidence_reports: dict[str, EvidenceReport]) -> None:
    html = render_evidence_html(evidence_reports["hostile"])
    assert_inert(html, HOSTILE)
