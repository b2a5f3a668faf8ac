"""The mesh-llm parts of an evidence report (bench-formats spec): measurements per setup,
history classes with their plots, A/B comparisons, KV-cache dtype and promotion decisions, as
Markdown lines and as one HTML fragment."""

from __future__ import annotations

from markupsafe import Markup, escape

from meshcert.evidence.mesh_tables import mesh_sections
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.history import series_plot
from meshcert.reports.mdutil import code, table, text


def mesh_markdown(report: EvidenceReport) -> list[str]:
    lines: list[str] = []
    for title, header, rows in mesh_sections(report):
        lines += ["", f"### {title}", ""]
        lines += table(header, [[code(c) if i == 0 and title.startswith("Perf") else text(c)
                                 for i, c in enumerate(r)] for r in rows],
                       ["l"] * len(header))
    for d in report.ab_decisions:
        lines.append(f"- {text(d.comparison)}: **{text(d.verdict)}**: {text(d.reason)}")
    return lines


def mesh_html(report: EvidenceReport) -> Markup:
    parts: list[str] = []
    for title, header, rows in mesh_sections(report):
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>"
                       for r in rows)
        parts.append(f'<section class="section"><h2>{escape(title)}</h2>'
                     f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table></div>")
        if title == "Performance history":
            parts += [f'<figure class="history-figure">{series_plot(h, m)}</figure>'
                      for h in report.history
                      for m in h.metrics]
        parts.append("</section>")
    return Markup("".join(parts))
