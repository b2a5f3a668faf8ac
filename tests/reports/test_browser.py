"""Open the HTML reports in real headless Chromium (slow tier; CI sets
MESHCERT_REQUIRE_BROWSER=1 so a missing browser fails instead of skipping)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.evidence.headline import headline_of
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.evidence.html import render_evidence_html, render_history_html
from tests.reports.browser import chromium_or_skip, dump_dom, print_pdf, screenshot
from tests.reports.dom import parse
from tests.reports.png import decode

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VERDICT_RGB = {"passed": (0x1A, 0x7F, 0x37), "failed": (0xCF, 0x22, 0x2E),
               "incomplete": (0x9A, 0x67, 0x00)}


def check_page(html: str, name: str, verdict: str, colour: tuple[int, int, int],
               tmp_path: Path) -> None:
    binary = chromium_or_skip()
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    rendered = parse(dump_dom(binary, page, tmp_path / "profile-dom"))
    banner = rendered.find("header", id="verdict")
    assert banner.find(cls="verdict-text").text() == verdict
    assert "hidden" not in banner.attrs and "style" not in banner.attrs
    assert rendered.find_all("svg"), "the charts did not survive rendering"
    png = screenshot(binary, page, tmp_path / f"{name}.png", tmp_path / "profile-shot")
    assert png.stat().st_size > 20_000, "screenshot suspiciously small"
    image = decode(png.read_bytes())
    assert (image.width, image.height) == (1200, 2000)
    assert image.distinct_colours() > 100, "screenshot looks blank"
    # The verdict colour is painted in the banner at the top of the page.
    assert image.count_near(colour, bottom=320) > 200, "verdict colour not visible"


@pytest.mark.parametrize("kind", ["passed", "failed", "incomplete", "runtime"])
def test_cert_report_in_chromium(cert_reports: dict[str, CertReport], kind: str,
                                 tmp_path: Path) -> None:
    report = cert_reports[kind]
    check_page(render_cert_html(report), f"cert-{kind}", report.status.upper(),
               VERDICT_RGB[report.status], tmp_path)


@pytest.mark.parametrize("kind", ["example", "synthetic", "passed", "incomplete"])
def test_evidence_report_in_chromium(evidence_reports: dict[str, EvidenceReport], kind: str,
                                     tmp_path: Path) -> None:
    report = evidence_reports[kind]
    status = headline_of(report).status  # issue 35: the banner states the headline
    check_page(render_evidence_html(report), f"evidence-{kind}", status.upper(),
               VERDICT_RGB[status], tmp_path)


def test_history_report_in_chromium(tmp_path: Path) -> None:
    from meshcert.evidence.history_report import history_files
    from tests.evidence.parsers.helpers import DATA

    rep = history_files([str(DATA / "history.jsonl")]).report
    check_page(render_history_html(rep.history, sources=rep.sources, rows_read=rep.rows),
               "history", "FAILED", VERDICT_RGB["failed"], tmp_path)


def test_reports_print_to_pdf(failed_report: CertReport,
                              evidence_reports: dict[str, EvidenceReport],
                              tmp_path: Path) -> None:
    binary = chromium_or_skip()
    for name, html in (("cert", render_cert_html(failed_report)),
                       ("evidence", render_evidence_html(evidence_reports["synthetic"]))):
        page = tmp_path / f"{name}.html"
        page.write_text(html, encoding="utf-8")
        data = print_pdf(binary, page, tmp_path / f"{name}.pdf", tmp_path / "profile").read_bytes()
        assert data.startswith(b"%PDF")
        pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
        assert 1 <= pages <= 40, pages
