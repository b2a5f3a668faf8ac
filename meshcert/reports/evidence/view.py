"""EvidenceReport -> a view-model the templates only lay out.

Nothing is recomputed from samples: values, intervals, verdicts and statuses are the report's.
The page status is the report's headline status (`meshcert.evidence.headline`): the decisions
the evidence supports lead the page; the Phase E gate is one of them only when it applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from meshcert.evidence.headline import headline_of, supported_decisions
from meshcert.evidence.method_text import ab_method, bootstrap_method_applies
from meshcert.evidence.report import (
    Comparison,
    Decision,
    Estimate,
    EvidenceReport,
    GateCheck,
    GateResult,
    Headline,
    RowStats,
    SourceRef,
)
from meshcert.reports import fmt, svg
from meshcert.reports.common import Fact, Stat
from meshcert.reports.evidence.mesh import mesh_html

VERDICT_ORDER = ("promote", "reject", "needs-parity", "needs-quality", "inconclusive",
                 "keep-evidence-gated")
VERDICT_TONES = {"promote": "ok", "reject": "bad", "inconclusive": "warn",
                 "needs-parity": "warn", "needs-quality": "warn",
                 "keep-evidence-gated": "accent"}
HEADLINES = {"passed": "Every decision passed", "failed": "The evidence says no",
             "incomplete": "Not every decision could be made"}
OUTCOME_TONES = {"passed": "passed", "failed": "failed", "undecided": "incomplete"}
COMPARATOR_TEXT = {">": ">", ">=": "\u2265", "<": "<", "<=": "\u2264"}
UNGROUPED = "other rows"


@dataclass(frozen=True)
class VerdictCount:
    verdict: str
    count: int


@dataclass(frozen=True)
class HeadlineRow:
    kind: str
    subject: str
    verdict: str
    outcome: str
    tone: str
    reason: str
    where: str


@dataclass(frozen=True)
class EvidenceBanner:
    status: str
    headline: str
    subject: str
    enforcement: str
    errors: list[str]
    stats: list[Stat]
    verdicts: list[VerdictCount]
    items: list[HeadlineRow]
    phase_e: str


@dataclass(frozen=True)
class GateRow:
    name: str
    title: str
    kind: str
    status: str
    value: str
    threshold: str
    threshold_note: str
    message: str
    rows: str


@dataclass(frozen=True)
class SourceGroup:
    file: str
    lines: str


@dataclass(frozen=True)
class RequiredRow:
    label: str
    title: str
    status: str
    required: bool
    n: str
    median: str
    spread: str
    pattern: str
    sources: list[SourceGroup]


@dataclass(frozen=True)
class TermRow:
    title: str
    coefficient: str
    median: str
    contribution: str
    share: str


@dataclass(frozen=True)
class EstimateView:
    total: str
    terms_chart: Markup
    shares_chart: Markup
    terms: list[TermRow]
    shared: list[Fact]


@dataclass(frozen=True)
class ComparisonRow:
    number: str  # "#2" when a decision has several comparisons (the chart's row labels)
    label: str
    baseline: str
    candidate: str
    n_baseline: int
    n_candidate: int
    baseline_us: str
    candidate_us: str
    speedup: str
    interval: str
    p_value: str
    clears: bool
    slower: bool


@dataclass(frozen=True)
class DecisionCard:
    policy: str
    title: str
    verdict: str
    phase: str
    kind: str
    value: str
    reason: str
    rule: str
    threshold: str
    facts: list[Fact]
    comparisons: list[ComparisonRow]
    chart: Markup
    missing_evidence: list[str]
    messages: list[str]
    sources: list[SourceGroup]
    review_required: bool


@dataclass(frozen=True)
class SpreadFigure:
    key: str
    title: str
    chart: Markup
    rows: int


@dataclass(frozen=True)
class MeasurementRow:
    title: str
    variant: str
    backend: str
    n: int
    median: str
    iqr: str
    range: str
    sample_source: str
    sources: list[SourceGroup]


@dataclass(frozen=True)
class InputRow:
    path: str
    formats: str
    rows: int
    variants: str
    backends: str
    commits: str
    sha256: str
    lines: str


@dataclass(frozen=True)
class SettingRow:
    name: str
    value: str
    source: str
    default: str
    meaning: str


@dataclass
class EvidenceView:
    title: str
    banner: EvidenceBanner
    gate_checks: list[GateRow]
    required_rows: list[RequiredRow]
    missing_rows: list[RequiredRow]
    estimate: EstimateView | None
    estimate_message: str
    overview_chart: Markup | None
    decisions: list[DecisionCard]
    omitted: list[Fact]
    spread_figures: list[SpreadFigure]
    measurements: list[MeasurementRow]
    inputs: list[InputRow]
    problems: list[str]
    settings: list[SettingRow]
    provenance: list[Fact]
    notes: list[str]
    mesh: Markup = Markup("")  # mesh-llm rows, history, A/B, KV dtype, promotion sections
    gate_applies: bool = True
    gate_applicability: str = ""


# ---------------------------------------------------------------------------------------------
def gate_status(gate: GateResult) -> str:
    """passed; failed when a hard gate failed; incomplete when only evidence is missing;
    not-applicable."""
    return gate.state


def _us(value: float | None) -> str:
    return fmt.number(value, 2, "us")


def source_groups(refs: Iterable[SourceRef]) -> list[SourceGroup]:
    """file -> its lines, in first-seen file order ("run-1.log: 12, 40")."""
    lines: dict[str, set[int]] = {}
    for ref in refs:
        bucket = lines.setdefault(ref.file, set())
        if ref.line is not None:
            bucket.add(ref.line)
    return [SourceGroup(file, ", ".join(str(n) for n in sorted(found)) if found else "")
            for file, found in lines.items()]


def _banner(report: EvidenceReport, head: Headline) -> EvidenceBanner:
    gate = report.gate
    counts: dict[str, int] = {}
    for item in head.items:
        counts[item.verdict] = counts.get(item.verdict, 0) + 1
    subject = "Benchmark evidence"
    if report.inputs.label:
        subject += f": {report.inputs.label}"
    if report.inputs.backend:
        subject += f" \u00b7 backend {report.inputs.backend}"
    if not gate.applies:
        enforcement = "Phase E MoE gate not applicable"
    elif gate.enforced:
        enforcement = "Phase E gate enforced: a failure exits 2 (GLM52_PHASE_E_REQUIRE_GATES)"
    else:
        enforcement = "Phase E gate advisory: not enforced (GLM52_PHASE_E_REQUIRE_GATES=0)"
    outcomes = {o: sum(i.outcome == o for i in head.items)
                for o in ("passed", "failed", "undecided")}
    stats = [
        Stat("decisions", str(len(head.items))),
        Stat("failed", str(outcomes["failed"]), "bad" if outcomes["failed"] else "ok"),
        Stat("undecided", str(outcomes["undecided"]),
             "warn" if outcomes["undecided"] else "ok"),
        Stat("input files", str(len(report.inputs.files))),
        Stat("rows read", str(sum(f.rows for f in report.inputs.files))),
    ]
    if gate.applies:
        present = len(gate.required_rows) - len(gate.missing_rows)
        checks_passed = sum(c.status == "passed" for c in gate.checks)
        evaluated = [c for c in gate.checks if c.status != "skipped"]
        stats += [Stat("Phase E rows", f"{present}/{len(gate.required_rows)}",
                       "bad" if gate.missing_rows else "ok"),
                  Stat("hard gates passed", f"{checks_passed}/{len(evaluated)}",
                       "bad" if checks_passed < len(evaluated) else "ok")]
    items = [HeadlineRow(kind=i.kind, subject=i.subject, verdict=i.verdict, outcome=i.outcome,
                         tone=OUTCOME_TONES[i.outcome], reason=i.reason, where=i.where or "")
             for i in head.items]
    return EvidenceBanner(
        status=head.status, headline=f"{HEADLINES[head.status]}: {head.summary}",
        subject=subject, enforcement=enforcement,
        errors=list(gate.errors) if gate.applies else [], stats=stats,
        verdicts=[VerdictCount(v, n) for v, n in counts.items()], items=items,
        phase_e=head.phase_e)


def _threshold_text(check: GateCheck) -> str:
    if check.threshold is None:
        return "\u2014"
    comparator = COMPARATOR_TEXT.get(check.comparator or "", check.comparator or "")
    value = fmt.percent(check.threshold, 0) if check.unit == "share" else f"{check.threshold:g}"
    return f"{comparator} {value}".strip()


def _value_text(check: GateCheck) -> str:
    if check.value is None:
        return "\u2014"
    if check.unit == "share":
        return fmt.percent(check.value)
    if check.unit == "ratio":
        return fmt.ratio(check.value)
    return f"{check.value:g}"


def _gate_rows(gate: GateResult) -> list[GateRow]:
    rows = []
    for c in gate.checks:
        note = c.threshold_env or ""
        if c.threshold_source and c.threshold_source not in ("fixed", "default"):
            note = f"{note} (from {c.threshold_source})".strip()
        rows.append(GateRow(
            name=c.name, title=c.title, kind=c.kind, status=c.status, value=_value_text(c),
            threshold=_threshold_text(c), threshold_note=note,
            message=c.error or c.message, rows=", ".join(c.rows)))
    return rows


def _required_rows(report: EvidenceReport) -> tuple[list[RequiredRow], list[RequiredRow]]:
    by_label = {c.label: c for c in report.components}
    required: list[RequiredRow] = []
    missing: list[RequiredRow] = []
    for label in report.gate.required_rows:
        c = by_label.get(label)
        gone = next((m for m in report.gate.missing_rows if m.label == label), None)
        if c is None:
            row = RequiredRow(label=label, title=gone.title if gone else label,
                              status="missing" if gone else "present", required=True, n="0",
                              median="\u2014", spread="\u2014",
                              pattern=gone.pattern if gone else "", sources=[])
        else:
            status = "missing" if gone else c.status
            row = RequiredRow(
                label=label, title=c.title, status=status, required=c.required, n=str(c.n),
                median=_us(c.median_us),
                spread=f"IQR {_us(c.iqr_us)}" if c.iqr_us is not None else "\u2014",
                pattern=gone.pattern if gone else c.pattern,
                sources=source_groups(c.sources))
        (missing if row.status == "missing" else required).append(row)
    return required, missing


SHARE_COLOURS = {"matmuls": "#0969da", "SwiGLU": "#bf8700", "route+sum": "#8250df"}


def _estimate(estimate: Estimate) -> EstimateView:
    segments = [svg.Segment(f"{t.title}" + (f" \u00d7{t.coefficient:g}"
                                             if t.coefficient != 1 else ""),
                            t.contribution_us, svg.PALETTE[i % len(svg.PALETTE)],
                            f"{t.contribution_us:,.2f} us", key=t.label)
                for i, t in enumerate(estimate.terms)]
    total = f"{estimate.total_us:,.2f} us"
    terms_chart = svg.stacked_bar(segments, title="Routed FFN decode estimate by term",
                                  label="estimate", total_text=total)
    share_segments = [svg.Segment(name, estimate.share_us.get(name, 0.0),
                                  SHARE_COLOURS.get(name, svg.PALETTE[i % len(svg.PALETTE)]),
                                  f"{estimate.share_us.get(name, 0.0):,.2f} us", key=name)
                      for i, name in enumerate(estimate.shares)]
    shares_chart = svg.stacked_bar(share_segments, title="Estimate shares", label="shares",
                                   total_text=total)
    shared = []
    if estimate.shared_expert_us is not None:
        shared.append(Fact("shared expert + final add", _us(estimate.shared_expert_us)))
    if estimate.routed_plus_shared_us is not None:
        shared.append(Fact("routed + shared", _us(estimate.routed_plus_shared_us)))
    if estimate.shared_expert_share is not None:
        shared.append(Fact("shared-expert share", fmt.percent(estimate.shared_expert_share),
                           note="of routed + shared"))
    return EstimateView(
        total=total, terms_chart=terms_chart, shares_chart=shares_chart,
        terms=[TermRow(t.title, f"\u00d7{t.coefficient:g}", _us(t.median_us),
                       _us(t.contribution_us), fmt.percent(t.share)) for t in estimate.terms],
        shared=shared)


def _side(rows: Sequence[object]) -> str:
    return " + ".join(getattr(r, "title", "?") for r in rows)


def _comparison(c: Comparison, number: str) -> ComparisonRow:
    interval = (f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"
                if c.ci_low is not None and c.ci_high is not None else "\u2014")
    return ComparisonRow(
        number=number, label=c.label, baseline=_side(c.baseline), candidate=_side(c.candidate),
        n_baseline=c.n_baseline, n_candidate=c.n_candidate, baseline_us=_us(c.baseline_us),
        candidate_us=_us(c.candidate_us), speedup=fmt.ratio(c.speedup), interval=interval,
        p_value="\u2014" if c.p_value is None else f"{c.p_value:.3g}",
        clears=c.clears_threshold, slower=c.significantly_slower)


def decision_chart(decision: Decision) -> Markup:
    tone = VERDICT_TONES.get(decision.verdict, "accent")
    many = len(decision.comparisons) > 1
    rows = [svg.Interval(label=f"#{i}" if many else "speedup",
                         estimate=c.speedup, low=c.ci_low, high=c.ci_high,
                         threshold=decision.threshold, tone=tone, key=c.label)
            for i, c in enumerate(decision.comparisons, 1)]
    return svg.forest_plot(rows, title=f"{decision.policy}: speedup with "
                                       f"{decision.comparisons[0].confidence:.0%} interval vs "
                                       f"threshold {decision.threshold:g}"
                           if decision.comparisons else f"{decision.policy}: no comparisons")


def _decision_facts(d: Decision) -> list[Fact]:
    facts = [Fact("parity", d.parity.status,
                  note=("rows without a parity case: " + ", ".join(d.parity.missing_rows))
                  if d.parity.missing_rows else "")]
    if d.quality is not None:
        q = d.quality
        detail = []
        if q.ppl_increase is not None:
            detail.append(f"PPL +{q.ppl_increase:.2%} (max {q.max_ppl_increase:.2%})")
        if q.kld_mean is not None:
            detail.append(f"KLD {q.kld_mean:.4f} (max {q.max_kld_mean:g})")
        if q.same_top_p_percent is not None:
            detail.append(f"same top token {q.same_top_p_percent:.1f}%")
        facts.append(Fact("quality", q.status, note="; ".join(detail)))
    if d.holm is not None:
        h = d.holm
        facts.append(Fact("multiple comparisons",
                          f"Holm rank {h.rank}/{h.m}, level {h.level:.4g}",
                          note=f"p {h.p_value:.3g}, adjusted {h.p_adjusted:.3g}"))
    facts.append(Fact("min samples", f"{d.min_samples} per side"))
    return facts


def _threshold(d: Decision) -> str:
    text = f"{d.threshold:g}"
    if d.threshold_env:
        text += f" ({d.threshold_env}, {d.threshold_source})"
    elif d.threshold_source != "fixed":
        text += f" ({d.threshold_source})"
    return text


def _decision(d: Decision) -> DecisionCard:
    refs = list(d.sources) + [s for c in d.comparisons for r in (*c.baseline, *c.candidate)
                              for s in r.sources]
    return DecisionCard(
        policy=d.policy, title=d.title, verdict=d.verdict, phase=d.phase, kind=d.kind,
        value=d.value or "", reason=d.reason, rule=d.rule, threshold=_threshold(d),
        facts=_decision_facts(d),
        comparisons=[_comparison(c, f"#{i}" if len(d.comparisons) > 1 else "")
                     for i, c in enumerate(d.comparisons, 1)],
        chart=decision_chart(d), missing_evidence=list(d.missing_evidence),
        messages=list(d.messages), sources=source_groups(refs),
        review_required=d.review_required)


def overview_chart(decisions: Sequence[Decision]) -> Markup | None:
    rows = []
    for d in decisions:
        many = len(d.comparisons) > 1
        for i, c in enumerate(d.comparisons, 1):
            rows.append(svg.Interval(
                label=f"{d.policy} #{i}" if many else d.policy,
                estimate=c.speedup, low=c.ci_low, high=c.ci_high, threshold=d.threshold,
                tone=VERDICT_TONES.get(d.verdict, "accent"), key=f"{d.policy}:{c.label}"))
    if not rows:
        return None
    return svg.forest_plot(rows, title="Every comparison: speedup, interval and threshold")


def _row_title(row: RowStats, titles: dict[str, str]) -> str:
    base = titles.get(row.labels[0], row.labels[0]) if row.labels else f"{row.op}({row.params})"
    return base if row.variant == "default" else f"{base} \u00b7 {row.variant}"


def _spread_note(row: RowStats) -> str:
    """'n=5 · IQR 1.4%': the spread stays readable even where the box is a sliver."""
    if row.iqr_us is not None and row.median_us:
        return f"n={row.n} \u00b7 IQR {row.iqr_us / row.median_us:.1%}"
    return f"n={row.n}"


def spread_figures(report: EvidenceReport) -> list[SpreadFigure]:
    """One chart per group of the rules: each measured row (per variant) with median, IQR, range."""
    groups = {c.label: c.group or UNGROUPED for c in report.components}
    titles = {c.label: c.title for c in report.components}
    grouped: dict[str, list[RowStats]] = {}
    for row in report.rows:
        group = groups.get(row.labels[0], UNGROUPED) if row.labels else UNGROUPED
        grouped.setdefault(group, []).append(row)
    figures = []
    for group, rows in grouped.items():
        variants = list(dict.fromkeys(r.variant for r in rows))
        spreads = [svg.Spread(
            label=_row_title(r, titles), median=r.median_us, q1=r.q1_us, q3=r.q3_us,
            low=r.min_us, high=r.max_us,
            tone=svg.PALETTE[variants.index(r.variant) % len(svg.PALETTE)],
            note=_spread_note(r), key=f"{r.op}({r.params})#{r.variant}") for r in rows]
        figures.append(SpreadFigure(
            key=group, title=f"{group}: us/run per variant", rows=len(rows),
            chart=svg.spread_plot(spreads, title=f"{group}: us/run per variant (median, "
                                                 "interquartile range, min to max)")))
    return figures


def _measurements(report: EvidenceReport) -> list[MeasurementRow]:
    titles = {c.label: c.title for c in report.components}
    return [MeasurementRow(
        title=_row_title(r, titles), variant=r.variant, backend=r.backend or "\u2014", n=r.n,
        median=_us(r.median_us),
        iqr=f"{_us(r.q1_us)} \u2013 {_us(r.q3_us)}" if r.q1_us is not None else "\u2014",
        range=f"{_us(r.min_us)} \u2013 {_us(r.max_us)}" if r.min_us is not None else "\u2014",
        sample_source=r.sample_source, sources=source_groups(r.sources)) for r in report.rows]


def _inputs(report: EvidenceReport) -> list[InputRow]:
    return [InputRow(
        path=f.path, formats=", ".join(f.formats), rows=f.rows, variants=", ".join(f.variants),
        backends=", ".join(f.backends), commits=", ".join(f.build_commits),
        sha256=f.sha256 or "\u2014", lines=fmt.number(f.lines)) for f in report.inputs.files]


def _provenance(report: EvidenceReport) -> list[Fact]:
    m = report.method
    facts = [
        Fact("tool", f"{report.tool.name} {report.tool.version}"),
        Fact("generated", report.generated_at or "\u2014", mono=bool(report.generated_at)),
        Fact("backend evaluated", report.inputs.backend or "\u2014"),
    ]
    ab = ab_method(report)
    if bootstrap_method_applies(report) or ab is None:
        facts += [
            Fact("statistics", m.name, note=m.description),
            Fact("confidence", f"{m.confidence:.0%}",
                 note=f"{m.replicates:,} bootstrap replicates, seed {m.seed}"),
            Fact("minimum samples", f"{m.min_samples} per side", note=m.sample_rule),
            Fact("multiple comparisons", m.multiple_comparisons,
                 note=f"one-sided alpha {m.alpha_one_sided:g}"),
            Fact("quality limits", f"PPL +{report.quality_limits.max_ppl_increase:.2%}, "
                                   f"KLD {report.quality_limits.max_kld_mean:g}",
                 note=f"{report.quality_limits.baseline} \u2192 "
                      f"{report.quality_limits.candidate}")]
    if ab is not None:
        facts.append(Fact("A/B statistics", "exact sign-flip test, Holm", note=ab))
    facts += [Fact(f"backend {b.name or '?'}", f"{b.perf_samples} perf samples",
                   note="evaluated" if b.evaluated else "") for b in report.inputs.backends]
    if report.package_check is not None:
        p = report.package_check
        facts.append(Fact("package check", p.status, note=f"{p.rule}: {p.package}"))
    return facts


def build_evidence_view(report: EvidenceReport) -> EvidenceView:
    head = headline_of(report)
    required, missing = _required_rows(report)
    estimate = report.estimate or report.gate.estimate
    ordered = supported_decisions(report)  # the rules' order, as the report lists them
    return EvidenceView(
        title=f"{head.status.upper()}: {head.summary}",
        banner=_banner(report, head),
        gate_checks=_gate_rows(report.gate),
        required_rows=required, missing_rows=missing,
        estimate=_estimate(estimate) if estimate is not None else None,
        estimate_message=report.estimate_message or report.gate.estimate_message or "",
        overview_chart=overview_chart(ordered),
        decisions=[_decision(d) for d in ordered],
        omitted=[Fact(o.policy, o.reason) for o in report.omitted_decisions
                 if report.gate.applies or ordered],
        spread_figures=spread_figures(report),
        measurements=_measurements(report),
        inputs=_inputs(report), problems=list(report.inputs.problems),
        settings=[SettingRow(s.name, s.text, s.source, s.default, s.meaning)
                  for s in report.settings],
        provenance=_provenance(report),
        notes=[*report.inputs.notes, *report.notes],
        mesh=mesh_html(report),
        gate_applies=report.gate.applies,
        gate_applicability=report.gate.applicability,
    )
