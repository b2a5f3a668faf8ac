"""The catalog report as one self-contained HTML page (inline CSS, no script, no URL but the
relative links to each package's own cert.html)."""

from __future__ import annotations

from meshcert.catalog.report import CatalogReport
from meshcert.reports.catalog.view import build_catalog_view
from meshcert.reports.htmlpage import render_page


def render_catalog_html(report: CatalogReport, link_prefix: str = "") -> str:
    """`link_prefix`: the way from the page's folder to the --out-dir ('' when the page is in
    it), so the links to packages/<ns>/<name>/<commit>/cert.html hold."""
    return render_page("catalog.html.j2", view=build_catalog_view(report, link_prefix),
                       kind="catalog", kind_label="catalog report")
