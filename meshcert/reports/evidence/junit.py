"""JUnit XML for an evidence report.

Gate suite: `required_rows` (failure when any is missing) and one testcase per hard gate:
failed -> <failure>; missing (its rows are absent, so it could not be evaluated) -> <failure>
when the gate is enforced (a required gate fails on it, exit 2), <skipped/> when advisory;
skipped (not enabled) -> <skipped/>. Missing evidence is never an <error>, which CI dashboards
show as a broken test infrastructure. Decisions suite: one testcase per decision; a verdict is
a result, not a test failure, so promote / reject / keep-evidence-gated pass (verdict and reason
in <system-out>), while inconclusive / needs-parity / needs-quality are <skipped/> with the
missing evidence (the decision could not be made); omitted decisions are skipped too, and so
is a decision of the rules the evidence does not speak to (none of its rows present and the Phase E
gate not applying): every other format leaves it out, so it claims no verdict here either.

Headline suite (first): one testcase `verdict` stating the report's overall status (the
headline every format states): a <failure> when failed (its message lists the failed items),
<skipped/> when incomplete, a pass when passed; one testcase per headline item likewise (its
outcome). The suite's `verdict` property is the status. When the Phase E gate does not apply
its testcases are <skipped/> with the reason.
"""

from __future__ import annotations

from meshcert.evidence.headline import headline_of, supported_decisions
from meshcert.evidence.report import (
    Decision,
    EvidenceReport,
    GateCheck,
    GateResult,
    Headline,
    HeadlineItem,
)
from meshcert.reports.junitxml import Case, Suite, junit_timestamp, to_xml

UNDECIDED = frozenset({"inconclusive", "needs-parity", "needs-quality"})


def _rows_case(gate: GateResult) -> Case:
    case = Case(name="required_rows", classname="meshcert.evidence.gate")
    if not gate.applies:
        case.outcome, case.message = "skipped", gate.applicability
    elif gate.missing_rows:
        case.outcome, case.type = "failure", "meshcert.missing_rows"
        case.message = next((e for e in gate.errors if "missing" in e),
                            f"{len(gate.missing_rows)} required row(s) missing")
        case.body = "\n".join(f"missing: {m.title}: {m.pattern}" for m in gate.missing_rows)
    else:
        case.system_out = f"{len(gate.required_rows)} required rows present"
    return case


def _check_case(check: GateCheck, enforced: bool) -> Case:
    case = Case(name=check.name, classname=f"meshcert.evidence.gate.{check.kind}")
    value = "n/a" if check.value is None else f"{check.value:.4f}"
    threshold = "n/a" if check.threshold is None else f"{check.threshold:g}"
    env = f" ({check.threshold_env})" if check.threshold_env else ""
    detail = (f"{check.title}: value {value} {check.comparator or ''} threshold {threshold}"
              f"{env}; rows: {', '.join(check.rows) or 'none'}")
    if check.status == "failed":
        case.outcome, case.type = "failure", "meshcert.gate_failed"
        case.message = check.error or check.message
        case.body = detail
    elif check.status == "missing" and enforced:
        case.outcome, case.type = "failure", "meshcert.missing_evidence"
        case.message = check.message or "rows missing"
        case.body = detail
    elif check.status == "missing":
        case.outcome = "skipped"
        case.message = f"not evaluated: {check.message or 'rows missing'}"
    elif check.status == "skipped":
        case.outcome, case.message = "skipped", check.message or "not enabled"
    else:
        case.system_out = f"{check.message}\n{detail}"
    return case


def _decision_case(d: Decision) -> Case:
    case = Case(name=d.policy, classname=f"meshcert.evidence.decisions.phase_{d.phase}")
    lines = [f"verdict: {d.verdict}", f"reason: {d.reason}", f"rule: {d.rule}"]
    for c in d.comparisons:
        interval = (f" [{c.ci_low:.4f}, {c.ci_high:.4f}]"
                    if c.ci_low is not None and c.ci_high is not None else "")
        speedup = f"{c.speedup:.4f}" if c.speedup is not None else "n/a"
        lines.append(f"{c.label}: speedup {speedup}{interval}, threshold {d.threshold:g}, "
                     f"samples {c.n_baseline}/{c.n_candidate}")
    lines += [f"missing: {m}" for m in d.missing_evidence]
    if d.verdict in UNDECIDED:
        case.outcome = "skipped"
        case.message = f"{d.verdict}: " + ("; ".join(d.missing_evidence) or d.reason)
    case.system_out = "\n".join(lines)
    return case


def _unsupported_case(d: Decision) -> Case:
    return Case(name=d.policy, classname="meshcert.evidence.decisions.omitted", outcome="skipped",
                message=f"none of its Phase {d.phase} rows are present (the Phase E gate does "
                        "not apply)")


def _verdict_case(head: Headline) -> Case:
    case = Case(name="verdict", classname="meshcert.evidence.headline")
    failed = [i for i in head.items if i.outcome == "failed"]
    if head.status == "failed":
        case.outcome, case.type = "failure", "meshcert.evidence_failed"
        case.message = "failed: " + "; ".join(f"{i.subject} {i.verdict}" for i in failed)
    elif head.status == "incomplete":
        case.outcome, case.message = "skipped", f"incomplete: {head.summary}"
    case.system_out = f"verdict: {head.status}\n{head.summary}\nPhase E MoE gate: {head.phase_e}"
    return case


def _item_case(item: HeadlineItem, index: int) -> Case:
    case = Case(name=f"{index:02d} {item.subject}", classname=f"meshcert.evidence.headline."
                f"{item.kind}")
    text = f"{item.verdict}: {item.reason}" if item.reason else item.verdict
    if item.outcome == "failed":
        case.outcome, case.type, case.message = "failure", "meshcert.decision_failed", text
    elif item.outcome == "undecided":
        case.outcome, case.message = "skipped", text
    case.system_out = text + (f"\nevidence: {item.where}" if item.where else "")
    return case


def headline_suite(report: EvidenceReport) -> Suite:
    head = headline_of(report)
    suite = Suite("meshcert.evidence.headline", junit_timestamp(report.generated_at),
                  {"verdict": head.status, "summary": head.summary})
    suite.cases = [_verdict_case(head), *(_item_case(i, n)
                                          for n, i in enumerate(head.items, 1))]
    return suite


def evidence_suites(report: EvidenceReport) -> list[Suite]:
    stamp = junit_timestamp(report.generated_at)
    gate = report.gate
    properties = {"gate_passed": str(gate.passed).lower(),
                  "gate_applies": str(gate.applies).lower(),
                  "enforced": str(gate.enforced).lower(),
                  "kernel_sweep": str(gate.kernel_sweep).lower(),
                  "tool": f"{report.tool.name} {report.tool.version}"}
    if report.inputs.backend:
        properties["backend"] = report.inputs.backend
    gate_suite = Suite("meshcert.evidence.gate", stamp, properties)
    gate_suite.cases = [_rows_case(gate), *(_check_case(c, gate.enforced) for c in gate.checks)]
    decisions = Suite("meshcert.evidence.decisions", stamp)
    shown = {id(d) for d in supported_decisions(report)}
    decisions.cases = [_decision_case(d) if id(d) in shown else _unsupported_case(d)
                       for d in report.decisions]
    decisions.cases += [Case(name=o.policy, classname="meshcert.evidence.decisions.omitted",
                             outcome="skipped", message=o.reason)
                        for o in report.omitted_decisions]
    return [headline_suite(report), gate_suite, decisions]


def render_evidence_junit(report: EvidenceReport) -> str:
    return to_xml("meshcert evidence", evidence_suites(report))
