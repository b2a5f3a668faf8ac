"""The catalog report as Markdown for a CI step summary: the verdict, the counts, a row per
package sorted by verdict, report text made inert."""

from __future__ import annotations

from meshcert.reports.catalog.markdown import render_catalog_markdown
from meshcert.reports.mdutil import text
from tests.reports.catalog_fixture import CatalogOut


def table_rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("| ")]
    header = lines[0]
    assert header.startswith("| verdict | entry | variant | package |")
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]
            if not line.startswith("| package | code |")]


def test_the_summary_leads_with_the_verdict_and_counts(catalog_out: CatalogOut) -> None:
    md = render_catalog_markdown(catalog_out.report)
    lines = md.splitlines()
    assert lines[0].startswith("## \u274c Catalog failed: <code>")
    counts = next(line for line in lines if line.startswith("**Packages:**"))
    c = catalog_out.report.counts
    assert counts == (f"**Packages:** 16 \u00b7 4 passed \u00b7 12 failed \u00b7 0 incomplete "
                      f"\u00b7 mesh-llm refuses 6 \u00b7 13 unpinned \u00b7 {c.requests} Hub "
                      "requests")


def test_a_row_per_package_failed_first(catalog_out: CatalogOut) -> None:
    md = render_catalog_markdown(catalog_out.report)
    rows = [r for r in table_rows(md) if len(r) == 12]  # the last column: attested
    assert len(rows) == 16
    verdicts = [r[0] for r in rows]
    assert verdicts == ["\u274c failed"] * 12 + ["\u2705 passed"] * 4
    gated = next(r for r in rows if "ns/gated" in r[3])
    assert "<code>hub\\_gated</code>" in gated[8] and "(not pinned)" in gated[3]
    assert gated[7] == "\u274c refuses"
    # the mesh-llm release each package needs and the defaults it ships (v2 only)
    good_v2 = next(r for r in rows if "ns/good-v2" in r[3])
    assert (good_v2[9], good_v2[10]) == ("&gt;= 0.76.0", "KV f16")  # Markdown-escaped
    good_v1 = next(r for r in rows if "ns/good-v1" in r[3])
    assert (good_v1[9], good_v1[10]) == ("\u2014", "\u2014")


def test_each_row_states_the_package_s_own_verdict(catalog_out: CatalogOut) -> None:
    # the sentence `models certify` ends with, under the package's reference, as the HTML row
    # and the console state it (issue 45)
    rows = [r for r in table_rows(render_catalog_markdown(catalog_out.report)) if len(r) == 12]
    certified = [p for p in catalog_out.report.packages if p.certification is not None]
    assert certified
    for package in certified:
        assert package.certification is not None and package.certification.verdict
        sentence = text(package.certification.verdict)
        row = next(r for r in rows if f"hf://{package.repo}@" in r[3] and sentence in r[3])
        ref, _, verdict = row[3].partition("<br>")
        assert ref.startswith("<code>hf://") and verdict == sentence
        assert verdict.startswith(f"certification {package.certification.status}")


def test_unreadable_entries_and_findings_are_listed(catalog_out: CatalogOut) -> None:
    md = render_catalog_markdown(catalog_out.report)
    assert "### Entries that could not be read" in md
    assert "- entries/broken/model.json: the file does not parse" in md
    assert "<details><summary>Catalog findings</summary>" in md


def test_report_text_is_inert(catalog_out: CatalogOut) -> None:
    md = render_catalog_markdown(catalog_out.report)
    assert "<script>" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md
