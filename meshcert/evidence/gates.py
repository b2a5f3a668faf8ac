"""The Phase E MoE gate, as `glm52-phase-e-moe-report.sh` specifies it, from the rules' tables.

`evaluate_gate` is pure: it reads the RuleTable (`matching.resolve_rules`: every label resolved
once) and returns a GateResult (every gate with value, threshold, status and message; the
missing rows; the estimate or why there is none). The CLI decides the exit code.

Values are computed from row medians (the script had one mean per row; with repeated runs the
median of the samples stands in for it). Unlike the script, which stopped at the first failure,
every gate whose rows are present is evaluated, so one run lists every problem: the
`error: missing Phase E MoE gate rows: ...` line comes first, then one `error: ...` line per
failed gate in the order of the rules. The exit code is the same (2 on any failure when enforced).

The gate applies when the evidence holds a row it reads (a required row, a row of a hard gate or
of the estimate, a dispatch check's run) or when it is asked for (GLM52_PHASE_E_REQUIRE_GATES
non-zero, or `force`, the CLI's --phase-e). Otherwise it is "not applicable": every check is
skipped with that reason, no row counts as missing, and it is out of the report's headline
(mesh-llm evidence, a Phase D run, the rows of a user's decision rules are not judged by the
GLM MoE gate).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from meshcert.evidence.report import Estimate, EstimateTerm, GateCheck, GateResult, MissingRow
from meshcert.evidence.rule_table import RuleTable
from meshcert.evidence.rules import (
    ESTIMATE_MISSING_MESSAGE,
    KERNEL_SWEEP,
    ROUTED_WHOLE_GRAPH_SANITY,
    DispatchCheckSpec,
    GateSpec,
    Terms,
)
from meshcert.evidence.settings import EvidenceSettings

MISSING_ROWS_PREFIX = "error: missing Phase E MoE gate rows: "

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def _sum(t: RuleTable, terms: Terms) -> float | None:
    total = 0.0
    for label, coefficient in terms:
        median = t.labels[label].median
        if median is None:
            return None
        total += coefficient * median
    return total


def compute_estimate(t: RuleTable) -> Estimate | None:
    """The routed FFN decode estimate, or None when one of its rows is missing."""
    rules = t.rules
    medians = {label: t.labels[label].median for label, _ in rules.estimate_terms}
    if any(m is None for m in medians.values()):
        return None
    contributions = {label: c * (medians[label] or 0.0) for label, c in rules.estimate_terms}
    total = sum(contributions.values())
    terms = [EstimateTerm(label=label, title=t.titles.get(label, label), coefficient=c,
                          median_us=medians[label] or 0.0, contribution_us=contributions[label],
                          share=contributions[label] / total if total else 0.0)
             for label, c in rules.estimate_terms]
    share_us = {name: sum(contributions[lbl] for lbl in labels)
                for name, labels in rules.estimate_shares.items()}
    shared = t.labels[rules.shared_expert_row].median
    both = total + shared if shared is not None else None
    return Estimate(
        total_us=total, terms=terms, share_us=share_us,
        shares={k: (v / total if total else 0.0) for k, v in share_us.items()},
        shared_expert_us=shared, routed_plus_shared_us=both,
        shared_expert_share=shared / both if shared is not None and both else None)


def _fmt(value: float, unit: str) -> str:
    return f"{value:.1%}" if unit == "share" else f"{value:.3f}x"


def _threshold(spec: GateSpec, settings: EvidenceSettings) -> tuple[float, str]:
    if spec.threshold_env is not None:
        return settings.get(spec.threshold_env), settings.source(spec.threshold_env)
    assert spec.threshold is not None  # a gate without threshold_env states its threshold
    return spec.threshold, "fixed"


def evaluate_ratio_gate(t: RuleTable, spec: GateSpec, settings: EvidenceSettings) -> GateCheck:
    rows = list(dict.fromkeys(lbl for lbl, _ in spec.numerator + spec.denominator))
    threshold, source = _threshold(spec, settings)
    base: dict[str, Any] = {"name": spec.name, "title": spec.title, "kind": spec.kind, "rows": rows,
            "threshold": threshold, "comparator": spec.comparator, "unit": spec.unit,
            "threshold_env": spec.threshold_env, "threshold_source": source}
    if spec.when == "sweep" and not settings.kernel_sweep:
        return GateCheck(**base, status="skipped", message=f"kernel sweep off ({KERNEL_SWEEP}=0)")
    if spec.when == "sanity":
        if not settings.sanity:
            return GateCheck(**base, status="skipped",
                             message=f"{ROUTED_WHOLE_GRAPH_SANITY}=0")
        if any(t.labels[lbl].median is None for lbl, _ in spec.numerator):
            return GateCheck(**base, status="skipped", message="optional sanity row absent")
    num, den = _sum(t, spec.numerator), _sum(t, spec.denominator)
    if num is None or den is None or den == 0:
        absent = [t.titles.get(lbl, lbl) for lbl in rows if t.labels[lbl].median is None]
        return GateCheck(**base, status="missing",
                         message="missing rows: " + ", ".join(absent or ["zero denominator"]))
    value = num / den
    if _OPS[spec.comparator](value, threshold):
        shown = f"{threshold:.0%}" if spec.unit == "share" else f"{threshold:g}"
        return GateCheck(**base, status="passed", value=value,
                         message=f"{_fmt(value, spec.unit)} {spec.comparator} {shown}")
    text = spec.fail.format(value=value, threshold=threshold, env=spec.threshold_env)
    return GateCheck(**base, status="failed", value=value, message=text, error=f"error: {text}")


def evaluate_dispatch(t: RuleTable, spec: DispatchCheckSpec,
                      settings: EvidenceSettings) -> GateCheck:
    base: dict[str, Any] = {"name": spec.label, "title": spec.title, "kind": "dispatch",
                            "unit": "check", "rows": [spec.label]}
    if not settings.kernel_sweep:
        return GateCheck(**base, status="skipped", message=f"kernel sweep off ({KERNEL_SWEEP}=0)")
    found = t.dispatch[spec.label]
    if not found.present:
        return GateCheck(**base, status="missing", message=f"no rows in variant {spec.variant}")
    if found.problems:
        text = f"{spec.title}: " + "; ".join(found.problems)
        return GateCheck(**base, status="failed", message=text, error=f"error: {text}")
    tp, tt = spec.tests
    bp, bt = spec.backends
    return GateCheck(**base, status="passed",
                     message=f"dispatched {found.kernel}; {tp}/{tt} tests passed; "
                             f"{bp}/{bt} backends passed")


NOT_APPLICABLE = ("not applicable: the evidence holds no Phase E row (set "
                  "GLM52_PHASE_E_REQUIRE_GATES=1 or pass --phase-e to require the gate)")


def phase_e_labels(t: RuleTable) -> tuple[str, ...]:
    """Every row label the Phase E gate reads: required (sweep included), gated, estimated."""
    rules = t.rules
    labels = list(t.required[True])
    for g in rules.gates:
        labels += [lbl for lbl, _ in (*g.numerator, *g.denominator)]
    labels += [lbl for lbl, _ in rules.estimate_terms]
    labels.append(rules.shared_expert_row)
    return tuple(dict.fromkeys(labels))


def applicability(t: RuleTable, settings: EvidenceSettings, force: bool = False) -> str | None:
    """Why the Phase E gate applies (None: it does not)."""
    if settings.require_gates:
        return "required (GLM52_PHASE_E_REQUIRE_GATES / --require-gates)"
    if force:
        return "asked for (--phase-e)"
    found = [t.titles[lbl] for lbl in phase_e_labels(t) if t.present.get(lbl, False)]
    if found:
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        return "the evidence holds Phase E rows: " + ", ".join(found[:3]) + more
    return None


def _not_applicable(t: RuleTable, settings: EvidenceSettings) -> GateResult:
    rules = t.rules
    checks = [GateCheck(name=g.name, title=g.title, kind=g.kind, status="skipped",
                        message=NOT_APPLICABLE, comparator=g.comparator, unit=g.unit,
                        threshold_env=g.threshold_env,
                        rows=list(dict.fromkeys(lbl for lbl, _ in g.numerator + g.denominator)))
              for g in rules.gates]
    checks += [GateCheck(name=d.label, title=d.title, kind="dispatch", status="skipped",
                         unit="check", rows=[d.label], message=NOT_APPLICABLE)
               for d in rules.dispatch_checks]
    return GateResult(
        applies=False, applicability=NOT_APPLICABLE, passed=False, enforced=False,
        kernel_sweep=settings.kernel_sweep, sanity=settings.sanity,
        required_rows=list(t.required[settings.kernel_sweep]), checks=checks,
        estimate=None, estimate_message=ESTIMATE_MISSING_MESSAGE)


def evaluate_gate(t: RuleTable, settings: EvidenceSettings, *, force: bool = False) -> GateResult:
    """Required rows, the estimate and every hard gate (see the module docstring)."""
    why = applicability(t, settings, force)
    if why is None:
        return _not_applicable(t, settings)
    rules = t.rules
    required = list(t.required[settings.kernel_sweep])
    missing = [label for label in required if not t.present[label]]
    checks = [evaluate_ratio_gate(t, g, settings) for g in rules.gates]
    checks += [evaluate_dispatch(t, d, settings) for d in rules.dispatch_checks]
    errors: list[str] = []
    if missing:
        errors.append(MISSING_ROWS_PREFIX + ", ".join(t.titles[lbl] for lbl in missing))
    errors += [c.error for c in checks if c.status == "failed" and c.error]
    estimate = compute_estimate(t)
    return GateResult(
        applies=True, applicability=why, passed=not errors, enforced=settings.require_gates,
        kernel_sweep=settings.kernel_sweep, sanity=settings.sanity, required_rows=required,
        missing_rows=[MissingRow(label=lbl, title=t.titles[lbl], pattern=t.patterns[lbl])
                      for lbl in missing],
        checks=checks, errors=errors, estimate=estimate,
        estimate_message=None if estimate is not None else ESTIMATE_MISSING_MESSAGE)
