"""The catalog report page: one row per package, sorted by verdict, linking each package's
own cert.html; self-contained (inline CSS, no script, no URL but those links) and inert."""

from __future__ import annotations

from pathlib import Path

from meshcert.catalog.since import Previous
from meshcert.reports.catalog.html import render_catalog_html
from meshcert.reports.catalog.outputs import CATALOG_HTML, write_catalog_reports
from tests.reports.catalog_fixture import CatalogOut
from tests.reports.checks_html import (
    assert_inert,
    assert_responsive_and_printable,
    assert_self_contained,
)
from tests.reports.dom import parse
from tests.support.catalog_run import HOSTILE_VARIANT

ORDER = {"failed": 0, "incomplete": 1, "passed": 2}


def test_one_row_per_package_sorted_by_verdict(catalog_out: CatalogOut) -> None:
    report = catalog_out.report
    page = parse((catalog_out.out_dir / CATALOG_HTML).read_text())
    rows = page.find("table", cls="catalog-packages").find("tbody").find_all("tr")
    assert len(rows) == len(report.packages) == 16
    statuses = [r.attrs["data-status"] or "" for r in rows]
    assert statuses == sorted(statuses, key=ORDER.__getitem__)
    # the hostile entry lists ns/old-v1 again: both of its rows fail as duplicates
    assert statuses.count("failed") == report.counts.failed == 12
    by_key = {r.attrs["data-key"]: r for r in rows}
    good = by_key["entries/meshcert/tiny-llama.json#F16#0"]
    cells = good.find_all("td")
    assert cells[0].text() == "passed"
    entry = good.find("th")
    assert entry.find("code").text() == "entries/meshcert/tiny-llama.json"
    assert entry.find(cls="note").text() == "F16"
    row = next(p for p in report.packages if p.repo == "ns/good-v1")
    assert row.revision is not None
    assert cells[1].find("code").text() == f"hf://ns/good-v1@{row.revision[:12]}"
    assert cells[1].find("code").attrs["title"] == row.revision
    assert cells[1].find(cls="pin").text() == "pinned"
    assert [c.text() for c in cells[2:5]] == ["v1", "0", "0"]
    assert cells[6].text() == "accepts"
    # the package's own verdict, the sentence `models certify` ends with (issue 45)
    assert row.certification is not None and row.certification.verdict
    assert cells[1].find(cls="row-verdict").text() == row.certification.verdict
    assert row.certification.verdict.startswith("certification passed")


def test_each_certified_package_links_its_own_cert_html(catalog_out: CatalogOut) -> None:
    page = parse((catalog_out.out_dir / CATALOG_HTML).read_text())
    links = {a.attrs["href"] for a in page.find_all("a", cls="report-link")}
    certified = {p.cert_html for p in catalog_out.report.packages if p.cert_html}
    assert links == certified and len(links) == 13  # a package listed twice: one report
    for href in links:
        assert href is not None and href.startswith("packages/ns/")
        target = catalog_out.out_dir / href
        assert target.is_file() and "certification report" in target.read_text()
    missing = page.find("tr", data_repo="ns/missing")
    assert not missing.find_all("a") and missing.find(cls="pin").text() == "unresolved"


def test_links_hold_from_a_page_written_elsewhere(catalog_out: CatalogOut,
                                                  tmp_path: Path) -> None:
    page_path = tmp_path / "site" / "ci" / "catalog.html"
    write_catalog_reports(catalog_out.report, out_dir=catalog_out.out_dir, html=page_path)
    page = parse(page_path.read_text())
    hrefs = [a.attrs["href"] or "" for a in page.find_all("a", cls="report-link")]
    assert hrefs and all(h.startswith("../") for h in hrefs)
    assert all((page_path.parent / h).resolve().is_file() for h in hrefs)


def test_the_page_is_self_contained_and_inert(catalog_out: CatalogOut) -> None:
    html = render_catalog_html(catalog_out.report)
    page = assert_self_contained(html, relative_links=True)
    assert_responsive_and_printable(page, html)
    assert_inert(html, HOSTILE_VARIANT)
    banner = page.find("header", id="verdict")
    assert banner.attrs["data-status"] == "failed"
    assert banner.find(cls="verdict-text").text() == "FAILED"


def test_catalog_findings_and_unreadable_entries_are_shown(catalog_out: CatalogOut) -> None:
    page = parse(render_catalog_html(catalog_out.report))
    section = page.find("section", id="catalog-findings")
    codes = {a.attrs["data-code"] for a in section.find_all("article")}
    assert {"catalog_entry_unpinned", "catalog_layer_count_mismatch",
            "catalog_mesh_llm_would_refuse", "catalog_package_gated"} <= codes
    entries = page.find("section", id="entries")
    [broken] = entries.find_all("article")
    assert broken.attrs["data-code"] == "catalog_entry_invalid"
    assert "entries/broken/model.json" in broken.text()
    assert not page.find_all("section", id="since")


def test_what_changed_since_a_previous_report_is_shown(catalog_out: CatalogOut) -> None:
    from meshcert.catalog.report import SinceInfo

    report = catalog_out.report.model_copy(update={"since": SinceInfo(
        report="before/catalog.json", new=1, changed=2, unchanged=13,
        removed=["entries/x/y.json Q4 ns/gone"])})
    assert Previous.of(report, "x", report.options).options_match
    page = parse(render_catalog_html(report))
    since = page.find("section", id="since")
    assert "before/catalog.json" in since.text() and "ns/gone" in since.text()


def test_only_entries_that_could_not_be_read_are_counted_as_unreadable(
        catalog_out: CatalogOut) -> None:
    """A catalog-wide warning and a problem in an entry whose packages were read and certified
    are catalog findings, not unreadable entries (the page once counted 3 for this report)."""
    from meshcert.core.findings import finding
    from meshcert.reports.catalog.markdown import render_catalog_markdown

    report = catalog_out.report
    read_entry = "entries/meshcert/tiny-llama.json"
    assert any(p.entry == read_entry and p.cert_html for p in report.packages)
    report = report.model_copy(update={"findings": [
        *report.findings,
        finding("catalog_mixed_mesh_llm_versions", "the catalog mixes packages that need "
                "different mesh-llm releases: 0.76.0, 0.77.0"),
        finding("catalog_entry_invalid", f"{read_entry}: source_repo 'x/y' does not match "
                "the file name", path=read_entry)]})
    page = parse(render_catalog_html(report))
    stats = {s.find(cls="stat-label").text(): s.find(cls="stat-value").text()
             for s in page.find("header", id="verdict").find_all("li", cls="stat")}
    assert stats["unreadable entries"] == "1"
    [broken] = page.find("section", id="entries").find_all("article")
    assert "entries/broken/model.json" in broken.text()
    wide = page.find("section", id="catalog-wide")
    assert [a.attrs["data-code"] for a in wide.find_all("article")] == [
        "catalog_mixed_mesh_llm_versions", "catalog_entry_invalid"]
    md = render_catalog_markdown(report)
    unreadable = md.split("### Entries that could not be read", 1)[1].split("<details>")[0]
    assert "broken/model.json" in unreadable and "tiny-llama.json" not in unreadable
    assert "### Catalog-wide findings" in md


def test_a_catalog_without_unreadable_entries_shows_no_such_count(
        catalog_out: CatalogOut) -> None:
    from meshcert.core.findings import finding

    report = catalog_out.report.model_copy(update={"findings": [
        finding("catalog_mixed_mesh_llm_versions", "mixed")]})
    page = parse(render_catalog_html(report))
    assert "unreadable entries" not in page.find("header", id="verdict").text()
    assert not page.find_all("section", id="entries")
