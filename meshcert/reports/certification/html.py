"""The certification report as one self-contained HTML page (inline CSS and SVG, no scripts,
no URLs)."""

from __future__ import annotations

from meshcert.certify.report import CertReport
from meshcert.reports.certification.view import build_cert_view
from meshcert.reports.htmlpage import render_page


def render_cert_html(report: CertReport) -> str:
    """The certification report as one HTML page."""
    return render_page("cert.html.j2", view=build_cert_view(report), kind="cert",
                       kind_label="certification report")
