"""`meshcert evidence ...`: benchmark evidence commands.

    meshcert evidence ingest FILE... [--out evidence.json] [--label L] [--json] [--quiet]
    meshcert evidence gate FILE... [--require-gates] [--label L] [--backend B] [--json]
    meshcert evidence report FILE... --out-dir D [--package P] [--require-gates] [--html F]
        [--md F] [--junit F] [--sarif F] [--json] [--quiet] ...
    meshcert evidence history FILE.jsonl|hf://datasets/ns/name@rev [--out-dir D] [--gate]
        [--json] [--quiet]
    meshcert evidence run --out-dir D [--env V:K=X] [--args V:A] [-n N] [--html F] [--md F]
        [--junit F] [--sarif F] [--json] [--quiet] -- CMD ARGS...

Each command is one function registered on `app`: its options (cli/evidence_options.py) become
the engine's request, what it prints is cli/evidence_console.py's, how it ends (the exit
status) cli/evidence_exit.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from meshcert.cli.deliver import undeliverable
from meshcert.cli.evidence_console import (
    MAX_WARNINGS_SHOWN,
    Progress,
    ingest_summary,
    print_gate,
    print_history,
    print_ingest_summary,
    print_report,
    warn_problems,
)
from meshcert.cli.evidence_exit import (
    HISTORY_GATE_EXIT,
    end_nothing_read,
    end_report,
    end_run,
    fail_gate,
    refusing_unusable,
)
from meshcert.cli.evidence_options import (
    ArgsOpt,
    BackendOpt,
    CheckOpt,
    DecisionsOpt,
    DeprecatedDecisionsOpt,
    EnvOpt,
    FailOnOpt,
    FilesArg,
    LabelOpt,
    MaxKldOpt,
    MaxPplIncreaseOpt,
    PackageOpt,
    PhaseEOpt,
    QualityBaselineOpt,
    QualityCandidateOpt,
    RepeatOpt,
    ReplicatesOpt,
    ReportJsonOpt,
    ReportOutDirOpt,
    RequireOpt,
    RunCommandArg,
    RunDecisionsOpt,
    RunOutDirOpt,
    SeedOpt,
    SourceGgufOpt,
    StreamOpt,
    TimeoutOpt,
    VariantCommandOpt,
    VariantOpt,
    decisions_given,
    evidence_settings,
    fail_on_given,
    rules_and_settings,
)
from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.report_options import NO_OUTPUTS, ReportOutputs, report_outputs
from meshcert.cli.shared_options import QuietOpt, json_option, quiet_option
from meshcert.evidence.defaults import DEFAULT_REPEATS, DEFAULT_REPLICATES, DEFAULT_SEED

app = typer.Typer(help="Benchmark evidence: ingest llama.cpp logs, gate, report.",
                  no_args_is_help=True, rich_markup_mode=None)


# --------------------------------------------------------------------------------------------
# ingest
# --------------------------------------------------------------------------------------------


@app.command("ingest")
def ingest(
    files: Annotated[list[Path], typer.Argument(
        help="Logs to ingest: test-backend-ops console (perf/test) or --output sql, "
        "ggml_test lines, llama-bench json/jsonl/csv/sql, llama-perplexity output, mesh-llm's "
        "skippy-bench / llama-spec-bench / metrics-server / competitive / performance-history "
        "/ A/B comparison files, or an evidence JSON to merge. The format is detected from "
        "the content.",
        exists=True, dir_okay=False, readable=True, show_default=False, metavar="FILE")],
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the evidence JSON (table, sources with sha256, problems) here.",
        dir_okay=False)] = None,
    label: Annotated[str | None, typer.Option(
        "--label", help="Variant label for every row (default: the sweep file name under "
        "kernel-sweep/ or fixed-block-dispatch/, else 'default').")] = None,
    json_out: Annotated[bool, json_option("Print the summary as JSON.")] = False,
    quiet: Annotated[bool, quiet_option("Print nothing.")] = False,
) -> None:
    """Parse benchmark logs into one evidence table; report rows per file and every problem
    with file:line. Exit 0 when some file gave rows (problems are listed, they do not fail);
    1 when no file gave a row (nothing is written); usage errors exit 2."""
    from meshcert.evidence.ingest import ingest_files, write_evidence_json
    from meshcert.evidence.requests import IngestRequest

    with option_errors():
        request = IngestRequest(tuple(files), out, label)
    out, label = request.out, request.label
    result = ingest_files(request.files, label=label)
    if result.row_count == 0:
        if json_out:
            typer.echo(json.dumps(ingest_summary(result, None), indent=2, ensure_ascii=False))
        elif not quiet:
            print_ingest_summary(result, None)
        typer.echo(f"error: no evidence rows in any of the {len(files)} file(s) (each one's "
                   "problem is listed above)" + (f"; {out} not written" if out else ""),
                   err=True)
        raise typer.Exit(Exit.FAILED)
    if out is not None:
        try:
            write_evidence_json(result, out, label=label)
        except OSError as exc:
            raise typer.BadParameter(f"cannot write {str(out)!r}: {exc.strerror or exc}",
                                     param_hint="--out") from None
    if json_out:
        typer.echo(json.dumps(ingest_summary(result, out), indent=2, ensure_ascii=False))
    elif not quiet:
        print_ingest_summary(result, out)


# --------------------------------------------------------------------------------------------
# gate / report (exit codes: 0 ok or advisory; 2 enforced gate failure, package rule failure,
# or a bad setting / option; `error: ...` lines go to stderr)
# --------------------------------------------------------------------------------------------


@app.command("gate", help=(
    "The Phase E MoE gate of glm52-phase-e-moe-report.sh: required rows, the routed FFN decode "
    "estimate and the hard gates. Advisory (exit 0) unless --require-gates or "
    "GLM52_PHASE_E_REQUIRE_GATES is non-zero: then any failure exits 2 with `error: ...` lines "
    "on stderr. GLM52_PHASE_E_* variables set the sweep, sanity probe and thresholds. Without "
    "a Phase E row (and without --phase-e / --require-gates) the gate is not applicable. An "
    "input that cannot be read or recognised exits 2 naming FILE:LINE; when no input gave a "
    "row (an empty or crashed log) it exits 1."))
def gate(
    files: FilesArg,
    require_gates: RequireOpt = False,
    phase_e: PhaseEOpt = False,
    label: LabelOpt = None,
    backend: BackendOpt = None,
    json_out: Annotated[bool, json_option("Print the gate result as JSON.")] = False,
) -> None:
    """The Phase E MoE gate of glm52-phase-e-moe-report.sh: required rows, the routed FFN
    decode estimate and the hard gates. Advisory (exit 0) unless --require-gates or
    GLM52_PHASE_E_REQUIRE_GATES is non-zero: then any failure exits 2 with `error: ...` lines
    on stderr. GLM52_PHASE_E_* variables set the sweep, sanity probe and thresholds."""
    from meshcert.evidence.requests import GateRequest, Judging
    from meshcert.evidence.service import gate_files

    request = GateRequest(tuple(files), Judging(require_gates, phase_e, backend), label)
    judging = request.judging
    settings = evidence_settings(judging.require_gates)
    with refusing_unusable():
        run = gate_files(request.files, settings=settings, label=request.label,
                         backend=judging.backend, phase_e=judging.phase_e)
    warn_problems(run.ingest)
    if json_out:
        typer.echo(run.gate.model_dump_json(indent=2))
    else:
        print_gate(run.gate)
    if run.gate.enforced and run.gate.errors:
        raise fail_gate(run.gate.errors)
    if run.ingest.row_count == 0:
        raise end_nothing_read(len(request.files))


@app.command("report", help=(
    "Gate + decisions: write decisions.json (the EvidenceReport) and summary.md, led by the "
    "headline (each decision the evidence supports and one overall verdict). Exit 2 when "
    "the gate is enforced and fails, when --package breaks the q2_K routed-down rule, or when "
    "an input cannot be read or recognised (FILE:LINE named); 1 when no input gave a row; "
    "with --fail-on (or a required gate) 1 on a FAILED and 3 on an INCOMPLETE verdict "
    "(docs/evidence.md, Exit statuses)."))
@report_outputs
def report(
    files: FilesArg,
    out_dir: ReportOutDirOpt,
    package: PackageOpt = None,
    source_gguf: SourceGgufOpt = None,
    require_gates: RequireOpt = False,
    phase_e: PhaseEOpt = False,
    label: LabelOpt = None,
    backend: BackendOpt = None,
    max_ppl_increase: MaxPplIncreaseOpt = None,
    max_kld: MaxKldOpt = None,
    quality_baseline: QualityBaselineOpt = None,
    quality_candidate: QualityCandidateOpt = None,
    seed: SeedOpt = DEFAULT_SEED,
    replicates: ReplicatesOpt = DEFAULT_REPLICATES,
    outputs: ReportOutputs = NO_OUTPUTS,
    decisions_file: DecisionsOpt = None,
    deprecated_alias: DeprecatedDecisionsOpt = None,
    json_out: ReportJsonOpt = False,
    quiet: QuietOpt = False,
    fail_on_opt: FailOnOpt = None,
) -> None:
    """Gate + decisions: write decisions.json (the EvidenceReport) and summary.md. Exit 2 when
    the gate is enforced and fails, or when --package breaks the q2_K routed-down rule."""
    from meshcert.evidence.decisions import DecisionOptions
    from meshcert.evidence.requests import Judging, ReportRequest
    from meshcert.evidence.service import report_files
    from meshcert.reports.outputs import write_decisions, write_reports

    request = ReportRequest(
        tuple(files), out_dir,
        Judging(require_gates, phase_e, backend, decisions_given(decisions_file, deprecated_alias)),
        label=label, package=package, source_gguf=str(source_gguf) if source_gguf else None,
        decisions=DecisionOptions(quality_baseline=quality_baseline,
                                  quality_candidate=quality_candidate,
                                  max_ppl_increase=max_ppl_increase, max_kld_mean=max_kld,
                                  seed=seed, replicates=replicates))
    rules, settings, file_fail_on = rules_and_settings(request.judging.decisions_file,
                                                        require_gates)
    fail_on = fail_on_given(fail_on_opt, file_fail_on)
    with refusing_unusable():
        run = report_files(request.files, settings=settings, label=label, backend=backend,
                           decisions=request.decisions, package=request.package,
                           source_gguf=request.source_gguf, rules=rules, phase_e=phase_e)
    warn_problems(run.ingest)
    try:
        written = [*write_decisions(run.report, out_dir, md=outputs.get("md")).values(),
                   *write_reports(run.report, **outputs).values()]
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(run.report.to_json(), nl=False)
    elif not quiet:
        print_report(run.report, written)
    end_report(run.report, fail_on=fail_on,
                nothing_read=len(request.files) if run.ingest.row_count == 0 else None)


# --------------------------------------------------------------------------------------------
# history (exit codes: 0; 1 with --gate when a setup regressed or failed or no row was read;
# 2 unreadable source)
# --------------------------------------------------------------------------------------------


@app.command("history", help=(
    "Performance history (mesh-llm's nightly JSONL, a file or hf://datasets/ns/name@rev): "
    "the regression class of each setup's latest run by mesh-llm's rule (-5% throughput or "
    "+10% TTFT beyond 3x MAD, >= 3 earlier complete runs), with the bootstrap interval of the "
    "change. --out-dir writes history.json, history.html (a plot per metric) and history.md. "
    "--gate exits 1 on a regression or correctness failure, or when no row was read."))
def history(
    sources: Annotated[list[str], typer.Argument(
        help="History JSONL files or hf://datasets/ns/name[@rev] (its data/runs/**/*.jsonl).",
        show_default=False, metavar="SOURCE")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out-dir", help="Write history.json, history.html and history.md here.",
        file_okay=False)] = None,
    gate_on: Annotated[bool, typer.Option("--gate", help="Exit 1 when a setup regressed or "
                                          "failed, or when no row was read.")] = False,
    json_out: Annotated[bool, json_option("Print the decision JSON.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """The regression table per setup of a performance history."""
    from meshcert.core.atomic import write_atomic
    from meshcert.evidence.history_report import history_files
    from meshcert.reports.evidence.html import render_history_html
    from meshcert.reports.evidence.markdown import render_history_markdown

    run = history_files(sources)
    rep = run.report
    for line in rep.problems[:MAX_WARNINGS_SHOWN]:
        typer.echo(f"warning: {line}", err=True)
    if len(rep.problems) > MAX_WARNINGS_SHOWN:
        typer.echo(f"warning: ... and {len(rep.problems) - MAX_WARNINGS_SHOWN} more "
                   "problem(s)", err=True)
    if json_out:
        typer.echo(rep.model_dump_json(indent=2))
    elif not quiet:
        print_history(rep)
    if out_dir is not None:
        for name, body in (("history.json", rep.model_dump_json(indent=2) + "\n"),
                           ("history.html", render_history_html(
                               rep.history, sources=rep.sources, problems=rep.problems,
                               rows_read=rep.rows)),
                           ("history.md", render_history_markdown(rep.history))):
            try:
                written = write_atomic(out_dir / name, body)
            except OSError as exc:
                raise undeliverable(exc) from None
            if not quiet:
                typer.echo(f"wrote {written}", err=json_out)
    if gate_on and rep.failures:
        for h in rep.failures:
            typer.echo(f"error: {h.history_class}: {h.cohort_key[:12]} at {h.file}:{h.line}",
                       err=True)
        raise typer.Exit(HISTORY_GATE_EXIT)
    if gate_on and rep.rows == 0:
        typer.echo(f"error: nothing read: no history row in any of the {len(rep.sources)} "
                   "source(s) (each one's problem is listed above)", err=True)
        raise typer.Exit(HISTORY_GATE_EXIT)


# --------------------------------------------------------------------------------------------
# run (exit codes: as report; 130 when interrupted, after writing what was recorded)
# --------------------------------------------------------------------------------------------


@app.command("run", context_settings={"allow_interspersed_args": False}, help=(
    "Run a fixture command (test-backend-ops perf/test, llama-bench, llama-perplexity, or any "
    "command) --repeat times per variant, interleaved A B A B, record every run (output, "
    "command, binary sha256, version line, host, start, exit status, duration) under "
    "--out-dir, then ingest (label = variant), gate and report as `evidence report`. Variants "
    "differ by environment (--env NAME:KEY=VALUE), extra arguments (--args NAME:ARGS) or a "
    "whole command (--command NAME:CMD). --check CMD (e.g. test-backend-ops test mode) runs "
    "once per variant first, for parity evidence. Put the command last, after `--`. Exits 1 "
    "when no timed run produced a row (each run and the end of its output are printed); "
    "--fail-on as `evidence report`."))
@report_outputs
def run(
    command: RunCommandArg,
    out_dir: RunOutDirOpt,
    variant: VariantOpt = None,
    env: EnvOpt = None,
    args: ArgsOpt = None,
    variant_command: VariantCommandOpt = None,
    check: CheckOpt = None,
    repeat: RepeatOpt = DEFAULT_REPEATS,
    timeout: TimeoutOpt = None,
    stream: StreamOpt = "auto",
    require_gates: RequireOpt = False,
    phase_e: PhaseEOpt = False,
    backend: BackendOpt = None,
    json_out: Annotated[bool, json_option("Print runs and decisions as JSON.")] = False,
    quiet: QuietOpt = False,
    decisions_file: RunDecisionsOpt = None,
    deprecated_alias: DeprecatedDecisionsOpt = None,
    outputs: ReportOutputs = NO_OUTPUTS,
    fail_on_opt: FailOnOpt = None,
) -> None:
    from meshcert.evidence.requests import Judging, RunOptions, RunRequest, run_plan_of
    from meshcert.evidence.run import PlanError, evidence_from_runs, run_plan
    from meshcert.reports.outputs import write_decisions, write_reports

    judging = Judging(require_gates, phase_e, backend,
                      decisions_given(decisions_file, deprecated_alias))
    rules, settings, file_fail_on = rules_and_settings(judging.decisions_file,
                                                        judging.require_gates)
    fail_on = fail_on_given(fail_on_opt, file_fail_on)
    with option_errors(also=(PlanError,)):
        plan = run_plan_of(RunOptions(command, variant or (), env or (), args or (),
                                      variant_command or (), check or (), repeats=repeat,
                                      timeout_s=timeout, stream=stream))
    request = RunRequest(plan, out_dir, judging)
    session = run_plan(request.plan, out_dir,
                       observer=None if quiet or json_out else Progress())
    evidence = evidence_from_runs(session, settings=settings, backend=backend,
                                  rules=rules, phase_e=phase_e)
    try:
        decisions = write_decisions(evidence.report, out_dir)
        rendered = write_reports(evidence.report, **outputs)
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(json.dumps({"runs": session.manifest(),
                               "report": json.loads(evidence.report.to_json())}, indent=2))
    elif not quiet:
        warn_problems(evidence.ingest)
        counts = ", ".join(f"{n} {s}" for s, n in session.counts().items())
        typer.echo(f"runs: {counts} ({len(plan.variants)} variant(s) x {repeat}, "
                   f"interleaved)")
        print_report(evidence.report, [out_dir / "runs.json", *evidence.written.values(),
                                       *decisions.values(), *rendered.values()])
    end_run(session, evidence, out_dir, fail_on)
