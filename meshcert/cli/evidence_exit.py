"""The exit status of an evidence step (docs/evidence.md, "Exit statuses"), by one rule for
`evidence gate`, `report`, `run` and `history --gate`:

1. an enforced Phase E gate that failed, or a broken `--package` rule: 2 (the script's status);
2. nothing read (no row from any input): 1, as `evidence ingest`;
3. the verdict, when asked to fail on it (`--fail-on failed|incomplete`, the decision rules
   file's `fail_on`, or a required gate, which fails on both): FAILED 1, INCOMPLETE 3;
4. else 0.

The functions below end a command by that rule, each with its `error:` lines on stderr.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from meshcert.cli.exit_codes import Exit, ExitStatus
from meshcert.evidence.defaults import REQUIRE_GATES

if TYPE_CHECKING:  # the evidence engine (pandas, numpy) loads inside the commands
    from meshcert.evidence.report import EvidenceReport
    from meshcert.evidence.run import RunEvidence, RunSession

FailOn = Literal["failed", "incomplete"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = ("failed", "incomplete")
VERDICT_EXIT: dict[str, ExitStatus] = {"failed": Exit.FAILED, "incomplete": Exit.INCOMPLETE}


def verdict_exit(status: str, fail_on: FailOn | None, *, required: bool = False) -> ExitStatus:
    """The exit status a verdict asks for: a required gate fails on FAILED and INCOMPLETE,
    `failed` on FAILED only, `incomplete` on both (an incomplete verdict never passes where
    a failed one would not)."""
    if required:
        fail_on = "incomplete"
    if fail_on is None or status not in VERDICT_EXIT:
        return Exit.PASSED
    if status == "incomplete" and fail_on == "failed":
        return Exit.PASSED
    return VERDICT_EXIT[status]


def nothing_read_message(files: int) -> str:
    return (f"error: nothing read: no evidence rows in any of the {files} file(s) (each one's "
            "problem is listed above); an empty or crashed benchmark log is not evidence")


GATE_EXIT = Exit.PHASE_E_GATE_FAILED


def _refuse(lines: list[str]) -> typer.Exit:
    """Inputs that cannot be read or recognised: nothing was evaluated (exit 2)."""
    for line in lines:
        typer.echo(f"error: {line}", err=True)
    typer.echo("error: refused: an input above cannot be read or is not a recognised evidence "
               "format (`meshcert evidence ingest --help` lists them); nothing was evaluated",
               err=True)
    return typer.Exit(Exit.USAGE)


@contextmanager
def refusing_unusable() -> Iterator[None]:
    """Inside: inputs gate/report cannot read or recognise end the command as `_refuse`."""
    from meshcert.evidence.service import UnusableInputError

    try:
        yield
    except UnusableInputError as exc:
        raise _refuse(exc.lines) from None


def fail_gate(lines: list[str]) -> typer.Exit:
    for line in lines:
        typer.echo(line if line.startswith("error: ") else f"error: {line}", err=True)
    return typer.Exit(GATE_EXIT)


def end_nothing_read(files: int) -> typer.Exit:
    """No row from any input (an empty, crashed or foreign log): exit 1, as `ingest`."""
    typer.echo(nothing_read_message(files), err=True)
    return typer.Exit(Exit.FAILED)


def end_report(report: EvidenceReport, *, nothing_read: int | None = None,
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
        raise fail_gate(errors)
    if nothing_read is not None:
        raise end_nothing_read(nothing_read)
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


HISTORY_GATE_EXIT = Exit.HISTORY_REGRESSED


INTERRUPTED_EXIT = Exit.INTERRUPTED


def end_run(session: RunSession, evidence: RunEvidence, out_dir: Path,
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
        raise fail_gate([f"no run started: {session.records[0].error}"])
    errors = list(evidence.report.gate.errors) if evidence.report.gate.enforced else []
    if errors:
        raise fail_gate(errors)
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
