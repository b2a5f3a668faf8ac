"""Recorded runs -> ingest (variant = the run's variant label) -> gate, decisions, report.

Each variant's logs are ingested with that variant as the label, then the tables are joined.
Runs that did not end well stay visible as problems of the report (`run-failed`, `run-timeout`,
`run-interrupted`, `run-error`, `run-not-run`), next to whatever rows their output holds: a
test-mode run that exits 1 because a case FAILed is exactly the parity evidence wanted, and a
run cut short by Ctrl-C still holds the rows it finished (a cut row is a parser problem).

Writes `evidence-<variant>.json` per variant and `evidence.json` (all of them) into the session's
out dir; the caller writes the report beside them (`decisions.json` and `summary.md`, through
meshcert.reports.outputs.write_decisions).

A timed run whose output gave no measured row (no timing, value or parity case: backend totals
and metadata do not count) is listed in `RunEvidence.unmeasured` with the last lines it
printed: a `-p`/`-o` filter that matches no case prints "1/1 backends passed" and nothing else.
When no timed run measured anything the CLI exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.ingest import IngestResult, ingest_files, tool_version, write_evidence_json
from meshcert.evidence.parsers.base import IngestProblem
from meshcert.evidence.report import EvidenceReport
from meshcert.evidence.rows import EvidenceRows
from meshcert.evidence.rules import RULES, Rules
from meshcert.evidence.run.runner import RunRecord, RunSession
from meshcert.evidence.settings import EvidenceSettings
from meshcert.evidence.table import concat_tables, empty_table, number_samples

# Row kinds that are no measurement by themselves (totals and metadata around the cases).
UNMEASURED_KINDS = frozenset({"parity_backend", "parity_total", "perf_metadata", "perf_warmup"})
TAIL_LINES = 6


@dataclass(frozen=True)
class UnmeasuredRun:
    """A timed run whose output held no measured row, and the end of what it printed."""

    record: RunRecord
    log: str | None
    tail: tuple[str, ...]

    def describe(self) -> str:
        r = self.record
        where = f" ({self.log})" if self.log else ""
        return (f"run {r.index} ({r.variant}, repeat {r.repeat}, {r.status}){where} measured "
                f"no row")


@dataclass
class RunEvidence:
    ingest: IngestResult
    report: EvidenceReport
    run_problems: list[IngestProblem] = field(default_factory=list)
    written: dict[str, Path] = field(default_factory=dict)
    unmeasured: list[UnmeasuredRun] = field(default_factory=list)
    timed_runs: int = 0

    @property
    def nothing_measured(self) -> bool:
        """Timed runs were planned and not one of them produced a measured row."""
        return self.timed_runs > 0 and len(self.unmeasured) == self.timed_runs


def _tail(path: Path, lines: int = TAIL_LINES) -> tuple[str, ...]:
    try:
        text = path.read_bytes()[-8192:].decode("utf-8", errors="replace")
    except OSError:
        return ()
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return tuple(kept[-lines:])


def unmeasured_runs(session: RunSession, result: IngestResult) -> list[UnmeasuredRun]:
    """The timed runs (not the checks) whose evidence log gave no measured row."""
    measured: dict[str, int] = {}
    for source, kinds in zip(result.sources, result.rows_by_kind_per_source(), strict=True):
        count = sum(n for k, n in kinds.items() if k not in UNMEASURED_KINDS)
        measured[source.file] = measured.get(source.file, 0) + count
    out = []
    for r in session.records:
        if r.role != "timed":
            continue
        path = session.out_dir / r.evidence_log if r.evidence_log else None
        if path is not None and measured.get(str(path), 0) > 0:
            continue
        merged = session.out_dir / r.log if r.log else None
        out.append(UnmeasuredRun(r, str(merged) if merged else None,
                                 _tail(merged) if merged else ()))
    return out


def run_problem(record: RunRecord, out_dir: Path) -> IngestProblem | None:
    """A problem entry for a run that did not exit 0 (None for an `ok` run)."""
    if record.status == "ok":
        return None
    log = record.evidence_log or record.log
    where = str(out_dir / log) if log else f"run {record.index}"
    what = {
        "failed": f"exited with status {record.exit_status}",
        "timeout": "timed out",
        "interrupted": "was interrupted",
        "error": "did not start",
        "not-run": "was not run (the session was interrupted before it)",
    }[record.status]
    took = f" after {record.duration_s:.2f}s" if record.duration_s is not None else ""
    detail = f": {record.error}" if record.error else ""
    which = "check" if record.role == "check" else f"repeat {record.repeat}"
    return IngestProblem(where, None, " ".join(record.command)[:160],
                         f"run {record.index} ({record.variant}, {which}) "
                         f"{what}{took}{detail}", f"run-{record.status}")


def ingest_session(session: RunSession) -> tuple[IngestResult, dict[str, Path]]:
    """Every run's evidence log, ingested per variant (label = variant), joined."""
    out = session.out_dir
    parts: list[IngestResult] = []
    written: dict[str, Path] = {}
    for variant in session.plan.variants:
        paths = [out / r.evidence_log for r in session.records
                 if r.variant == variant.name and r.evidence_log]
        if not paths:
            continue
        # each log is a run this session recorded: equal bytes are equal measurements
        part = ingest_files(paths, label=variant.name, distinct_runs=True)
        written[f"evidence ({variant.name})"] = write_evidence_json(
            part, out / f"evidence-{variant.name}.json", label=variant.name)
        parts.append(part)
    table = concat_tables([p.table for p in parts]) if parts else empty_table()
    joined = IngestResult(EvidenceRows.of_table(number_samples(table)),
                          [x for p in parts for x in p.problems],
                          [s for p in parts for s in p.sources])
    return joined, written


def evidence_from_runs(session: RunSession, *, settings: EvidenceSettings,
                       rules: Rules = RULES, backend: str | None = None,
                       decisions: DecisionOptions | None = None,
                       phase_e: bool = False) -> RunEvidence:
    """Ingest the session's runs, write the evidence files, build the report."""
    out = session.out_dir
    result, written = ingest_session(session)
    run_problems = [p for r in session.records if (p := run_problem(r, out)) is not None]
    result.problems.extend(run_problems)
    written["evidence (all variants)"] = write_evidence_json(result, out / "evidence.json")
    options = BuildOptions(backend=backend, decisions=decisions or DecisionOptions(),
                           generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                           tool_version=tool_version(), phase_e=phase_e)
    report = build_report(result.table, settings=settings, options=options,
                          problems=result.problems, sources=result.sources, rules=rules)
    timed = sum(1 for r in session.records if r.role == "timed")
    return RunEvidence(result, report, run_problems, written,
                       unmeasured_runs(session, result), timed)
