"""SARIF 2.1.0 of an evidence report (decisions.json), for code-scanning dashboards.

One run (tool meshcert and its version). Results, level `error`:
- `gate.required_rows`: one per missing required Phase E row (a missing row has no file, so the
  result has no location);
- `gate.<name>`: a failed gate, with its value, comparator and threshold, located at the source
  files of its rows;
- `decision.<policy>`: a decision that fails (`reject`) or blocks promotion (`needs-parity`,
  `needs-quality`, or quality outside its limits), located at the decision's sources;
- `package.<rule>`: a package layer that breaks the recipe rule (at the layer's artifact when the
  package is a local directory);
- `history.<class>`: a mesh-llm setup whose latest run is a performance regression or a
  correctness failure, at its history line;
- `ab-comparison` / `kv-dtype`: a mesh-llm A/B comparison or KV cache dtype that is rejected.
Level `warning`: a decision whose review tripwire fired (`review_required`), a package rule that
could not be checked, a mesh-llm promotion meshcert disagrees with (an `error` when meshcert
rejects it: no arm is eligible), and each ingest problem (`ingest-problem`).

Decisions that are merely undecided (`inconclusive`, `keep-evidence-gated` for want of a clear
speedup) are not problems and give no result.

The run's `properties.verdict` is the report's headline status (what every format states):
`failed` comes with at least one `error` result, `passed` with none.

Locations come only from the report: a SourceRef's file and line, a history row's file:line, a
file:line text whose file is one of the report's input files. Nothing else is located. Paths
are made relative to the working directory when they lie under it. Output is sorted.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import (
    ComponentRow,
    Decision,
    EvidenceReport,
    GateCheck,
    HistoryVerdict,
    SourceRef,
)
from meshcert.reports.certification.sarif import SARIF_SCHEMA, SARIF_VERSION

BLOCKING_VERDICTS = frozenset({"reject", "needs-parity", "needs-quality"})
FAILING_HISTORY = frozenset({"performance-regression", "correctness-failure"})
_FILE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?:[#:]|$)")


@dataclass(frozen=True)
class Where:
    file: str
    line: int | None = None

    def key(self) -> tuple[str, int]:
        return self.file, -1 if self.line is None else self.line


@dataclass
class Problem:
    rule_id: str
    level: str
    message: str
    rule_text: str
    where: list[Where] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)


def uri(path: str, cwd: str | None = None) -> str:
    """A path as a SARIF uri: relative to the working directory when it lies under it."""
    if "://" in path:
        return path
    if os.path.isabs(path):
        rel = os.path.relpath(path, cwd or os.getcwd())
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return "file://" + quote(path.replace(os.sep, "/"))
        path = rel
    return quote(path.replace(os.sep, "/"))


def _places(sources: list[SourceRef]) -> list[Where]:
    return sorted({Where(s.file, s.line) for s in sources if s.file}, key=Where.key)


def _parsed(texts: list[str], known: set[str]) -> list[Where]:
    """file:line texts whose file is one of the report's inputs (else no location)."""
    found: set[Where] = set()
    for text in texts:
        m = _FILE_LINE.match(text)
        if m and m.group("file") in known:
            found.add(Where(m.group("file"), int(m.group("line"))))
        elif text.split(": ", 1)[0] in known:
            found.add(Where(text.split(": ", 1)[0]))
    return sorted(found, key=Where.key)


def _num(value: float | None, fmt: str = ".4g") -> str:
    return "n/a" if value is None else format(value, fmt)


def _gate_problems(report: EvidenceReport) -> list[Problem]:
    gate = report.gate
    out = [Problem("gate.required_rows", "error",
                   f"missing Phase E MoE gate row: {m.title} ({m.pattern})",
                   "A row the Phase E MoE gate requires is missing from the evidence.",
                   properties={"row": m.label})
           for m in gate.missing_rows]
    components = {c.label: c for c in report.components}
    for check in gate.checks:
        if check.status == "failed":
            rows = [components[r] for r in check.rows if r in components]
            out.append(Problem(
                f"gate.{check.name}", "error", _gate_message(check, rows),
                f"Phase E MoE gate: {check.title}",
                _places([s for c in rows for s in c.sources]),
                {"kind": check.kind, "enforced": gate.enforced}))
    return out


def _gate_message(check: GateCheck, rows: list[ComponentRow]) -> str:
    variants = sorted({r.variant for r in rows}) or ["n/a"]
    limit = ("n/a" if check.threshold is None
             else f"{check.comparator or ''} {check.threshold:g}".strip())
    env = f" ({check.threshold_env})" if check.threshold_env else ""
    return (f"gate {check.name} failed: variant {', '.join(variants)}, {check.unit} "
            f"{_num(check.value)}, limit {limit}{env}: {check.message}")


def _decision_message(d: Decision) -> str:
    parts = [f"decision {d.policy} {d.verdict}: {d.reason}"]
    env = f" ({d.threshold_env})" if d.threshold_env else ""
    for c in d.comparisons:
        base = ", ".join(sorted({r.variant for r in c.baseline}))
        cand = ", ".join(sorted({r.variant for r in c.candidate}))
        parts.append(f"{c.label}: variant {cand} vs {base}, speedup {_num(c.speedup, '.3f')}x, "
                     f"limit > {d.threshold:g}{env}")
    q = d.quality
    if q is not None and q.status == "failed":
        parts.append(f"quality of {q.candidate} vs {q.baseline}: perplexity increase "
                     f"{_num(q.ppl_increase, '.2%')}, limit {q.max_ppl_increase:.2%}; mean KLD "
                     f"{_num(q.kld_mean, '.5f')}, limit {q.max_kld_mean:g}")
    parts += [f"missing: {m}" for m in d.missing_evidence]
    return "; ".join(parts)


def _decision_problems(report: EvidenceReport) -> list[Problem]:
    out: list[Problem] = []
    for d in report.decisions:
        quality_failed = d.quality is not None and d.quality.status == "failed"
        props = {"verdict": d.verdict, "phase": d.phase, "kind": d.kind}
        if d.verdict in BLOCKING_VERDICTS or quality_failed:
            out.append(Problem(f"decision.{d.policy}", "error", _decision_message(d), d.title,
                               _places(d.sources), props))
        elif d.review_required:
            text = "; ".join(d.messages) or d.reason
            out.append(Problem(f"decision.{d.policy}", "warning",
                               f"decision {d.policy} {d.verdict}: review required: {text}",
                               d.title, _places(d.sources), props))
    return out


def _package_problems(report: EvidenceReport) -> list[Problem]:
    pc = report.package_check
    if pc is None or pc.status in ("passed", "not-applicable"):
        return []
    rule_id, text = f"package.{pc.rule}", f"Package rule {pc.rule}"
    if pc.status == "unknown":
        return [Problem(rule_id, "warning", f"package rule {pc.rule} not checked for "
                        f"{pc.package}: {'; '.join(pc.messages)}", text)]
    local = "://" not in pc.package
    failed = [layer for layer in pc.layers if layer.status == "failed"]
    out = [Problem(rule_id, "error",
                   f"package {pc.package}: layer {layer.layer} {layer.tensor} is "
                   f"{layer.ggml_type}, limit {layer.original_type or 'n/a'} (the original "
                   f"type): {layer.message}", text,
                   [Where(os.path.join(pc.package, layer.artifact))] if local else [],
                   {"layer": layer.layer})
           for layer in failed]
    if not out:
        out.append(Problem(rule_id, "error", f"package {pc.package}: "
                           f"{'; '.join(pc.messages)}", text))
    return out


def _history_message(h: HistoryVerdict) -> str:
    regressed = [v for v in h.metrics if v.regressed]
    parts = [f"{v.metric} {_num(v.current, 'g')} vs baseline median "
             f"{_num(v.baseline_median, 'g')} (change {_num(v.change, '+.1%')}, limit "
             f"{v.limit:.0%})" for v in regressed]
    setup = ", ".join(f"{k}={v}" for k, v in sorted(h.setup.items())) or h.cohort_key[:12]
    return f"{h.history_class} of setup {setup}" + (f": {'; '.join(parts)}" if parts else "")


def _mesh_problems(report: EvidenceReport, known: set[str]) -> list[Problem]:
    out = [Problem(f"history.{h.history_class}", "error", _history_message(h),
                   f"mesh-llm performance history: {h.history_class}", [Where(h.file, h.line)],
                   {"cohort_key": h.cohort_key})
           for h in report.history if h.history_class in FAILING_HISTORY]
    for ab in report.ab_decisions:
        if ab.verdict == "reject":
            worse = [f"{m.metric} median {m.median:g}" for m in ab.metrics
                     if m.verdict == "reject"]
            out.append(Problem("ab-comparison", "error",
                               f"A/B {ab.comparison} reject: {ab.reason}"
                               + (f"; {', '.join(worse)}" if worse else ""),
                               "mesh-llm A/B comparison rejected", [Where(ab.file)],
                               {"comparison": ab.comparison}))
    for kv in report.kv_dtype_decisions:
        if kv.verdict == "reject":
            out.append(Problem("kv-dtype", "error",
                               f"KV cache dtype {kv.dtype} vs {kv.baseline} reject: {kv.reason}; "
                               f"perplexity ratio {_num(kv.ppl_ratio)}, limit "
                               f"{kv.max_ppl_ratio:g}", "KV cache dtype rejected",
                               _parsed(kv.sources, known), {"dtype": kv.dtype}))
    for pc in report.promotion_checks:
        if not pc.agree:
            out.append(Problem("promotion-check",
                               "error" if pc.meshcert_verdict == "reject" else "warning",
                               f"promotion {pc.platform}/{pc.model}: mesh-llm chose "
                               f"{pc.mesh_llm_winner}, meshcert {pc.meshcert_verdict} "
                               f"(candidate {pc.meshcert_candidate})",
                               "mesh-llm promotion meshcert disagrees with",
                               [Where(pc.file)]))
    return out


def evidence_problems(report: EvidenceReport) -> list[Problem]:
    """Every result of the SARIF run, unsorted."""
    known = {f.path for f in report.inputs.files}
    out = _gate_problems(report) + _decision_problems(report) + _package_problems(report)
    out += _mesh_problems(report, known)
    out += [Problem("ingest-problem", "warning", text, "Evidence ingestion could not use input",
                    _parsed([text], known)) for text in report.inputs.problems]
    return out


def _location(where: Where, cwd: str | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(where.file, cwd)}}
    if where.line is not None and where.line >= 1:
        physical["region"] = {"startLine": where.line}
    return {"physicalLocation": physical}


def build_evidence_sarif(report: EvidenceReport, cwd: str | None = None) -> dict[str, Any]:
    head = headline_of(report)
    problems = sorted(evidence_problems(report),
                      key=lambda p: (p.rule_id, [w.key() for w in p.where], p.level,
                                     p.message))
    ids = sorted({p.rule_id for p in problems})
    index = {rule_id: i for i, rule_id in enumerate(ids)}
    rules = []
    for rule_id in ids:
        mine = [p for p in problems if p.rule_id == rule_id]
        level = "error" if any(p.level == "error" for p in mine) else "warning"
        rules.append({"id": rule_id, "name": rule_id,
                      "shortDescription": {"text": mine[0].rule_text},
                      "defaultConfiguration": {"level": level}})
    results = []
    for p in problems:
        result: dict[str, Any] = {"ruleId": p.rule_id, "ruleIndex": index[p.rule_id],
                                  "level": p.level, "message": {"text": p.message}}
        if p.where:
            result["locations"] = [_location(w, cwd) for w in p.where]
        if p.properties:
            result["properties"] = p.properties
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": report.tool.name, "version": report.tool.version,
                            "rules": rules}},
        "results": results,
        "invocations": [{"executionSuccessful": True,
                         **({"endTimeUtc": report.generated_at} if report.generated_at
                            else {})}],
        "properties": {"verdict": head.status, "summary": head.summary,
                       "gate_applies": report.gate.applies,
                       "gate_passed": report.gate.passed, "enforced": report.gate.enforced,
                       "backend": report.inputs.backend},
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_evidence_sarif(report: EvidenceReport) -> str:
    return json.dumps(build_evidence_sarif(report), indent=2, ensure_ascii=False) + "\n"
