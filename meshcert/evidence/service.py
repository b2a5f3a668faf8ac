"""Evidence use cases: files -> IngestResult -> EvidenceReport (plus the package rule).

No printing, no exiting: the CLI and the demo call these and decide what to show. Errors a
user can fix are raised as `EvidenceError` subclasses (SettingsError, BackendError,
PackageLoadError) with a message fit for `error: ...`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from meshcert.core.atomic import write_atomic
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.gates import evaluate_gate
from meshcert.evidence.ingest import IngestResult, ingest_files, tool_version
from meshcert.evidence.matching import Evidence
from meshcert.evidence.report import EvidenceReport, GateResult, PackageCheck
from meshcert.evidence.rules import RULES, Rules
from meshcert.evidence.settings import EvidenceSettings, load_settings


@dataclass
class GateRun:
    ingest: IngestResult
    evidence: Evidence
    gate: GateResult


@dataclass
class ReportRun:
    ingest: IngestResult
    report: EvidenceReport


def gate_files(paths: Iterable[str | os.PathLike[str]], *, settings: EvidenceSettings,
               label: str | None = None, backend: str | None = None) -> GateRun:
    result = ingest_files(paths, label=label)
    ev = Evidence.build(result.table, RULES, backend)
    return GateRun(result, ev, evaluate_gate(ev, settings))


def check_package(package: str, source_gguf: str | None = None) -> PackageCheck:
    """The q2_K routed-down NextN rule on a local package dir or hf:// ref."""
    from meshcert.evidence.package_rules import check_nextn_down, load_package, read_source_header

    view = load_package(package)
    source = read_source_header(source_gguf) if source_gguf else None
    return check_nextn_down(view, package, source)


def report_files(paths: Iterable[str | os.PathLike[str]], *, settings: EvidenceSettings,
                 label: str | None = None, backend: str | None = None,
                 decisions: DecisionOptions | None = None, package: str | None = None,
                 source_gguf: str | None = None, rules: Rules = RULES) -> ReportRun:
    result = ingest_files(paths, label=label)
    package_check = check_package(package, source_gguf) if package else None
    options = BuildOptions(backend=backend, label=label,
                           decisions=decisions or DecisionOptions(),
                           generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                           tool_version=tool_version())
    report = build_report(result.table, settings=settings, options=options,
                          problems=result.problems, sources=result.sources,
                          package_check=package_check, rules=rules)
    return ReportRun(result, report)


def write_example_evidence(out_dir: str | os.PathLike[str]) -> tuple[ReportRun, dict[str, Path]]:
    """The bundled example (published GLM-5.2 Metal means) with default settings:
    `decisions.json` and `summary.md` under out_dir. Returns the run and label -> path."""
    from meshcert.evidence.examplegen import example_files
    from meshcert.evidence.summary import render_summary

    run = report_files(example_files(), settings=load_settings({}))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    decisions, summary = out / "decisions.json", out / "summary.md"
    write_atomic(decisions, run.report.to_json())
    write_atomic(summary, render_summary(run.report))
    return run, {"evidence decisions (JSON)": decisions, "evidence summary (Markdown)": summary}
