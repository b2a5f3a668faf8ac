"""SARIF 2.1.0 (OASIS) for code-scanning dashboards: one result per finding.

ruleId = the finding code; the rules (one per code present) come from the finding-code table:
severity -> defaultConfiguration.level (error/warning/note), remediation -> help. Each result is
located at its artifact path (relative to the package directory, `uriBaseId` PACKAGE_ROOT, when
the report has one); the layer index and the check group ride in `properties`. A finding with
no path is located at the input (the package's manifest, or the ref / file given). The run's
invocation says whether meshcert could check everything (`executionSuccessful` is false for an
incomplete report), `properties` carry the status, the verdict sentence and its counts
(meshcert.reports.certification.verdict), and each skipped check is a note in the invocation's
`toolExecutionNotifications`, with why it did no work. The gates the verdict counts beside the
findings are results too (`package_gate` / `runtime_gate` rules): a failed warning-level runtime
gate a warning, a gate that did not pass and that no error finding stands for an error; so the
results by level are the verdict's errors + failed gates, warnings and notes.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

from meshcert.certify.report import CertReport
from meshcert.core.codes import CODES
from meshcert.core.findings import Finding
from meshcert.reports.certification.verdict import uncounted_gates, verdict

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
    """The SARIF rule of a finding code, from the code table (shared by the catalog's SARIF)."""
    row = CODES.get(code)
    if row is None:  # a code outside the code table cannot be emitted; keep the result valid
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


GATE_RULES = {
    "package_gate": "The package gate did not pass though no error finding says why (--strict "
    "warnings, or a read that was interrupted): see the gate's details.",
    "runtime_gate": "A runtime gate did not pass against the served endpoint: see its details "
    "in the report.",
}


def _gate_results(report: CertReport, start: int) -> tuple[list[dict[str, Any]],
                                                            list[dict[str, Any]]]:
    """The gates the verdict counts beside the findings: each gate that did not pass and that
    no error finding stands for (level error), each failed warning-level runtime gate (level
    warning). Returns (rules, results)."""
    counted = [(g, "error") for g in uncounted_gates(report)]
    counted += [(g, "warning") for g in report.runtime_gates
                if g.severity == "warning" and g.status == "failed"]
    used = sorted({"package_gate" if g is report.package_gate else "runtime_gate"
                   for g, _ in counted})
    rules = [{"id": r, "name": r, "shortDescription": {"text": f"gate: {r}"},
              "help": {"text": GATE_RULES[r]}, "defaultConfiguration": {"level": "error"}}
             for r in used]
    results = []
    for gate, level in counted:
        rule_id = "package_gate" if gate is report.package_gate else "runtime_gate"
        results.append({"ruleId": rule_id, "ruleIndex": start + used.index(rule_id),
                        "level": level, "message": {"text": f"gate {gate.name} {gate.status}: "
                                                    f"{gate.details or gate.status}"},
                        "locations": [_location(report, None)],
                        "properties": {"gate": gate.name}})
    return rules, results


def _skipped(report: CertReport) -> list[dict[str, Any]]:
    """Each skipped check as a note of the run: it did no work, and says why."""
    return [{"descriptor": {"id": c.name}, "level": "note",
             "message": {"text": f"check {c.name} skipped: {c.details or 'no reason given'}"}}
            for c in report.checks if c.status == "skipped"]


def _verdict(report: CertReport) -> dict[str, Any]:
    said = verdict(report)
    return {"status": report.status, "verdict": said.sentence(), "errors": said.errors,
            "warnings": said.warnings, "notes": said.notes, "checks_run": said.checks_run,
            "checks_skipped": said.checks_skipped, "failed_gates": said.failed_gates,
            "coverage": list(said.coverage), "input": report.input,
            **({"coverage_detail": report.coverage.model_dump(mode="json")}
               if report.coverage is not None else {})}


def build_sarif(report: CertReport) -> dict[str, Any]:
    codes = sorted({f.code for f in report.findings})
    index = {code: i for i, code in enumerate(codes)}
    gate_rules, gate_results = _gate_results(report, len(codes))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": report.tool.name, "version": report.tool.version,
                            "rules": [rule(code) for code in codes] + gate_rules}},
        "results": [_result(report, f, index) for f in report.findings] + gate_results,
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
