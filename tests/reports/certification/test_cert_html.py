"""Structure of the certification HTML, checked on the parsed DOM."""

from __future__ import annotations

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.certification.view import NO_CHECK
from tests.reports.dom import Node, parse


def dom(report: CertReport) -> Node:
    return parse(render_cert_html(report))


@pytest.mark.parametrize("kind", ["passed", "failed", "incomplete", "runtime"])
def test_banner_shows_status_and_ref(cert_reports: dict[str, CertReport], kind: str) -> None:
    report = cert_reports[kind]
    page = dom(report)
    banner = page.find("header", id="verdict")
    assert f"banner-{report.status}" in banner.classes
    assert banner.attrs["data-status"] == report.status
    assert banner.find(cls="verdict-text").text() == report.status.upper()
    assert banner.find(cls="subject").text() == (report.model_id or report.input)
    ref_text = banner.find(cls="ref-text").text()
    pin = banner.find(cls="pin")
    if report.ref and report.ref.kind == "hf" and report.ref.pinned:
        assert report.ref.resolved_commit and report.ref.resolved_commit in ref_text
        assert "pin-yes" in pin.classes and "pinned" in pin.text()
    else:
        assert "pin-no" in pin.classes
    assert page.find("title").text().startswith(
        {"passed": "Certification passed", "failed": "Certification failed",
         "incomplete": "Certification incomplete"}[report.status])


def test_every_finding_is_in_its_severity_and_check_group(failed_report: CertReport) -> None:
    page = dom(failed_report)
    groups = {g.attrs["data-severity"]: g for g in page.find_all("section", cls="severity-group")}
    assert set(groups) == {f.severity for f in failed_report.findings}
    order = [g.attrs["data-severity"] for g in page.find_all("section", cls="severity-group")]
    assert order == [s for s in ("error", "warning", "info") if s in groups]
    for f in failed_report.findings:
        group = groups[f.severity]
        check = group.find("div", cls="check-group", data_check=f.check or NO_CHECK)
        cards = check.find_all("article", cls="finding", data_code=f.code)
        assert any(f.message in card.find(cls="message").text() for card in cards), f.code
        card = next(c for c in cards if f.message in c.text())
        assert card.find("code", cls="code").text() == f.code
        assert f.remediation in card.find(cls="remediation").text()
        if f.path:
            assert f.path in card.find(cls="where").text()
        if f.layer_index is not None:
            assert card.find(cls="layer").text() == f"layer {f.layer_index}"
    counted = sum(len(g.find_all("article", cls="finding")) for g in groups.values())
    assert counted == len(failed_report.findings)


def test_findings_outside_check_groups_are_shown(incomplete_report: CertReport) -> None:
    page = dom(incomplete_report)
    group = page.find("section", cls="severity-group", data_severity="error")
    source = group.find("div", cls="check-group", data_check=NO_CHECK)
    assert source.find("article", data_code="hub_unreachable")


def test_checks_table_lists_every_check(failed_report: CertReport) -> None:
    table = dom(failed_report).find("table", cls="checks")
    rows = {r.attrs["data-check"]: r for r in table.find_all("tr") if "data-check" in r.attrs}
    assert set(rows) == {c.name for c in failed_report.checks}
    for check in failed_report.checks:
        assert rows[check.name].find("span", cls="badge").text() == check.status


def test_stage_figures_have_one_bar_per_stage(passed_report: CertReport) -> None:
    page = dom(passed_report)
    figures = {f.attrs["data-figure"]: f for f in page.find_all("figure", cls="stage-figure")}
    assert set(figures) == {"materialized", "plan"}
    for key, stages in (("materialized", passed_report.materialized_stages),
                        ("plan", passed_report.stage_plan)):
        figure = figures[key]
        svg = figure.find("svg")
        bars = svg.find_all("g", cls="stage-bar")
        assert [b.attrs["data-key"] for b in bars] == [s.stage_id for s in stages]
        for bar, stage in zip(bars, stages, strict=True):
            segments = bar.find_all("rect", cls="segment")
            assert [s.attrs["data-key"] for s in segments] == [p.path for p in stage.parts]
        rows = figure.find("table", cls="stages").find_all("tr", where=lambda n: "data-stage"
                                                           in n.attrs)
        for row, stage in zip(rows, stages, strict=True):
            chips = [c.text() for c in row.find_all("span", cls="chip")]
            assert chips == [p.role.removeprefix("shared.") for p in stage.parts
                             if p.role != "layer"]
    assert len(passed_report.stage_plan) == 3


def test_stage_segments_are_sized_by_bytes(passed_report: CertReport) -> None:
    bar = dom(passed_report).find("figure", data_figure="materialized").find("g", cls="stage-bar")
    stage = passed_report.materialized_stages[0]
    widths = {s.attrs["data-key"]: float(s.attrs["width"] or 0)
              for s in bar.find_all("rect", cls="segment")}
    big = max(stage.parts, key=lambda p: p.artifact_bytes or 0)
    small = min(stage.parts, key=lambda p: p.artifact_bytes or 0)
    assert widths[big.path] > widths[small.path]


def test_runtime_gates_table_and_measurements(runtime_report: CertReport) -> None:
    page = dom(runtime_report)
    table = page.find("section", id="runtime").find("table", cls="gates")
    rows = {r.attrs["data-gate"]: r for r in table.find_all("tr") if "data-gate" in r.attrs}
    assert list(rows) == [g.name for g in runtime_report.runtime_gates]
    stream = rows["v1_chat_completions_stream"]
    cells = [c.text() for c in stream.find_all("td")]
    assert "188.7 ms" in cells and "41.3" in cells and "910.4 ms" in cells
    assert "inter_token_ms_p50" in stream.text()
    assert "(warning)" in stream.text()
    assert rows["deterministic_at_temperature_0"].find(cls="badge").text() == "failed"
    chart = page.find("section", id="runtime").find("svg")
    keys = [b.attrs["data-key"] for b in chart.find_all("g", cls="bar")]
    assert keys == [g.name for g in runtime_report.runtime_gates]


def test_package_only_gates_are_not_required(passed_report: CertReport) -> None:
    table = dom(passed_report).find("table", cls="gates")
    badges = [b.text() for b in table.find_all("span", cls="badge")]
    assert badges == ["not required"] * 3


def test_provenance(runtime_report: CertReport) -> None:
    section = dom(runtime_report).find("section", id="provenance")
    facts = {f.find("dt").text(): f.find("dd").text() for f in section.find_all(cls="fact")}
    assert facts["tool"] == f"meshcert {runtime_report.tool.version}"
    assert facts["manifest sha256"] == runtime_report.manifest_sha256
    assert runtime_report.ref and facts["resolved commit"] == runtime_report.ref.resolved_commit
    assert facts["pinned"] == "yes"
    assert facts["started"] == runtime_report.started_at
    assert facts["finished"] == runtime_report.finished_at
    assert facts["verification"].startswith("hub-attested")
    assert facts["HTTP requests"] == "17"
    assert "183,422 bytes" in facts["bytes transferred"]


def test_passed_without_findings_says_so(passed_report: CertReport) -> None:
    clean = passed_report.model_copy(update={"findings": []})
    page = dom(clean)
    assert not page.find_all("section", cls="severity-group")
    assert "No findings" in page.find("section", id="findings").text()
