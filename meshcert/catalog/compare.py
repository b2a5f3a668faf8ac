"""A catalog reference vs the package it names: the catalog-level findings, mesh-llm's
expected verdict and the row's status (pure).

mesh-llm's certifier is not run; its verdict is predicted from the refusals meshcert knows of:
`mesh_certify_would_fail` (valid layouts it cannot select), its producer-ABI string compare
(v0.76.2 refused every v2 package whose `native_abi_version` was not the runtime's ABI), and the
problems its own certifier checks too (no manifest, wrong size or SHA-256, ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from meshcert.catalog.entries import PackageReference
from meshcert.catalog.report import (
    CatalogOptions,
    CatalogPackage,
    Certification,
    MeshLlmVerdict,
    PackageFacts,
)
from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport, OverallStatus, combine_statuses
from meshcert.certify.verdict import verdict as cert_verdict
from meshcert.core.findings import Finding, finding

MESH_WOULD_FAIL = "mesh_certify_would_fail"
# Problems mesh-llm's own certifier checks as well (it refuses the package on each).
MESH_LLM_ALSO_REFUSES = frozenset({
    "missing_manifest", "invalid_manifest_json", "unsupported_schema_version",
    "hub_repo_not_found", "hub_revision_not_found", "hub_gated", "hub_disabled",
    "hub_unauthorized", "missing_artifact", "hub_artifact_missing", "artifact_size_mismatch",
    "hub_size_mismatch", "artifact_sha256_mismatch", "hub_sha256_mismatch",
    "package_identity_mismatch", "too_few_layers", "incompatible_skippy_abi_version",
})
MISSING_CODES = frozenset({"hub_repo_not_found", "hub_revision_not_found", "hub_disabled",
                           "hub_unauthorized"})
UNREADABLE_CODES = frozenset({"missing_manifest", "invalid_manifest_json", "manifest_too_large",
                              "duplicate_manifest_key", "unsupported_schema_version"})
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# Every code a catalog run emits (entries.py emits catalog_entry_invalid; the rest are here).
CATALOG_RUN_CODES = frozenset({
    "catalog_entry_invalid", "catalog_entry_unpinned", "catalog_package_missing",
    "catalog_package_gated", "catalog_package_unreadable", "catalog_layer_count_mismatch",
    "catalog_total_bytes_mismatch", "catalog_source_revision_mismatch",
    "catalog_source_mismatch", "catalog_package_duplicate", "catalog_mesh_llm_would_refuse",
    "catalog_mixed_mesh_llm_versions",
})


@dataclass(frozen=True)
class Certified:
    """What the catalog keeps of one package's certification."""

    certification: Certification
    facts: PackageFacts | None
    mesh_verdict: MeshLlmVerdict
    mesh_reasons: tuple[str, ...]


@dataclass(frozen=True)
class Resolution:
    """Which commit a reference was certified at, or why none could be."""

    revision: str | None
    source: Literal["entry", "resolved"] | None
    failure: Finding | None = None  # the Hub's answer when the repo could not be resolved


def summarize(report: CertReport, facts: PackageFacts | None, options: CatalogOptions
              ) -> Certified:
    errors = [f for f in report.findings if f.severity == "error"]
    warnings = [f for f in report.findings if f.severity == "warning"]
    certification = Certification(
        status=report.status, error_codes=sorted({f.code for f in errors}),
        warning_codes=sorted({f.code for f in warnings}), errors=len(errors),
        warnings=len(warnings), verdict=cert_verdict(report).sentence())
    reasons: list[str] = [f"{f.code}: {f.message}" for f in report.findings
                          if f.code == MESH_WOULD_FAIL]
    if facts is not None and facts.format == "v2" and options.runtime_abi \
            and facts.producer_abi and facts.producer_abi != options.runtime_abi:
        reasons.append(f"producer ABI {facts.producer_abi} is not the runtime's "
                       f"{options.runtime_abi}: mesh-llm v0.76.2 compared the two strings and "
                       "refused the package")
    reasons += [f"{code}: mesh-llm's certifier checks this too" for code in
                sorted({f.code for f in report.findings} & MESH_LLM_ALSO_REFUSES)]
    verdict: MeshLlmVerdict = ("refuses" if reasons else
                               "accepts" if report.status == "passed" else "unknown")
    return Certified(certification, facts, verdict, tuple(reasons))


def from_row(row: CatalogPackage) -> Certified | None:
    """A previous report's row, as a certification to re-use (--since)."""
    if row.certification is None:
        return None
    return Certified(row.certification, row.facts, row.mesh_llm_verdict,
                     tuple(row.mesh_llm_reasons))


def _f(code: str, reference: PackageReference, message: str) -> Finding:
    return finding(code, f"{reference.where}: {message}", path=reference.entry)


def _revisions_disagree(recorded: str, actual: str) -> bool:
    """Both commits, or both names, and different; a commit vs a name cannot be compared."""
    a, b = recorded.lower(), actual.lower()
    if bool(_COMMIT.match(a)) != bool(_COMMIT.match(b)):
        return False
    return a != b


def fact_findings(reference: PackageReference, facts: PackageFacts) -> list[Finding]:
    """What the entry records vs what the package's manifest says."""
    out: list[Finding] = []
    if reference.layer_count is not None and facts.layer_count is not None \
            and reference.layer_count != facts.layer_count:
        out.append(_f("catalog_layer_count_mismatch", reference, f"the entry records "
                      f"layer_count {reference.layer_count}, the package has "
                      f"{facts.layer_count}"))
    if reference.total_bytes is not None and facts.total_bytes is not None \
            and reference.total_bytes != facts.total_bytes:
        out.append(_f("catalog_total_bytes_mismatch", reference, f"the entry records "
                      f"total_bytes {reference.total_bytes}, the package's artifacts declare "
                      f"{facts.total_bytes}"))
    actual = facts.source_revision
    for label, recorded in (("source_revision", reference.source_revision),
                            ("the variant's source.revision", reference.source.revision)):
        if recorded is not None and actual is not None and _revisions_disagree(recorded,
                                                                               actual):
            out.append(_f("catalog_source_revision_mismatch", reference, f"the entry records "
                          f"{label} {recorded!r}, the package was written from source "
                          f"revision {actual!r}"))
    source = reference.source
    if source.repo and facts.source_repo and source.repo.lower() != facts.source_repo.lower():
        out.append(_f("catalog_source_mismatch", reference, f"the variant's source is "
                      f"{source.repo!r}, the package was written from {facts.source_repo!r}"))
    if source.file and facts.source_file and source.file.rsplit("/", 1)[-1] != facts.source_file:
        out.append(_f("catalog_source_mismatch", reference, f"the variant's source file is "
                      f"{source.file!r}, the package was written from {facts.source_file!r}"))
    return out


def _hub_findings(reference: PackageReference, codes: set[str], detail: str) -> list[Finding]:
    out: list[Finding] = []
    if codes & MISSING_CODES:
        out.append(_f("catalog_package_missing", reference, f"hf://{reference.repo} is not "
                      f"served ({', '.join(sorted(codes & MISSING_CODES))}){detail}"))
    if "hub_gated" in codes:
        out.append(_f("catalog_package_gated", reference, f"hf://{reference.repo} is gated: "
                      "nodes without access cannot download it"))
    if codes & UNREADABLE_CODES:
        out.append(_f("catalog_package_unreadable", reference, f"hf://{reference.repo} has no "
                      f"readable manifest ({', '.join(sorted(codes & UNREADABLE_CODES))})"))
    return out


def _unpinned(reference: PackageReference, resolution: Resolution) -> Finding:
    commit = f": commit {resolution.revision} was certified" if resolution.revision else ""
    if reference.revision is None:
        why = "no revision is recorded, so a lookup gets whatever the default branch holds"
    else:
        why = f"revision {reference.revision!r} is not a 40-hex commit id"
    return _f("catalog_entry_unpinned", reference, why + commit)


def build_row(reference: PackageReference, resolution: Resolution, certified: Certified | None,
              options: CatalogOptions, *, duplicate_of: Sequence[PackageReference] = ()
              ) -> CatalogPackage:
    """One report row: the reference, the commit, the package's verdict, the catalog's."""
    found: list[Finding] = list(reference.problems)
    if reference.pinned_commit is None:
        found.append(_unpinned(reference, resolution))
    for other in duplicate_of:
        found.append(_f("catalog_package_duplicate", reference, f"hf://{reference.repo} is "
                        f"also listed at {other.where}"))
    if resolution.failure is not None:
        failure = resolution.failure.model_copy(update={"path": reference.entry})
        found.append(failure)
        found += _hub_findings(reference, {failure.code}, "")
    if certified is not None:
        cert = certified.certification
        found += _hub_findings(reference, set(cert.error_codes), "")
        if certified.facts is not None:
            found += fact_findings(reference, certified.facts)
        if certified.mesh_verdict == "refuses" and cert.status == "passed":
            found.append(_f("catalog_mesh_llm_would_refuse", reference, "meshcert passes the "
                            "package, mesh-llm's certifier would refuse it: "
                            + "; ".join(certified.mesh_reasons)))
    return _row(reference, resolution, certified, found, options)


def _row(reference: PackageReference, resolution: Resolution, certified: Certified | None,
         found: list[Finding], options: CatalogOptions) -> CatalogPackage:
    cert = certified.certification if certified is not None else None
    errors = [f for f in found if f.severity == "error"]
    warnings = [f for f in found if f.severity == "warning"]
    return CatalogPackage(
        entry=reference.entry, variant=reference.variant, index=reference.index,
        repo=reference.repo, requested_revision=reference.revision,
        revision=resolution.revision, revision_source=resolution.source,
        status=row_status(cert, found, strict=options.strict), certification=cert,
        format=certified.facts.format if certified and certified.facts else None,
        error_codes=sorted({f.code for f in errors} | set(cert.error_codes if cert else [])),
        warning_codes=sorted({f.code for f in warnings}
                             | set(cert.warning_codes if cert else [])),
        errors=len(errors) + (cert.errors if cert else 0),
        warnings=len(warnings) + (cert.warnings if cert else 0),
        findings=found,
        mesh_llm_verdict=certified.mesh_verdict if certified else (
            "refuses" if resolution.failure is not None
            and resolution.failure.code in MESH_LLM_ALSO_REFUSES else "unknown"),
        mesh_llm_reasons=list(certified.mesh_reasons) if certified else (
            [f"{resolution.failure.code}: mesh-llm cannot fetch it either"]
            if resolution.failure is not None
            and resolution.failure.code in MESH_LLM_ALSO_REFUSES else []),
        facts=certified.facts if certified else None)


def row_status(cert: Certification | None, found: list[Finding], *, strict: bool
               ) -> OverallStatus:
    """The package's status, made worse by the catalog's findings: an error fails the row, a
    finding that could not tell (the Hub failed) makes it incomplete; with --strict any warning
    (the package's or the catalog's) fails it."""
    statuses: list[str] = [cert.status] if cert is not None else []
    if any(f.code in INCOMPLETE_CODES for f in found):
        statuses.append("incomplete")
    if any(f.severity == "error" and f.code not in INCOMPLETE_CODES for f in found):
        statuses.append("failed")
    if strict and (any(f.severity == "warning" for f in found) or (cert and cert.warnings)):
        statuses.append("failed")
    return combine_statuses(statuses) if statuses else "incomplete"
