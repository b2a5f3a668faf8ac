"""A signed certification in the reports: the cert report's HTML and Markdown show the
signer, the result and the subject count; the catalog report has an "attested" column."""

from __future__ import annotations

from meshcert.catalog.report import (
    CatalogCounts,
    CatalogOptions,
    CatalogPackage,
    CatalogReport,
    CatalogSource,
)
from meshcert.certify.report import AttestationSummary, CertReport, ToolInfo
from meshcert.reports.catalog.html import render_catalog_html
from meshcert.reports.catalog.markdown import render_catalog_markdown
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.certification.markdown import render_cert_markdown
from meshcert.reports.mdutil import code
from tests.reports.dom import parse

SIGNER = "ed25519:" + "3b" * 32


def signed(report: CertReport) -> CertReport:
    return report.model_copy(update={"attestation": AttestationSummary(
        signer=SIGNER, result="PASSED", subjects=9, file="out/cert.intoto.jsonl")})


def test_the_markdown_names_the_signer_result_and_subjects(passed_report: CertReport) -> None:
    md = render_cert_markdown(signed(passed_report))
    assert f"**Attestation:** PASSED, signed by {code(SIGNER)}, 9 subject(s) in " \
           f"{code('out/cert.intoto.jsonl')}" in md
    assert "**Attestation:**" not in render_cert_markdown(passed_report)


def test_the_html_has_an_attestation_section(passed_report: CertReport) -> None:
    page = parse(render_cert_html(signed(passed_report)))
    section = page.find("section", id="attestation")
    assert section is not None
    content = section.text()
    assert "PASSED" in content and SIGNER in content and "9" in content
    assert parse(render_cert_html(passed_report)).find_all("section", id="attestation") == []


def catalog(*rows: CatalogPackage) -> CatalogReport:
    return CatalogReport(
        status="passed", catalog=CatalogSource(input="cat", kind="local", location="cat",
                                               entry_files=1),
        options=CatalogOptions(), packages=list(rows), counts=CatalogCounts(packages=len(rows)),
        tool=ToolInfo(version="0"), started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z")


def row(repo: str, **fields: object) -> CatalogPackage:
    return CatalogPackage(entry="entries/meshcert/tiny.json", variant="Q4", index=0, repo=repo,
                          revision="a" * 40, revision_source="entry", status="passed",
                          **fields)  # type: ignore[arg-type]


def test_the_catalog_markdown_has_an_attested_column() -> None:
    md = render_catalog_markdown(catalog(row("ns/signed", attested=SIGNER, attested_only=True),
                                         row("ns/plain")))
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert lines[0].rstrip().endswith("| attested |")
    signed_line = next(line for line in lines if "ns/signed" in line)
    assert f"{code(SIGNER)} (accepted from it, no header read)" in signed_line
    plain_line = next(line for line in lines if "ns/plain" in line)
    assert plain_line.rstrip().endswith("| \u2014 |")


def test_the_catalog_html_has_an_attested_column() -> None:
    page = parse(render_catalog_html(catalog(row("ns/signed", attested=SIGNER))))
    table = page.find("table", cls="catalog-packages")
    assert table.find("thead").find_all("th")[-1].text() == "attested"
    cell = table.find("tbody").find("td", cls="attested")
    assert cell is not None and SIGNER in cell.text()
