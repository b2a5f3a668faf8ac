"""The options of the `meshcert evidence ...` commands (one declaration each, shared where two
commands take the same option) and what turns them into the evidence engine's inputs: the
decision rules file (--decisions, or the deprecated --catalog), the settings, --fail-on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from meshcert.cli.evidence_exit import FAIL_ON_CHOICES, FailOn
from meshcert.cli.option_errors import option_errors
from meshcert.cli.shared_options import json_option
from meshcert.evidence.defaults import REQUIRE_GATES

if TYPE_CHECKING:  # the evidence engine (pandas, numpy) loads inside the commands
    from meshcert.evidence.rules import EnvVar, Rules
    from meshcert.evidence.settings import EvidenceSettings


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


def decisions_given(decisions: Path | None, deprecated_alias: Path | None) -> Path | None:
    """--decisions, or the deprecated --catalog with a warning on stderr."""
    from meshcert.evidence.requests import decisions_input

    with option_errors():
        given = decisions_input(decisions, deprecated_alias)
    if given.via_deprecated_alias:
        typer.echo("warning: --catalog is deprecated on the evidence commands; use --decisions "
                   "FILE", err=True)
    return given.path


def evidence_settings(require_gates: bool, extra: tuple[EnvVar, ...] = ()) -> EvidenceSettings:
    from meshcert.evidence.settings import load_settings

    return load_settings(overrides={REQUIRE_GATES: True} if require_gates else None,
                         extra=extra)


def rules_and_settings(decisions_file: Path | None, require_gates: bool
                          ) -> tuple[Rules, EvidenceSettings, FailOn | None]:
    """The built-in rules, or the user's decisions from --decisions (a bad file is an
    `error:` line and exit 2), with the settings their env vars read and the file's
    `fail_on`."""
    from meshcert.evidence.decision_rules import env_vars, load_decision_rules, to_rules
    from meshcert.evidence.rules import RULES

    rules = RULES
    extra: tuple[EnvVar, ...] = ()
    fail_on: FailOn | None = None
    if decisions_file is not None:
        user = load_decision_rules(decisions_file)
        rules, extra = to_rules(user), env_vars(user)
        fail_on = user.fail_on
    return rules, evidence_settings(require_gates, extra), fail_on


def fail_on_given(option: str | None, from_file: FailOn | None) -> FailOn | None:
    """--fail-on (a usage error unless failed|incomplete), else the decision rules file's."""
    if option is None:
        return from_file
    if option not in FAIL_ON_CHOICES:
        raise typer.BadParameter(f"{option!r} is not one of {', '.join(FAIL_ON_CHOICES)}",
                                 param_hint="--fail-on")
    return cast(FailOn, option)


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
