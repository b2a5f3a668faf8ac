"""What the `meshcert evidence ...` commands print: the ingest summary, the gate table, the
headline and decisions of a report, the history table, the progress of `evidence run`, and
the ingest problems as warnings. The commands (meshcert/cli/evidence_cmd.py) decide what to
print; this module says how (cli/cert_console.py is the same for `models certify`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # the evidence engine (pandas, numpy) loads inside the commands
    from meshcert.evidence.history_report import HistoryReport
    from meshcert.evidence.ingest import IngestResult
    from meshcert.evidence.report import EvidenceReport, GateResult
    from meshcert.evidence.run import RunRecord
    from meshcert.evidence.run.plan import PlannedRun


MAX_PROBLEMS_SHOWN = 50


def ingest_summary(result: IngestResult, out: Path | None) -> dict[str, Any]:
    """The machine-readable summary `--json` prints (the rows themselves go to --out)."""
    return {
        "rows": result.row_count,
        "rows_by_format": result.rows_by_format(),
        "rows_by_kind": result.rows_by_kind(),
        "sources": [{**asdict(s), "rows_by_kind": kinds}
                    for s, kinds in zip(result.sources, result.rows_by_kind_per_source(),
                                        strict=True)],
        "problems": [asdict(p) for p in result.problems],
        "out": str(out) if out is not None else None,
    }


def print_ingest_summary(result: IngestResult, out: Path | None,
                         echo: Callable[[str], None] = typer.echo) -> None:
    echo(f"ingested {len(result.sources)} file(s): {result.row_count} row(s), "
         f"{len(result.problems)} problem(s)")
    for source, kinds in zip(result.sources, result.rows_by_kind_per_source(), strict=True):
        detail = ", ".join(f"{k} {n}" for k, n in kinds.items()) or "no rows"
        extras = [f"variant={source.variant}"]
        if source.ignored:
            extras.append(f"{source.ignored} chatter line(s) ignored")
        extras.extend(f"{k}={v}" for k, v in source.notes.items())
        echo(f"  {source.file}  [{source.format}]  {source.rows} row(s): {detail}  "
             f"({'; '.join(extras)})")
    if result.problems:
        echo("problems:")
        for problem in result.problems[:MAX_PROBLEMS_SHOWN]:
            echo(f"  {problem.where()}: {problem.kind}: {problem.reason}")
            if problem.excerpt:
                echo(f"      {problem.excerpt}")
        hidden = len(result.problems) - MAX_PROBLEMS_SHOWN
        if hidden > 0:
            echo(f"  ... and {hidden} more (all of them: --json, or the --out file)")
    if out is not None:
        echo(f"wrote {out}")


MAX_WARNINGS_SHOWN = 20


def warn_problems(result: IngestResult) -> None:
    for problem in result.problems[:MAX_WARNINGS_SHOWN]:
        typer.echo(f"warning: {problem.where()}: {problem.reason}", err=True)
    hidden = len(result.problems) - MAX_WARNINGS_SHOWN
    if hidden > 0:
        typer.echo(f"warning: ... and {hidden} more ingest problem(s)", err=True)


def print_gate(gate: GateResult, echo: Callable[[str], None] = typer.echo) -> None:
    """The gate table: required rows, the estimate, then one line per gate."""
    from meshcert.reports.fmt import gate_switches, gate_threshold, gate_value

    if not gate.applies:
        echo(f"Phase E MoE gate: {gate.applicability}")
        return
    mode = "enforced" if gate.enforced else "advisory"
    echo(f"Phase E MoE gate: {'passed' if gate.passed else 'FAILED'} ({mode}; "
         f"{gate_switches(gate.kernel_sweep)})")
    present = len(gate.required_rows) - len(gate.missing_rows)
    echo(f"required rows: {present}/{len(gate.required_rows)} present")
    if gate.missing_rows:
        echo("missing: " + ", ".join(m.title for m in gate.missing_rows))
    e = gate.estimate
    if e is None:
        echo(f"estimate: {gate.estimate_message}")
    else:
        shares = ", ".join(f"{k} {v:.1%}" for k, v in e.shares.items())
        shared = ("" if e.shared_expert_share is None
                  else f"; shared expert {e.shared_expert_share:.1%} of routed+shared")
        echo(f"estimate: routed FFN decode {e.total_us:.2f} us ({shares}){shared}")
    echo(f"{'STATUS':<8} {'GATE':<54} {'VALUE':>9} {'THRESHOLD':>10}  MESSAGE")
    for c in gate.checks:
        echo(f"{c.status:<8} {c.title:<54} {gate_value(c):>9} {gate_threshold(c):>10}  "
             f"{c.message}")


OUTCOME_MARKS = {"passed": "ok", "failed": "FAILED", "undecided": "undecided"}


REASON_WIDTH = 110


def print_headline(report: EvidenceReport, echo: Callable[[str], None] = typer.echo) -> None:
    """The verdict line and the decisions the evidence supports, each with its verdict."""
    from meshcert.evidence.headline import headline_of

    head = headline_of(report)
    echo(f"verdict: {head.status.upper()} ({head.summary})")
    for item in head.items:
        echo(f"  {OUTCOME_MARKS[item.outcome]:<10} {item.subject:<34} {item.verdict:<24} "
             f"{_shortened(item.reason)}")


def _shortened(reason: str) -> str:
    """The reason, cut to REASON_WIDTH between words (a name such as
    GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP is never cut in the middle); every report
    file holds the whole reason."""
    if len(reason) <= REASON_WIDTH:
        return reason
    cut = reason[:REASON_WIDTH - 3]
    if reason[len(cut)] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "..."


def print_report(report: EvidenceReport, written: list[Path],
                 echo: Callable[[str], None] = typer.echo) -> None:
    """Headline first, then the Phase E gate (a table when it applies, one line when not),
    the rules' decisions, the mesh-llm details, the package rule, the files written."""
    from meshcert.evidence.headline import supported_decisions
    from meshcert.reports.fmt import ungated_sweep_note

    print_headline(report, echo)
    print_gate(report.gate, echo)
    note = ungated_sweep_note(report.gate.kernel_sweep, sum(
        c.phase == "E-sweep" and c.status != "missing" for c in report.components))
    if report.gate.applies and note:
        echo(f"note: {note}")
    shown = supported_decisions(report)
    if shown or (report.gate.applies and report.omitted_decisions):
        echo("decisions:")
    for d in shown:
        speedups = "; ".join(f"{c.speedup:.3f}x" if c.speedup is not None else "-"
                             for c in d.comparisons)
        flag = "  [review]" if d.review_required else ""
        echo(f"  {d.policy:<28} {d.verdict:<20} {speedups}{flag}")
    if report.gate.applies:
        for o in report.omitted_decisions:
            echo(f"  {o.policy:<28} (not decided: {o.reason})")
    print_mesh_decisions(report, echo)
    if report.package_check is not None:
        pc = report.package_check
        echo(f"package rule: {pc.status} ({pc.package})")
    for path in {Path(p).resolve(): p for p in written}.values():  # each file once
        echo(f"wrote {path}")


def print_mesh_decisions(report: EvidenceReport,
                         echo: Callable[[str], None] = typer.echo) -> None:
    """The mesh-llm lines of `evidence report` (none without mesh-llm rows)."""
    if report.history:
        classes: dict[str, int] = {}
        for h in report.history:
            classes[h.history_class] = classes.get(h.history_class, 0) + 1
        echo("history: " + ", ".join(f"{n} {c}" for c, n in classes.items()))
    for ab in report.ab_decisions:
        echo(f"  A/B {ab.comparison:<24} {ab.verdict:<20} {ab.reason}")
    for kv in report.kv_dtype_decisions:
        echo(f"  KV {kv.dtype:<25} {kv.verdict:<20} {kv.reason}")
    for pc in report.promotion_checks:
        echo(f"  promotion {pc.platform}/{pc.model}: mesh-llm {pc.mesh_llm_winner}, meshcert "
             f"{pc.meshcert_verdict} ({'agree' if pc.agree else 'disagree'})")


def print_history(rep: HistoryReport, echo: Callable[[str], None] = typer.echo) -> None:
    """The counts, then one line per setup and metric: its class, the change and its
    interval."""
    from meshcert.evidence.history import metric_class

    echo(f"history: {rep.rows} row(s), {len(rep.history)} setup(s), "
         f"{len(rep.problems)} problem(s); status {rep.status}")
    echo(f"{'CLASS':<24} {'SETUP':<14} {'METRIC':<26} {'CURRENT':>10} "
         f"{'MEDIAN':>10} {'CHANGE':>8} {'BASE':>4}  INTERVAL")
    for h in rep.history:
        for v in h.metrics:
            own = metric_class(h, v)
            cur = "-" if v.current is None else f"{v.current:g}"
            med = "-" if v.baseline_median is None else f"{v.baseline_median:g}"
            change = "-" if v.change is None else f"{v.change:+.1%}"
            interval = ("-" if v.change_low is None else
                        f"[{v.change_low:+.1%}, {v.change_high or 0:+.1%}] "
                        f"{v.interval_says}")
            echo(f"{own:<24} {h.cohort_key[:12]:<14} {v.metric:<26} "
                 f"{cur:>10} {med:>10} {change:>8} {h.baseline_n:>4}  {interval}")


class Progress:
    """One stderr line per run: `[3/10] candidate #2 ... ok (1.23s)`."""

    def run_started(self, run: PlannedRun, total: int) -> None:
        typer.echo(f"[{run.index}/{total}] {run.variant.name} #{run.repeat} ...", err=True)

    def run_finished(self, record: RunRecord, total: int) -> None:
        took = f" ({record.duration_s:.2f}s)" if record.duration_s is not None else ""
        code = f", exit {record.exit_status}" if record.status == "failed" else ""
        typer.echo(f"[{record.index}/{total}] {record.variant} #{record.repeat} "
                   f"{record.status}{code}{took}", err=True)
