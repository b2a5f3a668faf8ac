"""The mesh-llm sections of an evidence report as plain tables: (title, header, rows) each.

One source for every renderer: `summary.md` (meshcert/reports/evidence/markdown.py) and the
Markdown and HTML reports (meshcert/reports/evidence/mesh.py) lay out the same rows.
"""

from __future__ import annotations

from meshcert.evidence.history import metric_class
from meshcert.evidence.report import ABDecision, EvidenceReport, MeshMetricRow

Section = tuple[str, list[str], list[list[str]]]

MAX_ROWS = 200


def _num(value: float | None, fmt: str = "{:g}") -> str:
    return "-" if value is None else fmt.format(value)


def _interval(low: float | None, high: float | None, fmt: str = "{:+.1%}") -> str:
    return "-" if low is None or high is None else f"[{fmt.format(low)}, {fmt.format(high)}]"


def _pair(values: list[float] | None, fmt: str) -> str:
    return _interval(values[0], values[1], fmt) if values and len(values) == 2 else "-"


def _cut(value: str | None, limit: int = 80) -> str:
    if value is None:
        return "(absent)"
    return value if len(value) <= limit else value[:limit - 3] + "..."


def _test(test: str | None) -> str:
    """The test's short name: `exact sign-flip (2^8)`, `Monte Carlo sign-flip (20,000)`."""
    if test is None:
        return "-"
    count = test[test.find("(") + 1:].split(" ", 2)
    if test.startswith("exact"):
        return f"exact sign-flip ({count[1]})" if len(count) > 1 else "exact sign-flip"
    return f"Monte Carlo sign-flip ({count[0]})"


def _ab_interval(low: float | None, high: float | None, coverage: float | None) -> str:
    """The sign-test interval of the median effect, with its own coverage."""
    if low is None or high is None:
        return "-"
    cover = f" ({coverage:.1%})" if coverage is not None else ""
    return f"[{low:+.2f}, {high:+.2f}]{cover}"


def mesh_sections(report: EvidenceReport) -> list[Section]:
    """(title, header, rows) of each mesh section present."""
    out: list[Section] = []
    if report.history:
        out.append(("Performance history", ["cohort", "class", "metric", "current", "median",
                                            "change", "baseline", "interval", "row"],
                    [[h.cohort_key[:12], metric_class(h, m), m.metric, _num(m.current),
                      _num(m.baseline_median), _num(m.change, "{:+.1%}"), str(h.baseline_n),
                      f"{_interval(m.change_low, m.change_high)} {m.interval_says}",
                      f"{h.file}:{h.line}"] for h in report.history for m in h.metrics]))
    if report.ab_decisions:
        out.append(("A/B comparisons", ["comparison", "verdict", "metric", "n / k",
                                        "median %", "interval %", "test", "p", "p (Holm)",
                                        "MDE %", "why"],
                    [[d.comparison, d.verdict if i == 0 else "", m.metric,
                      f"{m.rounds} / {m.min_rounds if m.min_rounds is not None else '-'}",
                      f"{m.median:+.2f}",
                      _ab_interval(m.interval_low, m.interval_high, m.interval_coverage),
                      _test(m.test), _num(m.p_value, "{:.4g}"), _num(m.p_adjusted, "{:.4g}"),
                      _num(m.mde_percent, "{:.2f}"), f"{m.verdict}: {m.reason}"]
                     for d in report.ab_decisions for i, m in enumerate(d.metrics)]))
        diffs = [[d.comparison, x.field, _cut(x.old), _cut(x.new)]
                 for d in report.ab_decisions for x in d.differences]
        if diffs:  # the details behind each short subject
            out.append(("A/B setup differences", ["comparison", "field", "old", "new"], diffs))
    if report.kv_dtype_decisions:
        out.append(("KV-cache dtype (publisher default)",
                    ["dtype", "verdict", "gain", "gain 95%", "p (Holm)", "PPL ratio",
                     "upper 95%", "reason"],
                    [[d.dtype, d.verdict, _num(d.gain, "{:.3f}x"),
                      _pair(d.gain_ci, "{:.3f}"),
                      _num(d.p_adjusted, "{:.4f}"), _num(d.ppl_ratio, "{:.4f}"),
                      _num(d.ppl_ratio_upper, "{:.4f}"), d.reason]
                     for d in report.kv_dtype_decisions]))
    if report.promotion_checks:
        out.append(("Promotion: mesh-llm winner vs meshcert",
                    ["platform", "model", "mesh-llm winner", "meshcert candidate",
                     "meshcert verdict", "agree", "where they differ"],
                    [[str(p.platform), str(p.model), str(p.mesh_llm_winner),
                      str(p.meshcert_candidate), p.meshcert_verdict, "yes" if p.agree else "no",
                      "; ".join(p.notes)] for p in report.promotion_checks]))
    if report.mesh_rows:  # last: the details behind the decisions above
        out.append(("mesh-llm measurements", ["format", "op", "setup", "metric", "n", "median",
                                              "unit", "first source"],
                    [[r.format, r.op, _setup(r, report.ab_decisions), r.metric, str(r.n),
                      f"{r.median:g}", r.unit, r.sources[0] if r.sources else ""]
                     for r in report.mesh_rows[:MAX_ROWS]]))
    return out


def _setup(row: MeshMetricRow, decisions: list[ABDecision]) -> str:
    """A row's setup key; an A/B row's two whole setups (`old={...},new={...}`, ~900
    characters a row) are named by the comparison's short subject, as every other table does."""
    if row.format != "ab-comparison" or not row.sources:
        return row.params
    for d in decisions:
        if row.sources[0].startswith(f"{d.file}:"):
            text = row.params
            for side, value in (("old", d.old), ("new", d.new)):
                if value is not None:
                    text = text.replace(f"{side}={value}", "", 1)
            rest = [part for part in text.split(",") if part]
            return "; ".join([d.comparison, ",".join(rest)]) if rest else d.comparison
    return row.params
