"""JUnit XML of an evidence report: gates and decisions as testcases, counts correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.junit import UNDECIDED, render_evidence_junit
from tests.evidence.parsers.helpers import DATA
from tests.reports.evidence_fixture import HOSTILE
from tests.reports.junit_shape import cases_by_name, outcome, validate

KINDS = ["example", "synthetic", "passed", "incomplete", "hostile"]
GATE_OUTCOMES = {"passed": "passed", "failed": "failure", "missing": "skipped",
                 "skipped": "skipped"}


@pytest.mark.parametrize("kind", KINDS)
def test_shape_counts_and_outcomes(evidence_reports: dict[str, EvidenceReport],
                                   kind: str) -> None:
    report = evidence_reports[kind]
    xml = render_evidence_junit(report)
    root = validate(xml)
    headline_suite, gate_suite, decision_suite = root.findall("testsuite")
    head = headline_of(report)
    verdict, *items = headline_suite.findall("testcase")
    assert outcome(verdict) == {"passed": "passed", "failed": "failure",
                                "incomplete": "skipped"}[head.status]
    assert [outcome(c) for c in items] == [
        {"passed": "passed", "failed": "failure", "undecided": "skipped"}[i.outcome]
        for i in head.items]
    gate_cases = gate_suite.findall("testcase")
    assert [c.get("name") for c in gate_cases] == ["required_rows"] + [
        c.name for c in report.gate.checks]
    assert outcome(gate_cases[0]) == ("failure" if report.gate.missing_rows else "passed")
    for case, check in zip(gate_cases[1:], report.gate.checks, strict=True):
        want = GATE_OUTCOMES[check.status]
        if check.status == "missing" and report.gate.enforced:
            want = "failure"                # a required gate fails on missing evidence
        assert outcome(case) == want, check.name
        if check.status == "failed":
            failure = case.find("failure")
            assert failure is not None
            assert failure.get("message") == (check.error or check.message)
    decided = decision_suite.findall("testcase")
    assert [c.get("name") for c in decided] == [d.policy for d in report.decisions] + [
        o.policy for o in report.omitted_decisions]
    count = len(report.decisions)
    for case, d in zip(decided[:count], report.decisions, strict=True):
        assert outcome(case) == ("skipped" if d.verdict in UNDECIDED else "passed")
        out = case.find("system-out")
        assert out is not None and f"verdict: {d.verdict}" in (out.text or "")
    assert all(outcome(case) == "skipped" for case in decided[count:])


def test_missing_rows_fail_with_the_script_message(
        evidence_reports: dict[str, EvidenceReport]) -> None:
    report = evidence_reports["incomplete"]
    case = cases_by_name(validate(render_evidence_junit(report)))["required_rows"]
    failure = case.find("failure")
    assert failure is not None
    assert (failure.get("message") or "").startswith("error: missing Phase E MoE gate rows: ")
    for m in report.gate.missing_rows:
        assert m.title in (failure.text or "")


@pytest.mark.parametrize("enforced", [False, True], ids=["advisory", "enforced"])
def test_missing_evidence_is_never_an_error(evidence_reports: dict[str, EvidenceReport],
                                           enforced: bool) -> None:
    """CI dashboards show <error> as broken infrastructure: missing rows are the evidence's
    failure (a required gate) or a check not evaluated (advisory), never an error."""
    report = evidence_reports["incomplete"]
    report = report.model_copy(update={"gate": report.gate.model_copy(
        update={"enforced": enforced})})
    missing = [c.name for c in report.gate.checks if c.status == "missing"]
    assert missing
    xml = render_evidence_junit(report)
    assert "<error" not in xml
    cases = cases_by_name(validate(xml))
    assert {outcome(cases[name]) for name in missing} == {"failure" if enforced else "skipped"}


def test_hostile_text_stays_text(evidence_reports: dict[str, EvidenceReport]) -> None:
    xml = render_evidence_junit(evidence_reports["hostile"])
    assert "<script>" not in xml
    root = validate(xml)
    assert HOSTILE in cases_by_name(root)


def test_the_registry_renders_an_evidence_report_with_it(
        evidence_reports: dict[str, EvidenceReport]) -> None:
    from meshcert.reports.registry import render

    report = evidence_reports["synthetic"]
    assert render("junit", report) == render_evidence_junit(report)


def test_a_decision_the_evidence_does_not_speak_to_claims_no_verdict(tmp_path: Path) -> None:
    """An A/B-only report: the Markdown, the HTML and the console leave the GLM Phase E
    decisions out (none of their rows, the gate not applying); JUnit skips them for that reason,
    never as `inconclusive` decisions of this evidence."""
    from typer.testing import CliRunner

    from meshcert.cli import app

    result = CliRunner().invoke(app, [
        "evidence", "report", str(DATA / "comparison-adaptive-8-rounds.json"),
        "--out-dir", str(tmp_path), "--junit", str(tmp_path / "r.xml")])
    assert result.exit_code == 0, result.output
    suites = {s.get("name"): s for s in validate((tmp_path / "r.xml").read_text("utf-8"))}
    decided = suites["meshcert.evidence.decisions"].findall("testcase")
    assert decided and {outcome(c) for c in decided} == {"skipped"}
    assert all(c.get("classname") == "meshcert.evidence.decisions.omitted" for c in decided)
    assert all(c.find("system-out") is None for c in decided)
    messages = [skip.get("message") or "" for c in decided
                if (skip := c.find("skipped")) is not None]
    assert len(messages) == len(decided)
    assert all(m.startswith("none of its Phase ") for m in messages), messages
    assert "inconclusive" not in (tmp_path / "r.xml").read_text("utf-8")
