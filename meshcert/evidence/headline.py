"""The headline of an evidence report: the decisions its evidence supports, and one verdict.

    headline = build_headline(report)   # Headline(status, summary, phase_e, items)

Items, in this order: the Phase E MoE gate (only when it applies), the rules' decisions whose
rows the evidence holds (all of them when the gate applies), A/B comparisons, KV-cache dtypes,
history setups, mesh-llm promotions, the package rule. Each keeps its own verdict and gets an
outcome: `failed` when the evidence says no (a failed gate, `reject`, a performance regression
or correctness failure, a broken package rule), `undecided` when it cannot say (an incomplete
gate, `inconclusive`, `needs-parity`/`needs-quality`, an insufficient baseline, an unchecked
rule), else `passed`. The overall status: failed if any item failed, else incomplete if any is
undecided or there is no item at all (nothing decided is not a pass), else passed.

Every renderer states `headline.status`; none recomputes it differently.
"""

from __future__ import annotations

from meshcert.evidence.report import (
    Decision,
    EvidenceReport,
    Headline,
    HeadlineItem,
    HistoryVerdict,
    Outcome,
    OverallStatus,
    PromotionCheck,
)

VERDICT_OUTCOME: dict[str, Outcome] = {
    "promote": "passed", "keep-evidence-gated": "passed", "reject": "failed",
    "inconclusive": "undecided", "needs-parity": "undecided", "needs-quality": "undecided",
    "undecided": "undecided", "no-practical-change": "passed"}
HISTORY_OUTCOME: dict[str, Outcome] = {
    "pass": "passed", "performance-regression": "failed", "correctness-failure": "failed",
    "insufficient-baseline": "undecided"}
GATE_OUTCOME: dict[str, Outcome] = {"passed": "passed", "failed": "failed",
                                    "incomplete": "undecided"}
PACKAGE_OUTCOME: dict[str, Outcome] = {"passed": "passed", "failed": "failed",
                                       "unknown": "undecided"}


def _has_rows(d: Decision) -> bool:
    return any(r.status == "present" for c in d.comparisons for r in (*c.baseline, *c.candidate))


def _gate_item(report: EvidenceReport) -> list[HeadlineItem]:
    gate = report.gate
    if not gate.applies:
        return []
    state = gate.state
    if state == "passed":
        reason = f"{len(gate.required_rows)} required rows present, every hard gate passed"
    elif gate.errors:  # the failed gates first: they decide; missing rows follow
        failed = [c.error for c in gate.checks if c.status == "failed" and c.error]
        rest = [e for e in gate.errors if e not in failed]
        reason = "; ".join(e.removeprefix("error: ") for e in failed + rest)
    else:
        reason = f"{len(gate.missing_rows)} of {len(gate.required_rows)} required rows missing"
    mode = "enforced" if gate.enforced else "advisory"
    return [HeadlineItem(kind="phase-e-gate", subject=f"Phase E MoE gate ({mode})",
                         verdict=state, outcome=GATE_OUTCOME[state], reason=reason)]


def supported_decisions(report: EvidenceReport) -> list[Decision]:
    """The rules' decisions the evidence speaks to: all when the Phase E gate applies, else
    those with a row present (mesh-llm evidence leaves the GLM decisions out)."""
    return [d for d in report.decisions if report.gate.applies or _has_rows(d)]


def _decision_items(report: EvidenceReport) -> list[HeadlineItem]:
    return [HeadlineItem(kind="decision", subject=d.policy + (f" = {d.value}" if d.value else ""),
                         verdict=d.verdict, outcome=VERDICT_OUTCOME[d.verdict], reason=d.reason,
                         where=_first_source(d))
            for d in supported_decisions(report)]


def _first_source(d: Decision) -> str | None:
    for s in d.sources:
        return f"{s.file}:{s.line}" if s.line is not None else s.file
    return None


SETUP_KEYS = ("platform", "model", "arm")


def history_setup(h: HistoryVerdict) -> str:
    """`h100/qwen3-8b/mesh c=1`: the cohort's platform, model, arm and concurrency (its
    key's first 12 characters when the setup names none)."""
    named = "/".join(str(h.setup[k]) for k in SETUP_KEYS if h.setup.get(k))
    if "concurrency" in h.setup:
        named += f" c={h.setup['concurrency']}"
    return named.strip() or h.cohort_key[:12]


def _history_item(h: HistoryVerdict) -> HeadlineItem:
    setup = history_setup(h)
    changed = [f"{m.metric} {m.change:+.1%}" for m in h.metrics
               if m.change is not None and (m.regressed or h.history_class != "pass")]
    reason = (f"{h.baseline_n} baseline run(s)" + (f"; {', '.join(changed)}" if changed else ""))
    return HeadlineItem(kind="history", subject=f"history {setup}", verdict=h.history_class,
                        outcome=HISTORY_OUTCOME[h.history_class], reason=reason,
                        where=f"{h.file}:{h.line}")


def _promotion_item(p: PromotionCheck) -> HeadlineItem:
    same = "the same arm" if p.mesh_llm_winner == p.meshcert_candidate else "another arm"
    reason = (f"mesh-llm winner {p.mesh_llm_winner or 'none'}; meshcert candidate "
              f"{p.meshcert_candidate or 'none'} ({same}); "
              f"{'agree' if p.agree else 'disagree'}")
    if p.notes:
        reason += ": " + "; ".join(p.notes)
    return HeadlineItem(kind="promotion", subject=f"promotion {p.platform}/{p.model}",
                        verdict=p.meshcert_verdict, outcome=VERDICT_OUTCOME[p.meshcert_verdict],
                        reason=reason, where=p.file)


def headline_items(report: EvidenceReport) -> list[HeadlineItem]:
    items = _gate_item(report) + _decision_items(report)
    items += [HeadlineItem(kind="ab", subject=f"A/B {d.comparison}", verdict=d.verdict,
                           outcome=VERDICT_OUTCOME[d.verdict], reason=d.reason, where=d.file)
              for d in report.ab_decisions]
    items += [HeadlineItem(kind="kv-dtype", subject=f"KV dtype {d.dtype} vs {d.baseline}",
                           verdict=d.verdict, outcome=VERDICT_OUTCOME[d.verdict],
                           reason=d.reason, where=d.sources[0] if d.sources else None)
              for d in report.kv_dtype_decisions]
    items += [_history_item(h) for h in report.history]
    items += [_promotion_item(p) for p in report.promotion_checks]
    pc = report.package_check
    if pc is not None and pc.status in PACKAGE_OUTCOME:
        items.append(HeadlineItem(kind="package", subject=f"package rule {pc.rule}",
                                  verdict=pc.status, outcome=PACKAGE_OUTCOME[pc.status],
                                  reason="; ".join(pc.messages), where=pc.package))
    return items


def overall_status(items: list[HeadlineItem]) -> OverallStatus:
    if any(i.outcome == "failed" for i in items):
        return "failed"
    if not items or any(i.outcome == "undecided" for i in items):
        return "incomplete"
    return "passed"


def _summary(items: list[HeadlineItem]) -> str:
    if not items:
        return "nothing decided: the evidence supports no decision"
    counts = {o: sum(i.outcome == o for i in items) for o in ("failed", "undecided", "passed")}
    return f"{len(items)} decision(s): " + ", ".join(f"{n} {o}" for o, n in counts.items()
                                                      if n)


def build_headline(report: EvidenceReport) -> Headline:
    items = headline_items(report)
    gate = report.gate
    phase_e = (f"applies: {gate.applicability}" if gate.applies
               else gate.applicability or "not applicable")
    return Headline(status=overall_status(items), summary=_summary(items), phase_e=phase_e,
                    items=items)


def headline_of(report: EvidenceReport) -> Headline:
    """The report's headline (built for a report written before headlines existed)."""
    return report.headline if report.headline is not None else build_headline(report)
