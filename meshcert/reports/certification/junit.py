"""JUnit XML for CI test dashboards, counting as the verdict counts.

Certification: one testcase per check group (plus `package_source` for findings raised while
loading the package, outside any group), except that a failing check is one testcase per error
finding (a <failure>, or an <error> for a code that means "could not tell"): JUnit's failures +
errors are the verdict's error findings. Skipped checks are <skipped/>, and nothing else is:
the runtime gates a package-only run did not require are no testcase (the property
`runtime_gates` says "not required"), so JUnit's skipped is the verdict's skipped checks. The
gates suite has the package gate and each runtime gate that ran; a gate that did not pass is a
<failure>/<error> only when no error finding already counts it (a failed runtime gate, the
package gate failed by --strict warnings or an interrupted read: the verdict's `failed_gates`).
Warnings (a check with only warning findings, a failed warning-level runtime gate) do not change
the certification status, so they pass here too and are listed in <system-out>: the JUnit
result agrees with the exit status. The checks suite's properties carry the verdict sentence,
its counts and its coverage, as every other format states them
(meshcert.certify.verdict).
"""

from __future__ import annotations

from collections.abc import Sequence

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport, CheckRun, Gate, RuntimeGate
from meshcert.certify.verdict import uncounted_gates, verdict
from meshcert.core.findings import Finding
from meshcert.reports.certification.view import NO_CHECK
from meshcert.reports.junitxml import Case, Suite, junit_timestamp, to_xml

SOURCE_CASE = "package_source"
CHECKS = "meshcert.certify.checks"


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


def _finding_cases(name: str, mine: list[Finding], time_s: float = 0.0) -> list[Case]:
    """One case per error finding (a <failure>, or an <error> for a code that means "could
    not tell"), the check's other findings in the first one's <system-out>: so JUnit counts
    the error findings exactly as the verdict does."""
    errors = [f for f in mine if f.severity == "error"]
    others = [f for f in mine if f.severity != "error"]
    cases = []
    for i, f in enumerate(errors):
        case = Case(name=name, classname=CHECKS, time_s=time_s if i == 0 else 0.0)
        if f.code in INCOMPLETE_CODES:
            case.outcome, case.type = "error", "meshcert.incomplete"
        else:
            case.outcome, case.type = "failure", "meshcert.check_failed"
        case.message = f"{f.code}: {f.message}"[:500]
        case.body = finding_text([f])
        if i == 0 and others:
            case.system_out = finding_text(others)
        cases.append(case)
    return cases


def _check_cases(run: CheckRun, mine: list[Finding]) -> list[Case]:
    time_s = run.duration_ms / 1000
    failing = _finding_cases(run.name, mine, time_s)
    if failing:
        return failing
    case = Case(name=run.name, classname=CHECKS, time_s=time_s)
    if run.status == "skipped":
        case.outcome, case.message = "skipped", run.details or "skipped"
    elif run.status in {"failed", "error"}:  # no error finding to carry it: never passed
        case.outcome, case.type = "error", "meshcert.check_error"
        case.message = run.details or f"check {run.name} could not run"
        case.body = finding_text(mine)
    elif mine:
        case.system_out = finding_text(mine)
    return [case]


def _source_cases(mine: list[Finding], name: str = SOURCE_CASE) -> list[Case]:
    """Findings outside any check that ran: raised while loading the package, or added by
    the trust policy (`attestation_policy`)."""
    failing = _finding_cases(name, mine)
    return failing or [Case(name=name, classname=CHECKS, system_out=finding_text(mine))]


def _gate_case(gate: Gate, classname: str, counted: bool) -> Case | None:
    """A gate's case: a failure or error only when no error finding already counts it
    (`counted` false: verdict.uncounted_gates); a passed gate passes; a runtime gate that only
    warns passes with what went wrong in <system-out>; a gate not required is no test."""
    if gate.status == "not_required":
        return None
    latency = gate.latency_ms if isinstance(gate, RuntimeGate) else None
    case = Case(name=gate.name, classname=classname, time_s=(latency or 0.0) / 1000)
    detail = gate.details or gate.status
    if gate.status in {"failed", "incomplete"} and not counted:
        if gate.status == "failed":
            case.outcome, case.type = "failure", "meshcert.gate_failed"
        else:
            case.outcome, case.type = "error", "meshcert.incomplete"
        case.message, case.body = detail, detail
    elif gate.status in {"failed", "incomplete"} and isinstance(gate, RuntimeGate):
        case.system_out = (f"warning-level gate {gate.status} (does not decide the status): "
                           f"{detail}")
    elif gate.status in {"failed", "incomplete"}:
        return None  # the package gate, decided by the error findings counted above
    elif gate.details:
        case.system_out = gate.details
    return case


def _properties(report: CertReport) -> dict[str, str]:
    said = verdict(report)
    return {k: v for k, v in {
        "status": report.status, "verdict": said.sentence(), "errors": str(said.errors),
        "warnings": str(said.warnings), "notes": str(said.notes),
        "checks_run": str(said.checks_run), "checks_skipped": str(said.checks_skipped),
        "failed_gates": str(said.failed_gates), "coverage": "; ".join(said.coverage) or None,
        "package_gate": report.package_gate.status,
        "runtime_gates": None if any(g.status != "not_required" for g in report.runtime_gates)
        else "not required",
        "input": report.input,
        "resolved_package_ref": report.resolved_package_ref, "model_id": report.model_id,
        "manifest_sha256": report.manifest_sha256, "verification": report.verification,
        "package_format": report.package_format, "package_id": report.package_id,
        "tool": f"{report.tool.name} {report.tool.version}",
    }.items() if v is not None}


def cert_suites(report: CertReport) -> list[Suite]:
    """The checks suite (one case per check, or per error finding of a failing one) and the
    gates suite; failures + errors = the verdict's errors + its failed gates, skipped = its
    skipped checks."""
    by_check: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_check.setdefault(f.check or NO_CHECK, []).append(f)
    checks = Suite("meshcert.certification.checks", junit_timestamp(report.started_at),
                   _properties(report))
    if NO_CHECK in by_check:
        checks.cases += _source_cases(by_check[NO_CHECK])
    for run in report.checks:
        checks.cases += _check_cases(run, by_check.get(run.name, []))
    ran = {run.name for run in report.checks} | {NO_CHECK}
    for name, mine in by_check.items():
        if name not in ran:
            checks.cases += _source_cases(mine, name)
    uncounted = {id(g) for g in uncounted_gates(report)}
    gates = Suite("meshcert.certification.gates", junit_timestamp(report.started_at))
    for gate, classname in [(report.package_gate, "meshcert.certify.gates"),
                            *((g, "meshcert.certify.runtime") for g in report.runtime_gates)]:
        case = _gate_case(gate, classname, counted=id(gate) not in uncounted)
        if case is not None:
            gates.cases.append(case)
    return [checks, gates] if gates.cases else [checks]


def render_cert_junit(report: CertReport) -> str:
    return to_xml(f"meshcert certification: {report.model_id or report.input}",
                  cert_suites(report))

