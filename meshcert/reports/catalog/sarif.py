"""SARIF 2.1.0 of a catalog report, for code-scanning dashboards over a catalog checkout.

One result per catalog-level finding (an entry file that could not be read, located at its
path), per catalog-level finding of a package row, and per distinct error or warning code of a
package's certification (the row's `error_codes` / `warning_codes`: the per-package cert.json
holds the findings themselves). Rows are located at their entry file
(entries/<owner>/<repo>.json); `properties` carry the package repo, revision and variant. The
rules come from the finding-code table, as for a certification report's SARIF.
"""

from __future__ import annotations

import json
from typing import Any

from meshcert.catalog.report import CatalogPackage, CatalogReport
from meshcert.core.findings import Finding
from meshcert.reports.certification.sarif import LEVELS, SARIF_SCHEMA, SARIF_VERSION, rule


def _located(path: str | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    return [{"physicalLocation": {"artifactLocation": {"uri": path}}}]


def _results(report: CatalogReport) -> list[tuple[str, str, str, str | None, dict[str, Any]]]:
    """(code, level, message, path, properties) for every result, in report order."""
    out: list[tuple[str, str, str, str | None, dict[str, Any]]] = []
    for f in report.findings:
        out.append((f.code, LEVELS[f.severity], f.message, f.path, {}))
    for row in report.packages:
        where = _row_properties(row)
        label = f"hf://{row.repo}" + (f"@{row.revision}" if row.revision else "")
        out += [_finding_result(f, row, where) for f in row.findings]
        seen = {f.code for f in row.findings}
        for codes, level in ((row.error_codes, "error"), (row.warning_codes, "warning")):
            out += [(code, level, f"{label} ({row.variant}): {code}", row.entry, where)
                    for code in codes if code not in seen]
    return out


def _row_properties(row: CatalogPackage) -> dict[str, Any]:
    return {"repo": row.repo, "revision": row.revision, "variant": row.variant,
            "status": row.status}


def _finding_result(f: Finding, row: CatalogPackage, where: dict[str, Any]
                    ) -> tuple[str, str, str, str | None, dict[str, Any]]:
    return f.code, LEVELS[f.severity], f.message, f.path or row.entry, where


def build_catalog_sarif(report: CatalogReport) -> dict[str, Any]:
    results = _results(report)
    codes = sorted({code for code, *_ in results})
    index = {code: i for i, code in enumerate(codes)}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": report.tool.name, "version": report.tool.version,
                            "rules": [rule(code) for code in codes]}},
        "results": [{"ruleId": code, "ruleIndex": index[code], "level": level,
                     "message": {"text": message}, "locations": _located(path),
                     **({"properties": props} if props else {})}
                    for code, level, message, path, props in results],
        "invocations": [{"executionSuccessful": report.status != "incomplete",
                         "startTimeUtc": report.started_at, "endTimeUtc": report.finished_at}],
        "properties": {"status": report.status, "input": report.catalog.input},
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_catalog_sarif(report: CatalogReport) -> str:
    return json.dumps(build_catalog_sarif(report), indent=2, ensure_ascii=False) + "\n"
