"""Assemble the EvidenceReport: table -> RuleTable (the rules resolved once) -> gate, decisions,
row statistics.

Pure: the caller hands in the ingested table, its problems and sources (provenance: sha256,
lines) and an optional package check result. No I/O, no printing, no exiting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from meshcert.evidence.decisions import DecisionOptions, decide_all
from meshcert.evidence.gates import evaluate_gate
from meshcert.evidence.headline import build_headline
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.mesh_decisions import mesh_evidence
from meshcert.evidence.report import (
    BackendInfo,
    ComponentRow,
    EvidenceReport,
    InputFile,
    Inputs,
    PackageCheck,
    QualityLimits,
    RowStats,
    SettingValue,
    SourceRef,
    StatsMethod,
    ToolInfo,
)
from meshcert.evidence.rule_table import ResolvedRow, RuleTable
from meshcert.evidence.rules import ALPHA_ONE_SIDED, ENV_VARS, Q2_QUALITY, RULES, Rules
from meshcert.evidence.settings import EvidenceSettings
from meshcert.evidence.stats import CONFIDENCE, SampleSet, summarize

METHOD_DESCRIPTION = (
    "speedup = median baseline us / median candidate us (rows of a side summed); 95% "
    "percentile interval from a seeded bootstrap that resamples each row's samples with "
    "replacement and takes the ratio of the resampled medians; one-sided p of 'speedup <= "
    "threshold' = (1 + replicates at or below the threshold) / (replicates + 1). With few "
    "samples (3-5) a bootstrap interval is narrower than the truth: more runs make it honest.")
HOLM_DESCRIPTION = (
    "Holm step-down across the decisions of this report that have enough samples and no "
    "parity failure; a decision's p is the largest of its comparisons' (all must clear). A "
    "decision clears its threshold when its Holm-adjusted p is below the one-sided alpha "
    "(0.025, the lower end of a 95% interval); `lower_bound_adjusted` is the bootstrap lower "
    "bound at the decision's Holm level. Rejections (interval below 1.0) use the unadjusted "
    "95% interval.")
SAMPLE_RULE = (
    "rows with the same (backend, op, params, variant) are samples: one per run for perf rows; "
    "a run that also printed ggml_test perf_sample lines contributes those per-sample averages "
    "instead of its perf row (never both).")


@dataclass(frozen=True)
class BuildOptions:
    backend: str | None = None
    label: str | None = None
    decisions: DecisionOptions = field(default_factory=DecisionOptions)
    generated_at: str | None = None
    tool_version: str = "0.0.0"
    phase_e: bool = False  # apply the Phase E gate even without Phase E rows (--phase-e)


def problem_text(problem: Any) -> str:
    """An ingest problem as `file:line: reason (excerpt)`; plain strings pass through."""
    where = getattr(problem, "where", None)
    reason = getattr(problem, "reason", None)
    if callable(where) and reason is not None:
        excerpt = getattr(problem, "excerpt", "")
        return f"{where()}: {reason}" + (f" ({excerpt})" if excerpt else "")
    return str(problem)


def _sorted_unique(values: Iterable[Any]) -> list[str]:
    return sorted({str(v) for v in values if v is not None and v != ""})


def _inputs(t: RuleTable, problems: Iterable[Any], sources: Iterable[Any],
            label: str | None) -> Inputs:
    """One InputFile per ingested source (IngestResult.sources: file, format, sha256, lines),
    then any file only the rows name (e.g. runs merged from an evidence JSON)."""
    by_file: dict[str, list[dict[str, Any]]] = {}
    for r in t.rows:
        by_file.setdefault(str(r.get("source_file") or ""), []).append(r)
    known = {str(getattr(s, "file", "")): s for s in sources}
    files = []
    for path in [*known, *(p for p in by_file if p not in known)]:
        rows = by_file.get(path, [])
        kinds: dict[str, int] = {}
        for r in rows:
            kinds[str(r.get("kind"))] = kinds.get(str(r.get("kind")), 0) + 1
        source = known.get(path)
        formats = _sorted_unique(r.get("format") for r in rows)
        if not formats and source is not None:
            formats = _sorted_unique([getattr(source, "format", None)])
        files.append(InputFile(
            path=path, formats=formats, rows=len(rows), kinds=kinds,
            run_ids=_sorted_unique(r.get("run_id") for r in rows),
            variants=_sorted_unique(r.get("variant") for r in rows),
            backends=_sorted_unique(r.get("backend") for r in rows),
            devices=_sorted_unique(r.get("device") for r in rows),
            build_commits=_sorted_unique(r.get("build_commit") for r in rows),
            sha256=getattr(source, "sha256", None), lines=getattr(source, "lines", None)))
    backends = [BackendInfo(name=name, perf_samples=count, evaluated=name == t.backend)
                for name, count in t.backends.items()]
    return Inputs(files=files, problems=[problem_text(p) for p in problems], label=label,
                  backend=t.backend, backends=backends, notes=list(t.notes))


def _refs(s: SampleSet | None) -> list[SourceRef]:
    return [SourceRef(file=r.file, line=r.line) for r in s.refs] if s else []


def _component(m: ResolvedRow, required: bool) -> ComponentRow:
    spec, s = m.spec, m.samples
    summary = summarize(s.values) if s is not None else None
    return ComponentRow(
        label=spec.label, title=spec.title, phase=spec.phase, group=spec.group,
        variant=spec.variant, pattern=m.pattern, required=required, status=m.status,
        params=s.key.params if s else None, n=m.n,
        median_us=summary.median if summary else None, iqr_us=summary.iqr if summary else None,
        min_us=summary.min if summary else None, max_us=summary.max if summary else None,
        ambiguous=[k.params for k in m.alternatives], sources=_refs(s), note=spec.note)


def _row_stats(t: RuleTable) -> list[RowStats]:
    out = []
    for key, s in sorted(t.samples.items(), key=lambda kv: kv[1].order):
        if key.backend is not None and t.backend is not None and key.backend != t.backend:
            continue
        summary = summarize(s.values)
        labels = list(t.sample_labels[key])
        out.append(RowStats(
            labels=labels, backend=key.backend, op=key.op, params=key.params,
            variant=key.variant, n=s.n, median_us=summary.median if summary else None,
            q1_us=summary.q1 if summary else None, q3_us=summary.q3 if summary else None,
            iqr_us=summary.iqr if summary else None, min_us=summary.min if summary else None,
            max_us=summary.max if summary else None, mean_us=summary.mean if summary else None,
            sample_source=s.source, runs=list(s.run_ids), unsupported_rows=s.unsupported_rows,
            sources=_refs(s), notes=list(s.notes)))
    return out


def settings_values(settings: EvidenceSettings) -> list[SettingValue]:
    return [SettingValue(name=v.name, value=settings.get(v.name),
                         text=settings.raw.get(v.name, v.default), default=v.default,
                         source=settings.source(v.name), meaning=v.meaning) for v in ENV_VARS]


def build_report(table: Any, *, settings: EvidenceSettings, options: BuildOptions | None = None,
                 problems: Iterable[Any] = (), sources: Iterable[Any] = (),
                 package_check: PackageCheck | None = None,
                 rules: Rules = RULES) -> EvidenceReport:
    """Everything a reviewer needs, from the ingested table (see `meshcert/evidence/table.py`)."""
    options = options or BuildOptions()
    t = resolve_rules(table, rules, options.backend)
    gate = evaluate_gate(t, settings, force=options.phase_e)
    d = options.decisions.for_rules(rules)
    decisions, omitted = decide_all(t, settings, d)
    required = set(gate.required_rows)
    components = [_component(t.labels[r.label], r.label in required) for r in rules.rows]
    quality = d.quality_for(next((s.quality for s in rules.decisions if s.quality),
                                 Q2_QUALITY))
    notes = []
    unused = sum(1 for r in t.rows if r.get("kind") == "bench")
    if unused:
        notes.append(f"{unused} llama-bench row(s) are recorded as inputs; no Phase E/D rule "
                     "reads them")
    mesh = mesh_evidence(t.rows, rules.mesh, min_samples=d.needed)
    if package_check is not None and package_check.status == "failed":
        notes.append("the package breaks the q2_K routed-down rule: " +
                     "; ".join(package_check.messages))
    report = EvidenceReport(
        tool=ToolInfo(version=options.tool_version), generated_at=options.generated_at,
        settings=settings_values(settings),
        quality_limits=QualityLimits(baseline=quality.baseline, candidate=quality.candidate,
                                     max_ppl_increase=quality.max_ppl_increase,
                                     max_kld_mean=quality.max_kld_mean),
        method=StatsMethod(description=METHOD_DESCRIPTION, confidence=CONFIDENCE,
                           replicates=d.replicates, seed=d.seed, min_samples=d.needed,
                           alpha_one_sided=d.alpha or ALPHA_ONE_SIDED,
                           multiple_comparisons=HOLM_DESCRIPTION, sample_rule=SAMPLE_RULE),
        inputs=_inputs(t, problems, sources, options.label),
        rows=_row_stats(t), components=components, estimate=gate.estimate,
        estimate_message=gate.estimate_message, gate=gate, decisions=decisions,
        omitted_decisions=omitted, package_check=package_check, notes=notes, **mesh)
    report.headline = build_headline(report)
    return report
