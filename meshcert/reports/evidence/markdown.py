"""Markdown (GitHub step summary) for an evidence report."""

from __future__ import annotations

from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.mesh import mesh_markdown
from meshcert.reports.evidence.view import EvidenceView, build_evidence_view
from meshcert.reports.mdutil import STATUS_ICONS, code, status, table, text

VERDICT_ICONS = {"promote": "\u2705", "reject": "\u274c", "inconclusive": "\u2754",
                 "needs-parity": "\u26a0\ufe0f", "needs-quality": "\u26a0\ufe0f",
                 "keep-evidence-gated": "\u23f8\ufe0f"}

ITEM_ICONS = {"passed": "\u2705", "failed": "\u274c", "undecided": "\u2754"}


def verdict(value: str) -> str:
    return f"{VERDICT_ICONS.get(value, '')} **{text(value)}**".strip()


def render_evidence_markdown(report: EvidenceReport) -> str:
    view = build_evidence_view(report)
    b = view.banner
    stats = " \u00b7 ".join(f"**{text(s.label)}:** {text(s.value)}" for s in b.stats)
    out = [f"## {STATUS_ICONS[b.status]} {b.status.upper()}: {text(b.headline)}", "",
           f"{text(b.subject)} \u00b7 {text(b.enforcement)}  ", stats]
    if b.errors:
        out += [""] + [f"> {text(line)}  " for line in b.errors]
    out.append("")
    if b.items:
        out += table(["decision", "verdict", "why", "evidence"],
                     [[text(i.subject), f"{ITEM_ICONS[i.outcome]} **{text(i.verdict)}**",
                       text(i.reason), code(i.where) if i.where else "\u2014"]
                      for i in b.items], ["l", "l", "l", "l"])
    else:
        out.append("Nothing decided: the evidence supports no decision.")
    out += ["", f"Phase E MoE gate: {text(b.phase_e)}"]

    if not view.decisions and not view.omitted:
        out += mesh_markdown(report)
        out += _inputs_and_settings(view)
        return "\n".join(out)

    out += ["", "### Phase E/D decisions", ""]
    rows = []
    for d in view.decisions:
        if not d.comparisons:
            rows.append([code(d.policy), verdict(d.verdict), "\u2014", "\u2014",
                         text(d.threshold), "\u2014", text("; ".join(d.missing_evidence))])
        for c in d.comparisons:
            rows.append([code(d.policy) + (f" {text(c.number)}" if c.number else ""),
                         verdict(d.verdict), text(c.speedup), text(c.interval),
                         text(d.threshold), f"{c.n_baseline} / {c.n_candidate}",
                         text("; ".join(d.missing_evidence))])
    out += table(["policy", "verdict", "speedup", "95% interval", "threshold",
                  "samples (base / cand)", "missing evidence"], rows,
                 ["l", "l", "r", "r", "l", "r", "l"]) if rows else ["No decisions."]
    out.append("")
    out += [f"- {code(d.policy)}: {text(d.reason)}" for d in view.decisions]
    for fact in view.omitted:
        out += [f"- {code(fact.label)} not decided: {text(fact.value)}"]
    out += mesh_markdown(report)
    if not view.gate_applies:
        out += _inputs_and_settings(view)
        return "\n".join(out)

    out += ["", "### Phase E gate", ""]
    out += table(["gate", "kind", "status", "value", "threshold", "result"],
                 [[text(g.title), text(g.kind), status(g.status), text(g.value),
                   text(g.threshold), text(g.message)] for g in view.gate_checks],
                 ["l", "l", "l", "r", "r", "l"])
    present = len(view.required_rows)
    out += ["", f"Required rows: {present}/{present + len(view.missing_rows)} present."]
    for row in view.missing_rows:
        out.append(f"- missing: {text(row.title)} {code(row.pattern)}")

    out += ["", "### Routed FFN decode estimate", ""]
    if view.estimate is None:
        out.append(text(view.estimate_message or "No estimate."))
    else:
        e = view.estimate
        out += [f"Total: **{text(e.total)}** per layer.", ""]
        out += table(["term", "\u00d7", "median", "contribution", "share"],
                     [[text(t.title), text(t.coefficient), text(t.median), text(t.contribution),
                       text(t.share)] for t in e.terms], ["l", "r", "r", "r", "r"])
        if e.shared:
            out += [""] + [f"- {text(f.label)}: {text(f.value)}" for f in e.shared]

    out += _inputs_and_settings(view)
    return "\n".join(out)


def _inputs_and_settings(view: EvidenceView) -> list[str]:
    out = ["", "<details><summary>Inputs and settings</summary>", ""]
    out += table(["file", "format", "rows", "variants", "sha256"],
                 [[code(f.path), text(f.formats), str(f.rows), text(f.variants),
                   code(f.sha256)] for f in view.inputs], ["l", "l", "r", "l", "l"])
    if view.problems:
        out += ["", "Problems:"] + [f"- {text(p)}" for p in view.problems]
    out += [""]
    out += table(["variable", "value", "from"],
                 [[code(s.name), text(s.value), text(s.source)] for s in view.settings],
                 ["l", "r", "l"])
    out += ["", "</details>", ""]
    return out
