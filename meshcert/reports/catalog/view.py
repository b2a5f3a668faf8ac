"""CatalogReport -> a view-model the catalog templates only lay out (pure).

Rows are sorted by verdict (failed, incomplete, passed), then by entry, variant and position,
so the packages that need a reviewer come first; the page needs no script to sort.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshcert.catalog.report import CatalogPackage, CatalogReport
from meshcert.core.findings import Finding
from meshcert.reports import fmt
from meshcert.reports.common import Fact, Stat

ENTRY_INVALID = "catalog_entry_invalid"
VERDICT_ORDER = {"failed": 0, "incomplete": 1, "passed": 2}
HEADLINES = {"passed": "Every package passed", "failed": "Some packages failed",
             "incomplete": "Some packages could not be certified"}
MESH_LABELS = {"accepts": "accepts", "refuses": "refuses", "unknown": "unknown"}
CHANGE_LABELS = {"new": "new", "changed": "new commit", "unchanged": "unchanged (re-used)",
                 "retried": "certified again"}


@dataclass(frozen=True)
class CatalogRowView:
    key: str  # entry#variant#index: unique per row
    status: str
    entry: str
    variant: str
    repo: str
    ref_text: str  # hf://repo@<short commit>
    revision: str
    pin_text: str
    pinned: bool
    format: str
    errors: int
    warnings: int
    error_codes: list[str]
    warning_codes: list[str]
    mesh: str
    mesh_reasons: list[str]
    mesh_short: list[str]  # the reasons' codes, each once, with a count when repeated
    href: str | None  # the package's cert.html, relative to the page
    change: str
    mesh_minimum: str = ""  # ">= 0.77.0": the oldest mesh-llm release that loads it (v2)
    defaults: str = ""  # "KV f16 · compute bf16 · profiles: a*, b" (v2; * = selection.default)
    attested: str = ""  # --trust: the trusted signer of its valid attestation
    attested_only: bool = False  # --trust-attested: accepted from it, no header read
    verdict: str = ""  # the package's own verdict sentence, as `models certify` ends


@dataclass(frozen=True)
class FindingView:
    code: str
    severity: str
    message: str
    remediation: str
    where: str


@dataclass(frozen=True)
class RowFindings:
    key: str
    title: str
    status: str
    findings: list[FindingView]


@dataclass(frozen=True)
class CatalogView:
    title: str
    status: str
    headline: str
    subject: str
    catalog_ref: str
    stats: list[Stat]
    rows: list[CatalogRowView]
    row_findings: list[RowFindings]
    entry_findings: list[FindingView]  # about the entries that could not be read
    catalog_wide: list[FindingView]  # the catalog's other findings (no one package's)
    since: list[Fact]
    removed: list[str]
    provenance: list[Fact]


def _finding(f: Finding) -> FindingView:
    return FindingView(f.code, f.severity, f.message, f.remediation, f.path or "")


def _pin(row: CatalogPackage) -> tuple[str, bool]:
    if row.revision_source == "entry":
        return "pinned", True
    if row.revision_source == "resolved":
        return "unpinned", False
    return "unresolved", False


def _short(reasons: list[str]) -> list[str]:
    """Each reason's code (its text before ':'), once, counted when it repeats."""
    heads = ["producer ABI" if r.startswith("producer ABI") else r.split(":", 1)[0]
             for r in reasons]
    counts = dict.fromkeys(heads, 0)
    for head in heads:
        counts[head] += 1
    return [f"{k} \u00d7{n}" if n > 1 else k for k, n in counts.items()]


def _row(row: CatalogPackage, link_prefix: str) -> CatalogRowView:
    pin_text, pinned = _pin(row)
    ref = f"hf://{row.repo}@{fmt.short_sha(row.revision)}" if row.revision else f"hf://{row.repo}"
    return CatalogRowView(
        key=f"{row.entry}#{row.variant}#{row.index}", status=row.status, entry=row.entry,
        variant=row.variant, repo=row.repo, ref_text=ref, revision=row.revision or "",
        pin_text=pin_text, pinned=pinned, format=row.format or "\u2014", errors=row.errors,
        warnings=row.warnings, error_codes=row.error_codes, warning_codes=row.warning_codes,
        mesh=MESH_LABELS[row.mesh_llm_verdict], mesh_reasons=row.mesh_llm_reasons,
        mesh_short=_short(row.mesh_llm_reasons),
        href=link_prefix + row.cert_html if row.cert_html else None,
        change=CHANGE_LABELS.get(row.change or "", ""),
        mesh_minimum=f">= {row.facts.mesh_llm_minimum}"
        if row.facts is not None and row.facts.mesh_llm_minimum else "",
        defaults=shipped_defaults(row), attested=row.attested or "",
        attested_only=row.attested_only,
        verdict=row.certification.verdict or "" if row.certification is not None else "")


def shipped_defaults(row: CatalogPackage) -> str:
    """What a node applies from the package, in one line ('' for v1 or no facts)."""
    facts = row.facts
    if facts is None or facts.kv_cache_type is None:
        return ""
    parts = [f"KV {facts.kv_cache_type}"]
    if facts.compute_dtype:
        parts.append(f"compute {facts.compute_dtype}")
    if facts.request_profiles:
        names = [f"{n}*" if n == facts.default_profile else n for n in facts.request_profiles]
        parts.append("profiles: " + ", ".join(names))
    return " \u00b7 ".join(parts)


def unreadable_entries(report: CatalogReport) -> set[str]:
    """Entry files that could not be read: an invalid entry from which no package reference
    was read (a catalog-wide finding, or a problem in an entry whose packages were read and
    certified, is not one)."""
    read = {row.entry for row in report.packages}
    return {f.path for f in report.findings
            if f.code == ENTRY_INVALID and f.path and f.path not in read}


def sorted_rows(report: CatalogReport) -> list[CatalogPackage]:
    return sorted(report.packages, key=lambda r: (VERDICT_ORDER[r.status], r.entry, r.variant,
                                                  r.index))


def build_catalog_view(report: CatalogReport, link_prefix: str = "") -> CatalogView:
    """`link_prefix` leads from where the page is written to the --out-dir (ends with '/')."""
    rows = sorted_rows(report)
    c = report.counts
    stats = [Stat("packages", str(c.packages)),
             Stat("passed", str(c.passed), "ok" if c.passed else ""),
             Stat("failed", str(c.failed), "bad" if c.failed else ""),
             Stat("incomplete", str(c.incomplete), "warn" if c.incomplete else ""),
             Stat("mesh-llm refuses", str(c.mesh_llm_refuses), "warn" if c.mesh_llm_refuses
                  else ""),
             Stat("unpinned entries", str(c.unpinned), "warn" if c.unpinned else ""),
             Stat("hub requests", str(c.requests))]
    unreadable = unreadable_entries(report)
    if unreadable:
        stats.insert(4, Stat("unreadable entries", str(len(unreadable)), "bad"))
    catalog = report.catalog
    ref = catalog.location + (f"@{catalog.revision}" if catalog.revision else "")
    row_findings = [RowFindings(f"{r.entry}#{r.variant}#{r.index}",
                                f"{r.entry} \u00b7 {r.variant} \u00b7 {r.repo}", r.status,
                                [_finding(f) for f in r.findings])
                    for r in rows if r.findings]
    since: list[Fact] = []
    removed: list[str] = []
    if report.since is not None:
        s = report.since
        since = [Fact("previous report", s.report, mono=True),
                 Fact("previous catalog commit", s.previous_catalog_revision or "\u2014",
                      mono=True),
                 Fact("new", str(s.new)), Fact("new commit", str(s.changed)),
                 Fact("unchanged (re-used)", str(s.unchanged)),
                 Fact("certified again", str(s.retried)), Fact("removed", str(len(s.removed)))]
        removed = s.removed
    options = report.options
    provenance = [
        Fact("catalog", catalog.input, mono=True),
        Fact("read at", ref, mono=True),
        Fact("entry files", str(catalog.entry_files)),
        Fact("runtime ABI", options.runtime_abi or "not given"),
        Fact("verification", "sha256 streamed from the Hub" if options.verify_sha256
             else "sha256 attested by the Hub (LFS), not re-hashed"),
        Fact("strict", "yes: warnings fail a package" if options.strict else "no"),
        Fact("packages certified", str(c.certified)),
        Fact("tool", f"{report.tool.name} {report.tool.version}"),
        Fact("mesh-llm rules", f"v{report.tool.mesh_llm_version}"
             if report.tool.mesh_llm_version else "\u2014"),
        Fact("started", report.started_at, mono=True),
        Fact("duration", fmt.elapsed(report.started_at, report.finished_at)),
    ]
    return CatalogView(
        title=f"Catalog {report.status}: {catalog.location}", status=report.status,
        headline=HEADLINES[report.status], subject=catalog.location, catalog_ref=ref,
        stats=stats, rows=[_row(r, link_prefix) for r in rows], row_findings=row_findings,
        entry_findings=[_finding(f) for f in report.findings if f.path in unreadable],
        catalog_wide=[_finding(f) for f in report.findings if f.path not in unreadable],
        since=since, removed=removed,
        provenance=provenance)
