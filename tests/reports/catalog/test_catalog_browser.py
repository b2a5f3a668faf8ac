"""The catalog report in real headless Chromium (slow tier): it renders, the verdict shows in
its colour, every package is a row, and a row's link opens that package's own cert.html."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.reports.catalog.outputs import CATALOG_HTML
from tests.reports.browser import chromium_or_skip, dump_dom, screenshot
from tests.reports.catalog_fixture import CatalogOut
from tests.reports.dom import parse
from tests.reports.png import decode

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FAILED_RGB = (0xCF, 0x22, 0x2E)


def test_catalog_report_in_chromium(catalog_out: CatalogOut, tmp_path: Path) -> None:
    binary = chromium_or_skip()
    page = catalog_out.out_dir / CATALOG_HTML
    rendered = parse(dump_dom(binary, page, tmp_path / "profile-dom"))
    banner = rendered.find("header", id="verdict")
    assert banner.find(cls="verdict-text").text() == "FAILED"
    rows = rendered.find("table", cls="catalog-packages").find("tbody").find_all("tr")
    assert len(rows) == len(catalog_out.report.packages)
    png = screenshot(binary, page, tmp_path / "catalog.png", tmp_path / "profile-shot",
                     size=(1400, 1800))
    image = decode(png.read_bytes())
    assert (image.width, image.height) == (1400, 1800)
    assert image.distinct_colours() > 100, "screenshot looks blank"
    assert image.count_near(FAILED_RGB, bottom=320) > 200, "verdict colour not visible"


def test_a_row_links_to_the_package_report(catalog_out: CatalogOut, tmp_path: Path) -> None:
    binary = chromium_or_skip()
    page = parse(dump_dom(binary, catalog_out.out_dir / CATALOG_HTML, tmp_path / "p1"))
    row = page.find("tr", data_repo="ns/good-v1")
    href = row.find("a", cls="report-link").attrs["href"]
    assert href is not None
    target = parse(dump_dom(binary, catalog_out.out_dir / href, tmp_path / "p2"))
    verdict = target.find("header", id="verdict")
    assert verdict.find(cls="verdict-text").text() == "PASSED"
    assert "hf://ns/good-v1@" in verdict.text()


# Added to a copy of the page only (the report itself carries no script): how far the packages
# table reaches past its box, in CSS pixels, written where --dump-dom shows it.
MEASURE = ("<script>const w = document.querySelector('.table-wrap');"
           "document.body.dataset.overflow = String(w.scrollWidth - w.clientWidth);</script>")


def test_the_packages_table_fits_a_1280_px_window(catalog_out: CatalogOut,
                                                  tmp_path: Path) -> None:
    """The codes column wraps (after underscores) instead of pushing the mesh-llm, report and
    attested columns out of a 1280 px window."""
    binary = chromium_or_skip()
    html = (catalog_out.out_dir / CATALOG_HTML).read_text(encoding="utf-8")
    assert "catalog_<wbr>package_<wbr>duplicate" in html
    measured = tmp_path / "measured.html"
    measured.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    body = parse(dump_dom(binary, measured, tmp_path / "profile", size=(1280, 900))).find(
        "body")
    assert body.attrs["data-overflow"] == "0"
