"""`meshcert evidence ...`: benchmark evidence commands.

    meshcert evidence ingest FILE... [--out evidence.json] [--label L] [--json] [--quiet]
    meshcert evidence gate FILE... [--require-gates] [--label L] [--backend B] [--json]
    meshcert evidence report FILE... --out-dir D [--package P] [--require-gates] [--html F]
        [--md F] [--junit F] [--sarif F] [--json] [--quiet] ...
    meshcert evidence history FILE.jsonl|hf://datasets/ns/name@rev [--out-dir D] [--gate]
        [--json] [--quiet]
    meshcert evidence run --out-dir D [--env V:K=X] [--args V:A] [-n N] [--html F] [--md F]
        [--junit F] [--sarif F] [--json] [--quiet] -- CMD ARGS...

Each command is one function registered on `app`; output helpers sit below the commands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from meshcert.cli.deliver import undeliverable
from meshcert.cli.errors import error_exit
from meshcert.cli.evidence_exit import (
    FAIL_ON_CHOICES,
    FailOn,
    nothing_read_message,
    verdict_exit,
)
from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.shared_options import (
    HtmlOpt,
    JunitOpt,
    MdOpt,
    QuietOpt,
    SarifOpt,
    json_option,
    quiet_option,
)
from meshcert.evidence.defaults import (
    DEFAULT_REPEATS,
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    REQUIRE_GATES,
)

if TYPE_CHECKING:  # the evidence engine (pandas, numpy) loads inside the commands
    from meshcert.evidence.history_report import HistoryReport
    from meshcert.evidence.ingest import IngestResult
    from meshcert.evidence.report import EvidenceReport, GateResult
    from meshcert.evidence.rules import EnvVar, Rules
    from meshcert.evidence.run import RunEvidence, RunRecord, RunSession
    from meshcert.evidence.run.plan import PlannedRun
    from meshcert.evidence.settings import EvidenceSettings

app = typer.Typer(help="Benchmark evidence: ingest llama.cpp logs, gate, report.",
                  no_args_is_help=True, rich_markup_mode=None)

MAX_PROBLEMS_SHOWN = 50


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


# --------------------------------------------------------------------------------------------
# gate / report (exit codes: 0 ok or advisory; 2 enforced gate failure, package rule failure,
# or a bad setting / option; `error: ...` lines go to stderr)
# --------------------------------------------------------------------------------------------

GATE_EXIT = Exit.PHASE_E_GATE_FAILED
MAX_WARNINGS_SHOWN = 20

FilesArg = Annotated[list[Path], typer.Argument(
    help="Benchmark logs (any format `evidence ingest` reads); repeated runs are samples.",
    exists=True, dir_okay=False, readable=True, show_default=False)]
RequireOpt = Annotated[bool, typer.Option(
    "--require-gates", help=f"Exit 2 on any gate failure (as {REQUIRE_GATES}=1).")]
PhaseEOpt = Annotated[bool, typer.Option(
    "--phase-e", help="Apply the GLM-5.2 Phase E MoE gate even when the evidence holds no "
    "Phase E row (it always applies with --require-gates; otherwise it is 'not applicable' "
    "and out of the headline).")]
LabelOpt = Annotated[str | None, typer.Option(
    "--label", help="Variant label for every row (default: from sweep file names).")]
BackendOpt = Annotated[str | None, typer.Option(
    "--backend", help="Backend to evaluate (default: the non-CPU backend with the most "
    "rows the rules name).")]


DeprecatedDecisionsOpt = Annotated[Path | None, typer.Option(
    "--catalog", help="Deprecated alias of --decisions (kept for one release; prints a "
    "warning).", dir_okay=False)]


def _decisions(decisions: Path | None, deprecated_alias: Path | None) -> Path | None:
    """--decisions, or the deprecated --catalog with a warning on stderr."""
    from meshcert.evidence.requests import decisions_input

    with option_errors():
        given = decisions_input(decisions, deprecated_alias)
    if given.via_deprecated_alias:
        typer.echo("warning: --catalog is deprecated on the evidence commands; use --decisions "
                   "FILE", err=True)
    return given.path


def _refuse(lines: list[str]) -> typer.Exit:
    """Inputs that cannot be read or recognised: nothing was evaluated (exit 2)."""
    for line in lines:
        typer.echo(f"error: {line}", err=True)
    typer.echo("error: refused: an input above cannot be read or is not a recognised evidence "
               "format (`meshcert evidence ingest --help` lists them); nothing was evaluated",
               err=True)
    return typer.Exit(Exit.USAGE)


def _fail(lines: list[str]) -> typer.Exit:
    for line in lines:
        typer.echo(line if line.startswith("error: ") else f"error: {line}", err=True)
    return typer.Exit(GATE_EXIT)


def _settings(require_gates: bool, extra: tuple[EnvVar, ...] = ()) -> EvidenceSettings:
    from meshcert.evidence.settings import SettingsError, load_settings

    try:
        return load_settings(overrides={REQUIRE_GATES: True} if require_gates else None,
                             extra=extra)
    except SettingsError as exc:
        raise error_exit(exc) from None


def _rules_and_settings(decisions_file: Path | None, require_gates: bool
                          ) -> tuple[Rules, EvidenceSettings, FailOn | None]:
    """The built-in rules, or the user's decisions from --decisions (a bad file is an
    `error:` line and exit 2), with the settings their env vars read and the file's
    `fail_on`."""
    from meshcert.evidence.decision_rules import (
        DecisionRulesError,
        env_vars,
        load_decision_rules,
        to_rules,
    )
    from meshcert.evidence.rules import RULES

    rules = RULES
    extra: tuple[EnvVar, ...] = ()
    fail_on: FailOn | None = None
    if decisions_file is not None:
        try:
            user = load_decision_rules(decisions_file)
            rules, extra = to_rules(user), env_vars(user)
        except DecisionRulesError as exc:
            raise error_exit(exc) from None
        fail_on = user.fail_on
    return rules, _settings(require_gates, extra), fail_on


def _fail_on(option: str | None, from_file: FailOn | None) -> FailOn | None:
    """--fail-on (a usage error unless failed|incomplete), else the decision rules file's."""
    if option is None:
        return from_file
    if option not in FAIL_ON_CHOICES:
        raise typer.BadParameter(f"{option!r} is not one of {', '.join(FAIL_ON_CHOICES)}",
                                 param_hint="--fail-on")
    return cast(FailOn, option)


def _warn_problems(result: IngestResult) -> None:
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
    from meshcert.evidence.matching import BackendError
    from meshcert.evidence.requests import GateRequest, Judging
    from meshcert.evidence.service import UnusableInputError, gate_files

    request = GateRequest(tuple(files), Judging(require_gates, phase_e, backend), label)
    judging = request.judging
    settings = _settings(judging.require_gates)
    try:
        run = gate_files(request.files, settings=settings, label=request.label,
                         backend=judging.backend, phase_e=judging.phase_e)
    except UnusableInputError as exc:
        raise _refuse(exc.lines) from None
    except BackendError as exc:
        raise error_exit(exc) from None
    _warn_problems(run.ingest)
    if json_out:
        typer.echo(run.gate.model_dump_json(indent=2))
    else:
        print_gate(run.gate)
    if run.gate.enforced and run.gate.errors:
        raise _fail(run.gate.errors)
    if run.ingest.row_count == 0:
        raise _nothing_read(len(request.files))


def _nothing_read(files: int) -> typer.Exit:
    """No row from any input (an empty, crashed or foreign log): exit 1, as `ingest`."""
    typer.echo(nothing_read_message(files), err=True)
    return typer.Exit(Exit.FAILED)


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


ReportOutDirOpt = Annotated[Path, typer.Option("--out-dir", help="Folder for decisions.json and "
                                              "summary.md.", file_okay=False)]
PackageOpt = Annotated[str | None, typer.Option(
    "--package", help="Package dir or hf:// ref: check that its NextN/MTP layers keep "
    "their original routed down-projection type (q2_K recipe rule).")]
SourceGgufOpt = Annotated[Path | None, typer.Option(
    "--source-gguf", help="Source GGUF giving the original tensor types for --package.",
    exists=True, dir_okay=False)]
MaxPplIncreaseOpt = Annotated[float | None, typer.Option(
    "--max-ppl-increase", help="q2_K recipe: largest allowed relative perplexity "
    "increase vs the baseline (default 0.01 = 1%).", min=0.0)]
MaxKldOpt = Annotated[float | None, typer.Option(
    "--max-kld", help="q2_K recipe: largest allowed mean KL divergence vs the baseline "
    "(default 0.01).", min=0.0)]
QualityBaselineOpt = Annotated[str | None, typer.Option(
    "--quality-baseline", help="Variant label or file name of the baseline quality run "
    "(default q3-k-routed-down).")]
QualityCandidateOpt = Annotated[str | None, typer.Option(
    "--quality-candidate", help="Variant label or file name of the candidate quality run "
    "(default q2-k-routed-down).")]
SeedOpt = Annotated[int, typer.Option(help="Bootstrap seed.")]
ReplicatesOpt = Annotated[int, typer.Option(help="Bootstrap replicates.", min=1000)]
DecisionsOpt = Annotated[Path | None, typer.Option(
    "--decisions", help="TOML or JSON file of your own promotion decisions (rows, "
    "threshold and its env var, parity and quality needs; schema "
    "docs/evidence-rules.schema.json), added to the built-in GLM Phase E/D decisions.",
    dir_okay=False)]
FailOnOpt = Annotated[str | None, typer.Option(
    "--fail-on", metavar="failed|incomplete", show_default=False,
    help="Turn the verdict into the exit status: `failed` exits 1 on FAILED; `incomplete` "
    "also exits 3 on INCOMPLETE (default: the decision rules file's `fail_on`, else the "
    "verdict does not change the status; a required gate fails on both).")]
ReportJsonOpt = Annotated[bool, json_option(
    "Print the decisions JSON (the EvidenceReport) on stdout, nothing else.")]


@app.command("report", help=(
    "Gate + decisions: write decisions.json (the EvidenceReport) and summary.md, led by the "
    "headline (each decision the evidence supports and one overall verdict). Exit 2 when "
    "the gate is enforced and fails, when --package breaks the q2_K routed-down rule, or when "
    "an input cannot be read or recognised (FILE:LINE named); 1 when no input gave a row; "
    "with --fail-on (or a required gate) 1 on a FAILED and 3 on an INCOMPLETE verdict "
    "(docs/evidence.md, Exit statuses)."))
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
    html: HtmlOpt = None,
    md: MdOpt = None,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
    decisions_file: DecisionsOpt = None,
    deprecated_alias: DeprecatedDecisionsOpt = None,
    json_out: ReportJsonOpt = False,
    quiet: QuietOpt = False,
    fail_on_opt: FailOnOpt = None,
) -> None:
    """Gate + decisions: write decisions.json (the EvidenceReport) and summary.md. Exit 2 when
    the gate is enforced and fails, or when --package breaks the q2_K routed-down rule."""
    from meshcert.evidence.decisions import DecisionOptions
    from meshcert.evidence.matching import BackendError
    from meshcert.evidence.package_rules import PackageLoadError
    from meshcert.evidence.requests import Judging, ReportRequest
    from meshcert.evidence.service import UnusableInputError, report_files
    from meshcert.reports.outputs import write_decisions, write_reports

    request = ReportRequest(
        tuple(files), out_dir,
        Judging(require_gates, phase_e, backend, _decisions(decisions_file, deprecated_alias)),
        label=label, package=package, source_gguf=str(source_gguf) if source_gguf else None,
        decisions=DecisionOptions(quality_baseline=quality_baseline,
                                  quality_candidate=quality_candidate,
                                  max_ppl_increase=max_ppl_increase, max_kld_mean=max_kld,
                                  seed=seed, replicates=replicates))
    rules, settings, file_fail_on = _rules_and_settings(request.judging.decisions_file,
                                                        require_gates)
    fail_on = _fail_on(fail_on_opt, file_fail_on)
    try:
        run = report_files(request.files, settings=settings, label=label, backend=backend,
                           decisions=request.decisions, package=request.package,
                           source_gguf=request.source_gguf, rules=rules, phase_e=phase_e)
    except UnusableInputError as exc:
        raise _refuse(exc.lines) from None
    except (BackendError, PackageLoadError) as exc:
        raise error_exit(exc) from None
    _warn_problems(run.ingest)
    try:
        written = [*write_decisions(run.report, out_dir, md=md).values(),
                   *write_reports(run.report, html=html, md=md, junit=junit,
                                  sarif=sarif).values()]
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(run.report.to_json(), nl=False)
    elif not quiet:
        print_report(run.report, written)
    _end_report(run.report, fail_on=fail_on,
                nothing_read=len(request.files) if run.ingest.row_count == 0 else None)


def _end_report(report: EvidenceReport, *, nothing_read: int | None = None,
                fail_on: FailOn | None = None) -> None:
    """Exit 2 when the enforced gate failed or --package broke its rule (each reason an
    `error:` line); a package rule that could not be checked is a warning. Then exit 1 when
    nothing was read (`nothing_read`: the number of inputs), else the verdict's status when
    asked (--fail-on, a required gate: meshcert.cli.evidence_exit)."""
    errors = list(report.gate.errors) if report.gate.enforced else []
    pc = report.package_check
    if pc is not None and pc.status == "failed":
        errors += [f"error: {pc.rule}: {m}" for m in pc.messages]
    elif pc is not None and pc.status == "unknown":
        typer.echo(f"warning: package rule not checked: {'; '.join(pc.messages)}", err=True)
    if errors:
        raise _fail(errors)
    if nothing_read is not None:
        raise _nothing_read(nothing_read)
    _end_verdict(report, fail_on)


def _end_verdict(report: EvidenceReport, fail_on: FailOn | None) -> None:
    from meshcert.evidence.headline import headline_of

    head = headline_of(report)
    code = verdict_exit(head.status, fail_on, required=report.gate.enforced)
    if code != Exit.PASSED:
        why = (f"{REQUIRE_GATES} / --require-gates (a required gate fails on FAILED and "
               "INCOMPLETE)" if report.gate.enforced else f"--fail-on {fail_on}")
        typer.echo(f"error: verdict {head.status.upper()} ({head.summary}); {why}", err=True)
        raise typer.Exit(code)


# --------------------------------------------------------------------------------------------
# history (exit codes: 0; 1 with --gate when a setup regressed or failed or no row was read;
# 2 unreadable source)
# --------------------------------------------------------------------------------------------

HISTORY_GATE_EXIT = Exit.HISTORY_REGRESSED


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
    from meshcert.evidence.history_report import HistoryError, history_files
    from meshcert.reports.evidence.html import render_history_html
    from meshcert.reports.evidence.markdown import render_history_markdown

    try:
        run = history_files(sources)
    except HistoryError as exc:
        raise error_exit(exc) from None
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


# --------------------------------------------------------------------------------------------
# run (exit codes: as report; 130 when interrupted, after writing what was recorded)
# --------------------------------------------------------------------------------------------

INTERRUPTED_EXIT = Exit.INTERRUPTED


class _Progress:
    """One stderr line per run: `[3/10] candidate #2 ... ok (1.23s)`."""

    def run_started(self, run: PlannedRun, total: int) -> None:
        typer.echo(f"[{run.index}/{total}] {run.variant.name} #{run.repeat} ...", err=True)

    def run_finished(self, record: RunRecord, total: int) -> None:
        took = f" ({record.duration_s:.2f}s)" if record.duration_s is not None else ""
        code = f", exit {record.exit_status}" if record.status == "failed" else ""
        typer.echo(f"[{record.index}/{total}] {record.variant} #{record.repeat} "
                   f"{record.status}{code}{took}", err=True)


RunCommandArg = Annotated[list[str], typer.Argument(
    help="The fixture command and its arguments (after `--`).", show_default=False)]
RunOutDirOpt = Annotated[Path, typer.Option(
    "--out-dir", help="Folder for runs/, runs.json, evidence*.json, decisions.json and "
    "summary.md.", file_okay=False)]
VariantOpt = Annotated[list[str] | None, typer.Option(
    "--variant", help="A variant label, in run order (repeatable). Default: the names "
    "used by --env/--args/--command, else one variant 'default'.")]
EnvOpt = Annotated[list[str] | None, typer.Option(
    "--env", help="VARIANT:KEY=VALUE, an environment override for one variant "
    "(repeatable).")]
ArgsOpt = Annotated[list[str] | None, typer.Option(
    "--args", help="VARIANT:ARGS, arguments appended for one variant (shell-split).")]
VariantCommandOpt = Annotated[list[str] | None, typer.Option(
    "--command", help="VARIANT:CMD, a whole command replacing COMMAND for one variant "
    "(shell-split).")]
CheckOpt = Annotated[list[str] | None, typer.Option(
    "--check", help="CMD (shell-split) run once per variant before the timed runs, with "
    "the variant's env and --args: e.g. 'test-backend-ops test -b CPU -o ADD' for "
    "parity.")]
RepeatOpt = Annotated[int, typer.Option("--repeat", "-n", help="Runs per variant.", min=1)]
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", help="Seconds per run before it is stopped (recorded as timeout).",
    min=0.001)]
StreamOpt = Annotated[str, typer.Option(
    "--stream", help="What ingest reads: auto (stdout when it is a machine format such as "
    "llama-bench -o json, else both streams merged), merged, stdout or stderr.")]
RunDecisionsOpt = Annotated[Path | None, typer.Option(
    "--decisions", help="TOML or JSON file of your own promotion decisions, as for "
    "`evidence report`.", dir_okay=False)]


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
    html: HtmlOpt = None,
    md: MdOpt = None,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
    fail_on_opt: FailOnOpt = None,
) -> None:
    from meshcert.evidence.matching import BackendError
    from meshcert.evidence.requests import Judging, RunOptions, RunRequest, run_plan_of
    from meshcert.evidence.run import PlanError, evidence_from_runs, run_plan
    from meshcert.reports.outputs import write_decisions, write_reports

    judging = Judging(require_gates, phase_e, backend, _decisions(decisions_file, deprecated_alias))
    rules, settings, file_fail_on = _rules_and_settings(judging.decisions_file,
                                                        judging.require_gates)
    fail_on = _fail_on(fail_on_opt, file_fail_on)
    try:
        plan = run_plan_of(RunOptions(command, variant or (), env or (), args or (),
                                      variant_command or (), check or (), repeats=repeat,
                                      timeout_s=timeout, stream=stream))
    except PlanError as exc:
        raise typer.BadParameter(str(exc)) from None
    request = RunRequest(plan, out_dir, judging)
    session = run_plan(request.plan, out_dir,
                       observer=None if quiet or json_out else _Progress())
    try:
        evidence = evidence_from_runs(session, settings=settings, backend=backend,
                                      rules=rules, phase_e=phase_e)
    except BackendError as exc:
        raise error_exit(exc) from None
    try:
        decisions = write_decisions(evidence.report, out_dir)
        rendered = write_reports(evidence.report, html=html, md=md, junit=junit, sarif=sarif)
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(json.dumps({"runs": session.manifest(),
                               "report": json.loads(evidence.report.to_json())}, indent=2))
    elif not quiet:
        _warn_problems(evidence.ingest)
        counts = ", ".join(f"{n} {s}" for s, n in session.counts().items())
        typer.echo(f"runs: {counts} ({len(plan.variants)} variant(s) x {repeat}, "
                   f"interleaved)")
        print_report(evidence.report, [out_dir / "runs.json", *evidence.written.values(),
                                       *decisions.values(), *rendered.values()])
    _end_run(session, evidence, out_dir, fail_on)


def _end_run(session: RunSession, evidence: RunEvidence, out_dir: Path,
             fail_on: FailOn | None = None) -> None:
    """Warn of the runs that measured nothing (when some did), then the exit status: 130
    interrupted, 2 no run started or the enforced gate failed, 1 nothing measured, then the
    verdict's when asked (as `evidence report`)."""
    if not evidence.nothing_measured:
        for item in evidence.unmeasured:
            typer.echo(f"warning: {item.describe()}", err=True)
    if session.interrupted:
        typer.echo("error: interrupted; the runs so far are recorded in "
                   f"{out_dir / 'runs.json'}", err=True)
        raise typer.Exit(INTERRUPTED_EXIT)
    if all(r.status == "error" for r in session.records):
        raise _fail([f"no run started: {session.records[0].error}"])
    errors = list(evidence.report.gate.errors) if evidence.report.gate.enforced else []
    if errors:
        raise _fail(errors)
    if evidence.nothing_measured:
        raise _nothing_measured(evidence)
    _end_verdict(evidence.report, fail_on)


def _nothing_measured(evidence: RunEvidence) -> typer.Exit:
    """No timed run gave a row: say which runs, what they printed, the usual cause (exit 1)."""
    for item in evidence.unmeasured:
        typer.echo(f"error: {item.describe()}; it printed:", err=True)
        for line in item.tail or ("(nothing)",):
            typer.echo(f"    {line}", err=True)
    typer.echo("error: nothing measured: no timed run produced a row. The usual cause is a "
               "filter that matches no case (test-backend-ops -o/-p: -p is a regular "
               "expression, so escape [ and ] as \\[ \\] inside --args quotes); the full "
               "output of each run is in its log.", err=True)
    return typer.Exit(Exit.FAILED)
