"""The evidence report in Markdown: one document, whether it is written as summary.md beside
decisions.json or with `--md FILE` (e.g. a GitHub step summary), `render_evidence_summary`:
the headline (overall verdict and each decision the evidence supports), then the Phase E
script's sections (Inputs, Decode Components, Estimated Routed FFN Decode Cost, Gates) when the
gate applies, Decisions, Phase D rows, the mesh-llm sections (history, A/B, KV dtype, promotion,
measurements), package check, method; laid out as the script wrote it (`mdutil.plain_table`),
with no live HTML or remote image from the report's text (`mdutil.inert_document`).
"""

from __future__ import annotations

from collections.abc import Iterable

from meshcert.evidence.headline import headline_of, supported_decisions
from meshcert.evidence.history import history_status, metric_class
from meshcert.evidence.mesh_tables import mesh_sections
from meshcert.evidence.method_text import ab_method, bootstrap_method_applies
from meshcert.evidence.report import (
    ComponentRow,
    Decision,
    EvidenceReport,
    HistoryVerdict,
    PackageCheck,
    SourceRef,
)
from meshcert.reports.evidence.history import change_text, interval_text
from meshcert.reports.fmt import (
    gate_switches,
    gate_threshold,
    gate_value,
    set_by,
    ungated_sweep_note,
)
from meshcert.reports.mdutil import inert_document, plain_table


# ---- summary.md ------------------------------------------------------------------------
def _us(value: float | None) -> str:
    return "missing" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _refs(refs: list[SourceRef], limit: int = 6) -> str:
    shown = [f"{r.file}:{r.line}" if r.line is not None else r.file for r in refs[:limit]]
    more = f" (+{len(refs) - limit} more)" if len(refs) > limit else ""
    return ", ".join(shown) + more if shown else "-"


def _inputs(report: EvidenceReport) -> list[str]:
    out = ["## Inputs", ""]
    inputs = report.inputs
    for f in inputs.files:
        facts = [", ".join(f.formats) or "no rows", f"{f.rows} rows"]
        if f.variants:
            facts.append("variant " + ", ".join(f.variants))
        if f.backends:
            facts.append("backend " + ", ".join(f.backends))
        if f.build_commits:
            facts.append("build " + ", ".join(f.build_commits))
        if f.sha256:
            facts.append(f"sha256 {f.sha256[:12]}")
        out.append(f"- `{f.path}`: " + "; ".join(facts))
    if not inputs.files:
        out.append("- no input files")
    out.append("")
    out.append(f"Evaluated backend: {inputs.backend or 'unnamed'}")
    out += [f"- note: {n}" for n in inputs.notes]
    if inputs.problems:
        out += ["", f"Ingest problems ({len(inputs.problems)}):"]
        out += [f"- {p}" for p in inputs.problems[:50]]
        if len(inputs.problems) > 50:
            out.append(f"- ... {len(inputs.problems) - 50} more in decisions.json")
    out += ["", "Settings:", ""]
    out += plain_table(["variable", "value", "source"],
                       [(f"`{s.name}`", s.text, s.source) for s in report.settings])
    return out + [""]


def _component_rows(rows: Iterable[ComponentRow]) -> list[list[object]]:
    return [[c.title, c.variant, _us(c.median_us) if c.status != "not supported"
             else "not supported", c.n or "-",
             "-" if c.iqr_us is None else f"{c.iqr_us:.2f}",
             "required" if c.required else "optional"] for c in rows]


def _components(report: EvidenceReport) -> list[str]:
    show_sweep = report.gate.kernel_sweep or any(
        c.phase == "E-sweep" and c.status != "missing" for c in report.components)
    rows = [c for c in report.components
            if c.phase == "E" or (c.phase == "E-sweep" and show_sweep)]
    out = ["## Decode Components", ""]
    out += plain_table(["row", "variant", "median us", "n", "IQR us", "gate"],
                       _component_rows(rows))
    return out + [""]


def _estimate(report: EvidenceReport) -> list[str]:
    out = ["## Estimated Routed FFN Decode Cost", ""]
    e = report.estimate
    if e is None:
        return out + [report.estimate_message or "Missing rows prevented the per-layer "
                      "estimate.", ""]
    out += plain_table(["component", "x", "median us", "us", "share"],
                       [(t.title, f"{t.coefficient:g}", f"{t.median_us:.2f}",
                         f"{t.contribution_us:.2f}", _pct(t.share)) for t in e.terms])
    out += ["", f"Estimated routed FFN decode layer: {e.total_us:.2f} us"]
    out += [f"- {name}: {e.share_us[name]:.2f} us ({_pct(e.shares[name])})" for name in e.shares]
    if e.shared_expert_us is not None and e.routed_plus_shared_us is not None:
        out.append(f"- shared expert fused GLU + final add (q4_K): {e.shared_expert_us:.2f} us; "
                   f"routed + shared: {e.routed_plus_shared_us:.2f} us, shared "
                   f"{_pct(e.shared_expert_share)}")
    else:
        out.append("- shared expert share: missing (no shared fused GLU q4_K row)")
    return out + [""]


def _gates(report: EvidenceReport) -> list[str]:
    g = report.gate
    mode = "enforced (exit 2 on failure)" if g.enforced else "advisory"
    out = ["## Gates", "", f"Phase E gate: {'passed' if g.passed else 'FAILED'} ({mode}); "
           f"{gate_switches(g.kernel_sweep, g.sanity)}.", ""]
    note = ungated_sweep_note(g.kernel_sweep, sum(
        c.phase == "E-sweep" and c.status != "missing" for c in report.components))
    if note:
        out += [f"Note: {note}.", ""]
    if g.missing_rows:
        out += ["Missing rows:", ""] + [f"- {m.title}: `{m.pattern}`" for m in g.missing_rows]
        out.append("")
    out += plain_table(["status", "gate", "kind", "value", "threshold", "message"],
                       [(c.status, c.title, c.kind, gate_value(c),
                         gate_threshold(c),
                         c.message) for c in g.checks])
    if g.errors:
        out += ["", "```"] + g.errors + ["```"]
    return out + [""]


def _interval(d: Decision) -> str:
    parts = []
    for c in d.comparisons:
        if c.speedup is None:
            parts.append("-")
        elif c.ci_low is None or c.ci_high is None:
            parts.append(f"{c.speedup:.3f}x")
        else:
            parts.append(f"{c.speedup:.3f}x [{c.ci_low:.3f}, {c.ci_high:.3f}]")
    return "; ".join(parts)


def _decision_detail(d: Decision) -> list[str]:
    title = f"### `{d.policy}`" + (f" = `{d.value}`" if d.value else "") + f": {d.verdict}"
    out = [title, "", f"- reason: {d.reason}", f"- rule: {d.rule}"]
    for c in d.comparisons:
        sides = [("baseline", c.baseline, c.n_baseline), ("candidate", c.candidate,
                                                          c.n_candidate)]
        out.append(f"- {c.label}:")
        for name, refs, n in sides:
            rows = "; ".join(
                f"{r.title} ({r.status}, n={r.n}, median {r.median_us:.2f} us, "
                f"{_refs(r.sources, 3)})" if r.median_us is not None
                else f"{r.title} ({r.status})" for r in refs)
            out.append(f"  - {name} (n={n}): {rows}")
        if c.speedup is not None:
            interval = (f", 95% interval [{c.ci_low:.3f}, {c.ci_high:.3f}], p={c.p_value:.4f}"
                        if c.ci_low is not None and c.ci_high is not None
                        and c.p_value is not None else " (no interval: too few samples)")
            out.append(f"  - speedup {c.speedup:.3f}x{interval}")
    if d.holm is not None:
        out.append(f"- Holm: p={d.holm.p_value:.4f}, adjusted {d.holm.p_adjusted:.4f} (rank "
                   f"{d.holm.rank} of {d.holm.m}, level {d.holm.level:.4f})")
    parity = f"- parity: {d.parity.status}"
    if d.parity.cases:
        parity += f" ({len(d.parity.cases)} case(s))"
    out.append(parity)
    if d.quality is not None:
        q = d.quality
        out.append(f"- quality: {q.status} (PPL change {_pct(q.ppl_increase)} limit "
                   f"{q.max_ppl_increase:.2%}; mean KLD "
                   f"{'-' if q.kld_mean is None else f'{q.kld_mean:.5f}'} limit "
                   f"{q.max_kld_mean:g})")
        out += [f"  - {p}" for p in q.problems]
    out += [f"- **{m}**" for m in d.messages]
    out += [f"- missing: {m}" for m in d.missing_evidence]
    return out + [""]


def _decisions(report: EvidenceReport) -> list[str]:
    shown = supported_decisions(report)
    out = ["## Decisions", ""]
    out += plain_table(["policy", "verdict", "speedup [95% interval]", "n base/cand", "threshold",
                        "review"],
                       [(f"`{d.policy}`" + (f" = `{d.value}`" if d.value else ""), d.verdict,
                         _interval(d), "; ".join(f"{c.n_baseline}/{c.n_candidate}"
                                                 for c in d.comparisons),
                         f"{d.threshold:g}{set_by(d.threshold_env, d.threshold_source)}",
                         "revisit" if d.review_required else "")
                        for d in shown])
    out.append("")
    for o in report.omitted_decisions:
        out.append(f"- `{o.policy}` not decided: {o.reason}")
    if report.omitted_decisions:
        out.append("")
    for d in shown:
        out += _decision_detail(d)
    return out


def _phase_d(report: EvidenceReport) -> list[str]:
    rows = [c for c in report.components if c.phase == "D" and c.status != "missing"]
    if not rows:
        return []
    out = ["## Phase D Rows", ""]
    out += plain_table(["row", "median us", "n", "IQR us"],
                       [(c.title, _us(c.median_us), c.n or "-",
                         "-" if c.iqr_us is None else f"{c.iqr_us:.2f}") for c in rows])
    return out + [""]


def _package(check: PackageCheck | None) -> list[str]:
    if check is None:
        return []
    out = ["## Package Rule", "", f"{check.rule}: **{check.status}** (`{check.package}`)", ""]
    out += [f"- {m}" for m in check.messages]
    out += [f"- blk.{layer.layer} `{layer.tensor}` in `{layer.artifact}`: {layer.ggml_type} "
            f"({layer.status}) {layer.message}" for layer in check.layers]
    return out + [""]


def _headline(report: EvidenceReport) -> list[str]:
    head = headline_of(report)
    out = [f"Verdict: **{head.status.upper()}** ({head.summary})", ""]
    if head.items:
        out += plain_table(["decision", "verdict", "outcome", "why", "evidence"],
                           [(i.subject, f"**{i.verdict}**", i.outcome, i.reason, i.where or "-")
                            for i in head.items])
        out.append("")
    out.append(f"Phase E MoE gate: {head.phase_e}")
    return out + [""]


def _mesh(report: EvidenceReport) -> list[str]:
    out: list[str] = []
    for title, header, rows in mesh_sections(report):
        out += [f"## {title}", ""] + plain_table(header, rows) + [""]
    return out


def render_evidence_summary(report: EvidenceReport) -> str:
    """summary.md, in the Phase E script's layout (the sections in the module's docstring)."""
    m = report.method
    title = ("# GLM-5.2 Benchmark Evidence" if report.gate.applies
             else "# Benchmark Evidence")
    lines = [title, ""] + _headline(report) + _inputs(report)
    if report.gate.applies:
        lines += _components(report) + _estimate(report) + _gates(report)
    if supported_decisions(report) or report.gate.applies:
        lines += _decisions(report)
    lines += _phase_d(report) + _mesh(report) + _package(report.package_check)
    lines += ["## Method", ""]
    if bootstrap_method_applies(report) or not report.ab_decisions:
        lines += [f"- samples: {m.sample_rule}", f"- statistics: {m.description}",
                  f"- multiple comparisons: {m.multiple_comparisons}",
                  f"- bootstrap: {m.replicates} replicates, seed {m.seed}; at least "
                  f"{m.min_samples} samples per side"]
    if (ab := ab_method(report)) is not None:
        lines.append(f"- A/B: {ab}")
    lines.append("")
    lines += [f"- note: {n}" for n in report.notes]
    return inert_document("\n".join(lines).rstrip("\n") + "\n")


def render_history_markdown(history: list[HistoryVerdict]) -> str:
    status = history_status(history)
    out = [f"## {status.upper()}: performance history", "",
           "| setup | setup class | metric | metric class | current | median | change | "
           "baseline | interval |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for h in history:
        for v in h.metrics:
            out.append(f"| `{h.cohort_key[:12]}` | {h.history_class} | {v.metric} | "
                       f"{metric_class(h, v)} | "
                       f"{'-' if v.current is None else f'{v.current:g}'} | "
                       f"{'-' if v.baseline_median is None else f'{v.baseline_median:g}'} | "
                       f"{change_text(v.change)} | {h.baseline_n} | {interval_text(v)} |")
    return "\n".join(out) + "\n"
