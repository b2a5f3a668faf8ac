"""JUnit XML of a certification: each check group and gate a testcase, counts correct."""

from __future__ import annotations

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.junit import SOURCE_CASE, render_cert_junit
from tests.reports.conftest import HOSTILE
from tests.reports.junit_shape import cases_by_name, outcome, validate


@pytest.mark.parametrize("kind", ["passed", "failed", "hostile", "runtime", "incomplete"])
def test_shape_and_counts(cert_reports: dict[str, CertReport], kind: str) -> None:
    report = cert_reports[kind]
    root = validate(render_cert_junit(report))
    names = list(cases_by_name(root))
    expected = [c.name for c in report.checks] + ["package_materialization"] + [
        g.name for g in report.runtime_gates]
    assert [n for n in names if n != SOURCE_CASE] == expected
    assert (SOURCE_CASE in names) == any(f.check is None for f in report.findings)


def test_failed_checks_carry_their_findings(failed_report: CertReport) -> None:
    cases = cases_by_name(validate(render_cert_junit(failed_report)))
    for check in failed_report.checks:
        case = cases[check.name]
        expected = {"failed": "failure", "error": "error", "skipped": "skipped"}.get(
            check.status, "passed")
        assert outcome(case) == expected, check.name
        if expected == "failure":
            failure = case.find("failure")
            assert failure is not None and failure.text
            for f in failed_report.findings:
                if f.check == check.name:
                    assert f.code in failure.text and f.message in failure.text
                    if f.severity == "error":
                        assert f.code in (failure.get("message") or "")
        elif check.findings:
            out = case.find("system-out")
            assert out is not None and out.text
    gate = cases["package_materialization"]
    assert outcome(gate) == "failure"
    failure = gate.find("failure")
    assert failure is not None and failure.get("message") == failed_report.package_gate.details
    assert failure.get("type") == "meshcert.gate_failed"


def test_not_required_gates_are_skipped(passed_report: CertReport) -> None:
    root = validate(render_cert_junit(passed_report))
    cases = cases_by_name(root)
    for gate in passed_report.runtime_gates:
        assert outcome(cases[gate.name]) == "skipped"
    assert outcome(cases["package_materialization"]) == "passed"
    assert int(root.get("failures", "-1")) == 0 and int(root.get("errors", "-1")) == 0
    # the three package-only gates and every check that did no work (issue 34)
    skipped_checks = sum(c.status == "skipped" for c in passed_report.checks)
    assert skipped_checks > 0
    assert int(root.get("skipped", "-1")) == 3 + skipped_checks


def test_incomplete_is_an_error(incomplete_report: CertReport) -> None:
    root = validate(render_cert_junit(incomplete_report))
    cases = cases_by_name(root)
    assert outcome(cases["package_materialization"]) == "error"
    assert outcome(cases[SOURCE_CASE]) == "error"
    error = cases[SOURCE_CASE].find("error")
    assert error is not None and "hub_unreachable" in (error.text or "")
    assert int(root.get("errors", "-1")) == 2


def test_warning_level_runtime_failure_does_not_fail_the_suite(
        runtime_report: CertReport) -> None:
    cases = cases_by_name(validate(render_cert_junit(runtime_report)))
    case = cases["deterministic_at_temperature_0"]
    assert outcome(case) == "passed"
    out = case.find("system-out")
    assert out is not None and "the two answers differ" in (out.text or "")
    assert float(cases["v1_chat_completions"].get("time", "0")) == pytest.approx(0.843)


def test_hostile_text_stays_text(hostile_report: CertReport) -> None:
    xml = render_cert_junit(hostile_report)
    root = validate(xml)
    assert "<script>" not in xml
    assert any(HOSTILE in (node.text or "") or HOSTILE in "".join(node.attrib.values())
               for node in root.iter())


def test_control_characters_do_not_break_the_xml(failed_report: CertReport) -> None:
    finding = failed_report.findings[0].model_copy(update={"message": "bad \x00\x07 bytes"})
    report = failed_report.model_copy(update={"findings": [finding, *failed_report.findings]})
    validate(render_cert_junit(report))
