"""Catalog-level: packages that need different mesh-llm releases (mesh-llm-0.79.md §4). A node
older than the newest need cannot load some of the catalog's packages, so a catalog that still
serves older nodes must know which (pure)."""

from __future__ import annotations

from meshcert.catalog.report import CatalogPackage
from meshcert.certify.mesh_llm_versions import parse_version
from meshcert.core.findings import Finding, finding

MIXED_MINIMUMS = "catalog_mixed_mesh_llm_versions"


def _key(version: str) -> tuple[int, int, int]:
    return parse_version(version) or (0, 0, 0)


def mixed_version_findings(rows: list[CatalogPackage]) -> list[Finding]:
    """One warning when the rows' oldest-node needs differ, naming the packages per release."""
    by_version: dict[str, list[str]] = {}
    for row in rows:
        need = row.facts.mesh_llm_minimum if row.facts is not None else None
        if need is not None and row.repo not in by_version.setdefault(need, []):
            by_version[need].append(row.repo)
    if len(by_version) < 2:
        return []
    ordered = sorted(by_version, key=_key)
    newest = ordered[-1]
    parts = [f">= {v}: {len(by_version[v])} package(s) ({', '.join(by_version[v][:5])}"
             f"{', ...' if len(by_version[v]) > 5 else ''})" for v in ordered]
    return [finding(MIXED_MINIMUMS, "the catalog mixes packages that need different mesh-llm "
                    f"releases: {'; '.join(parts)}. Nodes older than {newest} cannot load "
                    "every package.")]
