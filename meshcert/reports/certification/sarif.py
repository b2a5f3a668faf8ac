"""SARIF 2.1.0 (OASIS) for code-scanning dashboards: one result per finding.

ruleId = the finding code; the rules (one per code present) come from the finding catalog:
severity -> defaultConfiguration.level (error/warning/note), remediation -> help. Each result is
located at its artifact path (relative to the package directory, `uriBaseId` PACKAGE_ROOT, when
the report has one); the layer index and the check group ride in `properties`. A finding with
no path is located at the input (the package's manifest, or the ref / file given). The run's
invocation says whether meshcert could check everything (`executionSuccessful` is false for an
incomplete report), `properties` carry the status, the verdict sentence and its counts
(meshcert.reports.certification.verdict), and each skipped check is a note in the invocation's
`toolExecutionNotifications`, with why it did no work.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

from meshcert.certify.report import CertReport
from meshcert.core.codes import CODES
from meshcert.core.findings import Finding
from meshcert.reports.certification.verdict import verdict

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
ROOT_ID = "PACKAGE_ROOT"
MANIFEST = "model-package.json"


def _uri(path: str) -> str:
    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    if "://" in path:
        return path  # an hf:// ref
    return quote(path.replace(os.sep, "/"))


def _location(report: CertReport, path: str | None) -> dict[str, Any]:
    artifact: dict[str, Any]
    if path is None and report.local_package_dir:
        artifact = {"uri": MANIFEST, "uriBaseId": ROOT_ID}
    elif path is None:
        artifact = {"uri": _uri(report.input)}
    elif report.local_package_dir and not os.path.isabs(path):
        artifact = {"uri": _uri(path), "uriBaseId": ROOT_ID}
    else:
        artifact = {"uri": _uri(path)}
    return {"physicalLocation": {"artifactLocation": artifact}}


def rule(code: str) -> dict[str, Any]:
    """The SARIF rule of a finding code, from the registry (shared by the catalog's SARIF)."""
    row = CODES.get(code)
    if row is None:  # a code outside the catalog cannot be emitted; keep the result valid
        return {"id": code, "defaultConfiguration": {"level": "error"}}
    return {
        "id": code,
        "name": code,
        "shortDescription": {"text": f"{row.group}: {code}"},
        "help": {"text": row.remediation},
        "defaultConfiguration": {"level": LEVELS[row.severity]},
        "properties": {"group": row.group},
    }


def _result(report: CertReport, f: Finding, index: dict[str, int]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    if f.layer_index is not None:
        properties["layer_index"] = f.layer_index
    if f.check is not None:
        properties["check"] = f.check
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [_location(report, f.path)],
    }
    if properties:
        result["properties"] = properties
    return result


def _skipped(report: CertReport) -> list[dict[str, Any]]:
    """Each skipped check as a note of the run: it did no work, and says why."""
    return [{"descriptor": {"id": c.name}, "level": "note",
             "message": {"text": f"check {c.name} skipped: {c.details or 'no reason given'}"}}
            for c in report.checks if c.status == "skipped"]


def _verdict(report: CertReport) -> dict[str, Any]:
    said = verdict(report)
    return {"status": report.status, "verdict": said.sentence(), "errors": said.errors,
            "warnings": said.warnings, "notes": said.notes, "checks_run": said.checks_run,
            "checks_skipped": said.checks_skipped, "input": report.input}


def build_sarif(report: CertReport) -> dict[str, Any]:
    codes = sorted({f.code for f in report.findings})
    index = {code: i for i, code in enumerate(codes)}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": report.tool.name, "version": report.tool.version,
                            "rules": [rule(code) for code in codes]}},
        "results": [_result(report, f, index) for f in report.findings],
        "invocations": [{"executionSuccessful": report.status != "incomplete",
                         "startTimeUtc": report.started_at, "endTimeUtc": report.finished_at,
                         "toolExecutionNotifications": _skipped(report)}],
        "properties": _verdict(report),
    }
    if report.local_package_dir:
        root = os.path.abspath(report.local_package_dir).replace(os.sep, "/").rstrip("/") + "/"
        run["originalUriBaseIds"] = {ROOT_ID: {"uri": "file://" + quote(root)}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(report: CertReport) -> str:
    return json.dumps(build_sarif(report), indent=2, ensure_ascii=False) + "\n"
