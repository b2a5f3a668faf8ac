"""HTML rendering: one self-contained file per report (inline CSS and SVG, no scripts, no URLs).

Templates live in the `meshcert.templates` package (jinja2, autoescape on, StrictUndefined) and
only lay out the view-models built in `reports/<kind>/view.py`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from meshcert.certify.report import CertReport
from meshcert.reports.certification.view import build_cert_view

if TYPE_CHECKING:
    from meshcert.evidence.report import EvidenceReport, HistoryVerdict

STYLESHEET = "report.css"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("meshcert.templates", ""),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def stylesheet() -> Markup:
    """The package's CSS, trusted (it is ours), checked not to close the <style> element."""
    # Read through the template loader (not importlib.resources): it copes with `meshcert.templates`
    # being a namespace package in some editable installs.
    env = environment()
    assert env.loader is not None
    css, _, _ = env.loader.get_source(env, STYLESHEET)
    if "</" in css:
        raise ValueError(f"{STYLESHEET} must not contain '</'")
    return Markup(css)


def render_page(template: str, **context: Any) -> str:
    """A report page from its template, with the stylesheet inlined."""
    from meshcert.core.version import __version__

    return environment().get_template(template).render(
        css=stylesheet(), generator=f"meshcert {__version__}", **context)


def render_cert_html(report: CertReport) -> str:
    """The certification report as one HTML page."""
    return render_page("cert.html.j2", view=build_cert_view(report), kind="cert",
                       kind_label="certification report")


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

