"""JUnit XML of a certification: each check group (each error finding of a failing one) and
each gate that ran a testcase, counted as the verdict counts."""

from __future__ import annotations

import pytest

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport
from meshcert.reports.certification.junit import SOURCE_CASE, render_cert_junit
from meshcert.reports.certification.verdict import uncounted_gates, verdict
from tests.reports.conftest import HOSTILE
from tests.reports.junit_shape import cases_by_name, outcome, validate


@pytest.mark.parametrize("kind", ["passed", "failed", "hostile", "runtime", "incomplete"])
def test_shape_and_counts(cert_reports: dict[str, CertReport], kind: str) -> None:
    report = cert_reports[kind]
    root = validate(render_cert_junit(report))
    names = list(dict.fromkeys(c.get("name") for c in root.iter("testcase")))
    counted = {g.name for g in uncounted_gates(report)}
    gates = [g.name for g in [report.package_gate, *report.runtime_gates]
             if g.status == "passed" or g.name in counted
             or (g.status != "not_required" and g is not report.package_gate)]
    expected = list(dict.fromkeys([c.name for c in report.checks] + gates))
    assert [n for n in names if n != SOURCE_CASE] == expected
    assert (SOURCE_CASE in names) == any(f.check is None for f in report.findings)
    said = verdict(report)
    assert int(root.get("skipped", "-1")) == said.checks_skipped
    assert int(root.get("failures", "-1")) + int(root.get("errors", "-1")) == \
        said.errors + said.failed_gates


def test_failed_checks_carry_their_findings(failed_report: CertReport) -> None:
    root = validate(render_cert_junit(failed_report))
    for check in failed_report.checks:
        cases = [c for c in root.iter("testcase") if c.get("name") == check.name]
        errors = [f for f in failed_report.findings
                  if f.check == check.name and f.severity == "error"]
        if errors:  # one case per error finding, each carrying its finding
            assert len(cases) == len(errors), check.name
            for case, f in zip(cases, errors, strict=True):
                node = case.find("error" if f.code in INCOMPLETE_CODES else "failure")
                assert node is not None and f.code in (node.get("message") or "")
                assert f.message in (node.text or "")
        else:
            [case] = cases
            expected = "skipped" if check.status == "skipped" else "passed"
            assert outcome(case) == expected, check.name
            if check.findings:
                out = case.find("system-out")
                assert out is not None and out.text
    # the package gate failed by those findings adds no failure of its own
    assert "package_materialization" not in cases_by_name(root)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["package_gate"] == "failed"


def test_not_required_gates_are_no_test(passed_report: CertReport) -> None:
    root = validate(render_cert_junit(passed_report))
    cases = cases_by_name(root)
    for gate in passed_report.runtime_gates:
        assert gate.name not in cases
    assert outcome(cases["package_materialization"]) == "passed"
    assert int(root.get("failures", "-1")) == 0 and int(root.get("errors", "-1")) == 0
    # every check that did no work, and nothing else (issue 41 item 9)
    skipped_checks = sum(c.status == "skipped" for c in passed_report.checks)
    assert skipped_checks > 0
    assert int(root.get("skipped", "-1")) == skipped_checks
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["runtime_gates"] == "not required"


def test_incomplete_is_an_error(incomplete_report: CertReport) -> None:
    root = validate(render_cert_junit(incomplete_report))
    cases = cases_by_name(root)
    assert outcome(cases[SOURCE_CASE]) == "error"
    error = cases[SOURCE_CASE].find("error")
    assert error is not None and "hub_unreachable" in (error.text or "")
    unsure = sum(f.code in INCOMPLETE_CODES for f in incomplete_report.findings)
    assert int(root.get("errors", "-1")) == unsure + verdict(incomplete_report).failed_gates


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
