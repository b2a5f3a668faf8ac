"""The catalog report in Markdown, for a CI step summary ($GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from meshcert.catalog.report import CatalogReport
from meshcert.reports.catalog.view import CatalogRowView, build_catalog_view
from meshcert.reports.mdutil import STATUS_ICONS, code, status, table, text

MESH_ICONS = {"accepts": "\u2705", "refuses": "\u274c", "unknown": "\u2796"}


def _attested(signer: str, only: bool) -> str:
    if not signer:
        return "\u2014"
    return code(signer) + (" (accepted from it, no header read)" if only else "")


def _package(r: CatalogRowView) -> str:
    """The package's reference, and below it its own verdict: the sentence `models certify`
    ends with, as the HTML row and the console state it."""
    ref = code(r.ref_text) + ("" if r.pinned else " (not pinned)")
    return f"{ref}<br>{text(r.verdict)}" if r.verdict else ref


def render_catalog_markdown(report: CatalogReport, link_prefix: str = "") -> str:
    view = build_catalog_view(report, link_prefix)
    c = report.counts
    out = [f"## {STATUS_ICONS[view.status]} Catalog {text(view.status)}: {code(view.subject)}",
           "", f"**Read at:** {code(view.catalog_ref)}  ",
           f"**Packages:** {c.packages} \u00b7 {c.passed} passed \u00b7 {c.failed} failed \u00b7 "
           f"{c.incomplete} incomplete \u00b7 mesh-llm refuses {c.mesh_llm_refuses} \u00b7 "
           f"{c.unpinned} unpinned \u00b7 {c.requests} Hub requests", ""]
    if view.rows:
        out += table(
            ["verdict", "entry", "variant", "package", "format", "errors", "warnings",
             "mesh-llm", "codes", "needs mesh-llm", "defaults", "attested"],
            [[status(r.status), code(r.entry), text(r.variant), _package(r), text(r.format),
              str(r.errors), str(r.warnings), f"{MESH_ICONS[r.mesh]} {text(r.mesh)}",
              ", ".join(code(c) for c in r.error_codes + r.warning_codes),
              text(r.mesh_minimum or "\u2014"), text(r.defaults or "\u2014"),
              _attested(r.attested, r.attested_only)]
             for r in view.rows], ["l", "l", "l", "l", "l", "r", "r", "l", "l", "l", "l", "l"])
    else:
        out.append("The catalog lists no layer-package reference.")
    if view.catalog_wide:
        out += ["", "### Catalog-wide findings", ""]
        out += [f"- {code(f.code)} ({text(f.severity)}): {text(f.message)}"
                for f in view.catalog_wide]
    if view.entry_findings:
        out += ["", "### Entries that could not be read", ""]
        out += [f"- {text(f.message)}" for f in view.entry_findings]
    if report.since is not None:
        s = report.since
        out += ["", f"**Since {code(s.report)}:** {s.new} new, {s.changed} with a new commit, "
                f"{s.unchanged} unchanged (re-used), {s.retried} certified again, "
                f"{len(s.removed)} removed"]
    if view.row_findings:
        out += ["", "<details><summary>Catalog findings</summary>", ""]
        out += table(["package", "code", "message"],
                     [[text(g.title), code(f.code), text(f.message)]
                      for g in view.row_findings for f in g.findings])
        out += ["", "</details>"]
    out.append("")
    return "\n".join(out)
