"""A realistic EvidenceReport built from the evidence rules and the published GLM-5.2 Metal
headline timings (../shared/data/glm52-metal-headline.csv), with seeded repeated samples.

Used until the evidence engineer's bundled example exists; the renderers only read the model,
so a directly constructed report exercises them the same way.
"""

from __future__ import annotations

import random
import statistics
import zlib
from collections.abc import Sequence

from meshcert.evidence.report import (
    BackendInfo,
    Comparison,
    ComponentRow,
    Decision,
    Estimate,
    EstimateTerm,
    EvidenceReport,
    GateCheck,
    GateResult,
    HolmInfo,
    InputFile,
    Inputs,
    MissingRow,
    OmittedDecision,
    ParityEvidence,
    QualityEvidence,
    QualityLimits,
    RowRef,
    RowStats,
    SettingValue,
    SourceRef,
    StatsMethod,
    ToolInfo,
)
from meshcert.evidence.rules import (
    DECISIONS,
    ENV_VARS,
    GATES,
    ROWS_BY_LABEL,
    RULES,
    RowSpec,
    format_params,
)

# us/run medians (headline numbers where published, plausible values elsewhere)
MEDIANS: dict[str, float] = {
    "route": 3.26, "weighted_sum_1tok": 7.10, "weighted_sum_4tok": 9.4,
    "routed_gate_up_q2_K": 118.2, "routed_merged_gate_up_q2_K": 214.0,
    "routed_down_q3_K": 139.02, "routed_down_q2_K": 101.7,
    "routed_swiglu_unfused": 11.9, "routed_swiglu_fused": 5.35,
    "small_graph_fused": 41.2, "shexp_q4_K": 405.32, "shexp_q3_K": 372.5,
    "shexp_q2_K": 330.8, "ffn_q3_down": 1147.21, "ffn_q2_down": 817.38,
    "ffn_q2_down_weighted": 809.9, "ffn_q3_down_merged_shexp": 868.59,
    "shexp_component_5": 4.09, "shexp_component_2": 291.73,
    "d_selected_row_flash_kv1024_top768": 55.11, "d_direct_sparse_kv1024_top768": 988.95,
    "d_selected_row_flash_kv257_top64": 63.40, "d_direct_sparse_kv257_top64": 106.57,
    "d_selected_row_flash_kv2048_top768": 55.62, "d_direct_sparse_kv2048_top768": 984.50,
    "d_dense_flash_kv257_nb1": 71.72, "d_compact_gather": 9.8, "d_compact_flash_kv768": 52.4,
}
FILES = ("phase-e/run-1.console.log", "phase-e/run-2.console.log",
         "phase-e/run-3.console.log", "phase-d/attn.console.log")
HOSTILE = '<script>alert(1)</script>"onload=x'


def _seed(variant: str) -> int:
    """A seed for a variant's samples, the same in every process (never the built-in `hash()`,
    which changes with PYTHONHASHSEED: it once made 1 run in 97 trip a review tripwire)."""
    return zlib.crc32(variant.encode()) % 97


def _samples(label: str, n: int, seed: int) -> list[float]:
    rng = random.Random(f"{label}:{seed}")
    median = MEDIANS[label]
    return [median * (1 + rng.gauss(0, 0.012)) for _ in range(n)]


def _sources(label: str, n: int) -> list[SourceRef]:
    base = 40 + sorted(MEDIANS).index(label) * 7
    files = FILES[3:] if label.startswith("d_") else FILES[:3]
    return [SourceRef(file=files[i % len(files)], line=base + i) for i in range(n)]


def _row_stats(spec: RowSpec, n: int, variant: str = "default") -> RowStats:
    values = sorted(_samples(spec.label, n, _seed(variant)))
    q1, _, q3 = statistics.quantiles(values, n=4) if n >= 2 else (values[0],) * 3
    return RowStats(
        labels=[spec.label], backend="Metal", op=spec.op, params=format_params(spec.params),
        variant=variant, n=n, median_us=statistics.median(values), q1_us=q1, q3_us=q3,
        iqr_us=q3 - q1, min_us=values[0], max_us=values[-1],
        mean_us=statistics.fmean(values), sample_source="perf_sample",
        runs=[f"run-{i + 1}" for i in range(min(n, 3))], sources=_sources(spec.label, n))


def _component(spec: RowSpec, stats: RowStats | None, required: bool) -> ComponentRow:
    return ComponentRow(
        label=spec.label, title=spec.title, phase=spec.phase, group=spec.group,
        variant=spec.variant, pattern=spec.pattern, required=required,
        status="present" if stats else "missing", params=stats.params if stats else None,
        n=stats.n if stats else 0, median_us=stats.median_us if stats else None,
        iqr_us=stats.iqr_us if stats else None, min_us=stats.min_us if stats else None,
        max_us=stats.max_us if stats else None, sources=stats.sources if stats else [])


def _ref(stats: dict[str, RowStats], label: str) -> RowRef:
    spec = ROWS_BY_LABEL[label]
    row = stats.get(label)
    return RowRef(label=label, title=spec.title, status="present" if row else "missing",
                  backend="Metal", op=spec.op, params=row.params if row else None,
                  variant=spec.variant, n=row.n if row else 0,
                  median_us=row.median_us if row else None,
                  sources=row.sources[:3] if row else [])


def _comparison(stats: dict[str, RowStats], label: str, base: Sequence[str],
                cand: Sequence[str], threshold: float) -> Comparison:
    b = [_ref(stats, x) for x in base]
    c = [_ref(stats, x) for x in cand]
    nb = min(r.n for r in b)
    nc = min(r.n for r in c)
    if nb and nc:
        bu = sum(r.median_us or 0 for r in b)
        cu = sum(r.median_us or 0 for r in c)
        speedup = bu / cu
        width = 0.018 * speedup * (3 / min(nb, nc)) ** 0.5
        low, high = speedup - width, speedup + width
        return Comparison(label=label, baseline=b, candidate=c, n_baseline=nb, n_candidate=nc,
                          baseline_us=bu, candidate_us=cu, speedup=speedup, ci_low=low,
                          ci_high=high, p_value=0.0004 if low > threshold else 0.31, seed=1234,
                          lower_bound_adjusted=low, significantly_slower=high < 1.0,
                          clears_threshold=low > threshold)
    return Comparison(label=label, baseline=b, candidate=c, n_baseline=nb, n_candidate=nc)


VERDICTS = {
    "moe_merged_shared_gate_up": ("keep-evidence-gated",
                                  "speedup 1.32x clears the 1.02 review tripwire: revisit "
                                  "disabled merged shared-expert policy"),
    "moe_weighted_down": ("inconclusive", "fewer than 3 samples on the candidate side"),
    "q2_K_routed_down": ("needs-quality", "the win clears 1.08 and parity passed; no "
                         "perplexity / KL divergence evidence for q2_K vs q3_K"),
    "selected_row_flash": ("needs-parity", "faster, but no test-mode parity case for "
                           "GLM_DSA_SELECTED_ROW_FLASH(kv=1024,top_k=768)"),
    "decode": ("promote", "selected-row flash beats direct sparse and dense at every decode "
               "shape"),
}


def _set_median(stats: dict[str, RowStats], label: str, median_us: float | None) -> None:
    if label in stats:
        stats[label] = stats[label].model_copy(update={"median_us": median_us})


def build_evidence_report(*, hostile: bool = False, missing_rows: bool = False,
                          all_pass: bool = False) -> EvidenceReport:
    """The headline evidence. `missing_rows`: drop two required rows (gate incomplete);
    `all_pass`: no tripwire trips (gate passed); `hostile`: markup in every kind of text."""
    dropped = {"shexp_q2_K", "routed_swiglu_fused"} if missing_rows else set()
    stats: dict[str, RowStats] = {}
    for label in MEDIANS:
        if label in dropped:
            continue
        n = 2 if label == "ffn_q2_down_weighted" else 5
        stats[label] = _row_stats(ROWS_BY_LABEL[label], n)
    sweep = [_row_stats(ROWS_BY_LABEL["routed_down_q3_K"], 4, variant)
             for variant in ("q3-k-mul-mv-id-nsg-2", "q3-k-mul-mv-id-nsg-4")]
    if all_pass:  # neither review tripwire trips, whatever the samples: both ratios are 1.0
        _set_median(stats, "ffn_q3_down_merged_shexp", stats["ffn_q3_down"].median_us)
        if "ffn_q2_down" in stats:
            _set_median(stats, "ffn_q2_down_weighted", stats["ffn_q2_down"].median_us)
    required = list(RULES.required(kernel_sweep=False))
    components = [_component(ROWS_BY_LABEL[label], stats.get(label), label in required)
                  for label in dict.fromkeys([*required, *MEDIANS])]
    missing = [MissingRow(label=lbl, title=ROWS_BY_LABEL[lbl].title,
                          pattern=ROWS_BY_LABEL[lbl].pattern) for lbl in required
               if lbl not in stats]

    def med(label: str) -> float:
        return stats[label].median_us or 0.0

    estimate = None
    if not dropped:
        terms = [EstimateTerm(label=lbl, title=ROWS_BY_LABEL[lbl].title, coefficient=c,
                              median_us=med(lbl), contribution_us=c * med(lbl), share=0.0)
                 for lbl, c in RULES.estimate_terms]
        total = sum(t.contribution_us for t in terms)
        terms = [t.model_copy(update={"share": t.contribution_us / total}) for t in terms]
        share_us = {name: sum(t.contribution_us for t in terms if t.label in labels)
                    for name, labels in RULES.estimate_shares.items()}
        shared = med("shexp_q4_K")
        estimate = Estimate(total_us=total, terms=terms, share_us=share_us,
                            shares={k: v / total for k, v in share_us.items()},
                            shared_expert_us=shared, routed_plus_shared_us=total + shared,
                            shared_expert_share=shared / (total + shared))

    checks = []
    for gate in GATES:
        if gate.when != "always":
            checks.append(GateCheck(name=gate.name, title=gate.title, kind=gate.kind,
                                    status="skipped", message="not enabled"))
            continue
        labels = [lbl for lbl, _ in (*gate.numerator, *gate.denominator)]
        if any(lbl not in stats for lbl in labels):
            checks.append(GateCheck(name=gate.name, title=gate.title, kind=gate.kind,
                                    status="missing", rows=labels, message="rows missing"))
            continue
        num = sum(c * med(lbl) for lbl, c in gate.numerator)
        den = sum(c * med(lbl) for lbl, c in gate.denominator)
        value = num / den
        threshold = gate.default_threshold()
        ok = {">": value > threshold, ">=": value >= threshold, "<": value < threshold,
              "<=": value <= threshold}[gate.comparator]
        error = None if ok else "error: " + gate.fail.format(
            value=value, threshold=threshold, env=gate.threshold_env)
        checks.append(GateCheck(
            name=gate.name, title=gate.title, kind=gate.kind,
            status="passed" if ok else "failed", value=value, threshold=threshold,
            comparator=gate.comparator, unit=gate.unit, threshold_env=gate.threshold_env,
            threshold_source="default" if gate.threshold_env else "fixed", rows=labels,
            message=f"{value:.3f} {gate.comparator} {threshold:g}", error=error))
    errors = ([f"error: missing Phase E MoE gate rows: {', '.join(m.title for m in missing)}"]
              if missing else []) + [c.error for c in checks if c.error]

    decisions = []
    for spec in DECISIONS:
        if spec.policy == "short_prefill":  # its rows are absent: listed as omitted
            continue
        threshold = spec.default_threshold()
        comparisons = [_comparison(stats, c.label, c.baseline, c.candidate, threshold)
                       for c in spec.comparisons]
        verdict, reason = VERDICTS.get(spec.policy, ("keep-evidence-gated", "rows missing"))
        if all_pass and spec.policy == "moe_merged_shared_gate_up":
            verdict, reason = "keep-evidence-gated", "no evidence against the current default"
        missing_evidence = {
            "moe_weighted_down": ["3 samples of combined FFN q2_K weighted down (have 2)"],
            "q2_K_routed_down": ["quality: llama-perplexity --kl-divergence for q3-k-routed-down"
                                 " vs q2-k-routed-down"],
            "selected_row_flash": ["parity: test-backend-ops test mode for "
                                   "GLM_DSA_SELECTED_ROW_FLASH(kv=1024,top_k=768)"],
        }.get(spec.policy, [])
        quality = None
        if spec.quality is not None:
            quality = QualityEvidence(status="missing", baseline=spec.quality.baseline,
                                      candidate=spec.quality.candidate,
                                      max_ppl_increase=spec.quality.max_ppl_increase,
                                      max_kld_mean=spec.quality.max_kld_mean,
                                      missing=["perplexity", "kl-divergence"])
        decisions.append(Decision(
            policy=spec.policy, title=spec.title, phase=spec.phase, kind=spec.kind,
            value=spec.value, verdict=verdict, reason=reason,  # type: ignore[arg-type]
            rule=spec.rule.format(min_samples=3, threshold=threshold,
                                  env=spec.threshold_env or "fixed",
                                  review=spec.review_message or "",
                                  env_suffix=f" ({spec.threshold_env})"
                                  if spec.threshold_env else "",
                                  quality=" and quality within limits" if spec.quality else ""),
            threshold=threshold, threshold_env=spec.threshold_env,
            threshold_source="default" if spec.threshold_env else "fixed", min_samples=3,
            comparisons=comparisons,
            parity=ParityEvidence(status="missing" if spec.policy == "selected_row_flash"
                                  else "passed"),
            quality=quality,
            holm=HolmInfo(p_value=0.0004, p_adjusted=0.0016, rank=1, m=4, level=0.00625,
                          alpha=0.025) if verdict == "promote" else None,
            missing_evidence=missing_evidence,
            messages=["revisit disabled merged shared-expert policy"]
            if spec.policy == "moe_merged_shared_gate_up" and not all_pass else [],
            review_required=spec.policy == "moe_merged_shared_gate_up" and not all_pass,
            sources=[]))

    files = [InputFile(path=f, formats=["tbo_console", "ggml_test"], rows=24, kinds={"perf": 24},
                       run_ids=[f"run-{i + 1}"], variants=["default"], backends=["Metal"],
                       devices=["Apple M3 Max"], build_commits=["b7c1e2a"],
                       sha256=f"{i:x}" * 64, lines=1_204 + i) for i, f in enumerate(FILES)]
    report = EvidenceReport(
        tool=ToolInfo(version="0.1.0"), generated_at="2026-11-29T10:00:00Z",
        settings=[SettingValue(name=v.name, value=float(v.default), text=v.default,
                               default=v.default, source="default", meaning=v.meaning)
                  for v in ENV_VARS],
        quality_limits=QualityLimits(baseline="q3-k-routed-down", candidate="q2-k-routed-down",
                                     max_ppl_increase=0.01, max_kld_mean=0.01),
        method=StatsMethod(description="median ratio with a seeded percentile bootstrap",
                           confidence=0.95, replicates=10_000, seed=1234, min_samples=3,
                           alpha_one_sided=0.025, multiple_comparisons="Holm",
                           sample_rule="perf_sample lines when present, else one sample per "
                                       "run"),
        inputs=Inputs(files=files, problems=["phase-e/run-2.console.log:311: truncated row"],
                      backend="Metal", label="glm52-metal",
                      backends=[BackendInfo(name="Metal", perf_samples=412, evaluated=True),
                                BackendInfo(name="CPU", perf_samples=12, evaluated=False)]),
        rows=[*stats.values(), *sweep],
        components=components, estimate=estimate,
        estimate_message=None if estimate else "Missing rows prevented the per-layer estimate.",
        gate=GateResult(passed=not errors, enforced=False, kernel_sweep=False, sanity=True,
                        required_rows=required, missing_rows=missing, checks=checks,
                        errors=errors, estimate=estimate),
        decisions=decisions,
        omitted_decisions=[OmittedDecision(policy="short_prefill",
                                           reason="no DSA_SPARSE_ATTN n_batch=4/8/16 rows")],
    )
    if hostile:
        report = _hostile(report)
    return report


def _hostile(report: EvidenceReport) -> EvidenceReport:
    d = report.decisions[0]
    comparison = d.comparisons[0].model_copy(update={"label": HOSTILE})
    decision = d.model_copy(update={
        "policy": HOSTILE, "reason": HOSTILE, "rule": HOSTILE, "title": HOSTILE,
        "missing_evidence": [HOSTILE], "messages": [HOSTILE],
        "sources": [SourceRef(file=HOSTILE, line=7)], "comparisons": [comparison]})
    gate = report.gate.model_copy(update={
        "checks": [report.gate.checks[0].model_copy(update={"title": HOSTILE,
                                                            "message": HOSTILE})],
        "errors": [HOSTILE]})
    row = report.rows[0].model_copy(update={"variant": HOSTILE, "params": HOSTILE})
    return report.model_copy(update={
        "decisions": [decision, *report.decisions[1:]], "gate": gate,
        "rows": [row, *report.rows[1:]],
        "inputs": report.inputs.model_copy(update={"label": HOSTILE, "problems": [HOSTILE]}),
        "notes": [HOSTILE]})
