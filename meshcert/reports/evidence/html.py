"""The evidence reports as self-contained HTML pages (inline CSS and SVG, no scripts, no URLs):
the evidence report (gates, estimate, decisions) and the `evidence history` report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshcert.reports.htmlpage import render_page

if TYPE_CHECKING:
    from meshcert.evidence.report import EvidenceReport, HistoryVerdict


def render_evidence_html(report: EvidenceReport) -> str:
    """The evidence report (gates, estimate, decisions) as one HTML page."""
    from meshcert.reports.evidence.view import build_evidence_view

    return render_page("evidence.html.j2", view=build_evidence_view(report), kind="evidence",
                       kind_label="evidence report")


def render_history_html(history: list[HistoryVerdict], title: str = "Performance history", *,
                        sources: list[str] | None = None, problems: list[str] | None = None,
                        rows_read: int | None = None) -> str:
    """The `evidence history` report as one HTML page (the same base and stylesheet)."""
    from meshcert.reports.evidence.history import build_history_view

    view = build_history_view(history, title=title, sources=sources, problems=problems,
                              rows_read=rows_read)
    return render_page("history.html.j2", view=view, kind="history",
                       kind_label="performance history report")
