"""The mesh-llm parts of an evidence report (bench-formats spec): measurements per setup,
history classes with their plots, A/B comparisons, KV-cache dtype and promotion decisions, as
one HTML fragment (the Markdown lays out the same rows: meshcert.evidence.mesh_tables)."""

from __future__ import annotations

from markupsafe import Markup, escape

from meshcert.evidence.mesh_tables import mesh_sections
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.evidence.history import series_plot


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
