"""Evidence use cases: files -> IngestResult -> EvidenceReport (plus the package rule).

No printing, no exiting: the CLI and the demo call these and decide what to show. Errors a
user can fix are `EvidenceError`s (meshcert.evidence.errors: SettingsError, BackendError,
PackageLoadError, ...) with a message fit for `error: ...`; input files that cannot be read
or recognised are refused before any work (UnusableInputError, a `Refused`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from meshcert.core.errors import Refused
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.gates import evaluate_gate
from meshcert.evidence.ingest import IngestResult, ingest_files, tool_version
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.report import EvidenceReport, GateResult, PackageCheck
from meshcert.evidence.rule_table import RuleTable
from meshcert.evidence.rules import RULES, Rules
from meshcert.evidence.settings import EvidenceSettings, load_settings


class UnusableInputError(Refused, ValueError):
    """An input file gate/report cannot read or recognise: refused before any work (exit 2).
    `lines` are `file:line: reason`, one per bad file."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines


def unusable_inputs(paths: Iterable[str | os.PathLike[str]], result: IngestResult) -> list[str]:
    """`file:line: reason` for each given file that could not be read (unreadable, binary, a
    truncated or foreign evidence JSON) or whose format is not recognised. A file that was
    recognised and refused for what it says (schema-smoke, `dry_run`, ...) is a problem of the
    report, not an unusable input."""
    from meshcert.evidence.parsers.base import REJECTED, UNKNOWN, UNREADABLE

    given = [os.fspath(p) for p in paths]
    parsed = {s.file: s for s in result.sources}
    out: list[str] = []
    for name in given:
        source = parsed.get(name)
        if source is not None and source.format == UNKNOWN:
            mine = [p for p in result.problems if p.file == name]
            reason = mine[0].reason if mine else "unrecognised format"
            out.append(f"{name}:{mine[0].line if mine and mine[0].line else 1}: {reason}")
            continue
        if source is not None:
            continue
        # not parsed as a log: unreadable, or an evidence JSON that could not be merged
        bad = [p for p in result.problems
               if p.file == name and p.kind in (UNREADABLE, REJECTED)]
        if bad:
            out.append(f"{name}:{bad[0].line or 1}: {bad[0].reason}")
    return out


def _refuse_unusable(paths: list[str | os.PathLike[str]], result: IngestResult) -> None:
    lines = unusable_inputs(paths, result)
    if lines:
        raise UnusableInputError(lines)


@dataclass
class GateRun:
    ingest: IngestResult
    resolved: RuleTable
    gate: GateResult


@dataclass
class ReportRun:
    ingest: IngestResult
    report: EvidenceReport


def gate_files(paths: Iterable[str | os.PathLike[str]], *, settings: EvidenceSettings,
               label: str | None = None, backend: str | None = None,
               phase_e: bool = False) -> GateRun:
    """Raises UnusableInputError when a file cannot be read or recognised."""
    paths = list(paths)
    result = ingest_files(paths, label=label)
    _refuse_unusable(paths, result)
    resolved = resolve_rules(result.table, RULES, backend)
    return GateRun(result, resolved, evaluate_gate(resolved, settings, force=phase_e))


def check_package(package: str, source_gguf: str | None = None) -> PackageCheck:
    """The q2_K routed-down NextN rule on a local package dir or hf:// ref."""
    from meshcert.evidence.package_rules import check_nextn_down, load_package, read_source_header

    view = load_package(package)
    source = read_source_header(source_gguf) if source_gguf else None
    return check_nextn_down(view, package, source)


def report_files(paths: Iterable[str | os.PathLike[str]], *, settings: EvidenceSettings,
                 label: str | None = None, backend: str | None = None,
                 decisions: DecisionOptions | None = None, package: str | None = None,
                 source_gguf: str | None = None, rules: Rules = RULES,
                 phase_e: bool = False) -> ReportRun:
    """Raises UnusableInputError when a file cannot be read or recognised."""
    paths = list(paths)
    result = ingest_files(paths, label=label)
    _refuse_unusable(paths, result)
    package_check = check_package(package, source_gguf) if package else None
    options = BuildOptions(backend=backend, label=label,
                           decisions=decisions or DecisionOptions(),
                           generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                           tool_version=tool_version(), phase_e=phase_e)
    report = build_report(result.table, settings=settings, options=options,
                          problems=result.problems, sources=result.sources,
                          package_check=package_check, rules=rules)
    return ReportRun(result, report)


def example_evidence() -> ReportRun:
    """The bundled example (published GLM-5.2 Metal means) with default settings, decided
    (`meshcert demo` writes it with meshcert.reports.outputs.write_decisions)."""
    from meshcert.evidence.examplegen import example_files

    return report_files(example_files(), settings=load_settings({}))
