"""Verdicts per policy, phase default and quant recipe, from the decision table of the rules.

Order of the rules (first that applies wins), with `min_samples` the rules' sample policy
(`Rules.min_samples`, 3 unless a decision rules file's `[sample_policy]` says otherwise; the A/B
rules read the same setting):
1. `reject` when parity failed for a row involved (a correctness failure does not depend on
   how many timing samples there are);
2. `inconclusive` when any row of either side has fewer than `min_samples` samples (a missing
   row has 0); the missing evidence says how many more samples of which row are needed;
3. `reject` when a comparison's 95% interval lies wholly below 1.0 (significantly slower);
4. the threshold is "cleared" when the Holm-adjusted one-sided p of "speedup <= threshold" is
   below alpha = 0.025 (see `stats.py`; for one decision alone this is the lower end of the 95%
   interval lying above the threshold). A decision with several comparisons clears only if all
   do: its p is the largest of theirs (intersection-union test);
5. review tripwires (`moe_merged_shared_gate_up`, `moe_weighted_down`): the *gate* treats them
   as tripwires (exit 2, "revisit ..."), the *decision* follows its rule: cleared with
   parity -> `promote`, and the reason carries the rule's "revisit ... policy" message; the
   message is also given when the point estimate alone is above the threshold (as the gate
   does), whatever the verdict;
6. otherwise `promote` when cleared, parity passed for every row involved and (quant recipes)
   quality is within limits; `needs-parity` / `needs-quality` when cleared and only that
   evidence is missing; else `keep-evidence-gated`.
Holm family: the decisions of one report that reach step 4 (enough samples, no parity failure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from meshcert.evidence.report import (
    Comparison,
    Decision,
    HolmInfo,
    OmittedDecision,
    ParityCase,
    ParityEvidence,
    QualityEvidence,
    RowRef,
    SourceRef,
    ThresholdSource,
    Verdict,
)
from meshcert.evidence.rule_table import ResolvedRow, RuleTable
from meshcert.evidence.rules import (
    ALPHA_ONE_SIDED,
    MIN_SAMPLES,
    DecisionSpec,
    QualitySpec,
    Rules,
)
from meshcert.evidence.settings import EvidenceSettings
from meshcert.evidence.stats import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    RatioEstimate,
    holm,
    ratio_interval,
)


@dataclass(frozen=True)
class DecisionOptions:
    """CLI-overridable knobs (None: the rules' default)."""

    quality_baseline: str | None = None
    quality_candidate: str | None = None
    max_ppl_increase: float | None = None
    max_kld_mean: float | None = None
    seed: int = DEFAULT_SEED
    replicates: int = DEFAULT_REPLICATES
    min_samples: int | None = None  # None: the rules' (decision rules file) sample policy
    alpha: float = ALPHA_ONE_SIDED

    @property
    def needed(self) -> int:
        """Samples each side needs (after `for_rules`: the rules' policy unless overridden)."""
        return MIN_SAMPLES if self.min_samples is None else self.min_samples

    def for_rules(self, rules: Rules) -> DecisionOptions:
        """These options with the rules' minimum-sample policy filled in (one setting read by
        the Phase E/D decisions and the A/B rules alike)."""
        return self if self.min_samples is not None else replace(
            self, min_samples=rules.min_samples)

    def quality_for(self, spec: QualitySpec) -> QualitySpec:
        return QualitySpec(
            self.quality_baseline or spec.baseline, self.quality_candidate or spec.candidate,
            spec.max_ppl_increase if self.max_ppl_increase is None else self.max_ppl_increase,
            spec.max_kld_mean if self.max_kld_mean is None else self.max_kld_mean)


@dataclass
class _Draft:
    """A decision before Holm: its comparisons, bootstrap results and evidence."""

    spec: DecisionSpec
    threshold: float
    threshold_source: ThresholdSource
    comparisons: list[Comparison]
    estimates: list[RatioEstimate | None]
    matches: dict[str, ResolvedRow]
    parity: ParityEvidence
    quality: QualityEvidence | None
    shortfalls: list[tuple[str, int]]  # (row label, samples it has)

    @property
    def testable(self) -> bool:
        return (not self.shortfalls and self.parity.status != "failed"
                and all(e is not None for e in self.estimates))

    @property
    def p_value(self) -> float:
        return max(e.p_value for e in self.estimates if e is not None)


def _src(rec: dict[str, Any]) -> SourceRef:
    line = rec.get("source_line")
    return SourceRef(file=str(rec.get("source_file") or ""),
                     line=int(line) if line is not None else None)


def _row_ref(m: ResolvedRow) -> RowRef:
    s = m.samples
    return RowRef(label=m.spec.label, title=m.spec.title, status=m.status,
                  backend=s.key.backend if s else None, op=m.spec.op,
                  params=s.key.params if s else None, variant=m.spec.variant, n=m.n,
                  median_us=m.median,
                  sources=[SourceRef(file=r.file, line=r.line) for r in s.refs] if s else [])


def _parity(t: RuleTable, labels: Sequence[str]) -> ParityEvidence:
    cases: list[ParityCase] = []
    without: list[str] = []
    for label in labels:
        row = t.labels[label]
        found = row.parity
        if not found:
            without.append(row.spec.title)
        for r in found:
            cases.append(ParityCase(
                label=label, backend=r.get("backend"), op=str(r.get("op")),
                params=str(r.get("params") or ""), variant=str(r.get("variant") or "default"),
                passed=r.get("passed"), nmse=r.get("nmse"), error=r.get("error"),
                source=_src(r)))
    status: Literal["passed", "failed", "missing", "partial"]
    if any(c.passed is False for c in cases):
        status = "failed"
    elif not without:
        status = "passed"
    else:
        status = "partial" if cases else "missing"
    return ParityEvidence(status=status, cases=cases, missing_rows=without)


def _metric(rows: list[dict[str, Any]], metric: str
            ) -> tuple[float | None, float | None, dict[str, Any] | None, int]:
    found = [r for r in rows if r.get("metric") == metric and r.get("value") is not None]
    if not found:
        return None, None, None, 0
    first = found[0]
    return float(first["value"]), first.get("value_err"), first, len(found)


def _quality(t: RuleTable, spec: QualitySpec) -> QualityEvidence:
    """Perplexity change and mean KLD of the candidate vs the baseline.

    A `--kl-divergence` run of the candidate gives both (its paired `PPL(Q)/PPL(base)` is used
    for the perplexity change); otherwise `Final estimate: PPL` of a baseline run and of a
    candidate run are compared. Several values of one metric: the first is used (and said).
    """
    base_rows = list(t.quality.get(spec.baseline, ()))
    cand_rows = list(t.quality.get(spec.candidate, ()))
    kld, kld_err, kld_rec, n_kld = _metric(cand_rows, "kld_mean")
    same_top, _, _, _ = _metric(cand_rows, "same_top_p")
    ratio, _, ratio_rec, n_ratio = _metric(cand_rows, "ppl_ratio")
    cand = _metric(cand_rows, "ppl_q")
    if cand[0] is None:
        cand = _metric(cand_rows, "ppl")
    base = _metric(cand_rows, "ppl_base")
    if base[0] is None:
        base = _metric(base_rows, "ppl")
    increase: float | None = None
    method: str | None = None
    if ratio is not None:
        increase, method = ratio - 1, "PPL(Q)/PPL(base) of the KL-divergence run"
    elif cand[0] is not None and base[0]:
        increase, method = cand[0] / base[0] - 1, "candidate PPL / baseline PPL"
    missing = []
    if increase is None:
        missing.append(f"perplexity change: a --kl-divergence run of {spec.candidate}, or "
                       f"perplexity runs of both {spec.baseline} and {spec.candidate}")
    if kld is None:
        missing.append(f"mean KL divergence: a --kl-divergence run of {spec.candidate} "
                       f"against {spec.baseline} logits")
    problems = [f"{n} {what} values found; the first is used" for n, what in (
        (n_ratio, "PPL ratio"), (cand[3], "candidate PPL"), (base[3], "baseline PPL"),
        (n_kld, "mean KLD")) if n > 1]
    status: Literal["passed", "failed", "missing"] = "missing" if missing else "passed"
    if increase is not None and increase > spec.max_ppl_increase:
        status = "failed"
        problems.append(f"perplexity increase {increase:.2%} is above the "
                        f"{spec.max_ppl_increase:.2%} limit")
    if kld is not None and kld > spec.max_kld_mean:
        status = "failed"
        problems.append(f"mean KLD {kld:.5f} is above the {spec.max_kld_mean:g} limit")
    recs = (ratio_rec, cand[2], base[2], kld_rec)
    return QualityEvidence(
        status=status, baseline=spec.baseline, candidate=spec.candidate,
        baseline_ppl=base[0], baseline_ppl_err=base[1], candidate_ppl=cand[0],
        candidate_ppl_err=cand[1], ppl_increase=increase, ppl_increase_method=method,
        max_ppl_increase=spec.max_ppl_increase, kld_mean=kld, kld_mean_err=kld_err,
        max_kld_mean=spec.max_kld_mean, same_top_p_percent=same_top,
        sources=_unique([_src(r) for r in recs if r is not None]), missing=missing,
        problems=problems)


def _draft(t: RuleTable, spec: DecisionSpec, settings: EvidenceSettings,
           options: DecisionOptions) -> _Draft:
    source: ThresholdSource = "fixed"
    threshold = spec.default_threshold()
    if spec.threshold_env is not None and settings.knows(spec.threshold_env):
        threshold, source = settings.get(spec.threshold_env), settings.source(spec.threshold_env)
    matches = {label: t.labels[label] for label in spec.rows()}
    shortfalls = [(label, m.n) for label, m in matches.items() if m.n < options.needed]
    comparisons: list[Comparison] = []
    estimates: list[RatioEstimate | None] = []
    for c in spec.comparisons:
        base = [matches[lbl] for lbl in c.baseline]
        cand = [matches[lbl] for lbl in c.candidate]
        n_base, n_cand = min(m.n for m in base), min(m.n for m in cand)
        est: RatioEstimate | None = None
        base_us = sum(m.median or 0.0 for m in base) if n_base else None
        cand_us = sum(m.median or 0.0 for m in cand) if n_cand else None
        if min(n_base, n_cand) >= options.needed:
            est = ratio_interval([m.samples.values for m in base if m.samples],
                                 [m.samples.values for m in cand if m.samples],
                                 threshold=threshold, name=f"{spec.policy}/{c.label}",
                                 seed=options.seed, replicates=options.replicates)
        comparisons.append(Comparison(
            label=c.label, baseline=[_row_ref(m) for m in base],
            candidate=[_row_ref(m) for m in cand], n_baseline=n_base, n_candidate=n_cand,
            baseline_us=base_us, candidate_us=cand_us,
            speedup=base_us / cand_us if base_us is not None and cand_us else None,
            ci_low=est.ci_low if est else None, ci_high=est.ci_high if est else None,
            p_value=est.p_value if est else None, seed=est.seed if est else None,
            significantly_slower=bool(est and est.ci_high < 1.0)))
        estimates.append(est)
    quality = _quality(t, options.quality_for(spec.quality)) if spec.quality else None
    return _Draft(spec, threshold, source, comparisons, estimates, matches,
                  _parity(t, spec.rows()), quality, shortfalls)


def _rule_text(spec: DecisionSpec, d: _Draft, options: DecisionOptions) -> str:
    quality = ""
    if d.quality is not None:
        quality = (f" and quality is within limits (perplexity increase <= "
                   f"{d.quality.max_ppl_increase:.2%} and mean KLD <= {d.quality.max_kld_mean:g}"
                   f" of {d.quality.candidate} vs {d.quality.baseline})")
    return spec.rule.format(min_samples=options.needed, threshold=d.threshold,
                            env=spec.threshold_env or "fixed",
                            env_suffix=f" ({spec.threshold_env})" if spec.threshold_env else "",
                            review=spec.review_message or "", quality=quality)


def _verdict(d: _Draft, cleared: bool, step_down_stopped: bool, options: DecisionOptions
             ) -> tuple[Verdict, str, list[str], list[str], bool]:
    """(verdict, reason, missing evidence, messages, review required)."""
    spec = d.spec
    missing: list[str] = []
    messages: list[str] = []
    review = False
    point_over = [c for c in d.comparisons if c.speedup is not None and c.speedup > d.threshold]
    if spec.review_message and point_over:
        review = True
        messages.append(f"{spec.review_message} (point estimate {point_over[0].speedup:.3f}x > "
                        f"{d.threshold:g})")
    for label, n in d.shortfalls:
        title = d.matches[label].spec.title
        missing.append(f"{options.needed - n} more sample(s) of {title} "
                       f"(has {n}, needs {options.needed})")
    parity_missing = d.parity.status in ("missing", "partial") and spec.parity_required
    parity_ok = d.parity.status == "passed" or not spec.parity_required
    if parity_missing:
        missing.append("parity (test-backend-ops test mode) for: "
                       + ", ".join(d.parity.missing_rows))
    quality_missing = d.quality is not None and d.quality.status == "missing"
    if d.quality is not None and quality_missing:
        missing.append("quality: " + "; ".join(d.quality.missing))
    if d.parity.status == "failed":
        failed = [f"{c.label} ({c.backend or '?'})" for c in d.parity.cases if c.passed is False]
        return "reject", "parity failed: " + ", ".join(failed), missing, messages, review
    if d.shortfalls:
        policy = "" if options.needed == MIN_SAMPLES else " (sample_policy.min_samples)"
        return ("inconclusive", f"fewer than {options.needed} samples on a side{policy}",
                missing, messages, review)
    slower = [c for c in d.comparisons if c.significantly_slower]
    if slower:
        c = slower[0]
        return ("reject", f"candidate significantly slower: {c.label} speedup "
                f"{c.speedup:.3f}x, 95% interval [{c.ci_low:.3f}, {c.ci_high:.3f}] below 1.0",
                missing, messages, review)
    quality_ok = d.quality is None or d.quality.status == "passed"
    if not cleared:
        why = ("the Holm step-down stopped at a decision ranked earlier" if step_down_stopped
               else f"the speedup interval does not clear {d.threshold:g} after Holm's "
                    "correction")
        if d.quality is not None and d.quality.status == "failed":
            why += "; quality outside limits: " + "; ".join(d.quality.problems)
        return "keep-evidence-gated", why, missing, messages, review
    if spec.kind == "review-tripwire" and d.parity.status == "passed":
        # the gate's tripwire fired and the evidence is strong: the decision follows the
        # decision rule (promote) and keeps the gate's "revisit ..." message in its reason
        review = True
        if spec.review_message and not point_over:
            messages.append(spec.review_message)
        return ("promote", f"parity passed and speedup cleared {d.threshold:g}: "
                f"{spec.review_message} (the gate's review tripwire fired)", missing,
                messages, review)
    if parity_ok and quality_ok:
        return "promote", f"parity passed and speedup cleared {d.threshold:g}" + (
            " with quality within limits" if d.quality else ""), missing, messages, review
    if parity_missing and quality_ok:
        return "needs-parity", "speedup cleared the threshold; parity evidence is missing", \
            missing, messages, review
    if parity_ok and quality_missing:
        return "needs-quality", "speedup cleared the threshold and parity passed; quality " \
            "evidence is missing", missing, messages, review
    if d.quality is not None and d.quality.status == "failed":
        why = "quality outside limits: " + "; ".join(d.quality.problems)
    else:
        why = (f"speedup cleared {d.threshold:g} but both parity and quality evidence are "
               "missing")
    return "keep-evidence-gated", why, missing, messages, review


def _unique(sources: list[SourceRef]) -> list[SourceRef]:
    seen: dict[tuple[str, int | None], SourceRef] = {}
    for s in sources:
        seen.setdefault((s.file, s.line), s)
    return list(seen.values())


def _included(t: RuleTable, spec: DecisionSpec) -> bool:
    """Phase E and user decisions always appear; Phase D ones when one of their rows is
    present."""
    return spec.phase in ("E", "user") or any(
        t.labels[lbl].samples is not None for lbl in spec.rows())


def decide_all(t: RuleTable, settings: EvidenceSettings,
               options: DecisionOptions | None = None
               ) -> tuple[list[Decision], list[OmittedDecision]]:
    options = (options or DecisionOptions()).for_rules(t.rules)
    drafts: list[_Draft] = []
    omitted: list[OmittedDecision] = []
    for spec in t.rules.decisions:
        if _included(t, spec):
            drafts.append(_draft(t, spec, settings, options))
        else:
            omitted.append(OmittedDecision(policy=spec.policy,
                                           reason="none of its Phase D rows are present"))
    family = {d.spec.policy: d.p_value for d in drafts if d.testable}
    adjusted = holm(family, options.alpha)
    decisions: list[Decision] = []
    for d in drafts:
        h = adjusted.get(d.spec.policy)
        info = None
        cleared = stopped = False
        if h is not None:
            info = HolmInfo(p_value=family[d.spec.policy], p_adjusted=h.p_adjusted,
                            rank=h.rank, m=h.m, level=h.level, alpha=options.alpha)
            cleared = h.p_adjusted < options.alpha
            for c, est in zip(d.comparisons, d.estimates, strict=True):
                if est is not None:
                    c.lower_bound_adjusted = est.lower_bound(h.level)
                    c.clears_threshold = est.p_value < h.level
            stopped = not cleared and all(c.clears_threshold for c in d.comparisons)
        verdict, reason, missing, messages, review = _verdict(d, cleared, stopped, options)
        sources = [s for c in d.comparisons for r in c.baseline + c.candidate for s in r.sources]
        sources += [c.source for c in d.parity.cases]
        sources += d.quality.sources if d.quality else []
        decisions.append(Decision(
            policy=d.spec.policy, title=d.spec.title, phase=d.spec.phase, kind=d.spec.kind,
            value=d.spec.value, verdict=verdict, reason=reason,
            rule=_rule_text(d.spec, d, options), threshold=d.threshold,
            threshold_env=d.spec.threshold_env,
            threshold_source=d.threshold_source,
            min_samples=options.needed, comparisons=d.comparisons, parity=d.parity,
            quality=d.quality, holm=info, missing_evidence=missing, messages=messages,
            review_required=review, sources=_unique(sources)))
    return decisions, omitted
