"""JUnit XML for CI test dashboards.

Certification: one testcase per check group (plus `package_source` for findings raised while
loading the package, outside any group), the package gate and each runtime gate.
failed -> <failure> listing the findings; incomplete / crashed check -> <error>;
not_required / skipped -> <skipped/>. Warnings (a check with only warning findings, a failed
warning-level runtime gate) do not change the certification status, so they pass here too and
are listed in <system-out>: the JUnit result agrees with the exit status. The checks suite's
properties carry the verdict sentence and its counts, as every other format states them
(meshcert.reports.certification.verdict).
"""

from __future__ import annotations

from collections.abc import Sequence

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport, CheckRun, Gate, RuntimeGate
from meshcert.core.findings import Finding
from meshcert.reports.certification.verdict import verdict
from meshcert.reports.certification.view import NO_CHECK
from meshcert.reports.junitxml import Case, Suite, junit_timestamp, to_xml

SOURCE_CASE = "package_source"


def finding_text(findings: Sequence[Finding]) -> str:
    """One block per finding: severity, code, message, where, remediation."""
    blocks = []
    for f in findings:
        where = ", ".join(filter(None, [f.path and f"path {f.path}",
                                        f.layer_index is not None and f"layer {f.layer_index}"
                                        or ""]))
        blocks.append(f"[{f.severity}] {f.code}: {f.message}"
                      + (f"\n  at: {where}" if where else "")
                      + f"\n  remediation: {f.remediation}")
    return "\n".join(blocks)


def _codes(findings: Sequence[Finding]) -> str:
    return ", ".join(sorted({f.code for f in findings}))


def _check_case(run: CheckRun, mine: list[Finding]) -> Case:
    case = Case(name=run.name, classname="meshcert.certify.checks", time_s=run.duration_ms / 1000)
    errors = [f for f in mine if f.severity == "error"]
    if run.status == "failed":
        case.outcome, case.type = "failure", "meshcert.check_failed"
        case.message = f"{len(errors)} error finding(s): {_codes(errors)}"
        case.body = finding_text(mine)
    elif run.status == "error":
        case.outcome, case.type = "error", "meshcert.check_error"
        case.message = run.details or f"check {run.name} could not run"
        case.body = finding_text(mine)
    elif run.status == "skipped":
        case.outcome, case.message = "skipped", run.details or "skipped"
    elif mine:
        case.system_out = finding_text(mine)
    return case


def _source_case(mine: list[Finding], name: str = SOURCE_CASE) -> Case:
    """Findings outside any check that ran: raised while loading the package, or added by
    the trust policy (`attestation_policy`)."""
    case = Case(name=name, classname="meshcert.certify.checks")
    unsure = [f for f in mine if f.code in INCOMPLETE_CODES]
    errors = [f for f in mine if f.severity == "error" and f.code not in INCOMPLETE_CODES]
    if errors:
        case.outcome, case.type = "failure", "meshcert.check_failed"
        case.message = f"{len(errors)} error finding(s): {_codes(errors)}"
        case.body = finding_text(mine)
    elif unsure:
        case.outcome, case.type = "error", "meshcert.incomplete"
        case.message = f"could not check everything: {_codes(unsure)}"
        case.body = finding_text(mine)
    else:
        case.system_out = finding_text(mine)
    return case


def _gate_case(gate: Gate, classname: str, findings: Sequence[Finding] = ()) -> Case:
    latency = gate.latency_ms if isinstance(gate, RuntimeGate) else None
    case = Case(name=gate.name, classname=classname, time_s=(latency or 0.0) / 1000)
    detail = gate.details or gate.status
    warning_only = isinstance(gate, RuntimeGate) and gate.severity == "warning"
    if gate.status == "failed" and warning_only:
        case.system_out = f"warning-level gate failed (does not decide the status): {detail}"
    elif gate.status == "failed":
        case.outcome, case.type, case.message = "failure", "meshcert.gate_failed", detail
        case.body = finding_text([f for f in findings if f.severity == "error"]) or detail
    elif gate.status == "incomplete":
        case.outcome, case.type, case.message = "error", "meshcert.incomplete", detail
        case.body = finding_text([f for f in findings if f.code in INCOMPLETE_CODES]) or detail
    elif gate.status == "not_required":
        case.outcome, case.message = "skipped", detail
    elif gate.details:
        case.system_out = gate.details
    return case


def cert_suites(report: CertReport) -> list[Suite]:
    by_check: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_check.setdefault(f.check or NO_CHECK, []).append(f)
    said = verdict(report)
    properties = {k: v for k, v in {
        "status": report.status, "verdict": said.sentence(), "errors": str(said.errors),
        "warnings": str(said.warnings), "notes": str(said.notes),
        "checks_run": str(said.checks_run), "checks_skipped": str(said.checks_skipped),
        "input": report.input,
        "resolved_package_ref": report.resolved_package_ref, "model_id": report.model_id,
        "manifest_sha256": report.manifest_sha256, "verification": report.verification,
        "package_format": report.package_format, "package_id": report.package_id,
        "tool": f"{report.tool.name} {report.tool.version}",
    }.items() if v is not None}
    checks = Suite("meshcert.certification.checks", junit_timestamp(report.started_at), properties)
    if NO_CHECK in by_check:
        checks.cases.append(_source_case(by_check[NO_CHECK]))
    checks.cases += [_check_case(run, by_check.get(run.name, [])) for run in report.checks]
    ran = {run.name for run in report.checks} | {NO_CHECK}
    checks.cases += [_source_case(mine, name) for name, mine in by_check.items()
                     if name not in ran]
    gates = Suite("meshcert.certification.gates", junit_timestamp(report.started_at))
    gates.cases.append(_gate_case(report.package_gate, "meshcert.certify.gates",
                                  report.findings))
    gates.cases += [_gate_case(g, "meshcert.certify.runtime") for g in report.runtime_gates]
    return [checks, gates]


def render_cert_junit(report: CertReport) -> str:
    return to_xml(f"meshcert certification: {report.model_id or report.input}",
                  cert_suites(report))

